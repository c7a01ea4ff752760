"""Import the simulator's own modules into the test process, without the simulated host's stand-ins.

The simulator's directory also holds a stand-in ``pynvml`` and ``sglang``; it is put on ``sys.path`` only
for the import and taken off again, so that no other test sees those stand-ins.
"""

from __future__ import annotations

import importlib
import sys
from types import ModuleType

from gdnconsole.host.simhome import SIM_DIR


def import_sim(name: str) -> ModuleType:
    sys.path.insert(0, str(SIM_DIR))
    try:
        return importlib.import_module(name)
    finally:
        sys.path.remove(str(SIM_DIR))
