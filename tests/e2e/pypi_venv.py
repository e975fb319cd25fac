"""A client from PyPI for the end-to-end tests, in a venv kept under the build tree so that every
test and every later run reuses it (PaddlePaddle: paddle_venv.py; TensorBoard: tensorboard_venv.py).

    python = venv_python("tensorboard-venv", ["tensorboard==2.18.0"], "import tensorboard")
                                 # the venv's python; raises harness.Skip, saying why, when
                                 # PyPI cannot be reached or the venv cannot be made

CTest runs each venv's module itself first, as the fixture its tests require, so the install's
minutes count against its own timeout. Callers take turns on a lock beside the venv: the first
installs, the others wait and reuse. A half-made venv (an install killed at its timeout) has no
stamp and is made again. A failed install is remembered for an hour, so the tests after it skip
at once instead of each trying PyPI again."""

import fcntl
import os
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import Skip  # noqa: E402

INSTALL_SECONDS = 500  # below the fixtures' CTest timeout
REMEMBER_FAILURE_SECONDS = 3600


def _read(path):
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return None


def _install(venv, python, requirements, check):
    what = " ".join(requirements)
    made = subprocess.run([sys.executable, "-m", "venv", venv], capture_output=True, text=True)
    if made.returncode != 0:
        raise Skip(f"cannot make a venv for {what} with {sys.executable}: {made.stderr.strip()[-300:]}")
    try:
        installed = subprocess.run([python, "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                                    "--retries", "1", "--timeout", "20", *requirements],
                                   capture_output=True, text=True, timeout=INSTALL_SECONDS)
    except subprocess.TimeoutExpired:
        raise Skip(f"installing {what} from PyPI took over {INSTALL_SECONDS} s") from None
    if installed.returncode != 0:
        lines = installed.stderr.strip().splitlines() or ["pip said nothing"]
        raise Skip(f"cannot install {what} from PyPI: {lines[-1][:300]}")
    checked = subprocess.run([python, "-c", check], capture_output=True, text=True)
    if checked.returncode != 0:
        raise AssertionError(f"{what} installed but `{check}` fails:\n{checked.stderr[-2000:]}")


def venv_python(name, requirements, check):
    """The python of the venv `name` in the current directory (the build tree's tests/) holding
    `requirements`, made once; `check` is Python code that must run in it after the install."""
    venv = os.path.join(os.getcwd(), name)
    python = os.path.join(venv, "bin", "python")
    stamp, failed = os.path.join(venv, ".installed"), venv + ".failed"
    with open(venv + ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if _read(stamp) == " ".join(requirements):
            return python
        why = _read(failed)
        if why and time.time() - os.path.getmtime(failed) < REMEMBER_FAILURE_SECONDS:
            raise Skip(why)
        shutil.rmtree(venv, ignore_errors=True)
        try:
            _install(venv, python, requirements, check)
        except Skip as e:
            with open(failed, "w") as f:
                f.write(str(e))
            raise
        with open(stamp, "w") as f:
            f.write(" ".join(requirements))
        if os.path.exists(failed):
            os.remove(failed)
    return python


def fixture_main(label, make):
    """The body of a venv module run by CTest as a fixture: makes the venv, or exits SKIP saying why."""
    from harness import SKIP
    try:
        print(f"{label}: {make()}")
    except Skip as e:
        print(f"SKIP: {e}")
        sys.exit(SKIP)
