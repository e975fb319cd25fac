"""200 real launchers on loopback addresses in one job through one master: the control plane at
a size where its cost per node shows (issue: a rendezvous that read every registration every
250 ms took 21 s for 256 nodes). No root needed: 127.0.0.0/8 is all this machine's."""

import os
import sys
import time

from harness import check, main, scratch, wait_for
from launcher_fleet import LauncherFleet, fleet_ip

LAUNCHER = os.environ["PADDLE_LAUNCH"]
PROBE = os.environ["PROBE"]
NODES = 200
FAILING = 137  # the node whose process fails


def test_two_hundred_launchers_one_job_one_failure_and_every_exit_status():
    fleet = LauncherFleet(LAUNCHER, PROBE, scratch(), NODES, job_id="many")
    try:
        # Every process sleeps long enough to be stopped; the failing node's exits 7 at 3 s.
        fleet.start(lambda i: ["--sleep", "120", "--fail-rank", str(FAILING), "--exit", "7", "--fail-after", "3"])
        wait_for(lambda: len(fleet.probes()) >= NODES, 60, f"all {NODES} nodes' processes to start")
        probes = fleet.probes()
        ranks = sorted(int(p["env"]["PADDLE_TRAINER_ID"]) for p in probes)
        check(ranks == list(range(NODES)), f"one job of ranks 0..{NODES - 1}: {ranks[:10]}...")
        check({p["env"]["PADDLE_TRAINERS_NUM"] for p in probes} == {str(NODES)}, "every process sees the whole job")
        statuses = fleet.wait(60)
        check(statuses == [7] * NODES, f"every launcher exits with the failing process's status 7: "
                                       f"{sorted(set(statuses))} ({statuses.count(7)} of {NODES})")
        for i in (0, FAILING, NODES - 1):
            check(f"node {FAILING} ({fleet_ip(FAILING)}" in fleet.console(i) and "exit code 7" in fleet.console(i),
                  f"node {i} names node {FAILING} and its exit code as the root cause:\n{fleet.console(i)[-1500:]}")
        left = fleet.leftovers()
        check(not left, f"no process left in any launcher's session: {left[:20]}")
    finally:
        fleet.kill()


if __name__ == "__main__":
    main(sys.modules[__name__])
