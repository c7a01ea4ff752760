"""Launch the server (stand-in for ``python -m sglang.launch_server ARGS``, 511 launch_server.py:66-71)."""

import os
import sys

from gdnsim.server.procs import kill_process_tree

from sglang.srt.entrypoints.http_server import launch_server
from sglang.srt.server_args import prepare_server_args

if __name__ == "__main__":
    server_args = prepare_server_args(sys.argv[1:])

    try:
        launch_server(server_args)
    finally:
        kill_process_tree(os.getpid(), include_parent=False)
