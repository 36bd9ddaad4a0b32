"""The client's memory and the garbage collector's pauses (bench/tui.py, issue 15).

Two memory leaks of Textual (8.2), worked around. Each kept the widgets of every game
screen closed, with their rendered lines, so the heap grew by about 12,000 objects a
game and every full garbage collection took longer: 120-600 ms pauses in the middle of
drawing a move (bench/tui.py, issue 15).

- ``Footer`` composes its keys again whenever the screen's bindings change (a screen
  shown again, a focus change) and data-binds each new key to its ``compact`` reactive;
  the old keys are removed but stay in the footer's watcher list (Textual prunes it only
  when ``compact`` changes, which never happens here). :class:`KeysFooter` prunes it.
- ``StylesCache.get_inner_outer`` is an ``lru_cache`` on a method, so its cache keys
  hold the last 1024 ``StylesCache`` objects (one per widget ever drawn), each with every
  line it rendered. The result depends only on the two colours: :func:`release_widgets`
  puts in its place a cache keyed by them alone.

And :func:`settle`: full collections scan every object the collector tracks, most of
them built at start-up and alive as long as the app.
"""

from __future__ import annotations

import gc
from functools import lru_cache
from typing import Any

from textual._styles_cache import StylesCache
from textual.widgets import Footer


class KeysFooter(Footer):
    """A ``Footer`` that forgets the keys it removed (see the module docstring)."""

    async def recompose(self) -> None:
        await super().recompose()
        watchers = getattr(self, "__watchers", None)  # (Textual's name: textual/reactive.py)
        for name, entries in (watchers or {}).items():
            watchers[name] = [(node, cb) for node, cb in entries if node.is_attached]  # type: ignore[index]


@lru_cache(1024)
def _inner_outer(base_background: Any, background: Any) -> Any:
    return _original(None, base_background, background)


_original: Any = getattr(StylesCache.get_inner_outer, "__wrapped__", None)


def release_widgets() -> None:
    """Cache ``StylesCache.get_inner_outer`` by its colours, not by the widget's cache
    (a no-op if a Textual release no longer caches it on the method)."""
    if _original is not None and StylesCache.get_inner_outer is not _self_free:
        StylesCache.get_inner_outer = _self_free  # type: ignore[method-assign]


def _self_free(self: StylesCache, base_background: Any, background: Any) -> Any:
    return _inner_outer(base_background, background)


def settle() -> None:
    """Collect now, while nothing is being drawn (start-up done, back in the lobby after a
    game), and hide what survives from the collector (``gc.freeze``): it is the app, its
    screens and the session, alive for long. A full collection during a game then scans
    only what the game made since: it was 100-500 ms under load, scanning all of Textual,
    often in the middle of drawing a move. (A frozen object is still freed by reference
    counting when dropped; only a cycle made before a freeze outlives it.)"""
    gc.collect()
    gc.freeze()


def thaw() -> None:
    """The app is closing: what :func:`settle` froze is the collector's again (tests run
    many apps in one process; their servers and apps must not outlive them)."""
    gc.unfreeze()
