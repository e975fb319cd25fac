"""Real PaddlePaddle 3.3.1 for the end-to-end tests of Paddle 3's launcher contract, in a venv under
the build tree (pypi_venv.py), beside 2.6.2's (paddle_venv.py).

    from paddle3_venv import paddle3_python
    python = paddle3_python()    # the venv's python; raises harness.Skip, saying why, when
                                 # PyPI cannot be reached or the venv cannot be made

CTest runs this module itself first, as the fixture the tests that need it require."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pypi_venv import fixture_main, venv_python  # noqa: E402

REQUIREMENTS = ["paddlepaddle==3.3.1"]
CHECK = "import paddle; assert paddle.__version__ == '3.3.1', paddle.__version__"


def paddle3_python():
    return venv_python("paddle3-venv", REQUIREMENTS, CHECK)


if __name__ == "__main__":
    fixture_main("PaddlePaddle 3.3.1", paddle3_python)
