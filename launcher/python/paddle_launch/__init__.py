"""paddle_launch: the paddle-launch launcher as a Python package.

`pip install .` (pyproject.toml at the repository root) builds the native programs paddle-launch
and train and puts them in the environment's scripts directory, which is on PATH once the
environment is active. `python -m paddle_launch ARGS` runs `paddle-launch ARGS` (see
__main__.py), so it can stand where `python -m paddle.distributed.launch` stands. Their man pages
and bash completions go to the environment's share/man/man1 and share/bash-completion/completions
(the wheel's data files): `man paddle-launch` finds them while the environment's bin is on PATH.

This module only finds the programs; it has no launcher logic of its own.
"""

import importlib.metadata
import os

DISTRIBUTION = "paddle-launch"

try:
    __version__ = importlib.metadata.version(DISTRIBUTION)
except importlib.metadata.PackageNotFoundError:  # imported from the source tree
    __version__ = "unknown"


class NotInstalled(Exception):
    """The program is not among the files this package's distribution installed."""


def program(name="paddle-launch"):
    """The absolute path of the program NAME that pip installed with this package.

    pip records every file of a wheel (RECORD), the programs in the scripts directory included,
    relative to the package's site directory. Reading the record finds them wherever the
    install went (a venv, --user, --prefix) without guessing install schemes. The program's bash
    completion has its name too: the program is the recorded file that is executable."""
    try:
        files = importlib.metadata.distribution(DISTRIBUTION).files or []
    except importlib.metadata.PackageNotFoundError:
        raise NotInstalled(f"no '{DISTRIBUTION}' distribution is installed beside this module; "
                           "install it with `pip install .` from the paddle-launch source tree") from None
    recorded = [os.path.abspath(str(record.locate())) for record in files if record.name == name]
    for path in recorded:
        if os.path.isfile(path) and os.access(path, os.X_OK):
            return path
    if recorded:
        raise NotInstalled(f"{', '.join(recorded)}: recorded by the '{DISTRIBUTION}' distribution but none is an "
                           "executable file; reinstall it (pip install --force-reinstall .)")
    raise NotInstalled(f"the '{DISTRIBUTION}' distribution installed no program '{name}'; "
                       "reinstall it with `pip install .` from the paddle-launch source tree")
