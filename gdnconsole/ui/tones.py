"""Rich styles in the colours of the app's Textual theme, for text built as ``rich.text.Text`` (model output
and figures are data, never markup, so they cannot take colours from CSS variables inline)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from rich.style import Style
from rich.text import Text
from textual.app import App
from textual.theme import Theme
from textual.widget import Widget

from gdnconsole.logs.textsafe import visible_lines
from gdnconsole.timefmt import span


@dataclass(frozen=True)
class Tones:
    good: Style  # a verdict: bold, in the theme's success colour
    bad: Style  # bold, error
    warn: Style  # bold, warning
    success: Style  # the same three colours as they are, for text that is not a verdict (a diff's lines)
    error: Style
    warning: Style
    accent: Style
    primary: Style
    value: Style  # a figure
    label: Style  # the name beside a figure
    muted: Style

    @classmethod
    def of(cls, app: App[object]) -> Tones:
        """The styles of the app's theme: its CSS variables once the app has styled itself, else the same
        colours computed from its theme now."""
        return cls._of(app.theme_variables or app.current_theme.to_color_system().generate())

    @classmethod
    def of_theme(cls, theme: Theme) -> Tones:
        """The styles of a theme, without an app (for text built outside one, and tests)."""
        return cls._of(theme.to_color_system().generate())

    @classmethod
    def _of(cls, colours: Mapping[str, str]) -> Tones:
        # Every colour is the theme's own: Textual derives each of these variables from every theme.
        def colour(name: str) -> Style:
            return Style(color=colours[name])

        bold = Style(bold=True)
        return cls(
            good=colour("success") + bold,
            bad=colour("error") + bold,
            warn=colour("warning") + bold,
            success=colour("success"),
            error=colour("error"),
            warning=colour("warning"),
            accent=colour("accent"),
            primary=colour("primary"),
            value=colour("foreground") + bold,
            label=Style(dim=True),
            muted=Style(dim=True),
        )


def model_text(text: str) -> str:
    """Text from a model, safe to show: every control character visible, except newlines and tabs."""
    return visible_lines(text)


def ms(value: float | None) -> str:
    """``212 ms``, ``12.4 s`` (a time in milliseconds, said as every time span is: timefmt.span)."""
    return "—" if value is None else span(value / 1000)


def seconds(value_ms: float | None) -> str:
    """``1.5 s``: a total time (in milliseconds), said as every time span is."""
    return ms(value_ms)


def rate(value: float | None) -> str:
    return "—" if value is None else f"{value:.1f} tok/s"


def styled(text: str, style: Style) -> Text:
    """A Text that starts with ``text`` in ``style`` (unlike ``Text(text, style)``, whose style would be the
    base of everything appended to it)."""
    out = Text()
    out.append(text, style)
    return out


class Repaints:
    """For a widget whose text is built in the theme's colours: it remembers how it last painted itself,
    to paint the same again in a new theme's colours."""

    _again: Callable[[], None] | None = None

    @property
    def tones(self) -> Tones:
        assert isinstance(self, Widget)
        return Tones.of(self.app)

    def repaint(self) -> None:
        if self._again is not None:
            self._again()
