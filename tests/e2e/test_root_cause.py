#!/usr/bin/env python3
"""End-to-end tests of error files and the root cause (common/error_record.h,
launcher/supervise/root_cause.h): each failing process leaves LOG_DIR/error.<role>.<rank>.json,
and the launcher's report leads with what it says, frames named; side effects are called so."""

import json
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import Skip, check, launch  # noqa: E402

TRAIN = os.environ.get("TRAIN", "train")
CONFIGS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "configs")


def record(r, role, rank):
    with open(r.path("log", f"error.{role}.{rank}.json")) as f:
        return json.load(f)


def report(r):
    """The failure report: from "failed process:" to the end of stderr."""
    at = r.stderr.find("failed process:")
    check(at >= 0, "a failure report", r)
    return r.stderr[at:]


def test_every_process_is_told_its_error_file():
    r = launch(["--nproc_per_node=2"], ["--sleep", "0"])
    check(r.returncode == 0, "exit 0", r)
    for d in r.dumps():
        want = os.path.join(r.workdir, "log", f"error.trainer.{d['rank']}.json")
        check(d["env"]["PADDLE_ERROR_FILE"] == want and d["env"]["TORCHELASTIC_ERROR_FILE"] == want,
              f"rank {d['rank']}: PADDLE_ERROR_FILE and TORCHELASTIC_ERROR_FILE are {want}")
    check(not os.path.exists(r.path("log", "error.trainer.0.json")), "a process that succeeds leaves no record")


def test_an_exception_in_train_leads_the_report():
    r = launch(["--nproc_per_node=2"], ["--config", os.path.join(CONFIGS, "fit_a_line.json"),
                                        "--set", "data_dir=/nonexistent/housing"], script=TRAIN, timeout=60)
    check(r.returncode != 0, "the job fails", r)
    first = report(r).splitlines()
    rank = int(first[0].split("trainer ")[1].split()[0])
    rec = record(r, "trainer", rank)["paddle"]
    check(rec["kind"] == "exception" and rec["type"].startswith("paddle::") and "/nonexistent/housing" in rec["what"],
          f"the record names the exception and its message: {rec}")
    check(f"root cause (log/error.trainer.{rank}.json):" in first[0], "the report says where the cause is", r)
    check(rec["type"] in first[1] and "/nonexistent/housing" in first[1], "and leads with it, before the log", r)


def test_a_segfault_an_abort_and_an_uncaught_exception_in_cpp_are_named_with_their_frames():
    cases = {"segv": ("died by SIGSEGV", 128 + 11), "abort": ("died by SIGABRT", 128 + 6),
             "throw": ("std::runtime_error: the probe's training step failed", 128 + 6)}
    for crash, (headline, status) in cases.items():
        r = launch(["--nproc_per_node=2"], ["--crash", crash, "--fail-rank", "1", "--sleep", "30"])
        check(r.returncode == status, f"{crash}: the launcher exits {status}", r)
        lines = report(r).splitlines()
        check("trainer 1" in lines[0] and "root cause (log/error.trainer.1.json):" in lines[0],
              f"{crash}: the report names trainer 1 and its record", r)
        check(lines[1].endswith(headline), f"{crash}: then {headline!r}", r)
        frames = [line for line in lines if " at " in line and "#" in line]
        check(frames and "crash_deliberately" in frames[0] or crash == "throw",
              f"{crash}: the first frame shown is the probe's own, named", r)
        check(any("probe.cc:" in f for f in frames), f"{crash}: with its file and line", r)
        rec = record(r, "trainer", 1)["paddle"]
        check(rec["signal"] == {"segv": "SIGSEGV", "abort": "SIGABRT", "throw": ""}[crash],
              f"{crash}: the record's signal: {rec}")
        if crash == "throw":
            check(rec["kind"] == "terminate" and rec["chain"] == ["std::out_of_range: step 7 of 6"],
                  f"the nested exception is in the chain: {rec}")


def test_a_python_script_with_torchs_record_leads_the_report():
    python = shutil.which("python3", path="/usr/bin")
    if not python or subprocess.run([python, "-c", "import torch.distributed.elastic.multiprocessing.errors"],
                                    capture_output=True).returncode != 0:
        raise Skip("no torch for /usr/bin/python3 (Debian's python3-torch)")
    script = ("from torch.distributed.elastic.multiprocessing.errors import record\n"
              "import os\n"
              "@record\n"
              "def main():\n"
              "    if os.environ['PADDLE_TRAINER_ID'] == '1':\n"
              "        raise ValueError('batch 7 has no labels')\n"
              "main()\n")
    r = launch(["--nproc_per_node=2"], ["-c", script], script=python, timeout=60)
    check(r.returncode == 1, "exit 1", r)
    lines = report(r).splitlines()
    check("trainer 1" in lines[0] and "root cause (log/error.trainer.1.json)" in lines[0], "trainer 1's record", r)
    check(lines[1].endswith("ValueError: batch 7 has no labels"), "torch's message leads", r)
    check('File "<string>", line 6, in main' in report(r), "with the traceback's last lines", r)


def test_a_side_effect_is_called_so_and_the_cause_is_named_whichever_failed_first():
    peer_record = ('printf \'{"paddle": {"kind": "exception", "type": "paddle::collective::CollectiveError", '
                   '"what": "rank 1 is gone", "peer": true}}\' > "$PADDLE_ERROR_FILE"; exit 1')
    # Rank 1 is killed; the others notice it a moment later (they outlive the launcher's SIGTERM).
    script = ('trap "" TERM; if [ "$PADDLE_TRAINER_ID" = 1 ]; then sleep 0.3; kill -9 $$; fi; sleep 0.8; '
              + peer_record)
    r = launch(["--nproc_per_node=4", "--grace_period=10"], ["-c", script], script="sh", timeout=60)
    check(r.returncode == 137, "the launcher exits with trainer 1's status", r)
    text = report(r)
    check(text.startswith("failed process: trainer 1 ") and "SIGKILL" in text.splitlines()[0], "trainer 1 leads", r)
    check("trainer 1 ended with signal SIGKILL (9); trainers 0, 2 and 3 then failed on the lost peer" in text,
          "the others are side effects", r)

    # Now a side effect is the first to fail: rank 2 gives up on rank 1 before rank 1 dies.
    script = ('trap "" TERM; case "$PADDLE_TRAINER_ID" in 2) sleep 0.2; ' + peer_record.replace("exit 1", "exit 3")
              + ';; 1) sleep 0.6; kill -9 $$;; *) sleep 1;; esac')
    r = launch(["--nproc_per_node=4", "--grace_period=10"], ["-c", script], script="sh", timeout=60)
    text = report(r)
    check(text.startswith("failed process: trainer 1 "), "the cause, trainer 1, leads though trainer 2 failed first", r)
    check("trainer 1 ended with signal SIGKILL (9); trainer 2 then failed on the lost peer (the first to fail, but not "
          "the cause)" in text, "and trainer 2 is called a side effect", r)


if __name__ == "__main__":
    from harness import main
    main(sys.modules[__name__])
