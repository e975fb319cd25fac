#!/usr/bin/env python3
"""paddle-launch as a drop-in for Paddle's own launchers, held against the installed Paddle 2.6.2 and
3.3.1 from PyPI (paddle_venv.py, paddle3_venv.py):
- every flag of both Paddle launchers, and every PADDLE_* twin, read from Paddle's own parsers
  (programs/paddle_flag_tables.py): each is planned, or refused in one line naming the feature;
  a flag a later Paddle adds fails here before it reaches users;
- Paddle 3's backup of the environment: at 8,192 ranks PADDLE_TRAINER_ENDPOINTS is left out of the
  environment and Paddle 3.3.1's own getenv_or_backup reads every endpoint back;
- Kubeflow's PaddleJob, two network-namespace hosts as its pods, each given only what the operator
  injects (PADDLE_MASTER as an IP on pod 0 and as a service name elsewhere, which resolves only
  some seconds after pod 1 starts): real dygraph DDP under 2.6.2 and 3.3.1, and the PS variant."""

import json
import os
import shutil
import socket
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import Skip, assert_sessions_gone, check, child_env, main, scratch  # noqa: E402
from netns_hosts import NamespaceHosts  # noqa: E402
from paddle3_venv import paddle3_python  # noqa: E402
from paddle_venv import paddle_python  # noqa: E402
from ports import free_ports  # noqa: E402
from test_paddle_programs import QUIET, HostRun, check_ddp, check_fleet_workers  # noqa: E402

LAUNCH = shutil.which(os.environ.get("PADDLE_LAUNCH", "paddle-launch")) or "paddle-launch"
PROBE = shutil.which(os.environ.get("PROBE", "probe")) or "probe"
PROGRAMS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "programs")

# How each flag of Paddle's launchers is driven through paddle-launch, and what must come of it:
#   plan        a dry run plans the job (exit 0, JSON)
#   rendezvous  the launcher takes the job to its rendezvous (its Configuration Arguments printed)
#               and ends there at the timeout, for lack of the other node
#   refuse      one error line naming the flag or variable and the feature that is not built
# "{port}", "{port1}" and "{dir}" are filled in. The flag's own argument comes first: a twin
# replaces it with its variable.
SAMPLES = {
    "--master": (["--master=127.0.0.1:{port}", "--nnodes=2", "--rendezvous_timeout=1"], "rendezvous"),
    "--legacy": (["--legacy=True"], "plan"),
    "--rank": (["--rank=1", "--master=127.0.0.1:{port}", "--nnodes=2", "--rendezvous_timeout=1"], "rendezvous"),
    "--log_level": (["--log_level=DEBUG"], "plan"),
    "--log_overwrite": (["--log_overwrite=False"], "plan"),
    "--sort_ip": (["--sort_ip=True"], "plan"),
    "--enable_gpu_log": (["--enable_gpu_log=False"], "plan"),
    "--nnodes": (["--nnodes=2", "--master=127.0.0.1:{port}", "--rendezvous_timeout=1"], "rendezvous"),
    "--nproc_per_node": (["--nproc_per_node=2"], "plan"),
    "--log_dir": (["--log_dir=elsewhere"], "plan"),
    "--run_mode": (["--run_mode=collective"], "plan"),
    "--job_id": (["--job_id=compat"], "plan"),
    "--devices": (["--devices=0"], "plan"),
    "--gpus": (["--gpus=0"], "plan"),
    "--npus": (["--npus=0"], "plan"),
    "--xpus": (["--xpus=0"], "plan"),
    "--selected_gpus": (["--selected_gpus=0"], "plan"),
    "--selected_xpus": (["--selected_xpus=0"], "plan"),
    "--host": (["--host=127.0.0.1"], "plan"),
    "--ips": (["--ips=127.0.0.1"], "plan"),
    "--start_port": (["--start_port={port}"], "plan"),
    "--auto_parallel_config": (["--auto_parallel_config={dir}/tuned.json"], "plan"),
    "--auto_tuner_json": (["--auto_tuner_json={dir}/tuner.json"], "refuse"),
    "--auto_cluster_config": (["--auto_cluster_config=True"], "plan"),
    "--servers": (["--servers=127.0.0.1:{port}", "--trainers=127.0.0.1:{port1}"], "plan"),
    "--trainers": (["--trainers=127.0.0.1:{port1}", "--servers=127.0.0.1:{port}"], "plan"),
    "--workers": (["--workers=127.0.0.1:{port1}", "--servers=127.0.0.1:{port}"], "plan"),
    "--trainer_num": (["--trainer_num=2", "--server_num=1"], "plan"),
    "--worker_num": (["--worker_num=2", "--server_num=1"], "plan"),
    "--server_num": (["--server_num=1", "--trainer_num=1"], "plan"),
    "--gloo_port": (["--gloo_port={port}", "--server_num=1", "--trainer_num=1"], "plan"),
    "--http_port": (["--http_port={port}", "--server_num=1", "--worker_num=1"], "plan"),
    "--with_gloo": (["--with_gloo=1", "--server_num=1", "--trainer_num=1"], "plan"),
    "--max_restart": (["--max_restart=2"], "plan"),
    "--elastic_level": (["--elastic_level=1"], "plan"),
    "--elastic_timeout": (["--elastic_timeout=5"], "plan"),
    "--backend": (["--backend=gloo"], "plan"),
    "--heter_worker_num": (["--heter_worker_num=1", "--server_num=1", "--worker_num=1", "--heter_devices=cpu"], "plan"),
    "--heter_devices": (["--heter_devices=cpu", "--server_num=1", "--worker_num=1", "--heter_worker_num=1"], "plan"),
    "--heter_workers": (["--heter_workers=127.0.0.1:{port2}", "--servers=127.0.0.1:{port}",
                         "--workers=127.0.0.1:{port1}", "--heter_devices=cpu"], "plan"),
    "--coordinator_num": (["--coordinator_num=1", "--server_num=1", "--worker_num=1"], "refuse"),
    "--coordinators": (["--coordinators=127.0.0.1:{port}", "--server_num=1", "--worker_num=1"], "refuse"),
    "--cluster_topo_path": (["--cluster_topo_path={dir}/topo.json"], "refuse"),
    "--rank_mapping_path": (["--rank_mapping_path={dir}/mapping.json"], "refuse"),
    "--enable_auto_mapping": (["--enable_auto_mapping=True"], "refuse"),
    "--elastic_server": (["--elastic_server=127.0.0.1:{port}", "--np=2", "--rendezvous_timeout=1"], "rendezvous"),
    "--elastic_pre_hook": (["--elastic_pre_hook=true"], "plan"),
    "--np": (["--np=1"], "plan"),
    "--scale": (["--scale=1"], "plan"),
    "--force": (["--force=False"], "plan"),
}
NOT_PARSED = ("unknown option", "The following argument", "not expected", "Could not convert")


def flag_tables(python):
    out = subprocess.run([python, os.path.join(PROGRAMS, "paddle_flag_tables.py")], capture_output=True, text=True,
                         timeout=120, env=child_env({"GLOG_minloglevel": "2"}))
    check(out.returncode == 0, f"Paddle's parsers can be read:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def drive(args, env, expected, name, workdir):
    """Runs paddle-launch ARGS probe; returns what is wrong with the outcome, if anything."""
    dry = ["--dry_run=json"] if expected == "plan" else []
    r = subprocess.run([LAUNCH, *dry, *args, PROBE], capture_output=True, text=True, timeout=60, cwd=workdir,
                       env=child_env(env))
    lines = [line for line in r.stderr.splitlines() if line.strip()]
    if any(m in r.stderr for m in NOT_PARSED):
        return f"not parsed: {r.stderr.strip()[-300:]}"
    if expected == "plan":
        if r.returncode != 0:
            return f"exit {r.returncode}, not planned: {r.stderr.strip()[-300:]}"
        json.loads(r.stdout)
        return None
    if expected == "rendezvous":
        if "Configuration Arguments" not in r.stdout or r.returncode == 0:
            return f"exit {r.returncode}, did not reach the rendezvous: {r.stderr.strip()[-300:]}"
        return None
    if r.returncode != 2 or len(lines) != 1 or name not in lines[0] or "not built" not in lines[0]:
        return f"exit {r.returncode}, not one line refusing {name}: {r.stderr.strip()[-400:]}"
    return None


def check_flags_of(python):
    tables = flag_tables(python)
    version = tables["version"]
    workdir = scratch()
    with open(os.path.join(workdir, "tuned.json"), "w") as f:
        json.dump({"tuner_run_mode": "run", "dp_degree": 1}, f)
    problems, driven = [], 0
    by_flag = {}
    for launcher in ("launch", "fleet"):
        for flag in tables[launcher]:
            for name in flag["names"]:
                by_flag[name] = flag
                if name not in SAMPLES:
                    problems.append(f"{version} {launcher}: {name} has no sample here: say what paddle-launch does with it")
                    continue
                port, port1, port2 = free_ports(3)
                args, expected = SAMPLES[name]
                args = [a.format(port=port, port1=port1, port2=port2, dir=workdir) for a in args]
                problem = drive(args, {}, expected, name, workdir)
                driven += 1
                if problem:
                    problems.append(f"{version} {launcher} {name}: {problem}")
    for variable, attr in tables["env"].items():
        flag = "--" + attr
        if flag not in SAMPLES:
            problems.append(f"{version} {variable}: its flag {flag} has no sample here")
            continue
        port, port1, port2 = free_ports(3)
        args, expected = SAMPLES[flag]
        args = [a.format(port=port, port1=port1, port2=port2, dir=workdir) for a in args]
        value = args[0].split("=", 1)[1]
        problem = drive(args[1:], {variable: value}, expected, variable, workdir)
        driven += 1
        if problem:
            problems.append(f"{version} {variable}={value}: {problem}")
    print(f"Paddle {version}: {driven} flags and twins driven, {len(problems)} problem(s)", flush=True)
    check(not problems, "\n".join(problems))


def test_every_flag_and_twin_of_paddle_2_6_launchers():
    check_flags_of(paddle_python())


def test_every_flag_and_twin_of_paddle_3_3_launchers():
    check_flags_of(paddle3_python())


GETENV_OR_BACKUP = """
import json, os, sys
from paddle.distributed.backup_env import getenv_or_backup
assert os.getenv("PADDLE_TRAINER_ENDPOINTS") is None, "PADDLE_TRAINER_ENDPOINTS is in the environment"
endpoints = getenv_or_backup("PADDLE_TRAINER_ENDPOINTS").split(",")
print(json.dumps({"count": len(endpoints), "first": endpoints[0], "last": endpoints[-1],
                  "me": os.getenv("PADDLE_CURRENT_ENDPOINT"), "rank": getenv_or_backup("PADDLE_TRAINER_ID")}))
"""


def test_a_world_of_8192_ranks_reads_its_endpoints_back_with_paddle_3():
    python = paddle3_python()
    workdir = scratch()
    ips = ",".join(f"127.0.{n // 250}.{n % 250 + 1}" for n in range(128))
    plan = subprocess.run([LAUNCH, "--dry_run=json", f"--ips={ips}", "--host=127.0.0.1", "--nproc_per_node=64", PROBE],
                          capture_output=True, text=True, timeout=60, cwd=workdir, env=child_env())
    check(plan.returncode == 0, f"8,192 ranks are planned:\n{plan.stderr[-2000:]}")
    rank0 = json.loads(plan.stdout)["processes"][0]
    check("PADDLE_TRAINER_ENDPOINTS" not in rank0["env"], "PADDLE_TRAINER_ENDPOINTS is left out of the environment")
    backup = os.path.join(workdir, "backup_env.0.json")
    with open(backup, "w") as f:
        json.dump(rank0["backup_env"], f)
    env = {k: v for k, v in rank0["env"].items() if k != "PADDLE_BACKUP_ENV_PATH"}
    read = subprocess.run([python, "-c", GETENV_OR_BACKUP], capture_output=True, text=True, timeout=120,
                          env=child_env({**env, "PADDLE_BACKUP_ENV_PATH": backup}))
    check(read.returncode == 0, f"Paddle 3.3.1 reads the backup:\n{read.stderr[-2000:]}")
    got = json.loads(read.stdout.strip().splitlines()[-1])
    check(got["count"] == 8192 and got["first"] == got["me"] and got["rank"] == "0" and
          got["last"].startswith("127.0.0.128:"), f"every endpoint is read back: {got}")

    # The same rule at a start, on a world of 2 under a small PADDLE_ENV_LIMIT_LEN: the file the
    # launcher writes is the one Paddle reads.
    run = subprocess.run([LAUNCH, "--nproc_per_node=2", python, "-c", GETENV_OR_BACKUP], capture_output=True, text=True,
                         timeout=120, cwd=workdir, env=child_env({"PADDLE_ENV_LIMIT_LEN": "10"}))
    check(run.returncode == 0, f"a job whose endpoints are past the limit runs:\n{run.stderr[-2000:]}")
    for rank in (0, 1):
        with open(os.path.join(workdir, "log", f"workerlog.{rank}")) as f:
            got = json.loads([line for line in f.read().splitlines() if line.startswith("{")][-1])
        check(got["count"] == 2 and got["rank"] == str(rank), f"rank {rank} reads both endpoints back: {got}")
        mode = os.stat(os.path.join(workdir, "log", f"backup_env.{rank}.json")).st_mode & 0o777
        check(mode == 0o600, f"backup_env.{rank}.json is its owner's alone: {oct(mode)}")


# Kubeflow's PaddleJob (training-operator, pkg/controller.v1/paddlepaddle/envvar.go): every pod
# gets PADDLE_JOB_ID and PADDLE_NNODES; pod 0 of the role that hosts the master gets
# PADDLE_MASTER=$(POD_IP):PORT, every other pod PADDLE_MASTER=<job>-<role>-0:PORT, the name of that
# pod's headless service, which resolves only once the pod is ready. The PS variant adds
# PADDLE_SERVER_NUM=1 to the master pods and PADDLE_TRAINER_NUM=1 to the workers. No node rank,
# no POD_IP (the operator names it POD_IP_DUMMY), no flags but --nproc_per_node.
OPERATOR_PORT = 36543
SERVICE_LATE = 4  # seconds after pod 1 starts before its service name resolves


class PaddleJobPods:
    """Two network-namespace hosts as a PaddleJob's pods, each with its own /etc/hosts; pod 1 sees
    the service name `service` (pod 0's) there only SERVICE_LATE seconds after it starts."""

    def __init__(self, service):
        if os.geteuid() != 0:
            raise Skip("the pods of these tests are network namespaces, which need root")
        if not os.path.exists("/etc/hosts"):
            raise Skip("ip netns exec gives a pod its own /etc/hosts only over this machine's, and it has none")
        self.service = service
        self.hosts = NamespaceHosts(2)
        # Each pod's own /etc/hosts, as Kubernetes writes it: localhost and the pod's name at its IP.
        self.etc = [f"/etc/netns/{name}" for name in self.hosts.names]
        for etc, ip in zip(self.etc, self.hosts.ips):
            os.makedirs(etc, exist_ok=True)
            with open(os.path.join(etc, "hosts"), "w") as f:
                f.write(f"127.0.0.1 localhost\n{ip} {socket.gethostname()}\n")
        self.hosts_file = os.path.join(self.etc[1], "hosts")

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        for etc in self.etc:
            shutil.rmtree(etc, ignore_errors=True)
        self.hosts.close()

    def publish_service_later(self):
        def publish():
            time.sleep(SERVICE_LATE)
            with open(self.hosts_file, "a") as f:  # the same file: ip netns exec bind-mounted it
                f.write(f"{self.hosts.ips[0]} {self.service}\n")
        thread = threading.Thread(target=publish, daemon=True)
        thread.start()
        return thread

    def run(self, pod_env, program_cmd, args=(), timeout=150):
        """paddle-launch ARGS PROGRAM in each pod with only pod_env(i) added; their HostRuns."""
        runs = []
        publisher = None
        for i in range(2):
            workdir = scratch()
            env = child_env({**QUIET, **pod_env(i)})
            for name in ("POD_IP", "PADDLE_RANK", "PADDLE_TRAINER_ID"):
                env.pop(name, None)
            runs.append(HostRun(i, self.hosts.popen(i, [LAUNCH, *args, *program_cmd], cwd=workdir, env=env), workdir))
            if i == 1:
                publisher = self.publish_service_later()
        deadline = time.monotonic() + timeout
        try:
            for r in runs:
                try:
                    r.out, r.err = r.proc.communicate(timeout=max(1, deadline - time.monotonic()))
                except subprocess.TimeoutExpired:
                    raise AssertionError(f"pod {r.index}'s launcher did not finish in {timeout}s") from None
                r.returncode = r.proc.returncode
        finally:
            for r in runs:
                if r.proc.poll() is None:
                    os.killpg(r.proc.pid, 9)
                    r.out, r.err = r.proc.communicate()
                    print(r.describe(), flush=True)
        publisher.join()
        assert_sessions_gone([r.proc.pid for r in runs])
        return runs


def paddlejob_env(job, role, pods, master_ip):
    def env(i):
        master = f"{master_ip}:{OPERATOR_PORT}" if i == 0 else f"{job}-{role}-0:{OPERATOR_PORT}"
        return {"PADDLE_JOB_ID": job, "PADDLE_NNODES": str(pods), "PADDLE_MASTER": master, "PYTHONUNBUFFERED": "1"}
    return env


def check_paddlejob_ddp(python, job):
    with PaddleJobPods(f"{job}-worker-0") as pods:
        runs = pods.run(paddlejob_env(job, "worker", 2, pods.hosts.ips[0]),
                        [python, os.path.join(PROGRAMS, "paddle_ddp.py")], ["--nproc_per_node=2"])
        results = check_ddp(runs, 4)
        check(f"waiting for the host name '{job}-worker-0' (PADDLE_MASTER) to resolve" in runs[1].err,
              f"pod 1 says which name it waits for\n{runs[1].describe()}")
        check(sorted(x["rank"] for x in runs[0].results()) == [0, 1],
              f"pod 0, which hosts the master, is node 0: {results}")


def test_a_paddlejob_runs_paddle_2_6_dygraph_ddp_with_nothing_but_what_the_operator_injects():
    check_paddlejob_ddp(paddle_python(), "pj26")


def test_a_paddlejob_runs_paddle_3_3_dygraph_ddp_with_nothing_but_what_the_operator_injects():
    check_paddlejob_ddp(paddle3_python(), "pj33")


def test_a_paddlejob_parameter_server_job_runs_paddle_2_6_fleet_ps():
    python = paddle_python()
    job = "pjps"
    with PaddleJobPods(f"{job}-master-0") as pods:
        base = paddlejob_env(job, "master", 2, pods.hosts.ips[0])
        roles = [{"PADDLE_SERVER_NUM": "1"}, {"PADDLE_TRAINER_NUM": "1"}]
        runs = pods.run(lambda i: {**base(i), **roles[i], "STEPS": "20"},
                        [python, os.path.join(PROGRAMS, "paddle_fleet_ps.py")])
        results = check_fleet_workers(runs, 20)
        check(len(results) == 2 and all(len(r.logs("serverlog")) == 1 for r in runs),
              f"each pod runs a server and a worker, as under Paddle's launcher: {results}")


if __name__ == "__main__":
    main(sys.modules[__name__])
