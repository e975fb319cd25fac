"""TensorBoard's own event reader for the end-to-end tests: tensorboard 2.18.0 from PyPI, in a
venv under the build tree (pypi_venv.py).

    from tensorboard_venv import tensorboard_python
    python = tensorboard_python()  # raises harness.Skip, saying why, when PyPI cannot be reached

CTest runs this module itself first, as the fixture the TensorBoard tests require."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pypi_venv import fixture_main, venv_python  # noqa: E402

REQUIREMENTS = ["tensorboard==2.18.0"]
CHECK = "from tensorboard.backend.event_processing.event_accumulator import EventAccumulator"


def tensorboard_python():
    return venv_python("tensorboard-venv", REQUIREMENTS, CHECK)


if __name__ == "__main__":
    fixture_main("TensorBoard 2.18.0", tensorboard_python)
