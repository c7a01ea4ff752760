"""The fast scan of huge logs: the C pass and the pure-Python walker tell the same story as a full read.

They may keep different lines (the C pass keeps a wrapped batch line the walker skips; run ends fall
where each one's blocks end), but the tracker must reach the same summary from either, and the same one
it reaches from every line."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gdnconsole.logs import scan as logscan
from gdnconsole.logs.lineindex import LINE_CAP
from gdnconsole.sglang.summary import summary, track

DECODE = "[2026-11-30 10:00:00 TP0] Decode batch, #running-req: 1, #token: 9, token usage: 0.00, cuda graph: True, gen throughput (token/s): 9.00, #queue-req: 0"
PREFILL = "[2026-11-30 10:00:00 TP0] Prefill batch, #new-seq: 1, #new-token: 7, #cached-token: 0, token usage: 0.00, #running-req: 0, #queue-req: 0, #pending-token: 0, cuda graph: False, input throughput (token/s): 0.00"
ACCESS = '[2026-11-30 10:00:00] INFO:     127.0.0.1:5000 - "POST /v1/chat/completions HTTP/1.1" 200 OK'
OTHER = [
    "[2026-11-30 10:00:00] The server is fired up and ready to roll!",
    "[2026-11-30 10:00:00] INFO:     Uvicorn running on http://127.0.0.1:30000 (Press CTRL+C to quit)",
    "Traceback (most recent call last):",
    "sglang-1  | " + DECODE,  # wrapped: kept (the tracker unwraps it), never skipped as a batch line
    "",
    "x" * 5000,
    "[2026-11-30 10:00:00 TP0] Decode",  # looks like a batch line, is not one
]
# With DP each rank logs its own batch lines: the scan must not hide a rank inside a run of them.
DP_DECODE = DECODE.replace(" TP0]", " DP1 TP1]")
DP_PREFILL = PREFILL.replace(" TP0]", " DP3 TP3]").replace("#new-seq: 1", "#new-seq: 3")
MAIN_DECODE = DECODE.replace(" TP0]", "]").replace("9.00", "5.00")
LINES = st.lists(
    st.sampled_from([DECODE, PREFILL, ACCESS, DP_DECODE, DP_PREFILL, MAIN_DECODE, *OTHER]), max_size=60
)


def walker_records(data: bytes) -> tuple[int, list[tuple[int, bytes]]]:
    needle = logscan._batch_needle(data)
    walker = logscan._Walker(data, 1, needle)
    count = data.count(b"\n")
    walker.walk(0, len(data), count, walker.boring_count(0, len(data)))
    return count, walker.records


def story(count: int, records: list[tuple[int, bytes]]) -> dict[str, object]:
    return summary(track(logscan.decoded(records)), file="x", lines=count)


@pytest.mark.skipif(logscan.FAST_SCAN is None, reason="the C scanner was not built (no compiler)")
@settings(max_examples=200, deadline=None)
@given(LINES)
def test_the_c_pass_and_the_walker_tell_the_same_story(lines: list[str]) -> None:
    data = "".join(line + "\n" for line in lines).encode()
    assert logscan.FAST_SCAN is not None
    count, spans = logscan.FAST_SCAN(data, 0, len(data))
    fast = story(count, [(1 + i, data[s:e]) for i, s, e in spans])
    assert fast == story(*walker_records(data))
    assert fast == story(len(lines), [(n, line.encode()) for n, line in enumerate(lines, 1)])


@pytest.fixture(params=["c", "python"])
def scanner(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Each scan test twice: with the C scanner (when it was built) and with the pure-Python one."""
    if request.param == "python":
        monkeypatch.setattr(logscan, "FAST_SCAN", None)
    elif logscan.FAST_SCAN is None:
        pytest.skip("the C scanner was not built")
    return str(request.param)


def test_scan_of_a_file_without_a_final_newline(tmp_path: Path, scanner: str) -> None:
    path = tmp_path / "x.log"
    path.write_text("\n".join([DECODE] * 5 + ["[2026-11-30 10:00:01] last words"]))
    result = logscan.scan(path, parallel=False)
    assert result.lines == 6
    assert [n for n, _ in result.records] == [1, 2, 5, 6]  # run: first, first Decode after it, last; then 6
    assert result.records[-1][1] == b"[2026-11-30 10:00:01] last words"
    empty = tmp_path / "empty.log"
    empty.write_bytes(b"")
    assert logscan.scan(empty).lines == 0


@settings(max_examples=40, deadline=None)
@given(LINES)
def test_the_walker_tells_the_story_of_a_full_read(lines: list[str]) -> None:
    data = "".join(line + "\n" for line in lines).encode()
    full = story(len(lines), [(n, line.encode()) for n, line in enumerate(lines, 1)])
    assert story(*walker_records(data)) == full
    big = data * 60  # past the 16 KiB leaves: whole ranges of batch lines are skipped by counts
    count, records = walker_records(big)
    many = lines * 60
    assert story(count, records) == story(len(many), [(n, line.encode()) for n, line in enumerate(many, 1)])


def test_the_first_batch_line_of_each_rank_is_kept(tmp_path: Path, scanner: str) -> None:
    ranks = [f"DP{r} TP{r}" for r in range(8)]
    lines = [DECODE.replace(" TP0]", f" {ranks[i % 3 if i < 3000 else i % 8]}]") for i in range(6000)]
    path = tmp_path / "x.log"
    path.write_text("\n".join(lines) + "\n")
    result = logscan.scan(path, parallel=False)
    seen = {raw[20 : raw.index(b"]")].decode().strip() for _, raw in result.records}
    assert seen == set(ranks)
    assert len(result.records) < 100  # a few lines a run or block, not every line


@pytest.mark.skipif(logscan.FAST_SCAN is None, reason="the C scanner was not built")
def test_mapped_windows_split_at_line_ends_and_read_lines_longer_than_a_window(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(logscan, "WINDOW", 64 * 1024)
    lines = [DECODE, ACCESS, PREFILL] * 900 + ["[2026-11-30 10:00:01] " + "y" * 200_000] + [DECODE] * 900
    lines += ["[2026-11-30 10:00:02] The server is fired up and ready to roll!", DECODE]
    path = tmp_path / "x.log"
    path.write_text("\n".join(lines))  # no final newline either
    result = logscan.scan(path, parallel=False)
    assert result.lines == len(lines)
    full = story(len(lines), [(n, line.encode()) for n, line in enumerate(lines, 1)])
    assert story(result.lines, result.records) == full
    assert any(len(raw) > 200_000 for _, raw in result.records)


def test_a_giant_line_is_kept_as_its_head_and_tail(tmp_path: Path, scanner: str) -> None:
    path = tmp_path / "giant.log"
    size = 3 * LINE_CAP
    path.write_bytes(b"[2026-11-30 10:00:01] " + b"y" * (size - 26) + b"TAIL\n" + DECODE.encode() + b"\n")
    result = logscan.scan(path, parallel=False)
    assert result.lines == 2
    giant = result.records[0][1]
    assert len(giant) < LINE_CAP // 10 and giant.endswith(b"yTAIL") and f"{size:,} bytes".encode() in giant
