"""The console's own failures: what it explains to the user, as opposed to bugs.

Every error the console raises on purpose (a bad hosts file, a link that failed, a launch refused, a
server that does not answer, a log it cannot read) derives from ``ConsoleError``. A catch site catches
the kind it means; ``ConsoleError`` is the line between "say it and carry on" and a bug, which is never
turned into a message that looks like an answer (host/consolelog.py keeps its traceback).
"""

from __future__ import annotations


class ConsoleError(Exception):
    """A failure the console explains in one message; never a bug."""


# What an action on a host (a launch, a stop, a check) may fail with that is not a bug: the console's own
# refusals, a link or file that fails (OSError), no answer in time. Anything else is a bug.
EXPLAINED: tuple[type[Exception], ...] = (ConsoleError, OSError, TimeoutError)
