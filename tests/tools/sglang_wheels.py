"""Fetch the SGLang wheels the tests read as the oracle, and unpack their ``sglang/srt`` sources.

    python -I tests/tools/sglang_wheels.py DIR

leaves ``DIR/u0.5.11/sglang/srt/...`` and ``DIR/u0.5.23/...``; a version already unpacked is left as it
is. ``make test`` runs it (``make wheels``) before the suite; the tests that read a wheel find it through
tests/wheels.py. Without a package index the download fails: the script says so, and those tests are
skipped (failed under CI)."""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

VERSIONS = ("0.5.11", "0.5.23")
MARK = "sglang/srt/server_args.py"  # present once a version is unpacked


def unpack(wheel: Path, into: Path) -> None:
    """The wheel's ``sglang/srt`` tree, written beside ``into`` and renamed to it whole, so an
    interrupted unpack never looks complete."""
    into.parent.mkdir(parents=True, exist_ok=True)
    shutil.rmtree(into, ignore_errors=True)  # a partial tree from an older layout
    with tempfile.TemporaryDirectory(dir=into.parent) as tmp, zipfile.ZipFile(wheel) as archive:
        staged = Path(tmp) / "tree"
        members = [m for m in archive.namelist() if m.startswith("sglang/srt/") and ".." not in m.split("/")]
        archive.extractall(staged, members)
        staged.rename(into)


def fetch(version: str, root: Path) -> bool:
    target = root / f"u{version}"
    if (target / MARK).is_file():
        return True
    with tempfile.TemporaryDirectory() as download:
        done = subprocess.run(
            [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--disable-pip-version-check",
             "--dest", download, f"sglang=={version}"],
            capture_output=True, text=True, check=False,
        )  # fmt: skip
        wheels = sorted(Path(download).glob(f"sglang-{version}-*.whl"))
        if done.returncode != 0 or not wheels:
            last = (done.stderr.strip().splitlines() or ["no wheel"])[-1]
            print(
                f"note: sglang {version} could not be downloaded ({last}); the tests that read it are skipped"
            )
            return False
        unpack(wheels[0], target)
    return True


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    root = Path(argv[0])
    for version in VERSIONS:
        fetch(version, root)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
