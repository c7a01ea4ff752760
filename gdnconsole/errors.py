"""The console's own failures: what it explains to the user, as opposed to bugs.

Every error the console raises on purpose (a bad hosts file, a link that failed, a launch refused, a
server that does not answer, a log it cannot read) derives from ``ConsoleError``. A catch site catches
the kind it means; ``ConsoleError`` is the line between "say it and carry on" and a bug, which is never
turned into a message that looks like an answer (host/consolelog.py keeps its traceback).
"""

from __future__ import annotations


class ConsoleError(Exception):
    """A failure the console explains in one message; never a bug."""
