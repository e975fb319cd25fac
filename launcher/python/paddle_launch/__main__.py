"""python -m paddle_launch ARGS: runs `paddle-launch ARGS`.

The Python process becomes paddle-launch (os.execv): the same process id, so signals sent to it
(Ctrl-C, a scheduler's SIGTERM) reach the launcher itself, and its exit status is the launcher's.
Nothing of Python stays behind between the user and the job.

`train` and the other programs of the package sit beside paddle-launch; that directory is added
to the end of PATH when missing, so `python -m paddle_launch ... train` finds train even from an
environment that is not activated, as `paddle-launch ... train` does from one that is."""

import os
import sys

from paddle_launch import NotInstalled, program


def with_program_dir_on_path(path_value, program_dir):
    entries = [e for e in path_value.split(os.pathsep) if e] if path_value else []
    if program_dir in (os.path.abspath(e) for e in entries):
        return path_value
    return os.pathsep.join(entries + [program_dir])


def main():
    try:
        launcher = program("paddle-launch")
    except NotInstalled as e:
        print(f"python -m paddle_launch: {e}", file=sys.stderr)
        return 127  # what a shell answers for a command it cannot find
    os.environ["PATH"] = with_program_dir_on_path(os.environ.get("PATH", os.defpath), os.path.dirname(launcher))
    sys.stdout.flush()
    sys.stderr.flush()
    os.execv(launcher, [launcher, *sys.argv[1:]])


if __name__ == "__main__":
    sys.exit(main())
