"""Pure knowledge of SGLang: launch specs and argv, log lines, startup stages, flag rules. No I/O here."""
