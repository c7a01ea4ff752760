"""`tune`: find the fastest speculative flags that work on a host, measured (issue 19).

A grid of speculative settings is checked against the host version's rules (``plan``), then each
combination that SGLang would accept is launched, verified and measured at each batch size (``sweep``,
``measure``), after the baseline without speculation. Results are stored as they come (``store``: resume),
ranked and exported (``report``), and the best can be saved into the profile (``apply``). Headless: the
CLI (`gdnconsole tune`) and the dashboard's tune screen drive the same engine.
"""
