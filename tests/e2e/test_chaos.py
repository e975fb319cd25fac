#!/usr/bin/env python3
"""End-to-end test of recovery under a storm: the chaos soak (chaos.py) with a fixed seed and 20
faults over the collective, parameter-server (sync and async; and sync with its workers restarted
alone, in place) and elastic jobs on namespace hosts. Every run must end equal to its undisturbed run, every stop name its fault, and nothing
be left behind or hang. It needs root (namespaces, tmpfs, etcd) and skips cleanly without it."""

import os
import signal
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import Skip, check, main  # noqa: E402
import chaos  # noqa: E402

SEED = 20261128
FAULTS = 20


def test_a_storm_of_20_faults_breaks_no_invariant():
    if os.geteuid() != 0:
        raise Skip("the storm makes network namespaces, mounts a tmpfs and starts etcd: it needs root")
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # CTest's timeout: the soak cleans up its hosts
    soak = chaos.Soak(SEED, FAULTS, minutes=5, jobs=["collective", "ps-sync", "elastic", "ps-async", "ps-inplace-sync"],
                      keep=False)
    status = soak.soak()  # prints each fault as it comes, then the report
    check(status == 0, "every invariant held:\n" + "\n".join(soak.violations))
    check(soak.stats["faults"] >= FAULTS, f"{soak.stats['faults']} faults injected, not the {FAULTS} asked for")
    check(len(soak.kinds) >= 4, f"faults of at least 4 kinds: {dict(soak.kinds)}")
    for figure in ("orphans", "hangs", "corrupt loads", "lost runs", "runs unequal"):
        check(soak.stats[figure] == 0, f"{figure}: {soak.stats[figure]}")
    check(soak.stats["runs finished equal"] == soak.stats["runs"], f"every run finished equal: {dict(soak.stats)}")


if __name__ == "__main__":
    main(sys.modules[__name__])
