#!/usr/bin/env python3
"""End-to-end tests of the console (launcher/console/console_echo.h): whose output it shows
(--log_output), each line whole and labelled, and a slow console that never slows the job."""

import os
import re
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import assert_sessions_gone, check, child_env, launch, main, scratch  # noqa: E402

LAUNCH = os.environ.get("PADDLE_LAUNCH", "paddle-launch")

# Each rank writes LINES lines "r<rank> <i> <filler>" of 10 to 3000 characters, some in two
# writes with a flush between, as fast as it can: what a busy worker's print looks like.
WRITER = """
import os, sys
rank, lines = os.environ["PADDLE_TRAINER_ID"], int(sys.argv[1])
for i in range(lines):
    line = f"r{rank} {i} " + "x" * ((i * 7919) % 3000) + "\\n"
    if i % 5 == 0:
        sys.stdout.write(line[:len(line) // 2]); sys.stdout.flush(); sys.stdout.write(line[len(line) // 2:])
    else:
        sys.stdout.write(line)
    if i % 3 == 0:
        sys.stdout.flush()
sys.stdout.flush()
"""
PAYLOAD = re.compile(r"r(\d) (\d+) (x*)")


def echoed(stdout):
    """The payload lines of the console, as (label, rank, index, filler length)."""
    out = []
    for line in stdout.splitlines():
        m = re.search(PAYLOAD, line)
        if m:
            out.append((line[:m.start()], int(m.group(1)), int(m.group(2)), len(m.group(3)), line[m.end():]))
    return out


def test_four_busy_ranks_every_line_whole_and_labelled():
    lines = 3000
    workdir = scratch()
    proc = subprocess.run([LAUNCH, "--nproc_per_node=4", "--log_output=all", "python3", "-c", WRITER, str(lines)],
                          cwd=workdir, env=child_env(), capture_output=True, text=True, timeout=90)
    check(proc.returncode == 0, f"exit 0\n{proc.stderr[-3000:]}")
    got = echoed(proc.stdout)
    for label, rank, i, filler, rest in got:
        check(label == f"[trainer {rank}] ", f"line {rank}/{i} is labelled by its rank: {label!r}")
        check(filler == (i * 7919) % 3000 and rest == "", f"line {rank}/{i} is whole: {filler} x, then {rest[:40]!r}")
    for rank in range(4):
        indices = [i for _, rk, i, _, _ in got if rk == rank]
        check(indices == list(range(lines)), f"rank {rank}: every line, in order ({len(indices)} of {lines})")
    check("did not reach the console" not in proc.stdout + proc.stderr, "nothing was lost to a console that reads")


def test_log_output_picks_ranks_and_servers_and_prefix_can_be_turned_off():
    script = ["sh", "-c", 'echo "from ${TRAINING_ROLE:-TRAINER} ${PADDLE_TRAINER_ID:-s}"']
    said = lambda r: sorted(line for line in r.stdout.splitlines() if re.match(r"(\[[^]]*\] )?from ", line))
    r = launch(["--nproc_per_node=4", "--log_output=1,3"], script=script[0], probe_args=script[1:])
    check(r.returncode == 0, "exit 0", r)
    shown = said(r)
    check(shown == ["[trainer 1] from TRAINER 1", "[trainer 3] from TRAINER 3"], f"ranks 1 and 3 only: {shown}", r)

    r = launch(["--nproc_per_node=4", "--log_output=all", "--log_output_prefix=false"], script=script[0],
               probe_args=script[1:])
    shown = said(r)
    check(shown == [f"from TRAINER {i}" for i in range(4)], f"raw lines: {shown}", r)

    r = launch(["--nproc_per_node=4"], script=script[0], probe_args=script[1:])
    shown = said(r)
    check(shown == ["from TRAINER 0"], f"the default is rank 0's lines as they are: {shown}", r)

    r = launch(["--server_num=1", "--worker_num=2", "--log_output=server0,1"], script=script[0], probe_args=script[1:])
    shown = said(r)
    check(shown == ["[server 0] from PSERVER s", "[worker 1] from TRAINER 1"], f"a server and a worker: {shown}", r)

    r = launch(["--nproc_per_node=2", "--log_output=1,two"], script=script[0], probe_args=script[1:])
    check(r.returncode == 2 and "--log_output=1,two: 'two' is not a rank" in r.stderr, "a bad list is named", r)
    check(not os.path.exists(r.path("log", "workerlog.0")), "and nothing started", r)


def test_a_console_nobody_reads_neither_slows_nor_stalls_the_job():
    """The launcher's stdout is a pipe this test does not read until the launcher has exited."""
    workdir = scratch()
    lines = 60000  # about 90 MB per rank: a pipe holds 64 KB of it
    timed = "import time; t = time.monotonic()\n" + WRITER + \
            "\nsys.stderr.write(f'wrote in {time.monotonic() - t:.2f} s\\n')"
    started = time.monotonic()
    proc = subprocess.Popen([LAUNCH, "--nproc_per_node=2", "--log_output=all", "python3", "-c", timed, str(lines)],
                            cwd=workdir, env=child_env(), stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    try:
        code = proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, 9)
    elapsed = time.monotonic() - started
    proc.stdout.read()
    check(code == 0, f"exit 0, not {code}")
    check(elapsed < 45, f"the launcher ended within 45 s ({elapsed:.1f} s)")
    for rank in range(2):
        with open(os.path.join(workdir, "log", f"workerlog.{rank}"), errors="replace") as f:
            text = f.read()
        check(text.count("\n") == lines + 1, f"rank {rank}: every line is in its log")
        seconds = float(re.search(r"wrote in ([0-9.]+) s", text).group(1))
        check(seconds < 20, f"rank {rank} wrote its output in {seconds} s: the console did not hold it up")
    with open(os.path.join(workdir, "log", "launch.log")) as f:
        check("lines of output did not reach the console" in f.read(), "launch.log counts the lost lines")
    assert_sessions_gone([proc.pid])


if __name__ == "__main__":
    main(sys.modules[__name__])
