"""Prints, as JSON, the flags of the installed Paddle's two launchers and the environment twins of
the newer one, read from the parsers themselves rather than from any list of ours:
  launch  python -m paddle.distributed.launch (launch/context/args_envs.py: parse_args, and
          env_args_mapping)
  fleet   python -m paddle.distributed.fleet.launch (fleet/launch.py: _parse_args)
Each flag: its option strings and whether it takes a value."""

import argparse
import json
import sys


class Captured(Exception):
    pass


def capture(parse):
    """The ArgumentParser that `parse` builds, caught as it parses."""
    caught = []
    original = argparse.ArgumentParser.parse_known_args

    def grab(self, *args, **kwargs):
        caught.append(self)
        raise Captured()

    argparse.ArgumentParser.parse_known_args = grab
    argparse.ArgumentParser.parse_args = grab
    try:
        parse()
    except Captured:
        pass
    finally:
        argparse.ArgumentParser.parse_known_args = original
    return caught[-1]


def flags(parser):
    out = []
    for action in parser._actions:
        names = [s for s in action.option_strings if s.startswith("--")]
        if not names or names == ["--help"]:
            continue
        out.append({"names": names, "takes_value": action.nargs != 0})
    return out


def main():
    sys.argv = ["launch", "x.py"]
    from paddle.distributed.launch.context import args_envs
    launch = capture(args_envs.parse_args)
    from paddle.distributed.fleet import launch as fleet_launch
    fleet = capture(fleet_launch._parse_args)
    import paddle
    print(json.dumps({"version": paddle.__version__, "launch": flags(launch), "fleet": flags(fleet),
                      "env": {name: attr for name, (attr, _) in args_envs.env_args_mapping.items()}}))


if __name__ == "__main__":
    main()
