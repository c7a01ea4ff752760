"""Stand-in for sglang/srt/arg_groups (0.5.22+): argument resolution split into hooks."""
