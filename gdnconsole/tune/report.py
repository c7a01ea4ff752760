"""A sweep's results for people: the ranked table, a chart in the terminal (tokens/s per combination,
one series per batch size), Markdown and CSV. Plain text: the UI styles it, the CLI prints it. Every
cell that comes from the host (rule messages, fatal summaries, notices) has its control characters made
visible here, once."""

from __future__ import annotations

import csv
import io
import time
from collections.abc import Sequence
from pathlib import Path

from gdnconsole import safefile
from gdnconsole.logs.textsafe import visible
from gdnconsole.tune.results import ComboResult, ranked
from gdnconsole.tune.sweep import Sweep

BAR_WIDTH = 40
SERIES = "█▓▒░"  # one fill per batch size, in the order the batches were given


def _num(value: float | None, fmt: str = ".1f") -> str:
    return "–" if value is None else format(value, fmt)


def common_notices(sweep: Sweep) -> list[str]:
    """What SGLang changes for every speculative combination alike (said once, under the table)."""
    lists = [r.notices for r in sweep.combos if r.status != "rejected"]
    return [n for n in lists[0] if all(n in other for other in lists[1:])] if lists else []


def detail(result: ComboResult, common: Sequence[str]) -> str:
    shared = f"same as {result.same_as.label} (SGLang's adjustment)" if result.same_as else ""
    if result.rule:
        return visible("; ".join(filter(None, [shared, f"rule {result.rule[0]}: {result.rule[1]}"])))
    if result.fatal:
        return visible("; ".join(filter(None, [shared, result.fatal])))
    if shared:
        return shared
    parts = ["resumed"] if result.resumed else []
    parts += [n for n in result.notices if n not in common]  # what SGLang changes for this one
    return visible("; ".join(parts))


def table_rows(sweep: Sweep) -> tuple[list[str], list[list[str]]]:
    """Header and rows, ranked by tokens/s at the first batch size; the baseline on top."""
    head = ["combination", "status"]
    for batch in sweep.batches:
        head += [f"b{batch} tok/s", f"b{batch} ×", f"b{batch} ±", f"b{batch} TTFT p50", f"b{batch} accept"]
    head += ["startup s", "KV tokens", "detail"]
    order = ranked(sweep.results, sweep.batches[0]) if sweep.batches else list(sweep.results)
    base = sweep.baseline
    order = ([base] if base is not None else []) + [r for r in order if r is not base]
    rows = []
    common = common_notices(sweep)
    for result in order:
        row = [result.label, result.status]
        for batch in sweep.batches:
            f = result.by_batch.get(batch)
            spread = f"{f.spread * 100:.0f}%" if f is not None and f.spread is not None else "–"
            row += [
                _num(f.tokens_per_s if f else None),
                _num(f.speedup if f else None, ".2f"),
                spread,
                _num(f.ttft_p50_ms if f else None, ".0f"),
                _num(f.accept_length if f else None, ".2f"),
            ]
        row += [
            _num(result.startup_s),
            str(result.kv_tokens) if result.kv_tokens else "–",
            detail(result, common),
        ]
        rows.append(row)
    return head, rows


def text_table(sweep: Sweep) -> str:
    head, rows = table_rows(sweep)
    widths = [max(len(r[i]) for r in [head, *rows]) for i in range(len(head) - 1)]
    lines = []
    for row in [head, *rows]:
        cells = [
            c.ljust(w) if i < 2 else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths, strict=False))
        ]
        lines.append("  ".join(cells) + "  " + row[-1])
    return "\n".join(lines)


def chart_lines(sweep: Sweep, width: int = BAR_WIDTH) -> list[str]:
    """Tokens/s against the combination: one bar per batch size, scaled per batch size (a batch of 8
    moves more tokens than a batch of 1: each series is read against its own baseline mark ``|``)."""
    lines = []
    measured = [r for r in sweep.results if r.status == "measured"]
    label_w = max((len(r.label) for r in sweep.results), default=8)
    for n, batch in enumerate(sweep.batches):
        fill = SERIES[n % len(SERIES)]
        top = max(
            (r.by_batch[batch].tokens_per_s or 0.0 for r in measured if batch in r.by_batch), default=0.0
        )
        base = sweep.baseline.by_batch.get(batch) if sweep.baseline is not None else None
        mark = round((base.tokens_per_s or 0.0) / top * width) if base and top else None
        lines.append(f"batch {batch} ({fill}: tokens/s; | the baseline)")
        for result in sweep.results:
            f = result.by_batch.get(batch)
            rate = f.tokens_per_s if f is not None and result.status == "measured" else None
            size = round((rate or 0.0) / top * width) if top else 0
            bar = list((fill * size).ljust(width))
            if mark is not None and 0 <= mark - 1 < width:
                bar[mark - 1] = "|"  # in every row, over the fill of a faster one
            shown = _num(rate) if rate is not None else result.status
            lines.append(f"  {result.label.ljust(label_w)} {''.join(bar)} {shown}")
    return lines


def _cell(text: str) -> str:
    return visible(text.replace("\n", " ")).replace("\\", "\\\\").replace("|", "\\|")


def markdown(sweep: Sweep) -> str:
    ident = sweep.identity
    when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(sweep.started))
    head, rows = table_rows(sweep)
    measured_on = (  # the GPU names and the version are what the host said
        f"Measured on {ident.host} ({', '.join(ident.gpus) or 'GPUs unknown'}), "
        f"SGLang {ident.sglang or '?'}, "
        f"model {ident.model}, prompts {ident.prompts}, flags {ident.flags}"
    )
    lines = [
        f"## Speculative sweep on {visible(ident.host)}, {when}",
        "",
        visible(measured_on) + (" — interrupted" if sweep.interrupted else ""),
        "",
        "| " + " | ".join(_cell(h) for h in head) + " |",
        "|" + "---|" * len(head),
    ]
    lines += ["| " + " | ".join(_cell(c) for c in row) + " |" for row in rows]
    lines += [""] + [f"- For every combination: {_cell(n)}" for n in common_notices(sweep)]
    best = sweep.best
    if best is not None:
        lines += ["", f"Best: {best.combo.label} at batch {best.batch}, {best.speedup:.2f}× the baseline."]
    return "\n".join(lines) + "\n"


CSV_FIELDS = (
    "host", "sglang", "model", "prompts", "combination", "num_steps", "eagle_topk", "num_draft_tokens",
    "status", "batch", "tokens_per_s", "speedup", "spread", "request_tokens_per_s", "ttft_p50_ms",
    "ttft_p90_ms", "ttft_max_ms", "accept_length", "n", "failed", "startup_s", "kv_tokens", "rule", "fatal",
)  # fmt: skip


def csv_text(sweep: Sweep) -> str:
    """One row per combination and batch size (one row without figures for one never measured)."""
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=CSV_FIELDS, lineterminator="\n")
    writer.writeheader()
    ident = sweep.identity
    for result in sweep.results:
        combo = result.combo.to_json() if result.combo else {}
        common = {
            "host": ident.host, "sglang": ident.sglang, "model": ident.model, "prompts": ident.prompts,
            "combination": result.label, **combo, "status": result.status,
            "startup_s": result.startup_s, "kv_tokens": result.kv_tokens,
            "rule": f"{result.rule[0]}: {result.rule[1]}" if result.rule else "", "fatal": result.fatal or "",
        }  # fmt: skip
        common = {k: visible(v) if isinstance(v, str) else v for k, v in common.items()}  # the host's words
        if not result.by_batch:
            writer.writerow(common)
        for batch, figures in sorted(result.by_batch.items()):
            numbers = figures.to_json()
            writer.writerow({**common, "batch": batch, **{k: numbers[k] for k in CSV_FIELDS if k in numbers}})
    return out.getvalue()


def export(sweep: Sweep, folder: Path) -> tuple[Path, Path]:
    """Markdown and CSV next to the journal: ``HOST-tune-YYYYmmdd-HHMMSS.md`` / ``.csv``."""
    stamp = time.strftime("%Y%m%d-%H%M%S", time.localtime(sweep.started))
    folder.mkdir(parents=True, exist_ok=True)
    base = folder / f"{sweep.identity.host}-tune-{stamp}"
    md, table = base.with_suffix(".md"), base.with_suffix(".csv")
    safefile.write_text(md, markdown(sweep))  # command lines: 0600, never through a planted link
    safefile.write_text(table, csv_text(sweep))
    return md, table


def summary_line(results: Sequence[ComboResult]) -> str:
    counts: dict[str, int] = {}
    for result in results:
        counts[result.status] = counts.get(result.status, 0) + 1
    return ", ".join(f"{n} {status}" for status, n in counts.items())
