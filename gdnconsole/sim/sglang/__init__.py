"""Stand-in for the ``sglang`` package on the simulated GPU host (see ``gdnconsole/sim/README.md``).

Thin on purpose: the modules here keep SGLang's module paths (so tracebacks read like SGLang's) and hand
the work to ``gdnsim.server``.
"""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("sglang")
except PackageNotFoundError:  # no dist-info on the path: not a prepared simulated host
    __version__ = "0.0.0"
