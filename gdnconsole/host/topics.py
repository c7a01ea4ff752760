"""The topics a host session tells its listeners, one word per kind of change.

A ``Literal`` so that mypy checks every ``notify`` and every listener's test of a topic: a misspelt
topic is a type error, not a listener that is never woken.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

Topic = Literal[
    "link",  # the link's state, its message or its round-trip time
    "hello",  # the agent said who and what the host is
    "gpus",  # a GPU sample
    "processes",  # a process scan: the SGLang servers and their ranks
    "log",  # the server log grew, or restarted
    "launched",  # the server this console launched or adopted (or its pid file) is known
    "server_exit",  # a launched, adopted or pid-file server ended
    "serving",  # what is known of the server's answers: health, VERIFIED
    "figures",  # a poll of the server's own endpoints: load, queue, pools, latencies (host/servingwatch.py)
]

Listener = Callable[[Topic], None]
