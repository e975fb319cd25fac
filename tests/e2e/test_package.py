#!/usr/bin/env python3
"""End-to-end test of the Debian package (cmake/packaging.cmake): cpack packages the build tree
under test (no second compile), the .deb is unpacked into a throwaway root with dpkg -x (a test
cannot apt-install), and its paddle-launch runs a 2-process job of its own train. The package's
Depends must name installed packages that provide every library the programs load, and
find_package(PaddleLaunch) must configure against the unpacked root. The programs' man pages
render with man, and their bash completions offer every flag of --help (cmake/from_help.cmake).

Needs BUILD_DIR (the build tree) and CPACK besides the harness's variables."""

import glob
import json
import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import Skip, check, child_env, main, scratch  # noqa: E402

SOURCE = os.path.abspath(os.path.join(os.path.dirname(__file__), "../.."))
BUILD_DIR = os.environ.get("BUILD_DIR", "")
CPACK = os.environ.get("CPACK", "cpack")
TRAIN = os.environ.get("TRAIN", "train")
LAUNCH = os.environ.get("PADDLE_LAUNCH", "paddle-launch")
HOUSING = os.path.join(os.environ.get("SHARED_DATA", ""), "uci_housing")


def run(cmd, timeout=60, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, **kw)


def ok(cmd, what, timeout=60, **kw):
    r = run(cmd, timeout=timeout, **kw)
    check(r.returncode == 0, f"{what}: {' '.join(cmd)}", r)
    return r.stdout


def project_version():
    return re.search(r"project\(paddle_launch VERSION ([0-9.]+)", open(os.path.join(SOURCE, "CMakeLists.txt")).read()).group(1)


def make_deb(out_dir):
    """cpack on the build tree; returns the one .deb it wrote."""
    ok([CPACK, "--config", os.path.join(BUILD_DIR, "CPackConfig.cmake"), "-B", out_dir], "cpack", timeout=240,
       cwd=out_dir)
    debs = glob.glob(os.path.join(out_dir, "*.deb"))
    arch = ok(["dpkg", "--print-architecture"], "architecture").strip()
    expected = f"paddle-launch_{project_version()}_{arch}.deb"
    check([os.path.basename(d) for d in debs] == [expected], f"cpack wrote {expected} alone: {debs}")
    return debs[0]


def unpacked_deb():
    """cpack's .deb of the build tree, unpacked into a throwaway root: (scratch dir, .deb, root)."""
    if not os.path.exists(os.path.join(BUILD_DIR, "CPackConfig.cmake")):
        raise Skip(f"no CPackConfig.cmake in BUILD_DIR={BUILD_DIR!r}")
    work = scratch()
    os.makedirs(os.path.join(work, "package"))
    deb = make_deb(os.path.join(work, "package"))
    root = os.path.join(work, "root")
    ok(["dpkg-deb", "-x", deb, root], "dpkg-deb -x")
    return work, deb, root


def help_flags(program):
    """Every flag name PROGRAM --help lists (CLI11: "  -h,--help", "  --dry_run{table} ...")."""
    out = ok([program, "--help"], f"{program} --help")
    flags = [f for names in re.findall(r"^  (-[^\s{]+)", out, re.M) for f in names.split(",")]
    check(len(flags) >= 3, f"{program} --help lists flags: {out}")
    return flags


def relations(field):
    """A Depends-style field as [[(name, op, version), ...alternatives], ...]."""
    groups = []
    for group in filter(None, (g.strip() for g in field.split(","))):
        alternatives = []
        for alt in group.split("|"):
            m = re.fullmatch(r"\s*([a-z0-9][a-z0-9+.-]+)(?::[a-z0-9]+)?\s*(?:\(\s*([<>=]+)\s*([^)\s]+)\s*\))?\s*", alt)
            check(m is not None, f"a relation of the form 'name (op version)': {alt!r}")
            alternatives.append(m.groups())
        groups.append(alternatives)
    return groups


def installed_version(package):
    r = run(["dpkg-query", "-W", "-f=${Status}\t${Version}", package])
    if r.returncode != 0 or not r.stdout.startswith("install ok installed"):
        return None
    return r.stdout.split("\t")[1]


def satisfied(name, op, version):
    have = installed_version(name)
    if have is None:
        return False
    if op is None:
        return True
    dpkg_op = {">=": "ge", "<=": "le", ">>": "gt", "<<": "lt", "=": "eq"}[op]
    return run(["dpkg", "--compare-versions", have, dpkg_op, version]).returncode == 0


def owning_package(library_path):
    """The Debian package that holds LIBRARY_PATH (usr-merged systems list /lib or /usr/lib)."""
    real = os.path.realpath(library_path)
    candidates = {library_path, real}
    for p in list(candidates):
        if p.startswith("/usr/"):
            candidates.add(p[len("/usr"):])
        else:
            candidates.add("/usr" + p)
    for p in sorted(candidates):
        r = run(["dpkg-query", "-S", p])
        if r.returncode == 0:
            return r.stdout.split(":")[0].strip()
    return None


def loaded_libraries(program):
    """{soname: path} of the shared libraries PROGRAM names itself (DT_NEEDED), as ld.so finds them."""
    needed = re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", ok(["readelf", "-d", program], "readelf"))
    listing = ok(["ldd", program], "ldd")
    found = dict(re.findall(r"^\s*(\S+) => (\S+)", listing, re.M))
    # The dynamic loader, named by path ("/lib64/ld-linux-x86-64.so.2 (0x...)"), as some links (CUDA's) name it.
    found.update({os.path.basename(p): p for p in re.findall(r"^\s*(/\S+) \(0x", listing, re.M)})
    missing = [n for n in needed if n not in found or found[n] == "not"]
    check(not missing, f"{program}: every library it names is found: missing {missing}")
    return {n: found[n] for n in needed}


def check_depends(deb, root):
    fields = {f: ok(["dpkg-deb", "-f", deb, f], f"the {f} field").strip() for f in ("Package", "Depends", "Recommends")}
    check(fields["Package"] == "paddle-launch", f"Package: {fields['Package']}")
    depends = relations(fields["Depends"])
    check(depends, "Depends is not empty (dpkg-shlibdeps ran)")
    for group in depends:
        check(any(satisfied(*alt) for alt in group), f"Depends '{group}' is satisfied by an installed package")
    named = {alt[0] for group in depends for alt in group}
    for program in ("paddle-launch", "train"):
        for soname, path in loaded_libraries(os.path.join(root, "usr", "bin", program)).items():
            package = owning_package(path)
            if package is None:  # a CUDA build's libraries under /usr/local/cuda: no package has them
                print(f"{program}: {soname} ({path}) belongs to no Debian package, so Depends cannot name it")
                continue
            check(package in named, f"{program} loads {soname} from {package}, which Depends names: {fields['Depends']}")
    for group in relations(fields["Recommends"]):
        check(any(installed_version(alt[0]) for alt in group), f"Recommends '{group}': installed here (setup.sh)")
    print(f"Depends: {fields['Depends']}")


def check_contents(deb):
    files = set(re.findall(r" \./(\S+)$", ok(["dpkg-deb", "-c", deb], "dpkg-deb -c"), re.M))
    for f in ("usr/bin/paddle-launch", "usr/bin/train", "usr/include/paddle_launch/runtime/distributed/fleet.h",
              "usr/share/paddle-launch/configs/fit_a_line.json"):
        check(f in files, f"the package holds /{f}")
    for name in ("PaddleLaunchConfig.cmake", "PaddleLaunchConfigVersion.cmake", "PaddleLaunchTargets.cmake",
                 "libpaddle_runtime.a", "libpaddle_collective.a"):
        check(any(f.endswith("/" + name) for f in files), f"the package holds {name}")


def job(launcher, train, config, workdir, path):
    args = [launcher, "--nproc_per_node=2", train, "--config", config,
            "--set", f"data_dir={HOUSING}", "--set", "epochs=30", "--set", "batch_size=10"]
    r = run(args, timeout=120, cwd=workdir, env=child_env({"PATH": path}))
    check(r.returncode == 0, f"the 2-process job exits 0 ({' '.join(args)})", r)
    with open(os.path.join(workdir, "output", "metrics.json")) as f:
        return json.load(f)


def test_the_deb_installs_and_runs_a_two_process_job():
    for tool in ("dpkg-deb", "dpkg-query", "readelf", "ldd"):
        if shutil.which(tool) is None:
            raise Skip(f"{tool} is not installed (not a Debian system?)")
    check(shutil.which("file") is not None,
          "cpack's Depends come from dpkg-shlibdeps, which needs `file`: install the Debian package file")
    if not os.path.exists(HOUSING):
        raise Skip(f"no data at {HOUSING}")
    work, deb, root = unpacked_deb()
    check_contents(deb)
    check_depends(deb, root)

    # The installed launcher finds the installed train on PATH, as after `apt install`.
    bin_dir = os.path.join(root, "usr", "bin")
    path = f"{bin_dir}:/usr/bin:/bin"
    plan = json.loads(ok([os.path.join(bin_dir, "paddle-launch"), "--dry_run=json", "--nproc_per_node=2", "train"],
                         "dry run", env=child_env({"PATH": path})))
    check(plan["command"] == [os.path.join(bin_dir, "train")], f"the workers run the package's train: {plan['command']}")
    installed_dir = os.path.join(work, "installed")
    os.makedirs(installed_dir)
    installed = job(os.path.join(bin_dir, "paddle-launch"), "train",
                    os.path.join(root, "usr", "share", "paddle-launch", "configs", "fit_a_line.json"), installed_dir, path)
    check(installed["world_size"] == 2 and installed["epochs"] == 30 and installed["steps"] == 30 * (404 // 20),
          f"30 epochs on 2 ranks: {installed}")
    check(installed["test_loss"] < 45,
          f"the model learned (test loss about 267 after 1 epoch): test loss {installed['test_loss']}")
    # Packaging changes nothing the program computes: the build tree's binaries, same job.
    built_dir = os.path.join(work, "built")
    os.makedirs(built_dir)
    built = job(os.path.abspath(LAUNCH), os.path.abspath(TRAIN), os.path.join(SOURCE, "configs", "fit_a_line.json"),
                built_dir, "/usr/bin:/bin")
    for key in ("train_loss", "test_loss"):
        check(abs(installed[key] - built[key]) <= 1e-6 * max(1.0, abs(built[key])),
              f"{key}: package {installed[key]} = build tree {built[key]}")
    print(f"installed package: test loss {installed['test_loss']:.4f} after {installed['steps']} steps on 2 ranks")

    # find_package(PaddleLaunch) against the unpacked root: its config, targets and dependencies.
    user = os.path.join(work, "user")
    os.makedirs(user)
    with open(os.path.join(user, "CMakeLists.txt"), "w") as f:
        f.write("cmake_minimum_required(VERSION 3.24)\nproject(user LANGUAGES CXX)\n"
                "find_package(PaddleLaunch REQUIRED)\nmessage(STATUS \"found ${PaddleLaunch_DIR}\")\n"
                "add_executable(app app.cc)\n"
                "target_link_libraries(app PRIVATE paddle::runtime)\n")
    open(os.path.join(user, "app.cc"), "w").write('#include "runtime/distributed/fleet.h"\nint main() {}\n')
    out = ok(["cmake", "-S", user, "-B", os.path.join(user, "build"), f"-DCMAKE_PREFIX_PATH={root}/usr"],
             "find_package(PaddleLaunch) configures against the package", timeout=120)
    check(f"found {root}/usr/lib" in out, f"the package's PaddleLaunchConfig.cmake was the one found:\n{out}")
    shutil.rmtree(work, ignore_errors=True)


def test_the_debs_man_pages_render_every_flag():
    for tool in ("dpkg-deb", "man", "help2man"):
        if shutil.which(tool) is None:
            raise Skip(f"{tool} is not installed (Debian: apt install dpkg man-db help2man)")
    work, deb, root = unpacked_deb()
    for program, summary in (("paddle-launch", "start and supervise"), ("train", "trainer")):
        page = os.path.join(root, "usr", "share", "man", "man1", f"{program}.1.gz")
        check(os.path.isfile(page), f"the package holds /usr/share/man/man1/{program}.1.gz")
        check(open(page, "rb").read(2) == b"\x1f\x8b", f"{page} is gzip'd")
        env = child_env({"MANPAGER": "cat", "MANWIDTH": "200", "LC_ALL": "C.UTF-8"})
        text = re.sub(".\b", "", ok(["man", "-l", "-P", "cat", page], f"man renders {program}.1.gz", env=env))
        check(re.search(rf"^NAME\n\s+{re.escape(program)} - .*{summary}", text, re.M) is not None,
              f"{program}(1) has a NAME section with its summary:\n{text[:600]}")
        for section in ("SYNOPSIS", "OPTIONS", "SEE ALSO"):
            check(re.search(rf"^{section}$", text, re.M) is not None, f"{program}(1) has {section}:\n{text[:600]}")
        check(f"{program} {project_version()}" in text, f"{program}(1) names version {project_version()}")
        flags = help_flags(os.path.join(root, "usr", "bin", program))
        missing = [f for f in flags if re.search(rf"(^|[\s,]){re.escape(f)}\b", text, re.M) is None]
        check(not missing, f"{program}(1) documents every flag of --help: missing {missing}")
        if program == "train":
            check("--nproc_per_node" not in text, "train(1) is train's page, not the launcher's")
        print(f"{program}(1): {len(flags)} flags, {len(text.splitlines())} lines")
    shutil.rmtree(work, ignore_errors=True)


class Completion:
    """A program's bash completion from the unpacked package, sourced into a fresh bash (no
    bash-completion package needed) and asked as bash asks: COMP_WORDS and COMP_CWORD."""

    def __init__(self, root, program, cwd):
        self.file = os.path.join(root, "usr", "share", "bash-completion", "completions", program)
        check(os.path.isfile(self.file), f"the package holds /usr/share/bash-completion/completions/{program}")
        self.env = child_env({"PATH": f"{os.path.join(root, 'usr', 'bin')}:/usr/bin:/bin"})
        self.cwd = cwd
        spec = self.bash(f'complete -p {program}').strip()
        m = re.fullmatch(rf"complete -F (\S+) {re.escape(program)}", spec)
        check(m is not None, f"sourcing {self.file} registers a completion function for {program}: {spec!r}")
        self.function = m.group(1)

    def bash(self, script, *args):
        return ok(["bash", "--norc", "--noprofile", "-c", f'source "$0" && {script}', self.file, *args],
                  f"bash with {self.file}", timeout=30, cwd=self.cwd, env=self.env)

    def __call__(self, *words):
        """The replies to the last of WORDS (as split by bash, '=' a word of its own)."""
        out = self.bash(f'COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); {self.function}; '
                        'for r in "${COMPREPLY[@]}"; do echo "[$r]"; done', *words)
        return sorted(re.findall(r"^\[(.*)\]$", out, re.M))


def test_the_debs_bash_completion_completes_every_flag():
    for tool in ("dpkg-deb", "bash"):
        if shutil.which(tool) is None:
            raise Skip(f"{tool} is not installed (not a Debian system?)")
    work, deb, root = unpacked_deb()
    files = os.path.join(work, "files")
    os.makedirs(os.path.join(files, "logs"))
    for name in ("job.json", "hosts"):
        open(os.path.join(files, name), "w").close()
    launch = Completion(root, "paddle-launch", files)
    train = Completion(root, "train", files)
    for complete, program in ((launch, "paddle-launch"), (train, "train")):
        flags = help_flags(os.path.join(root, "usr", "bin", program))
        offered = complete(program, "-")
        check(offered == sorted(flags), f"{program} -<TAB> offers every flag of --help: "
              f"missing {sorted(set(flags) - set(offered))}, extra {sorted(set(offered) - set(flags))}")
    cases = [
        (launch, ("paddle-launch", "--npr"), ["--nproc_per_node"]),
        (launch, ("paddle-launch", "--run_mode", "c"), ["collective"]),  # a flag's {choices}
        (launch, ("paddle-launch", "--run_mode", "="), ["collective", "ps", "ps-heter"]),  # --run_mode=<TAB>
        (launch, ("paddle-launch", "--dry_run", "=", "j"), ["json"]),  # --dry_run=j<TAB>
        (launch, ("paddle-launch", "--hostfile", "ho"), ["hosts"]),  # files
        (launch, ("paddle-launch", "--log_dir", ""), ["logs"]),  # directories only
        (launch, ("paddle-launch", "--nproc_per_node", ""), []),  # a number: nothing to offer
        (launch, ("paddle-launch", "--nproc_per_node", "=", "2", "trai"), ["train"]),  # the program: commands
        (launch, ("paddle-launch", "--nproc_per_node=2", "train", "jo"), ["job.json"]),  # its arguments: files
        (launch, ("paddle-launch", "train", "--npr"), []),  # flags after the program are the program's
        (train, ("train", "--config", "j"), ["job.json"]),
        (train, ("train", "--co"), ["--config"]),
    ]
    for complete, words, expected in cases:
        got = complete(*words)
        check(got == expected, f"completing {' '.join(words)!r}: {expected}, got {got}")
    print(f"{len(cases)} completions as expected; {launch.function}, {train.function}")
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main(sys.modules[__name__])
