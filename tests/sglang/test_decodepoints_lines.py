"""The sparkline's points: throughput, accept length, running and queued requests and the pools' usage of
each `Decode batch` line (FACTS §2.4), from the newest lines of a log chunk, oldest first, one rank's lines only."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from gdnconsole.sglang.decodepoints import DecodePoint, last_points, parse

# real lines: 0.5.3's period format with EAGLE3 (tp=2), 0.5.15's comma format on a hybrid model (tp=1)
EAGLE3 = (
    "[2025-10-22 10:27:57 TP0] Decode batch. #running-req: 1, #token: 186, token usage: 0.00, accept len: 1.95,"
    " accept rate: 0.49, cuda graph: True, gen throughput (token/s): 178.86, #queue-req: 0, "
)
HYBRID = (
    "[2026-07-14 10:40:24] Decode batch, #running-req: 2, #full token: 21312, full token usage: 0.01,"
    " mamba num: 8, mamba usage: 0.05, accept len: 3.36, accept rate: 0.79, cuda graph: True,"
    " gen throughput (token/s): 551.63, #queue-req: 0"
)


def at(stamp: str) -> float:
    return datetime.strptime(stamp, "%Y-%m-%d %H:%M:%S").replace(tzinfo=UTC).timestamp()


def decode(stamp: str, rate: float, rank: str = "TP0", running: int = 1, accept: float | None = None) -> str:
    spec = f"accept len: {accept:.2f}, accept rate: 0.50, " if accept is not None else ""
    return (
        f"[{stamp} {rank}] Decode batch, #running-req: {running}, #token: 100, token usage: 0.01, {spec}"
        f"cuda graph: True, gen throughput (token/s): {rate:.2f}, #queue-req: 0"
    )


def log(*lines: str) -> bytes:
    return "".join(line + "\n" for line in lines).encode()


# -- one line --------------------------------------------------------------------------------------


def test_a_speculative_decode_line_gives_its_time_rate_accept_length_and_running_requests() -> None:
    assert parse(EAGLE3) == DecodePoint(
        time=at("2025-10-22 10:27:57"),
        gen_throughput=178.86,
        accept_len=1.95,
        running=1,
        queued=0,
        token_usage=0.0,
    )


def test_a_hybrid_model_line_without_a_rank_prefix_is_the_only_rank() -> None:
    assert parse(HYBRID) == DecodePoint(
        time=at("2026-07-14 10:40:24"),
        gen_throughput=551.63,
        accept_len=3.36,
        running=2,
        queued=0,
        token_usage=0.01,
        mamba_usage=0.05,
    )


def test_without_speculation_there_is_no_accept_length() -> None:
    point = parse(decode("2026-07-14 10:40:25", 42.5, running=7))
    assert point == DecodePoint(
        time=at("2026-07-14 10:40:25"),
        gen_throughput=42.5,
        accept_len=None,
        running=7,
        queued=0,
        token_usage=0.01,
    )


def test_the_running_request_count_is_a_whole_number() -> None:
    point = parse(decode("2026-07-14 10:40:25", 10.0, running=12))
    assert point is not None and point.running == 12 and type(point.running) is int


def test_a_line_without_running_requests_still_gives_a_point() -> None:
    line = "[2026-07-14 10:40:25] Decode batch, #token: 5, cuda graph: True, gen throughput (token/s): 9.50"
    assert parse(line) == DecodePoint(
        time=at("2026-07-14 10:40:25"), gen_throughput=9.5, accept_len=None, running=None
    )


def test_a_line_without_a_throughput_is_no_point() -> None:
    assert parse("[2026-07-14 10:40:25] Decode batch, #running-req: 2, #token: 5, cuda graph: True") is None


def test_a_bare_line_without_a_timestamp_gives_a_point_without_a_time() -> None:
    line = "Decode batch, #running-req: 3, #token: 5, gen throughput (token/s): 7.25, #queue-req: 0"
    assert parse(line) == DecodePoint(time=None, gen_throughput=7.25, accept_len=None, running=3, queued=0)


@pytest.mark.parametrize("rank", ["TP0", "DP1 TP0", "PP1 TP0"])
def test_the_first_tensor_parallel_rank_is_read(rank: str) -> None:
    point = parse(decode("2026-07-14 10:40:25", 30.0, rank=rank))
    assert point is not None and point.gen_throughput == 30.0


@pytest.mark.parametrize("rank", ["TP1", "TP10", "DP0 TP1", "PP1 TP3"])
def test_the_other_ranks_repeat_the_same_batch_and_are_skipped(rank: str) -> None:
    assert parse(decode("2026-07-14 10:40:25", 30.0, rank=rank)) is None


@pytest.mark.parametrize(
    "line",
    [
        "[2026-07-14 10:40:25] Prefill batch, #new-seq: 1, #running-req: 1, input throughput (token/s): 99.00",
        "[2026-07-14 10:40:25] Not a Decode batch, gen throughput (token/s): 99.00",
        "[2026-07-14 10:40:25] decode batch, gen throughput (token/s): 99.00",
        "[2026-07-14 10:40:25] Load weight end. elapsed=2.00 s, gen throughput (token/s): 99.00",
    ],
)
def test_only_a_message_that_starts_with_decode_batch_is_a_point(line: str) -> None:
    assert parse(line) is None


def test_a_decode_line_wrapped_by_docker_compose_is_read() -> None:
    point = parse("sglang-1  | " + decode("2026-07-14 10:40:25", 12.0))
    assert point is not None and point.gen_throughput == 12.0 and point.time == at("2026-07-14 10:40:25")


# -- the newest lines of a chunk -------------------------------------------------------------------


def test_the_points_come_oldest_first() -> None:
    data = log(
        decode("2026-07-14 10:40:01", 1.0),
        decode("2026-07-14 10:40:02", 2.0),
        decode("2026-07-14 10:40:03", 3.0),
    )
    assert [p.gen_throughput for p in last_points(data, 10)] == [1.0, 2.0, 3.0]
    assert [p.time for p in last_points(data, 10)] == [at(f"2026-07-14 10:40:0{i}") for i in (1, 2, 3)]


def test_at_most_limit_points_are_kept_and_they_are_the_newest() -> None:
    data = log(*(decode(f"2026-07-14 10:40:0{i}", float(i)) for i in range(1, 8)))
    assert [p.gen_throughput for p in last_points(data, 3)] == [5.0, 6.0, 7.0]
    assert [p.gen_throughput for p in last_points(data, 1)] == [7.0]
    assert last_points(data, 0) == []
    assert len(last_points(data, 7)) == 7
    assert len(last_points(data, 8)) == 7


def test_lines_that_are_not_points_do_not_count_against_the_limit() -> None:
    data = log(
        decode("2026-07-14 10:40:01", 1.0),
        decode("2026-07-14 10:40:02", 2.0),
        decode("2026-07-14 10:40:02", 2.0, rank="TP1"),
        "[2026-07-14 10:40:03] Prefill batch, #new-seq: 1, #running-req: 1, input throughput (token/s): 5.00",
        decode("2026-07-14 10:40:03", 3.0),
        decode("2026-07-14 10:40:03", 3.0, rank="TP1"),
        "[2026-07-14 10:40:03] Decode batch, #running-req: 1, cuda graph: True",
    )
    assert [p.gen_throughput for p in last_points(data, 2)] == [2.0, 3.0]


def test_a_chunk_without_decode_lines_has_no_points() -> None:
    assert last_points(b"", 5) == []
    assert last_points(log("[2026-07-14 10:40:03] The server is fired up and ready to roll!"), 5) == []


def test_the_last_line_needs_no_newline() -> None:
    data = log(decode("2026-07-14 10:40:01", 1.0)) + decode("2026-07-14 10:40:02", 2.0).encode()
    assert [p.gen_throughput for p in last_points(data, 5)] == [1.0, 2.0]


def test_a_chunk_that_starts_with_a_decode_line_reads_it_whole() -> None:
    data = decode("2026-07-14 10:40:01", 1.0).encode() + b"\n" + log(decode("2026-07-14 10:40:02", 2.0))
    points = last_points(data, 5)
    assert [(p.time, p.gen_throughput) for p in points] == [
        (at("2026-07-14 10:40:01"), 1.0),
        (at("2026-07-14 10:40:02"), 2.0),
    ]


def test_a_chunk_that_starts_with_a_bare_decode_line_reads_it() -> None:
    data = b"Decode batch, #running-req: 3, gen throughput (token/s): 7.25\n" + log(
        decode("2026-07-14 10:40:02", 2.0)
    )
    assert [p.gen_throughput for p in last_points(data, 5)] == [7.25, 2.0]


def test_a_chunk_that_starts_with_an_empty_line_still_reads_the_line_after_it() -> None:
    data = b"\n" + log(decode("2026-07-14 10:40:02", 2.0))
    assert last_points(data, 5) == [
        DecodePoint(
            time=at("2026-07-14 10:40:02"),
            gen_throughput=2.0,
            accept_len=None,
            running=1,
            queued=0,
            token_usage=0.01,
        )
    ]


def test_windows_line_ends_are_read() -> None:
    data = (
        decode("2026-07-14 10:40:01", 1.0) + "\r\n" + decode("2026-07-14 10:40:02", 2.0) + "\r\n"
    ).encode()
    assert [p.gen_throughput for p in last_points(data, 5)] == [1.0, 2.0]


def test_a_line_that_names_decode_batch_twice_is_one_point() -> None:
    line = decode("2026-07-14 10:40:02", 2.0) + ", note: Decode batch"
    data = log(decode("2026-07-14 10:40:01", 1.0), line)
    assert [p.gen_throughput for p in last_points(data, 5)] == [1.0, 2.0]


def test_bytes_that_are_not_utf8_do_not_lose_the_point() -> None:
    data = decode("2026-07-14 10:40:01", 1.0).encode() + b" \xff\xfe garbage\n"
    assert [p.gen_throughput for p in last_points(data, 5)] == [1.0]


def test_the_points_of_a_real_speculative_log() -> None:
    data = log(
        "[2025-10-22 10:27:56 TP0] Prefill batch. #new-seq: 1, #new-token: 28, #cached-token: 0, token usage: 0.00,"
        " #running-req: 0, #queue-req: 0, ",
        "[2025-10-22 10:27:57 TP0] Decode batch. #running-req: 1, #token: 108, token usage: 0.00, accept len: 2.17,"
        " accept rate: 0.54, cuda graph: True, gen throughput (token/s): 0.39, #queue-req: 0, ",
        EAGLE3,
        "[2025-10-22 10:27:58 TP0] Decode batch. #running-req: 1, #token: 258, token usage: 0.00, accept len: 1.80,"
        " accept rate: 0.45, cuda graph: True, gen throughput (token/s): 165.41, #queue-req: 0, ",
    )
    assert [(p.gen_throughput, p.accept_len, p.running) for p in last_points(data, 40)] == [
        (0.39, 2.17, 1),
        (178.86, 1.95, 1),
        (165.41, 1.80, 1),
    ]


def test_a_chunk_that_starts_with_an_empty_line_then_a_bare_decode_line_reads_it() -> None:
    data = b"\nDecode batch, #running-req: 3, gen throughput (token/s): 7.25\n"
    assert last_points(data, 5) == [DecodePoint(time=None, gen_throughput=7.25, accept_len=None, running=3)]


def test_a_decode_line_without_a_throughput_takes_nothing_from_the_lines_after_it() -> None:
    data = log(
        "[2026-07-14 10:40:01] Decode batch, #running-req: 1, #token: 5, cuda graph: True",
        decode("2026-07-14 10:40:02", 2.0, running=4),
    )
    assert last_points(data, 5) == [
        DecodePoint(
            time=at("2026-07-14 10:40:02"),
            gen_throughput=2.0,
            accept_len=None,
            running=4,
            queued=0,
            token_usage=0.01,
        )
    ]


def test_a_last_line_without_a_newline_keeps_its_last_digit() -> None:
    data = (
        log(decode("2026-07-14 10:40:01", 1.0))
        + b"[2026-07-14 10:40:02] Decode batch, gen throughput (token/s): 551.63"
    )
    assert [p.gen_throughput for p in last_points(data, 5)] == [1.0, 551.63]
