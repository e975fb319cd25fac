"""Real PaddlePaddle for the end-to-end tests: 2.6.2 from PyPI, with protobuf 4.21 (2.6 breaks on
newer ones), and py-spy (the Python frames of a hang's report), in a venv under the build tree
(pypi_venv.py).

    from paddle_venv import paddle_python
    python = paddle_python()     # the venv's python; raises harness.Skip, saying why, when
                                 # PyPI cannot be reached or the venv cannot be made

CTest runs this module itself first, as the fixture the Paddle tests require."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pypi_venv import fixture_main, venv_python  # noqa: E402

REQUIREMENTS = ["paddlepaddle==2.6.2", "protobuf==4.21.12", "py-spy==0.4.3"]
CHECK = "import paddle; assert paddle.__version__ == '2.6.2', paddle.__version__"


def paddle_python():
    return venv_python("paddle-venv", REQUIREMENTS, CHECK)


if __name__ == "__main__":
    fixture_main("PaddlePaddle 2.6.2", paddle_python)
