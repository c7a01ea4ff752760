"""Hold GPU memory on the simulated host until killed.

    python -m gdnsim.hold --gpu N --mib M [--util U] [--title NAME]

Stands for a leftover of a crashed run, or (with ``--title sglang::scheduler_TP0``) for a decoy that looks
like an SGLang rank: the process re-executes itself with argv[0] = NAME, so that its cmdline starts with
NAME as a process title would. Prints ``ready`` once its record is written, so that tests can wait for
that line instead of sleeping.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
from collections.abc import Sequence

from gdnsim import gpustate

TITLED_ENV = "GDNSIM_HOLD_TITLED"  # set across the re-exec, so that it happens once


def parse(argv: Sequence[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m gdnsim.hold", description=__doc__.split("\n")[0])
    parser.add_argument("--gpu", type=int, required=True, help="physical GPU index")
    parser.add_argument("--mib", type=int, required=True, help="MiB to hold")
    parser.add_argument("--util", type=int, default=0, help="utilisation to report, in percent")
    parser.add_argument("--title", default=None, help="process title: argv[0] of the holding process")
    return parser.parse_args(list(argv))


def retitle(title: str, argv: Sequence[str]) -> None:
    """Re-execute this interpreter with argv[0] = ``title`` (and comm, as setproctitle would set it)."""
    env = dict(os.environ, **{TITLED_ENV: title})
    os.execve(sys.executable, [title, "-m", "gdnsim.hold", *argv], env)


def set_comm(title: str) -> None:
    """Linux keeps 15 bytes of a process's own name in /proc/self/comm; top and ps -o comm show it."""
    try:
        with open("/proc/self/comm", "w") as comm:
            comm.write(title[:15])
    except OSError:
        pass


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    args = parse(argv)
    if args.title and os.environ.get(TITLED_ENV) != args.title:
        retitle(args.title, argv)
    if args.title:
        set_comm(args.title)
    gpustate.report(args.gpu, args.mib, args.util)
    print("ready", flush=True)
    while True:  # until a signal ends the process; its memory is then released by the readers
        signal.pause()


if __name__ == "__main__":
    sys.exit(main())
