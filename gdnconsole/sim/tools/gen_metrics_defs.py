"""Reads each unpacked wheel's ``observability/metrics_collector.py`` with ast and prints the family table
``gdnsim/server/metrics_defs.py`` holds. Run ``python tools/gen_metrics_defs.py build/sgw``, put the output
after that file's header and ``ruff format`` it."""

from __future__ import annotations

import ast
import fnmatch
import sys
from pathlib import Path

CLASSES = ("SchedulerMetricsCollector", "TokenizerMetricsCollector")
# what a plain simulated server does not serve, and why (README.md "Left out" says the same)
LEFT_OUT = (
    "sglang:kv_transfer_*",
    "sglang:*bootstrap*",
    "sglang:*prealloc*",
    "sglang:*decode_deferred*",
    "sglang:num_decode_*",
    "sglang:num_prefill_inflight_queue_reqs",
    "sglang:num_prefill_retries_total",
    "sglang:num_transfer_failed_reqs_total",
    "sglang:dp_attention_*",
    "sglang:dp_cooperation_*",
    "sglang:hicache_*",
    "sglang:lora_*",
    "sglang:grammar_*",
    "sglang:num_grammar_*",
    "sglang:num_so_requests_total",
    "sglang:prefill_delayer_*",
    "sglang:*_tokens_histogram",
)
KINDS = {"Gauge": "gauge", "Counter": "counter", "Histogram": "histogram"}


def literal_buckets(node: ast.expr) -> tuple[float, ...] | str:
    """A literal list, or a call of SGLang's ``exponential_buckets`` (0.5.11 observability/utils.py:52-56:
    ``start * width**i`` for i below length); anything else comes back as its source text."""
    if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "exponential_buckets":
        kw = {k.arg: ast.literal_eval(k.value) for k in node.keywords}
        return tuple(float(kw["start"] * (kw["width"] ** i)) for i in range(kw["length"]))
    try:
        return tuple(float(b) for b in ast.literal_eval(node))
    except ValueError:
        return ast.unparse(node)


# the run-time parts of help texts built as f-strings
FSTRING_PARTS = {
    # 0.5.23 observability/scheduler_stage_metrics.py:54-61
    "', '.join(FORWARD_OVERLAP_CATEGORIES)": "full, partial, none",
}


def help_text(node: ast.expr) -> str:
    if isinstance(node, ast.JoinedStr):
        parts = []
        for part in node.values:
            if isinstance(part, ast.FormattedValue):
                parts.append(FSTRING_PARTS[ast.unparse(part.value)])
            else:
                parts.append(str(ast.literal_eval(part)))
        return "".join(parts)
    return str(ast.literal_eval(node))


def families(path: Path) -> list[dict[str, object]]:
    tree = ast.parse(path.read_text())
    out: list[dict[str, object]] = []
    for cls in tree.body:
        if not isinstance(cls, ast.ClassDef) or cls.name not in CLASSES:
            continue
        assigns = [
            n for n in ast.walk(cls) if isinstance(n, ast.Assign) and isinstance(n.targets[0], ast.Name)
        ]
        for call in ast.walk(cls):
            if not (isinstance(call, ast.Call) and getattr(call.func, "id", "") in KINDS):
                continue
            kw = {k.arg: k.value for k in call.keywords}
            if "name" not in kw or not isinstance(kw["name"], ast.Constant):
                continue
            buckets = None
            if "buckets" in kw:
                node = kw["buckets"]
                if isinstance(node, ast.Name):
                    earlier = [a for a in assigns if a.targets[0].id == node.id and a.lineno < call.lineno]  # type: ignore[attr-defined]
                    node = earlier[-1].value if earlier else node
                buckets = literal_buckets(node)
            doc = help_text(kw["documentation"])
            extra = [
                n.value
                for n in ast.walk(kw["labelnames"])
                if isinstance(n, ast.Constant) and isinstance(n.value, str)
            ]
            mode = kw.get("multiprocess_mode")
            out.append(
                {
                    "name": kw["name"].value,
                    "kind": KINDS[call.func.id],  # type: ignore[attr-defined]
                    "doc": doc,
                    "extra": tuple(extra),
                    "buckets": buckets,
                    "mode": mode.value if isinstance(mode, ast.Constant) else None,
                    "cls": cls.name,
                    "line": call.lineno,
                }
            )
    return out


def served(fam: dict[str, object]) -> bool:
    return not any(fnmatch.fnmatchcase(str(fam["name"]), pat) for pat in LEFT_OUT)


def entry(version: str, fam: dict[str, object]) -> str:
    buckets = fam["buckets"]
    if buckets is not None and not isinstance(buckets, tuple):
        raise SystemExit(f"{version} {fam['name']}: buckets not a literal: {buckets}")
    return (
        f"        # {version} observability/metrics_collector.py:{fam['line']}\n"
        f"        Family({fam['name']!r}, {fam['kind']!r}, {fam['doc']!r}, {fam['extra']!r}, {buckets!r}, "
        f"{fam['cls'] == 'SchedulerMetricsCollector'!r}, "
        f"{fam['kind'] == 'gauge' and fam['mode'] in (None, 'all', 'liveall')!r}),\n"
    )


if __name__ == "__main__":
    root = Path(sys.argv[1])
    print("# ruff: noqa: E501 (help texts as the wheels have them)")
    print("FAMILIES: dict[str, tuple[Family, ...]] = {")
    for version in ("0.5.11", "0.5.23"):
        print(f'    "{version}": (')
        seen: set[str] = set()
        for fam in families(root / f"u{version}/sglang/srt/observability/metrics_collector.py"):
            if served(fam) and fam["name"] not in seen:
                seen.add(str(fam["name"]))
                sys.stdout.write(entry(version, fam))
        print("    ),")
    print("}")
