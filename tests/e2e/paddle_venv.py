"""Real PaddlePaddle for the end-to-end tests: 2.6.2 from PyPI, with protobuf 4.21 (2.6 breaks on
newer ones), in a venv kept under the build tree so that every test and every later run reuses it.

    from paddle_venv import paddle_python
    python = paddle_python()     # the venv's python; raises harness.Skip, saying why, when
                                 # PyPI cannot be reached or the venv cannot be made

Tests that run at once take turns on a lock beside the venv: the first installs, the others wait
and reuse. A half-made venv (an install killed at its timeout) has no stamp and is made again."""

import fcntl
import os
import shutil
import subprocess
import sys

from harness import Skip

REQUIREMENTS = ["paddlepaddle==2.6.2", "protobuf==4.21.12"]
VENV = os.environ.get("PADDLE_VENV") or os.path.join(os.getcwd(), "paddle-venv")


def paddle_python():
    python = os.path.join(VENV, "bin", "python")
    stamp = os.path.join(VENV, ".installed")
    with open(VENV + ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if os.path.exists(stamp) and open(stamp).read() == " ".join(REQUIREMENTS):
            return python
        shutil.rmtree(VENV, ignore_errors=True)
        made = subprocess.run([sys.executable, "-m", "venv", VENV], capture_output=True, text=True)
        if made.returncode != 0:
            raise Skip(f"cannot make a venv for PaddlePaddle with {sys.executable}: {made.stderr.strip()[-300:]}")
        try:
            installed = subprocess.run([python, "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                                        "--retries", "1", "--timeout", "20", *REQUIREMENTS],
                                       capture_output=True, text=True, timeout=400)
        except subprocess.TimeoutExpired:
            raise Skip(f"installing {' '.join(REQUIREMENTS)} from PyPI took over 400 s") from None
        if installed.returncode != 0:
            lines = installed.stderr.strip().splitlines() or ["pip said nothing"]
            raise Skip(f"cannot install {' '.join(REQUIREMENTS)} from PyPI: {lines[-1][:300]}")
        imported = subprocess.run([python, "-c", "import paddle; print(paddle.__version__)"], capture_output=True, text=True)
        if imported.returncode != 0 or imported.stdout.strip() != "2.6.2":
            raise AssertionError(f"PaddlePaddle installed but does not import:\n{imported.stderr[-2000:]}")
        with open(stamp, "w") as f:
            f.write(" ".join(REQUIREMENTS))
    return python
