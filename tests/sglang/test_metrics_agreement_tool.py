"""The /metrics agreement tool (tests/tools/sglang_metrics_agreement.py, issue 28): against each wheel's
own collectors, from the wheels `make wheels` unpacks (tests/wheels.py: skipped without them, failed
under CI), and its check on the pages kept from them always."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.sglang.servingdata import page
from tests.tools.sglang_metrics_agreement import bucket_bounds, check
from tests.wheels import unpacked, wheel_source

ROOT = Path(__file__).resolve().parents[2]
TOOL = ROOT / "tests/tools/sglang_metrics_agreement.py"
VERSIONS = ["0.5.11", "0.5.23"]


@pytest.mark.parametrize("version", VERSIONS)
def test_the_kept_pages_agree(version: str) -> None:
    text = page(version)
    assert check(version, text, bucket_bounds(text)) == []


def test_the_check_sees_a_wrong_reading() -> None:
    text = page("0.5.23")
    bounds = bucket_bounds(text)
    wrong = text.replace('pp_rank="0",tp_rank="0"} 7.0', 'pp_rank="0",tp_rank="0"} 6.0', 1)
    assert wrong != text
    assert any("rank 0 running: read 6" in p for p in check("0.5.23", wrong, bounds))
    streaming = [line for line in text.splitlines() if 'is_streaming="false"' not in line]
    assert any(p.startswith("ttft_s:") for p in check("0.5.23", "\n".join(streaming) + "\n", bounds))


@pytest.mark.parametrize("version", VERSIONS)
def test_the_wheels_own_collectors_are_read_back_exactly(version: str, tmp_path: Path) -> None:
    wheel_source(version, "observability/metrics_collector.py")
    saved = tmp_path / "page.txt"
    done = subprocess.run(
        [sys.executable, str(TOOL), "--sglang", version, "--wheel", str(unpacked(version)), "--save", str(saved)],
        capture_output=True, text=True, timeout=300, cwd=ROOT,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert json.loads(done.stdout) == {"version": version, "problems": []}
    # the kept page has the same series as a fresh one (pids differ run to run)
    fresh, kept = (sorted(_series(t)) for t in (saved.read_text(), page(version)))
    assert fresh == kept


def _series(text: str) -> list[str]:
    return [
        re.sub(r'pid="\d+"', 'pid=""', line.rsplit(" ", 1)[0])
        for line in text.splitlines()
        if line[:1] != "#"
    ]
