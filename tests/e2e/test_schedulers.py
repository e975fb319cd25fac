#!/usr/bin/env python3
"""End-to-end tests of jobs under real schedulers on network-namespace hosts: a Slurm 22.05
cluster (slurm_cluster.py: munged, slurmctld, one slurmd per host) and Open MPI's mpirun starting
its daemons over real sshd (ssh_hosts.py). The Slurm hosts share this machine's filesystem as a
cluster shares its home directories; each test bounds its time and checks by pid, on every host,
that nothing of the job is left. They need root and skip without it, saying why."""

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import Skip, check, launch, main, scratch, wait_for  # noqa: E402
from netns_hosts import cmdline  # noqa: E402
from ssh_hosts import SshHosts  # noqa: E402
from slurm_cluster import SlurmCluster  # noqa: E402
from test_train import HOUSING, fit_a_line, max_relative_difference, need, read_checkpoint  # noqa: E402

LAUNCH = shutil.which(os.environ.get("PADDLE_LAUNCH", "paddle-launch")) or os.environ.get("PADDLE_LAUNCH", "")
TRAIN = shutil.which(os.environ.get("TRAIN", "train")) or os.environ.get("TRAIN", "")
SCHEDULERS_DOC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../docs/schedulers.md")


def long_training():
    return fit_a_line(["--set", "epochs=100000", "--set", "batch_size=4", "--set", "checkpoint=false"])


def training_everywhere(workdir, names):
    """Whether every node's first worker has logged a step (its log is under log/NODE/)."""
    def logged(name):
        try:
            with open(os.path.join(workdir, "log", name, "workerlog.0"), errors="replace") as f:
                return "step " in f.read()
        except OSError:
            return False
    return all(logged(n) for n in names)


def trainers_on(cluster, i):
    """Pids of host i's train processes (the launcher's children that exec'd TRAIN)."""
    return [p for p in cluster.job_pids(i) if cmdline(p).startswith(TRAIN + " ")]


def only_job_id(cluster):
    r = cluster.run(["squeue", "-h", "-a", "-t", "all", "-o", "%i"])
    ids = r.stdout.split()
    check(len(ids) == 1, f"one job known to slurmctld: {r.stdout!r} {r.stderr}")
    return ids[0]


def stop_all(cluster, procs):
    """On a failed check: scancel everything and kill the clients, so nothing outlives the test."""
    cluster.run(["scancel", "--full", "--signal=KILL", "-u", "root"])
    for p in procs:
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()


def test_srun_on_three_nodes_is_one_job_equal_to_one_nodes():
    need(HOUSING)
    args = fit_a_line(["--set", "batch_size=10", "--set", "max_steps=20", "--set", "shuffle=true"])
    with SlurmCluster(3) as cluster:
        workdir = scratch()
        r = cluster.run(["srun", "-N3", "--ntasks-per-node=1", "--exclusive", LAUNCH, "--nproc_per_node=2", TRAIN,
                         *args], cwd=workdir, timeout=90)
        cluster.wait_clean(timeout=5)
    check(r.returncode == 0, f"srun exits 0\n{r.stdout[-2000:]}\n{r.stderr[-4000:]}")
    check(r.stderr.count("from Slurm (SLURM_JOB_NODELIST=n[098-100])") == 3,
          f"each node's launcher took the job from Slurm's bracketed 3-digit node list\n{r.stderr[-3000:]}")
    maps = {}
    for name in cluster.names:
        with open(os.path.join(workdir, "log", name, "endpoints.log")) as f:
            maps[name] = f.read()
    check(len(set(maps.values())) == 1, f"one rank map on every node:\n{maps}")
    lines = [l for l in maps["n098"].split("RANK MAP:", 1)[-1].splitlines() if l.startswith("node ")]
    # SLURM_NODEID follows the names, n098 first, which the cluster gave the highest address.
    for i, name in enumerate(["n098", "n099", "n100"]):
        ip = cluster.ips[cluster.host_of(name)]
        check(lines[i].startswith(f"node {i}  {ip} ({name})  2 process(es)  ranks {2 * i}-{2 * i + 1} "),
              f"node {i} is {name} ({ip}), its SLURM_NODEID, with ranks {2 * i}-{2 * i + 1}: {lines}")
    for i in range(3):
        check(re.search(rf"^\[node {i} trainer {2 * i}\] ", r.stdout, re.M),
              f"node {i}'s echoed lines are labelled in srun's merged output\n{r.stdout[-2000:]}")
    one = launch(["--nproc_per_node=6"], args, script=TRAIN, timeout=60)
    check(one.returncode == 0, "one node with 6 processes", one)
    _, multi = read_checkpoint(os.path.join(workdir, "output", "final.bin"))
    _, single = read_checkpoint(one.path("output", "final.bin"))
    diff = max_relative_difference(single, multi)
    check(diff <= 1e-5, f"3 Slurm nodes x 2 equal 1 node x 6: relative difference {diff:.2e}")
    with open(os.path.join(workdir, "output", "metrics.json")) as f:
        check(json.load(f)["world_size"] == 6, "world size 6")


def readme_sbatch_script():
    """The batch script of docs/schedulers.md, as it is written there."""
    with open(SCHEDULERS_DOC) as f:
        text = f.read()
    m = re.search(r"<!-- sbatch script:[^\n]*-->\n```bash\n(.*?)```", text, re.S)
    check(m is not None, "docs/schedulers.md has the sbatch script block")
    return m.group(1)


def test_sbatch_of_the_readme_script_writes_labelled_lines_to_its_output_file():
    need(HOUSING)
    with SlurmCluster(3) as cluster:
        workdir = scratch()
        script = os.path.join(workdir, "train.sbatch")
        with open(script, "w") as f:
            f.write(readme_sbatch_script())
        # sbatch passes the submitting environment on: paddle-launch and train come from PATH.
        path = f"{os.path.dirname(LAUNCH)}:{os.path.dirname(TRAIN)}:{os.environ['PATH']}"
        r = cluster.run(["sbatch", "--parsable", script, *fit_a_line(["--set", "epochs=2"])], cwd=workdir,
                        env={"PATH": path})
        check(r.returncode == 0, f"sbatch exits 0\n{r.stdout}\n{r.stderr}")
        job_id = r.stdout.strip()
        try:
            job = cluster.wait_job(job_id, 90)  # sbatch --wait would poll only every 10 s or so
        except BaseException:
            stop_all(cluster, [])
            raise
        cluster.wait_clean(timeout=5)
    check(job.get("JobState") == "COMPLETED" and job.get("ExitCode") == "0:0", f"the job completed: {job}")
    check(job.get("NodeList") == "n[098-099]", f"2 nodes, as the script asks: {job.get('NodeList')}")
    out_file = os.path.join(workdir, f"paddle-launch-{job_id}.out")
    check(os.path.exists(out_file), f"the script's --output=%x-%j.out: {os.listdir(workdir)}")
    with open(out_file, errors="replace") as f:
        out = f.read()
    for node, rank in ((0, 0), (1, 2)):
        check(re.search(rf"^\[node {node} trainer {rank}\] train: rank {rank} of 4 ", out, re.M),
              f"node {node}'s rank {rank} lines, labelled, in the output file\n{out[-3000:]}")
    check(re.search(r"^\[node 0 trainer 0\] \[Epoch 1\] test_loss", out, re.M), f"rank 0's results\n{out[-3000:]}")
    with open(os.path.join(workdir, "output", "metrics.json")) as f:
        metrics = json.load(f)
    check(metrics["world_size"] == 4 and metrics["epochs"] == 2, f"2 nodes x 2 processes trained: {metrics}")


def test_scancel_leaves_no_process_on_any_host_within_the_grace_period():
    need(HOUSING)
    with SlurmCluster(3) as cluster:
        workdir = scratch()
        job = cluster.popen(["srun", "-N3", "--ntasks-per-node=1", LAUNCH, "--nproc_per_node=2", "--grace_period=2",
                             TRAIN, *long_training()], cwd=workdir)
        try:
            wait_for(lambda: training_everywhere(workdir, cluster.names), 60, "training on every node")
            job_id = only_job_id(cluster)
            started = time.monotonic()
            check(cluster.run(["scancel", job_id]).returncode == 0, "scancel")
            cluster.wait_clean(timeout=2 + 2)  # the launchers' --grace_period, and a margin
            cleaned = time.monotonic() - started
            out, err = job.communicate(timeout=30)
        except BaseException:
            stop_all(cluster, [job])
            raise
        state = cluster.wait_job(job_id, 10)  # COMPLETING until every node has reported
    print(f"scancel to no process on any of 3 hosts: {cleaned:.2f} s")
    check(state.get("JobState") == "CANCELLED", f"the job is CANCELLED: {state}")
    check(job.returncode != 0, f"srun exits non-zero after scancel: {job.returncode}")
    check(err.count("received SIGTERM: stopping all processes") == 3,
          f"every node's launcher got Slurm's SIGTERM and stopped its processes\n{err[-3000:]}")


def test_a_rank_failing_on_node_2_ends_every_nodes_part_with_its_status():
    need(HOUSING)
    with SlurmCluster(3) as cluster:
        workdir = scratch()
        job = cluster.popen(["srun", "-N3", "--ntasks-per-node=1", LAUNCH, "--nproc_per_node=2", TRAIN,
                             *long_training()], cwd=workdir)
        try:
            wait_for(lambda: training_everywhere(workdir, cluster.names), 60, "training on every node")
            job_id = only_job_id(cluster)
            victim = wait_for(lambda: trainers_on(cluster, cluster.host_of("n100")), 10, "a trainer on n100")[0]
            started = time.monotonic()
            os.kill(victim, signal.SIGKILL)
            out, err = job.communicate(timeout=30)
            ended = time.monotonic() - started
            cluster.wait_clean(timeout=5)
        except BaseException:
            stop_all(cluster, [job])
            raise
        state = cluster.wait_job(job_id, 10)  # COMPLETING until every node has reported
        with open(os.path.join(cluster.dir, "jobcomp.log")) as f:
            completion = f.read()
    print(f"a SIGKILLed rank on node 2 (n100) to srun's exit: {ended:.2f} s")
    check(job.returncode == 137, f"srun exits with the failing process's status 137: {job.returncode}\n{err[-3000:]}")
    for i, name in enumerate(["n098", "n099", "n100"]):
        check(f"srun: error: {name}: task {i}: Exited with exit code 137" in err,
              f"{name}'s part ended with 137\n{err[-3000:]}")
    failing = f"node 2 ({cluster.ips[cluster.host_of('n100')]}, n100): trainer 4 (local 0) ended with signal SIGKILL"
    check(err.count(f"the job's root cause: {failing}") == 3, f"every node names the failing rank on n100\n{err[-4000:]}")
    check(state.get("JobState") == "FAILED" and state.get("ExitCode") == "137:0", f"scontrol: FAILED 137:0: {state}")
    check(f"JobId={job_id} " in completion and "JobState=FAILED" in completion and "ExitCode=137:0" in completion,
          f"the job-completion log has the failure:\n{completion}")


def test_max_restarts_restarts_every_node_of_the_allocation():
    need(HOUSING)
    args = fit_a_line(["--set", "epochs=40", "--set", "batch_size=4"])
    with SlurmCluster(3) as cluster:
        workdir = scratch()
        # Two of the three nodes, n099 and n100: the node list crosses from 099 to 100.
        job = cluster.popen(["srun", "-N2", "-w", "n[099-100]", "--ntasks-per-node=1", LAUNCH, "--nproc_per_node=2",
                             "--max_restarts=1", "--grace_period=2", TRAIN, *args], cwd=workdir)
        try:
            wait_for(lambda: os.path.exists(os.path.join(workdir, "output", "checkpoint-2.bin")), 60,
                     "a checkpoint from rank 0")
            first = wait_for(lambda: trainers_on(cluster, cluster.host_of("n100")), 10, "a trainer on n100")
            os.kill(first[0], signal.SIGKILL)
            out, err = job.communicate(timeout=90)
            cluster.wait_clean(timeout=5)
        except BaseException:
            stop_all(cluster, [job])
            raise
    check(job.returncode == 0, f"srun exits 0 after the restart\n{err[-3000:]}")
    check("from Slurm (SLURM_JOB_NODELIST=n[099-100])" in err, f"Slurm's list n[099-100]\n{err[-2000:]}")
    for name in ("n099", "n100"):
        with open(os.path.join(workdir, "log", name, "launch.log")) as f:
            log = f.read()
        check("restart 1 of 1 (PADDLE_RESTART_COUNT=1)" in log and "restart 2" not in log,
              f"{name} restarted the job once\n{log[-3000:]}")
    with open(os.path.join(workdir, "log", "n099", "workerlog.0")) as f:
        check("resumed from output/latest" in f.read(), "rank 0, on n099, resumed from its checkpoint")
    with open(os.path.join(workdir, "output", "metrics.json")) as f:
        metrics = json.load(f)
    check(metrics["epochs"] == 40 and metrics["world_size"] == 4, f"the restarted job finished: {metrics}")


def start_mpirun(hosts, launch_args, master):
    """mpirun from outside the hosts (the test's client address) starting one launcher on each of
    `hosts` through an orted over each host's sshd, in the host's own `remote_root`/job."""
    mpirun = shutil.which("mpirun")
    if not mpirun:
        raise Skip("Open MPI's mpirun is not installed (package openmpi-bin)")
    ssh = " ".join(["ssh", *hosts.ssh_options(), "-o BatchMode=yes"])
    cmd = [mpirun, "--allow-run-as-root", "-H", ",".join(hosts.ips), "-npernode", "1",
            "--mca", "plm_rsh_agent", ssh, "-wdir", os.path.join(hosts.remote_root, "job"),
            LAUNCH, f"--master={master}", *launch_args]
    return subprocess.Popen(hosts.client_command(cmd), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)


def prepare_job_dirs(hosts):
    for i in range(len(hosts.ips)):
        os.makedirs(os.path.join(hosts.host_dir(i), "job"))


def test_mpirun_over_ssh_on_two_hosts_is_one_job():
    need(HOUSING)
    with SshHosts(2) as hosts:
        prepare_job_dirs(hosts)
        job = start_mpirun(hosts, ["--nproc_per_node=2", TRAIN, *fit_a_line(["--set", "epochs=2"])],
                           f"{hosts.ips[0]}:29500")
        try:
            out, err = job.communicate(timeout=120)
        except BaseException:
            os.killpg(job.pid, signal.SIGKILL)
            raise
        hosts.wait_clean([0, 1], timeout=5)
        logs = [os.path.join(hosts.host_dir(i), "job", "log", "endpoints.log") for i in range(2)]
        maps = [open(p).read() if os.path.exists(p) else "" for p in logs]
        metrics_path = os.path.join(hosts.host_dir(0), "job", "output", "metrics.json")
        metrics = json.load(open(metrics_path)) if os.path.exists(metrics_path) else {}
    check(job.returncode == 0, f"mpirun exits 0\n{out[-2000:]}\n{err[-4000:]}")
    for i in range(2):
        check(re.search(rf"^\[node {i} trainer {2 * i}\] ", out, re.M),
              f"node {i}'s echoed lines are labelled in mpirun's merged output\n{out[-2000:]}")
    check(err.count("from Open MPI (OMPI_COMM_WORLD_RANK, OMPI_COMM_WORLD_SIZE)") == 2,
          f"both launchers took the job from Open MPI\n{err[-3000:]}")
    check(maps[0] and maps[0] == maps[1], f"one rank map on both hosts:\n{maps}")
    for i in range(2):
        check(f"node {i}  {hosts.ips[i]} " in maps[0], f"node {i} is host {i} ({hosts.ips[i]}):\n{maps[0]}")
    check(metrics.get("world_size") == 4 and metrics.get("epochs") == 2, f"2 hosts x 2 processes trained: {metrics}")


def test_killing_mpirun_leaves_nothing_on_any_host():
    need(HOUSING)
    for sig in (signal.SIGTERM, signal.SIGKILL):
        with SshHosts(2) as hosts:
            prepare_job_dirs(hosts)
            job = start_mpirun(hosts, ["--nproc_per_node=2", "--grace_period=2", TRAIN, *long_training()],
                               f"{hosts.ips[0]}:29500")
            try:
                wait_for(lambda: all(training_everywhere(os.path.join(hosts.host_dir(i), "job"), [""])
                                     for i in range(2)), 60, "training on both hosts")
                started = time.monotonic()
                os.kill(job.pid, sig)
                out, err = job.communicate(timeout=30)
                hosts.wait_clean([0, 1], timeout=2 + 3)
                print(f"{signal.Signals(sig).name} to mpirun to no process on either host: "
                      f"{time.monotonic() - started:.2f} s")
            except BaseException:
                if job.poll() is None:
                    os.killpg(job.pid, signal.SIGKILL)
                raise
        if sig == signal.SIGTERM:
            check(err.count("received SIGTERM: stopping all processes") == 2,
                  f"mpirun passed SIGTERM on to both launchers, which stopped their processes\n{err[-3000:]}")


if __name__ == "__main__":
    main(sys.modules[__name__])
