"""A user's theme file that is damaged or hostile is left out with one ThemeError naming it (the other
themes load), never a traceback that stops the dashboard from opening or a read that waits for ever."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from gdnconsole.ui import theme


def link_to_fifo(path: Path) -> None:
    os.mkfifo(path.with_suffix(".fifo"))
    path.symlink_to(path.with_suffix(".fifo"))


HOSTILE: dict[str, tuple[Callable[[Path], object], str]] = {
    "nesting 5000 deep": (lambda p: p.write_text("x = " + "[" * 5000 + "]" * 5000), "nested too deeply"),
    "a 5000-digit number": (lambda p: p.write_text("x = " + "9" * 5000), "a number too long"),
    "a FIFO": (os.mkfifo, "not a regular file"),
    "a link to a FIFO": (lambda p: link_to_fifo(p), "not a regular file"),
    "a link to /dev/zero": (lambda p: p.symlink_to("/dev/zero"), "not a regular file"),
}  # fmt: skip


@pytest.mark.parametrize(("plant", "said"), HOSTILE.values(), ids=list(HOSTILE))
def test_a_hostile_theme_file_is_one_error_naming_it(
    tmp_path: Path, plant: Callable[[Path], object], said: str
) -> None:
    path = tmp_path / "mine.toml"
    plant(path)
    with pytest.raises(theme.ThemeError, match=said) as raised:
        theme.load_file(path)
    assert str(raised.value).startswith(str(path))


def test_a_user_theme_nested_too_deeply_is_left_out_and_the_others_load(tmp_path: Path) -> None:
    user = tmp_path / "themes"
    user.mkdir()
    (user / "deep.toml").write_text("x = " + "[" * 5000 + "]" * 5000)
    themes = theme.load_all(user)
    assert "deep" not in themes.themes and theme.DEFAULT_THEME in themes.themes
    assert [e.path.name for e in themes.errors] == ["deep.toml"]
