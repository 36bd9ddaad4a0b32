"""Text drawn straight to strips (Textual's line API), for what a move redraws: the
board and the side panel's panes.

Why: Textual's cost of drawing is per row drawn (the row's styles, filters and the
compositor's cuts), and the compositor draws every widget under the rectangle around
the dirty regions. A ``Static`` (or ``render()``) repaints all its rows on any change;
these widgets keep the strips they drew and, after a change, repaint only the rows
that differ (bench/tui.py and bench/README.md: a move's CPU about halved). The Text is
rendered by Rich over the widget's own style, once per change.
"""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual.geometry import Region
from textual.strip import Strip
from textual.widget import Widget


def text_strips(text: Text, width: int, base: Style, console: Console, wrap: bool) -> list[Strip]:
    """``text``'s lines as strips ``width`` cells wide over ``base`` (the widget's colours);
    with ``wrap``, a line wider than that folds onto the next rows (as a Static would)."""
    out = []
    for line in text.split("\n", allow_blank=True):
        parts = (
            line.wrap(console, width, overflow="fold") if wrap and line.cell_len > width else [line]
        )
        for part in parts:
            segments = Segment.apply_style(part.render(console, end=""), base)
            out.append(Strip(segments).adjust_cell_length(width, base))
    return out


class LinesWidget(Widget):
    """A widget drawn from strips it makes itself (:meth:`make_lines`), kept until the
    next change. :meth:`changed` makes them again and repaints only the rows that
    differ: a move changes a few of the board's rows and one or two lines of a pane, and
    Textual's cost is per row drawn (its styles, filters and the compositor's cuts), and
    the compositor redraws every widget under the rectangle around what is dirty."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._strips: list[Strip] | None = None
        self._width = -1
        self._base = Style()

    def make_lines(self, width: int, base: Style) -> list[Strip]:
        raise NotImplementedError

    def lines(self, width: int) -> list[Strip]:
        """The strips at ``width``, made again after a change (or a new width)."""
        if self._strips is None or self._width != width:
            self._base = self.rich_style  # (costly to work out: once per change)
            self._strips, self._width = self.make_lines(width, self._base), width
        return self._strips

    def refresh(self, *regions: Any, **kwargs: Any) -> Any:
        if not regions:  # all of it (a focus or style change too): made again when drawn
            self._strips = None
        return super().refresh(*regions, **kwargs)

    def changed(self, layout: bool = False) -> None:
        """What is shown changed: repaint the rows that differ (all of it, and the
        screen's layout, with ``layout``)."""
        old = self._strips
        if layout or old is None or not self.is_mounted:
            self.refresh(layout=layout)
            return
        new = self._strips = self.make_lines(self._width, self._base)
        rows = [
            Region(0, y, self._width, 1)
            for y in range(max(len(old), len(new)))
            if y >= len(old) or y >= len(new) or old[y] != new[y]
        ]
        if rows:
            super().refresh(*rows)

    def render_line(self, y: int) -> Strip:
        width = self.size.width
        lines = self.lines(width)
        return lines[y] if y < len(lines) else Strip.blank(width, self._base)


class TextLines(LinesWidget):
    """A few lines of text (a side-panel pane): ``update`` it like a ``Static``."""

    DEFAULT_CSS = "TextLines { height: auto; }"

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.text = Text()

    def update(self, text: Text, layout: bool = False) -> None:
        """Show ``text``; ``layout`` when its number of rows may change (auto height)."""
        self.text = text
        self.changed(layout)

    def make_lines(self, width: int, base: Style) -> list[Strip]:
        return text_strips(self.text, width, base, self.app.console, True)

    def get_content_height(self, container: Any, viewport: Any, width: int) -> int:
        return len(self.lines(width))
