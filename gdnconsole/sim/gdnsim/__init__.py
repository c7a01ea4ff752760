"""Core of the simulated GPU host.

This directory (``gdnconsole/sim``) is put on ``PYTHONPATH`` of processes that should believe they run on
a GPU box: it provides the stand-in ``sglang`` package, the stand-in ``pynvml`` module and this ``gdnsim``
core. Nothing here imports from the ``gdnconsole`` package: the simulator stands where a real box would,
so it must not share the console's parser or flag rules (the tests would check the console against itself).
"""
