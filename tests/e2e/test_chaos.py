#!/usr/bin/env python3
"""End-to-end test of recovery under a storm: the chaos soak (chaos.py) with a fixed seed and 20
faults over the collective, parameter-server (sync and async) and elastic jobs on namespace
hosts. Every run must end equal to its undisturbed run, every stop name its fault, and nothing
be left behind or hang. It needs root (namespaces, tmpfs, etcd) and skips cleanly without it."""

import contextlib
import io
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import Skip, check, main  # noqa: E402
import chaos  # noqa: E402

SEED = 20261128
FAULTS = 20


def test_a_storm_of_20_faults_breaks_no_invariant():
    if os.geteuid() != 0:
        raise Skip("the storm makes network namespaces, mounts a tmpfs and starts etcd: it needs root")
    out = io.StringIO()
    soak = chaos.Soak(SEED, FAULTS, minutes=5, jobs=["collective", "ps-sync", "elastic", "ps-async"], keep=False)
    with contextlib.redirect_stdout(out):
        status = soak.soak()
    text = out.getvalue()
    print(text)
    check(status == 0, "every invariant held:\n" + "\n".join(soak.violations))
    injected = int(re.search(r"faults injected: (\d+)", text).group(1))
    check(injected >= FAULTS, f"{injected} faults injected, not the {FAULTS} asked for")
    kinds = set(re.findall(r"fault ([a-z-]+)[:]", text))
    check(len(kinds) >= 5, f"faults of at least 5 kinds: {sorted(kinds)}")
    for figure in ("orphans: 0", "hangs: 0", "corrupt loads: 0", "lost runs: 0", "runs unequal: 0"):
        check(figure in text, f"the report says {figure}")


if __name__ == "__main__":
    main(sys.modules[__name__])
