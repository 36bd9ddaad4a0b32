"""ENGINE_PROTOCOL.md's transcripts are real: every line parses, formats back the
same, and every worked example replays legally through the rules engine."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from clients.engines import protocol as p

DOC = Path(__file__).resolve().parent.parent / "clients" / "ENGINE_PROTOCOL.md"


def transcripts() -> list[tuple[str, list[str]]]:
    """(heading, lines) of every ```text block of the document holding > / < lines."""
    text = DOC.read_text()
    out = []
    heading = ""
    for m in re.finditer(r"^(#+ [^\n]*)$|^```text\n(.*?)^```", text, re.M | re.S):
        if m.group(1):
            heading = m.group(1)
        elif m.group(2):
            lines = [ln for ln in m.group(2).splitlines() if ln[:2] in ("> ", "< ")]
            if lines:
                out.append((heading, lines))
    return out


def test_the_document_has_an_example_of_every_game_and_variant():
    headings = " ".join(h for h, _ in transcripts())
    for words in (
        "classic",
        "Big Board, three",
        "four players",
        "Shifting",
        "Player's Choice",
        "custom",
        "Collecto",
        "resigned",
    ):
        assert words in headings
    variants = {
        p.parse_command(ln[2:]).variant  # type: ignore[union-attr]
        for _, lines in transcripts()
        for ln in lines
        if ln.startswith("> newgame") and "..." not in ln
    }
    assert {
        "base",
        "big-board",
        "shifting",
        "players-choice",
        "custom",
        "big-board+shifting",
    } <= variants


@pytest.mark.parametrize("heading,lines", transcripts(), ids=lambda v: str(v)[:40])
def test_every_line_parses_and_formats_back(heading, lines):
    for line in lines:
        text = line[2:].split("   ")[0].rstrip()  # the overview's comments follow 3+ spaces
        if text.endswith("..."):
            continue  # the overview's "newgame ..."
        if line.startswith("> "):
            cmd = p.parse_command(text)
            assert cmd is not None, text
            assert p.format_command(cmd) == text
        else:
            reply = p.parse_reply(text)
            assert reply is not None and not isinstance(reply, p.Unknown), text
            assert p.format_reply(reply) == text


@pytest.mark.parametrize(
    "heading,lines",
    [t for t in transcripts() if "Worked" in t[0] or "###" in t[0]],
    ids=lambda v: str(v)[:40],
)
def test_worked_examples_replay_legally(heading, lines):
    new = position = None
    legal: tuple[str, ...] = ()
    for line in lines:
        text = line[2:]
        item = p.parse_command(text) if line.startswith(">") else p.parse_reply(text)
        if isinstance(item, p.NewGame):
            new = item
        elif isinstance(item, p.Position):
            position = item
        elif isinstance(item, p.Legal):
            assert new is not None and position is not None
            game = p.game_from(new, position)
            assert game.to_move() == new.seat, heading
            assert list(item.moves) == game.legal_moves(), heading
            legal = item.moves
        elif isinstance(item, p.Go) and item.time is not None:
            assert new is not None and len(item.time) == new.players
        elif isinstance(item, p.BestMove):
            assert item.move in legal, (heading, item.move)
