"""Real PaddlePaddle for the end-to-end tests: 2.6.2 from PyPI, with protobuf 4.21 (2.6 breaks on
newer ones), in a venv kept under the build tree so that every test and every later run reuses it.

    from paddle_venv import paddle_python
    python = paddle_python()     # the venv's python; raises harness.Skip, saying why, when
                                 # PyPI cannot be reached or the venv cannot be made

CTest runs `paddle_venv.py` itself first, as the fixture the Paddle tests require, so the
install's minutes count against its own timeout. Callers take turns on a lock beside the venv:
the first installs, the others wait and reuse. A half-made venv (an install killed at its
timeout) has no stamp and is made again. A failed install is remembered for an hour, so the
tests after it skip at once instead of each trying PyPI again."""

import fcntl
import os
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import SKIP, Skip  # noqa: E402

REQUIREMENTS = ["paddlepaddle==2.6.2", "protobuf==4.21.12"]
VENV = os.environ.get("PADDLE_VENV") or os.path.join(os.getcwd(), "paddle-venv")
INSTALL_SECONDS = 500  # below the fixture's CTest timeout
REMEMBER_FAILURE_SECONDS = 3600


def _read(path):
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return None


def _install(python):
    made = subprocess.run([sys.executable, "-m", "venv", VENV], capture_output=True, text=True)
    if made.returncode != 0:
        raise Skip(f"cannot make a venv for PaddlePaddle with {sys.executable}: {made.stderr.strip()[-300:]}")
    try:
        installed = subprocess.run([python, "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                                    "--retries", "1", "--timeout", "20", *REQUIREMENTS],
                                   capture_output=True, text=True, timeout=INSTALL_SECONDS)
    except subprocess.TimeoutExpired:
        raise Skip(f"installing {' '.join(REQUIREMENTS)} from PyPI took over {INSTALL_SECONDS} s") from None
    if installed.returncode != 0:
        lines = installed.stderr.strip().splitlines() or ["pip said nothing"]
        raise Skip(f"cannot install {' '.join(REQUIREMENTS)} from PyPI: {lines[-1][:300]}")
    imported = subprocess.run([python, "-c", "import paddle; print(paddle.__version__)"], capture_output=True, text=True)
    version = (imported.stdout.strip().splitlines() or [""])[-1]
    if imported.returncode != 0 or version != "2.6.2":
        raise AssertionError(f"PaddlePaddle installed but does not import as 2.6.2:\n{imported.stderr[-2000:]}")


def paddle_python():
    python = os.path.join(VENV, "bin", "python")
    stamp, failed = os.path.join(VENV, ".installed"), VENV + ".failed"
    with open(VENV + ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if _read(stamp) == " ".join(REQUIREMENTS):
            return python
        why = _read(failed)
        if why and time.time() - os.path.getmtime(failed) < REMEMBER_FAILURE_SECONDS:
            raise Skip(why)
        shutil.rmtree(VENV, ignore_errors=True)
        try:
            _install(python)
        except Skip as e:
            with open(failed, "w") as f:
                f.write(str(e))
            raise
        with open(stamp, "w") as f:
            f.write(" ".join(REQUIREMENTS))
        if os.path.exists(failed):
            os.remove(failed)
    return python


if __name__ == "__main__":
    try:
        print(f"PaddlePaddle 2.6.2: {paddle_python()}")
    except Skip as e:
        print(f"SKIP: {e}")
        sys.exit(SKIP)
