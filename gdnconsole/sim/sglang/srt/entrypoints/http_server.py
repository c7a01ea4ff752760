"""Stand-in for sglang/srt/entrypoints/http_server.py: the HTTP server lives in ``gdnsim.server``."""

from sglang.srt.entrypoints.engine import _launch_subprocesses
from sglang.srt.server_args import ServerArgs


def launch_server(server_args: ServerArgs) -> None:
    """Start the ranks, then serve HTTP until shutdown (511 http_server.py `launch_server`)."""
    _launch_subprocesses(server_args=server_args)
