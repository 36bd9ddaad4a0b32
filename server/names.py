"""Player names: what may be a name, how it is shown, and when two names are one claim.

A name is normalized (Unicode NFKC, runs of spaces made one, trimmed) and shown that
way. Two names are the same claim when their *keys* are equal: the key is the
name case-folded and reduced to its confusable skeleton (Unicode TS #39), so
``alice``, ``ALICE``, ``\u0430lice`` (a Cyrillic a) and fullwidth ``alice`` are one name and
``bob1`` and ``bobl`` are too. The confusables table comes from the maintained
``confusable-homoglyphs`` package (Unicode's confusables.txt as JSON).

Refused with ``bad_request`` (protocol/PROTOCOL.md, "Names"): control, format
(zero-width, bidi controls, BOM), private-use, surrogate and unassigned characters,
default-ignorable fillers, any space but U+0020, and names with no letter or digit.
"""

from __future__ import annotations

import unicodedata
from functools import lru_cache

from protocol.errors import ErrorCode, ProtocolError
from protocol.limits import NAME_MAX

#: Default_Ignorable_Code_Point characters that are not of category Cf (those are all
#: refused by category): invisible fillers and selectors that render as nothing.
_IGNORABLE = (
    (0x034F, 0x034F),  # combining grapheme joiner
    (0x115F, 0x1160),  # Hangul fillers
    (0x17B4, 0x17B5),
    (0x180B, 0x180F),  # Mongolian variation selectors
    (0x2800, 0x2800),  # braille blank (renders as a space)
    (0x3164, 0x3164),  # Hangul filler
    (0xFE00, 0xFE0F),  # variation selectors
    (0xFFA0, 0xFFA0),  # halfwidth Hangul filler
    (0x1D173, 0x1D17A),
    (0xE0100, 0xE01EF),  # variation selectors supplement
)
#: categories never allowed: control, format, surrogate, private use, unassigned,
#: line and paragraph separators
_REFUSED_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})


def _bad(reason: str) -> ProtocolError:
    """A name the server refuses: ``bad_request``, with the reason in its message."""
    return ProtocolError(ErrorCode.BAD_REQUEST, f"bad name: {reason}")


def _refused(ch: str) -> str | None:
    """Why ``ch`` may not be in a name, or None."""
    cp = ord(ch)
    cat = unicodedata.category(ch)
    if cat in _REFUSED_CATEGORIES:
        what = {"Cc": "control", "Cf": "invisible or bidi-control", "Cn": "unassigned"}
        return f"{what.get(cat, 'forbidden')} character U+{cp:04X}"
    if cat == "Zs" and ch != " ":
        return f"space character U+{cp:04X} (only U+0020 is allowed)"
    for lo, hi in _IGNORABLE:
        if lo <= cp <= hi:
            return f"invisible character U+{cp:04X}"
    return None


def normalize(name: str) -> str:
    """The name as it is shown and stored: NFKC, spaces collapsed and trimmed.

    Raises ProtocolError ``bad_request`` for a name the server refuses.
    """
    for ch in name:  # before NFKC too: it would turn some refused characters into others
        why = _refused(ch)
        if why is not None:
            raise _bad(why)
    shown = " ".join(part for part in unicodedata.normalize("NFKC", name).split(" ") if part)
    for ch in shown:
        why = _refused(ch)
        if why is not None:
            raise _bad(why)
    if not shown:
        raise _bad("empty")
    if len(shown) > NAME_MAX:
        raise _bad(f"longer than {NAME_MAX} characters once normalized")
    if not any(unicodedata.category(ch)[0] in "LN" for ch in shown):
        raise _bad("it needs at least one letter or digit")
    return shown


def name_key(name: str) -> str:
    """The claim key of a name: equal keys are one name (case and lookalikes folded).

    Total for any string (an old or foreign name is keyed too); :func:`normalize`
    decides what a new name may be.
    """
    folded = " ".join(unicodedata.normalize("NFKC", name).split()).casefold()
    return skeleton(skeleton(folded).casefold())


def skeleton(text: str) -> str:
    """TS #39 skeleton: NFD, every character to its confusable prototype, NFD again."""
    table = _prototypes()
    mapped = "".join(table.get(ch, ch) for ch in unicodedata.normalize("NFD", text))
    return unicodedata.normalize("NFD", mapped)


@lru_cache(maxsize=1)
def _prototypes() -> dict[str, str]:
    """Character -> prototype string, from confusable-homoglyphs' table.

    That table links each source character with its prototype both ways, so every
    class of lookalikes is a star: the leaves (one link) map to the centre. A class of
    two (both one link) maps to its smaller character; any choice makes them collide.
    Mapping is repeated until stable (a few prototypes contain other sources).
    """
    from confusable_homoglyphs.confusables import confusables_data

    def strip(s: str) -> str:  # the table wraps right-to-left characters in U+200E marks
        return s.replace("\u200e", "")

    links = {strip(k): [strip(e["c"]) for e in v] for k, v in confusables_data.items()}
    table: dict[str, str] = {}
    for ch, seen in links.items():
        if len(ch) != 1 or len(seen) != 1:
            continue
        proto = seen[0]
        if len(proto) == 1 and len(links.get(proto, ())) == 1 and proto > ch:
            continue  # a class of two: the larger maps to the smaller
        table[ch] = proto
    for _ in range(4):
        changed = False
        for ch, proto in table.items():
            again = "".join(table.get(c, c) for c in proto)
            if again != proto and ch not in again:
                table[ch] = again
                changed = True
        if not changed:
            break
    return table
