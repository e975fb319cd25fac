#!/usr/bin/env python3
"""End-to-end test of a parameter-server job across nodes through a master (--master with
--server_num/--worker_num on each node): nodes are launchers on loopback aliases, each in its own
directory. The test bounds its time and checks by pid that no process of the job is left."""

import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import (check, child_env, children_of, free_ports, launch, main, pid_alive, port_run,  # noqa: E402
                     scratch, session_members, wait_for)
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



def test_ps_lists_across_nodes_with_the_servers_alone_on_one_node_end_on_every_node():
    """--servers on node A only, both workers on node B, the same line on each (no --master): A
    keeps its servers until B's workers have exited 0, then stops them; both exit 0."""
    need(MOVIELENS)
    args = recommender_args(["--set", "max_steps=20", "--set", "ps.mode=sync"])
    first = port_run(5)  # the master (one below the server), the server, the workers, the Gloo store
    server_port, worker_ports = first + 1, [first + 2, first + 3]
    lists = [f"--servers=127.0.0.1:{server_port}", f"--workers=127.0.0.2:{worker_ports[0]},127.0.0.2:{worker_ports[1]}",
             f"--http_port={first + 4}"]
    nodes = []
    for i in range(2):
        workdir = scratch()
        cmd = [LAUNCH, *lists, f"--host=127.0.0.{i + 1}", TRAIN, *args]
        nodes.append((subprocess.Popen(cmd, cwd=workdir, env=child_env(), stdout=subprocess.PIPE,
                                       stderr=subprocess.PIPE, text=True, start_new_session=True), workdir))
    results = []
    for proc, workdir in nodes:
        try:
            out, err = proc.communicate(timeout=120)
        except subprocess.TimeoutExpired:
            for p, _ in nodes:
                os.killpg(p.pid, 9)
            raise AssertionError(f"node {len(results)} did not end in 120 s")
        results.append((proc.returncode, err, workdir))
    for i, (code, err, _) in enumerate(results):
        check(code == 0, f"node {i} exits 0\n{err[-3000:]}")
    server_node = open(os.path.join(results[0][2], "log", "launch.log")).read()
    server_log = open(os.path.join(results[0][2], "log", "serverlog.0")).read()
    check("this node holds only servers" in server_node, f"node A keeps its servers for the job's workers:\n{server_node[-3000:]}")
    # Our servers end on their own once every worker has called stop_worker(); the launcher stops
    # them when it learns first that every worker has exited. Either way, after the workers.
    check("all workers stopped" in server_log or "going to finish parameter server" in server_node,
          f"node A's server ends after the workers:\n{server_log[-2000:]}\n{server_node[-2000:]}")
    check("no ranks" in server_node, "the rank map says node A has no ranks")
    for _, _, workdir in results:
        check("rank map" in open(os.path.join(workdir, "log", "launch.log")).read(), "the nodes met at node 0's master")
    with open(os.path.join(results[1][2], "output", "metrics.json")) as f:
        check(json.load(f)["world_size"] == 2, "two workers trained")
    for proc, _ in nodes:
        check(not session_members(proc.pid), f"nothing of node {proc.pid}'s job is left")


if __name__ == "__main__":
    main(sys.modules[__name__])
