"""A child that only holds its place in the process tree: the detokenizer (and the DP controller).

``sglang::detokenizer -m gdnsim.server.idle_child``: it sets its title, dies with its parent, and sleeps.
"""

from __future__ import annotations

import argparse
import signal
import sys

from gdnsim.server import procs


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--parent-pid", type=int, required=True)
    opts = parser.parse_args(argv)
    procs.die_with_parent(opts.parent_pid)
    procs.set_comm(procs.own_title())
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    while True:
        signal.pause()


if __name__ == "__main__":
    main(sys.argv[1:])
