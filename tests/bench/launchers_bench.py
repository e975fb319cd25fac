"""Real launchers on loopback addresses (tests/e2e/launcher_fleet.py): for each N, N paddle-launch
processes in one job through node 0's master, each running one probe.
  all exited     start of the first launcher -> every launcher exited, each probe exiting 0 at once
  failure        the last node's probe exits 3 two seconds in -> every launcher gone, from the moment
                 that probe died (its pid watched), every launcher exiting 3
usage: launchers_bench.py LAUNCHER PROBE WORK "CPU" N [N ...]"""

import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "e2e"))
from harness import pid_alive, wait_for  # noqa: E402
from launcher_fleet import LauncherFleet  # noqa: E402

SETTLE = 1.5  # the launchers' settle_time


def all_exited(launcher, probe, work, n):
    fleet = LauncherFleet(launcher, probe, os.path.join(work, f"exit{n}"), n, job_id=f"exit{n}")
    try:
        started = fleet.start(lambda i: ["--sleep", "0"])
        statuses = fleet.wait(600)
        elapsed = time.monotonic() - started
        if statuses != [0] * n:
            sys.exit(f"{n} nodes: launchers exited {sorted(set(statuses))}, not all 0")
        return elapsed
    finally:
        fleet.kill()


def failure(launcher, probe, work, n):
    fleet = LauncherFleet(launcher, probe, os.path.join(work, f"fail{n}"), n, job_id=f"fail{n}")
    try:
        fleet.start(lambda i: ["--sleep", "600", "--fail-rank", str(n - 1), "--exit", "3", "--fail-after", "2"])
        wait_for(lambda: len(fleet.probes()) >= n, 600, f"all {n} probes to start")
        failing = [p for p in fleet.probes() if p["env"]["PADDLE_TRAINER_ID"] == str(n - 1)][0]
        while pid_alive(failing["pid"]):
            time.sleep(0.005)
        died = time.monotonic()
        statuses = fleet.wait(600)
        elapsed = time.monotonic() - died
        if statuses != [3] * n:
            sys.exit(f"{n} nodes: launchers exited {sorted(set(statuses))}, not all 3")
        left = fleet.leftovers()
        if left:
            sys.exit(f"{n} nodes: processes left behind: {left[:10]}")
        return elapsed
    finally:
        fleet.kill()


def main():
    launcher, probe, work, cpu = sys.argv[1:5]
    print(f"real launchers, one per loopback address (127.100.X.Y), one job through node 0's master; {cpu}")
    for n in map(int, sys.argv[5:]):
        exited = all_exited(launcher, probe, work, n)
        failed = failure(launcher, probe, work, n)
        print(f"{n} nodes: start to every launcher exited {exited:.2f} s; one failing process to every launcher "
              f"gone {failed:.2f} s (target settle_time + 1 s = {SETTLE + 1:.1f} s)", flush=True)


if __name__ == "__main__":
    main()
