#!/usr/bin/env python3
"""End-to-end test of a parameter-server job across nodes through a master (--master with
--server_num/--worker_num on each node): nodes are launchers on loopback aliases, each in its own
directory. The test bounds its time and checks by pid that no process of the job is left."""

import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import check, child_env, children_of, free_ports, launch, main, pid_alive, scratch, wait_for  # noqa: E402
from test_ps import recommender_args, MOVIELENS  # noqa: E402
from test_train import need  # noqa: E402

LAUNCH = os.environ.get("PADDLE_LAUNCH", "paddle-launch")
TRAIN = os.environ.get("TRAIN", "train")


def test_a_ps_job_across_two_nodes_through_a_master_equals_one_node():
    need(MOVIELENS)
    args = recommender_args(["--set", "max_steps=30", "--set", "ps.mode=sync"])
    master = f"127.0.0.1:{free_ports(1)[0]}"
    nodes, seen = [], set()
    for i in range(2):
        workdir = scratch()
        cmd = [LAUNCH, f"--master={master}", "--nnodes=2", f"--host=127.0.0.{i + 1}", "--server_num=1",
               "--worker_num=1", TRAIN, *args]
        nodes.append((subprocess.Popen(cmd, cwd=workdir, env=child_env(), stdout=subprocess.PIPE,
                                       stderr=subprocess.PIPE, text=True, start_new_session=True), workdir))
    results = []
    for proc, workdir in nodes:
        try:
            wait_for(lambda: seen.update(children_of(proc.pid)) or proc.poll() is not None, 120, "a node to finish")
        finally:
            if proc.poll() is None:
                proc.kill()
        out, err = proc.communicate()
        results.append((proc.returncode, err, workdir))
    for i, (code, err, _) in enumerate(results):
        check(code == 0, f"node {i} exits 0\n{err[-3000:]}")
    endpoints = [open(os.path.join(w, "log", "endpoints.log")).read() for _, _, w in results]
    check(endpoints[0] == endpoints[1] and "1 server(s)" in endpoints[0], f"one rank map with servers:\n{endpoints[0]}")
    one = launch(["--server_num=2", "--worker_num=2"], args, script=TRAIN, timeout=120)
    check(one.returncode == 0, "one node with 2 servers and 2 workers", one)
    with open(os.path.join(results[0][2], "output", "metrics.json")) as f:
        two_nodes = json.load(f)
    with open(one.path("output", "metrics.json")) as f:
        single = json.load(f)
    check(abs(two_nodes["test_rmse"] - single["test_rmse"]) <= 1e-4,
          f"test RMSE: 2 nodes {two_nodes['test_rmse']} vs one node {single['test_rmse']}")
    wait_for(lambda: not any(pid_alive(p) for p in seen), 5, f"processes {sorted(seen)} to be gone")


if __name__ == "__main__":
    main(sys.modules[__name__])
