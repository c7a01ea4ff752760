"""Serve a fixed SGLang page set on 127.0.0.1 from a process of its own, for bench_serving_poll.py.

    python bench/servepage.py METRICS_FILE LOADS_JSON SERVER_INFO_JSON

HTTP/1.1 with Content-Length, so that keep-alive holds as with SGLang's uvicorn; prints the port it
listens on, then serves until killed. Access lines are not written (uvicorn's cost is the server's).
Each /metrics answer is the page a second later (``GrowingPage``): the histograms gain observations, so
the readers' windows hold what a busy server's do, not a page that never changes.
"""

from __future__ import annotations

import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import ClassVar


class GrowingPage:
    """The page after ``n`` more seconds: every histogram series ``n`` observations more (in its lowest
    bucket, so its cumulative buckets stay ordered), its sum ``n`` x 10 ms more."""

    def __init__(self, text: str) -> None:
        self.lines = text.splitlines()
        self.grow = [i for i, line in enumerate(self.lines) if _histogram_part(line) is not None]

    def at(self, n: int) -> str:
        lines = list(self.lines)
        for i in self.grow:
            head, _, value = lines[i].rpartition(" ")
            step = 0.01 * n if _histogram_part(head) == "_sum" else n
            lines[i] = f"{head} {float(value) + step}"
        return "\n".join(lines) + "\n"


def _histogram_part(line: str) -> str | None:
    if line.startswith("#"):
        return None
    name = line.split("{", 1)[0].split(" ", 1)[0]
    for part in ("_bucket", "_count", "_sum"):
        if name.endswith(part) and name.startswith("sglang:"):
            return part
    return None


class Pages(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    bodies: ClassVar[dict[str, tuple[bytes, str]]] = {}
    page: ClassVar[GrowingPage | None] = None
    served: ClassVar[int] = 0

    def do_GET(self) -> None:
        path = self.path.split("?")[0]
        body, kind = self.bodies.get(path, (b"not found\n", "text/plain"))
        if path == "/metrics" and self.page is not None:
            Pages.served += 1
            body = self.page.at(Pages.served).encode()
        self.send_response(200 if path in self.bodies else 404)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        pass


def main() -> None:
    metrics, loads, info = (Path(a).read_bytes() for a in sys.argv[1:4])
    text, json = "text/plain; version=0.0.4; charset=utf-8", "application/json"
    Pages.page = GrowingPage(metrics.decode())
    Pages.bodies = {
        "/metrics": (metrics, text),
        "/v1/loads": (loads, json),
        "/server_info": (info, json),
        "/get_server_info": (info, json),  # what sgtop asks (its direct.py), the older name
    }
    server = ThreadingHTTPServer(("127.0.0.1", 0), Pages)
    print(server.server_address[1], flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
