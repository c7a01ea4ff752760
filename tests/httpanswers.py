"""A real HTTP server on 127.0.0.1 for tests that stand in for an SGLang server's endpoints: a handler
base that answers with a body and stays quiet, and the server run on a thread for the test's length."""

from __future__ import annotations

import contextlib
import http.server
import threading
from collections.abc import Iterator
from typing import TypeVar

Server = TypeVar("Server", bound=http.server.HTTPServer)


class Answering(http.server.BaseHTTPRequestHandler):
    """``answer(status, body, kind)``; no access log on the test's stderr."""

    def answer(self, status: int, body: bytes, kind: str = "application/json") -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        pass


@contextlib.contextmanager
def serving(server: Server) -> Iterator[Server]:
    """``server`` answering on a daemon thread until the block ends, then shut and closed."""
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
