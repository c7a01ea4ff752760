"""Reading the grid, the batch sizes and the prompt sets: what the user types, and what it is refused for."""

from __future__ import annotations

from pathlib import Path

import pytest

from gdnconsole.tune import prompts
from gdnconsole.tune.grid import Combo, GridError, parse_batches, parse_grid


def test_the_issue_grid_is_nine_combinations_first_key_slowest() -> None:
    combos = parse_grid("num_steps=1,2,3 eagle_topk=1 num_draft_tokens=2,3,4")
    assert len(combos) == 9
    assert combos[:4] == [Combo(1, 1, 2), Combo(1, 1, 3), Combo(1, 1, 4), Combo(2, 1, 2)]
    assert combos[0].label == "s1 k1 d2" and combos[0].to_json() == {
        "num_steps": 1,
        "eagle_topk": 1,
        "num_draft_tokens": 2,
    }


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("num_steps=1,x eagle_topk=1 num_draft_tokens=2", "'x' is not an integer"),
        ("num_steps=0 eagle_topk=1 num_draft_tokens=2", "'0' is not an integer ≥ 1"),
        ("steps=1 eagle_topk=1 num_draft_tokens=2", "is not KEY=V1,V2"),
        ("num_steps=1 num_steps=2 eagle_topk=1 num_draft_tokens=2", "given twice"),
        ("num_steps=1,2", "no values for eagle_topk, num_draft_tokens"),
        ("num_steps=1,2,3,4,5 eagle_topk=1,2,3,4 num_draft_tokens=1,2,3,4", "more than 64"),
    ],
)
def test_a_bad_grid_says_which_word(text: str, says: str) -> None:
    with pytest.raises(GridError, match=says):
        parse_grid(text)


def test_batches() -> None:
    assert parse_batches("1,8") == [1, 8]
    with pytest.raises(GridError):
        parse_batches("1,,8")


def test_prompt_sets_shipped_and_from_a_file(tmp_path: Path) -> None:
    chat = prompts.load("chat")
    assert chat.prompts == prompts.CHAT and chat.ident.startswith("chat@")
    path = tmp_path / "mine.txt"
    path.write_text("# my prompts\nfirst one\n\nsecond one\n")
    mine = prompts.load(str(path))
    assert mine.prompts == ("first one", "second one") and mine.name == "mine.txt"
    with pytest.raises(GridError, match="neither a shipped set"):
        prompts.load(str(tmp_path / "missing.txt"))
