#!/usr/bin/env python3
"""Tests of launcher/python/paddle_launch: `python -m paddle_launch` finds the program its
distribution installed and becomes it (exec: same pid, argv and exit status passed through,
signals delivered to the program). Each test builds a throwaway site directory holding what pip
leaves: a paddle_launch-VERSION.dist-info whose RECORD names ../bin/paddle-launch, and that
program (a shell script here, or the real launcher when PADDLE_LAUNCH is set), after its bash
completion, a file of the same name that is not a program.

Run one test: paddle_launch_test.py TEST_NAME (CTest runs each; exit 77 means skipped)."""

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

MODULE_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../../../launcher/python")
SKIP = 77

# Reports what it was run with, then exits with $FAKE_STATUS; with FAKE_WAIT it waits (20 s at most)
# for SIGTERM and answers it with exit 7.
FAKE_PROGRAM = """#!/bin/sh
echo "pid=$$"
echo "argv0=$0"
for a in "$@"; do echo "arg=[$a]"; done
echo "path=$PATH"
if [ -n "$FAKE_WAIT" ]; then
  trap 'echo "got TERM"; exit 7' TERM
  echo ready
  i=0; while [ $i -lt 400 ]; do sleep 0.05; i=$((i + 1)); done  # 20 s at most, if never signalled
  exit 0
fi
exit "${FAKE_STATUS:-0}"
"""


class Site:
    """A site directory with the paddle-launch distribution's record; `program` is its bin/."""

    def __init__(self, program_text=None, program_path=None, record=True):
        self.root = tempfile.mkdtemp(prefix="paddle-launch-py-")
        self.site = os.path.join(self.root, "lib", "site-packages")
        self.bin = os.path.join(self.root, "bin")
        os.makedirs(self.site)
        os.makedirs(self.bin)
        self.program = os.path.join(self.bin, "paddle-launch")
        completions = os.path.join(self.root, "share", "bash-completion", "completions")
        os.makedirs(completions)
        with open(os.path.join(completions, "paddle-launch"), "w") as f:
            f.write("complete -F _paddle_launch_completion paddle-launch\n")
        if program_path:
            os.symlink(program_path, self.program)
        elif program_text is not None:
            with open(self.program, "w") as f:
                f.write(program_text)
            os.chmod(self.program, 0o755)
        if record:
            info = os.path.join(self.site, "paddle_launch-0.1.0.dist-info")
            os.makedirs(info)
            with open(os.path.join(info, "METADATA"), "w") as f:
                f.write("Metadata-Version: 2.1\nName: paddle-launch\nVersion: 0.1.0\n")
            with open(os.path.join(info, "RECORD"), "w") as f:
                f.write("../../share/bash-completion/completions/paddle-launch,,\n"
                        "../../bin/paddle-launch,,\nuntouched/paddle-launch.txt,,\n"
                        "paddle_launch-0.1.0.dist-info/RECORD,,\n")

    def env(self, **extra):
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join([MODULE_DIR, self.site])
        env["PATH"] = "/usr/bin:/bin"
        env.pop("FAKE_STATUS", None)
        env.pop("FAKE_WAIT", None)
        env.update(extra)
        return env

    def run(self, args, **extra):
        return subprocess.run([sys.executable, "-m", "paddle_launch", *args], env=self.env(**extra),
                              capture_output=True, text=True, timeout=30)

    def remove(self):
        shutil.rmtree(self.root, ignore_errors=True)


def check(condition, message, result=None):
    if not condition:
        if result is not None:
            message += f"\nexit status: {result.returncode}\nstdout:\n{result.stdout}\nstderr:\n{result.stderr}"
        raise AssertionError(message)


def lines_with(prefix, text):
    return [line[len(prefix):] for line in text.splitlines() if line.startswith(prefix)]


def test_python_m_paddle_launch_execs_the_recorded_program_with_its_arguments():
    site = Site(FAKE_PROGRAM)
    try:
        args = ["--nproc_per_node=2", "train", "--set", "a b", ""]
        proc = subprocess.Popen([sys.executable, "-m", "paddle_launch", *args], env=site.env(),
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        out, err = proc.communicate(timeout=30)
        check(proc.returncode == 0, f"exit 0: {err}")
        check(lines_with("pid=", out) == [str(proc.pid)],
              f"the program runs in the Python process itself (exec), pid {proc.pid}: {out}")
        check(lines_with("argv0=", out) == [site.program], f"argv[0] is the recorded program: {out}")
        check(lines_with("arg=", out) == [f"[{a}]" for a in args], f"arguments verbatim: {out}")
    finally:
        site.remove()


def test_the_exit_status_is_the_programs():
    site = Site(FAKE_PROGRAM)
    try:
        for status in (0, 1, 3, 124, 130):
            r = site.run(["x"], FAKE_STATUS=str(status))
            check(r.returncode == status, f"exit status {status} passed through", r)
    finally:
        site.remove()


def test_a_signal_reaches_the_program():
    site = Site(FAKE_PROGRAM)
    try:
        proc = subprocess.Popen([sys.executable, "-m", "paddle_launch"], env=site.env(FAKE_WAIT="1"),
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 20
        line = ""
        while line.strip() != "ready" and time.monotonic() < deadline:
            line = proc.stdout.readline()
            check(line != "" or proc.poll() is None, "the program started and waits")
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=20)
        check("got TERM" in out and proc.returncode == 7,
              f"SIGTERM to the pid python was started as is handled by the program (exit 7): "
              f"status {proc.returncode}, stdout {out!r}, stderr {err!r}")
    finally:
        site.remove()


def test_the_programs_directory_joins_the_end_of_path_once():
    site = Site(FAKE_PROGRAM)
    try:
        r = site.run([])
        check(lines_with("path=", r.stdout) == [f"/usr/bin:/bin:{site.bin}"], "appended when missing", r)
        r = site.run([], PATH=f"{site.bin}:/usr/bin")
        check(lines_with("path=", r.stdout) == [f"{site.bin}:/usr/bin"], "left alone when present", r)
    finally:
        site.remove()


def test_a_missing_program_is_one_line_naming_the_fix():
    for site, why in ((Site(record=False), "no distribution"), (Site(program_text=None), "no file")):
        try:
            r = site.run(["--version"])
            check(r.returncode == 127, f"{why}: exit 127", r)
            lines = r.stderr.strip().splitlines()
            check(len(lines) == 1 and lines[0].startswith("python -m paddle_launch: ") and "pip install" in lines[0],
                  f"{why}: one line naming pip install", r)
        finally:
            site.remove()


def test_the_real_launcher_answers_through_the_module():
    launcher = os.environ.get("PADDLE_LAUNCH")
    if not launcher:
        print("SKIP: PADDLE_LAUNCH (the built launcher) is not set")
        sys.exit(SKIP)
    site = Site(program_path=os.path.abspath(launcher))
    try:
        direct = subprocess.run([launcher, "--version"], capture_output=True, text=True, timeout=30)
        r = site.run(["--version"])
        check(r.returncode == 0 and r.stdout == direct.stdout and r.stdout.startswith("paddle-launch "),
              f"--version as the launcher prints it: {direct.stdout!r}", r)
        r = site.run(["--no_such_flag"])
        check(r.returncode != 0 and r.returncode == subprocess.run(
            [launcher, "--no_such_flag"], capture_output=True, timeout=30).returncode,
              "a usage error's status is the launcher's", r)
    finally:
        site.remove()


if __name__ == "__main__":
    name = sys.argv[1]
    globals()[name]()
    print(f"PASS {name}")
