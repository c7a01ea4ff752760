"""The simulated SGLang server: argument dialects, model sizing, the log, the rank processes and HTTP.

The stand-in ``sglang`` package stays thin and calls into here; the modules below hold one idea each.
"""
