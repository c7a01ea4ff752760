"""Log files on this machine: the line index, the fast scanner (and its optional C extension), the
document the log view pages through, and making log text safe to show."""
