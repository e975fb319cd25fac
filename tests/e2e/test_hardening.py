#!/usr/bin/env python3
"""End-to-end tests of the orphan guard (launcher/supervise/orphan_guard.h): whatever shape of
process tree a training script makes, nothing of it survives the launcher, however the launcher ends. Each
script records the pids of what it starts; the tests check those pids (never names)."""

import os
import signal
import socket
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import Skip, check, child_env, main, process_stats, pid_alive, scratch, wait_for  # noqa: E402

LAUNCH = os.environ.get("PADDLE_LAUNCH", "paddle-launch")
TRAIN = os.environ.get("TRAIN", "train")
MOVIELENS = os.path.join(os.environ.get("SHARED_DATA", ""), "ml-100k")
CONFIGS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "configs")

# Each shape appends the pids it leaves running to $PIDS_DIR/$PADDLE_TRAINER_ID.<shape>.
SHAPES = {
    "grandchild": "sleep 300 & echo $! >> \"$OUT\"; wait",
    "double_fork": "(sleep 301 & echo $! >> \"$OUT\") ; sleep 300",
    "setsid": "setsid sh -c 'echo $$ >> \"$OUT\"; exec sleep 302' & sleep 300",
    "new_group": "python3 -c 'import os, time; os.setpgid(0, 0); open(os.environ[\"OUT\"], \"a\").write(f\"{os.getpid()}\\n\"); "
                 "time.sleep(300)' & sleep 300",
    "multiprocessing": "python3 -c '\n"
                       "import multiprocessing as mp, os, time\n"
                       "def work(out):\n"
                       "    open(out, \"a\").write(f\"{os.getpid()}\\n\"); time.sleep(300)\n"
                       "if __name__ == \"__main__\":\n"
                       "    ps = [mp.Process(target=work, args=(os.environ[\"OUT\"],)) for _ in range(2)]\n"
                       "    [p.start() for p in ps]; [p.join() for p in ps]\n'",
}
EXPECTED = {"grandchild": 1, "double_fork": 1, "setsid": 1, "new_group": 1, "multiprocessing": 2}


def start_job(shapes, workdir, env=None, nproc=2):
    """paddle-launch running a script that makes every shape in `shapes` on each of `nproc` ranks."""
    script = os.path.join(workdir, "shapes.sh")
    with open(script, "w") as f:
        f.write("#!/bin/sh\n")
        for shape in shapes:
            f.write(f"( OUT=\"$PIDS_DIR/$PADDLE_TRAINER_ID.{shape}\"; export OUT; {SHAPES[shape]} ) &\n")
        f.write("wait\n")
    os.chmod(script, 0o755)
    pids_dir = os.path.join(workdir, "pids")
    os.makedirs(pids_dir)
    proc = subprocess.Popen([LAUNCH, f"--nproc_per_node={nproc}", "--grace_period=1", script], cwd=workdir,
                            env=child_env({"PIDS_DIR": pids_dir, **(env or {})}), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    return proc, pids_dir


def recorded_pids(pids_dir, shapes, nproc=2):
    """Waits until every shape on every rank has written its pids; returns them all."""
    def complete():
        pids = []
        for rank in range(nproc):
            for shape in shapes:
                try:
                    with open(os.path.join(pids_dir, f"{rank}.{shape}")) as f:
                        found = [int(x) for x in f.read().split()]
                except OSError:
                    return None
                if len(found) < EXPECTED[shape]:
                    return None
                pids += found
        return pids
    return wait_for(complete, 20, f"the pids of {shapes} on {nproc} ranks")


def assert_gone_within(pids, seconds, what):
    started = time.monotonic()
    try:
        wait_for(lambda: not any(pid_alive(p) for p in pids), seconds, what)
    finally:
        for p in pids:  # a failed check leaves nothing behind either
            if pid_alive(p):
                os.kill(p, signal.SIGKILL)
    return time.monotonic() - started


def sigkill_leaves_nothing(shapes, env=None):
    workdir = scratch()
    proc, pids_dir = start_job(shapes, workdir, env)
    try:
        pids = recorded_pids(pids_dir, shapes)
        check(all(pid_alive(p) for p in pids), "every escapee runs before the kill")
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.communicate()
    took = assert_gone_within(pids, 2.0, f"{len(pids)} processes of shapes {shapes} to die with the launcher")
    return took, open(os.path.join(workdir, "log", "launch.log")).read()


def test_a_sigkilled_launcher_takes_grandchildren_and_double_forks_with_it():
    sigkill_leaves_nothing(["grandchild", "double_fork"])


def test_a_sigkilled_launcher_takes_setsid_and_new_group_escapees_with_it():
    sigkill_leaves_nothing(["setsid", "new_group"])


def test_a_sigkilled_launcher_takes_python_multiprocessing_workers_with_it():
    sigkill_leaves_nothing(["multiprocessing"])


def test_without_a_cgroup_the_environment_key_finds_every_shape():
    _, log = sigkill_leaves_nothing(list(SHAPES), env={"PADDLE_ORPHAN_GUARD": "environment"})
    check("orphan guard: the environment" in log, f"the launch log says which guard is in use:\n{log}")


def test_sigterm_and_a_failure_reach_the_whole_tree():
    for stop in ("sigterm", "failure"):
        workdir = scratch()
        proc, pids_dir = start_job(["setsid", "double_fork"], workdir)
        pids = recorded_pids(pids_dir, ["setsid", "double_fork"])
        if stop == "sigterm":
            proc.send_signal(signal.SIGTERM)
            expected = 143
        else:
            # A trainer dies (the launcher's other child, the watchdog, has a session of its own).
            trainer = next(p for p, _, ppid, _, sid in process_stats() if ppid == proc.pid and sid == proc.pid)
            os.kill(trainer, signal.SIGKILL)
            expected = 128 + signal.SIGKILL
        out, err = proc.communicate(timeout=20)
        check(proc.returncode == expected, f"{stop}: exit {proc.returncode}\n{err[-2000:]}")
        assert_gone_within(pids, 0.5, f"{stop}: the escapees to be gone when the launcher has exited")


def test_the_orphan_watchdog_shows_in_ps_under_a_name_a_person_recognises_and_holds_only_its_pipe():
    workdir = scratch()
    proc = subprocess.Popen([LAUNCH, "--nproc_per_node=1", "sleep", "30"], cwd=workdir, env=child_env(),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        def watchdog():  # the launcher's child in a session of its own
            return next((pid for pid, _, ppid, _, sid in process_stats() if ppid == proc.pid and sid == pid), None)
        wait_for(watchdog, 10, "the launcher's orphan watchdog")
        pid = watchdog()
        with open(f"/proc/{pid}/comm") as f:
            comm = f.read().strip()
        check(comm == "paddle-watchdog", f"ps shows the watchdog as paddle-watchdog, not {comm!r}")
        with open(f"/proc/{pid}/cmdline") as f:
            cmdline = [arg for arg in f.read().split("\0") if arg]
        check(cmdline == ["paddle-launch", "--orphan-watchdog"],
              f"its command line says what it is (a pkill -f of the launcher's misses it): {cmdline}")
        # Not the launcher's console (a `paddle-launch ... | tee` ends with the launcher), not its
        # sockets or files: its standard input is the pipe only the launcher writes to.
        fds = {int(fd): os.readlink(f"/proc/{pid}/fd/{fd}") for fd in os.listdir(f"/proc/{pid}/fd")}
        check(sorted(fds) == [0, 1, 2] and fds[0].startswith("pipe:") and fds[1] == fds[2] == "/dev/null",
              f"the watchdog holds its pipe and /dev/null only: {fds}")
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.communicate(timeout=20)


def test_a_successful_job_leaves_no_daemon_behind():
    workdir = scratch()
    pids_dir = os.path.join(workdir, "pids")
    os.makedirs(pids_dir)
    script = "setsid sh -c 'echo $$ >> \"$PIDS_DIR/$PADDLE_TRAINER_ID\"; exec sleep 300' & sleep 0.5"
    r = subprocess.run([LAUNCH, "--nproc_per_node=2", "sh", "-c", script], cwd=workdir, capture_output=True, text=True,
                       env=child_env({"PIDS_DIR": pids_dir}), timeout=30)
    check(r.returncode == 0, f"exit 0\n{r.stderr[-2000:]}")
    pids = [int(x) for rank in range(2) for x in open(os.path.join(pids_dir, str(rank))).read().split()]
    assert_gone_within(pids, 0.5, "the daemons the job left to be gone")
    check("left behind outside their groups" in r.stderr, f"the launcher says it killed them\n{r.stderr[-2000:]}")


def test_a_raw_client_is_refused_by_the_jobs_store_and_named():
    """Rank 0's rendezvous store asks for the job's token (PADDLE_JOB_TOKEN, set by the launcher)."""
    workdir = scratch()
    probe = os.environ.get("COLLECTIVE_PROBE", "collective_probe")
    proc = subprocess.Popen([LAUNCH, "--nproc_per_node=2", probe, "--linger", "30"], cwd=workdir, env=child_env(),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        log = os.path.join(workdir, "log", "workerlog.0")
        wait_for(lambda: os.path.exists(log) and "agree" in open(log).read(), 30, "the ranks to meet at the store")
        with open(os.path.join(workdir, "log", "endpoints.log")) as f:
            host, port = f.read().split()[1].rsplit(":", 1)
        answers = []
        for proof in (None, "0" * 40):
            with socket.create_connection((host, int(port)), timeout=5) as s:
                if proof:
                    s.sendall(b"GET /auth/challenge HTTP/1.1\r\nHost: x\r\n\r\n")
                    s.recv(4096)
                s.sendall(f"GET /kv/anything HTTP/1.1\r\nHost: x\r\n{'X-Paddle-Proof: ' + proof if proof else ''}"
                          "\r\n\r\n".encode())
                answers.append((s.recv(4096).decode().split("\r\n")[0], s.getsockname()[1]))
        for status, client_port in answers:
            check(" 401 " in status, f"refused: {status}")
            wait_for(lambda: f"refused 127.0.0.1:{client_port}" in open(log).read(), 5,
                     f"rank 0 to log the refusal of 127.0.0.1:{client_port}")
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=20)


def test_a_raw_client_is_refused_by_the_jobs_parameter_server_and_named():
    """A PS server of a launched job asks each connection to prove the job's token before any frame."""
    if not os.path.isdir(MOVIELENS):
        raise Skip(f"no MovieLens data at {MOVIELENS}")
    workdir = scratch()
    # The server trains for real; the worker only holds the job open while the test knocks.
    role_script = ('if [ "$TRAINING_ROLE" = PSERVER ]; then exec "$0" "$@"; else sleep 60; fi')
    proc = subprocess.Popen([LAUNCH, "--server_num=1", "--worker_num=1", "sh", "-c", role_script, TRAIN,
                             "--config", os.path.join(CONFIGS, "recommender_ps.json"), "--set", f"data_dir={MOVIELENS}"],
                            cwd=workdir, env=child_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    try:
        log = os.path.join(workdir, "log", "serverlog.0")
        read = lambda: open(log).read() if os.path.exists(log) else ""
        wait_for(lambda: "Server listening on " in read(), 30, "the parameter server to listen")
        check("no PADDLE_JOB_TOKEN" not in read(), "a launched server has the job's token")
        host, port = read().split("Server listening on ")[1].split()[0].rsplit(":", 1)
        with socket.create_connection((host, int(port)), timeout=5) as s:
            greeting = s.recv(36)
            check(greeting[:4] == b"PSAU", f"the server greets with its challenge: {greeting!r}")
            s.sendall(b"0" * 40)
            verdict = s.recv(1)
            client_port = s.getsockname()[1]
            check(verdict == b"-", f"the proof is refused: {verdict!r}")
            check(s.recv(1) == b"", "and the connection closed before any frame")
        wait_for(lambda: f"refused 127.0.0.1:{client_port}" in read(), 5,
                 f"the server to log the refusal of 127.0.0.1:{client_port}")
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=20)


if __name__ == "__main__":
    main(sys.modules[__name__])
