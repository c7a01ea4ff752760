"""Stand-in for sglang/srt/entrypoints/engine.py: argument resolution, the args dump, then the launcher."""

from gdnsim.server import version
from gdnsim.server.launcher import run

from sglang.srt.server_args import ServerArgs


def _launch_subprocesses(server_args: ServerArgs) -> None:
    if version.resolution_pipeline():
        server_args.resolve_once()  # 523 engine.py:1153
    server_args.check_server_args()  # 511 engine.py:673; 523 engine.py:1165
    run(server_args)
