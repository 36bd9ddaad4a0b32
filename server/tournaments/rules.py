"""How a running tournament moves on, as changes to its document: starting it, scoring a
finished game, the next round's pairings, forfeits, the end. Pure (no I/O): the
director (server.tournaments.director) calls these inside a compare-and-set."""

from __future__ import annotations

from typing import Any

from server.tournaments import pairing
from server.tournaments.table import MAX_ABORTS, points

Doc = dict[str, Any]


def active(doc: Doc) -> list[str]:
    """Entrants who have not withdrawn, in entry order."""
    return [n for n, e in doc["entrants"].items() if not e.get("withdrawn")]


def busy(doc: Doc) -> set[str]:
    """Players in a running game or waiting for their pairing's room."""
    out: set[str] = set()
    for g in doc["games"]:
        if g["status"] == "playing":
            out.update(g["players"])
    for p in doc["pending"]:
        out.update(p["players"])
    return out


def playing(doc: Doc) -> bool:
    return any(g["status"] == "playing" for g in doc["games"])


def start(doc: Doc, now: int) -> None:
    """Open -> running (or finished, cancelled, with too few entrants)."""
    s = doc["settings"]
    field = active(doc)
    doc["started_at"] = now
    if len(field) < s.get("min_players", 2):
        finish(doc, now, cancelled=True)
        return
    doc["status"] = "running"
    if s["format"] == "round_robin":
        doc["schedule"] = [
            [list(p) for p in rnd] for rnd in pairing.round_robin(field, s.get("rounds") or 1)
        ]
    if s["format"] == "arena":
        doc["ends_at"] = now + s["duration_ms"]


def finish(doc: Doc, now: int, cancelled: bool = False) -> None:
    doc["status"] = "finished"
    doc["pending"] = []
    doc["finished_at"] = now
    if cancelled:
        doc["cancelled"] = True


def score(doc: Doc, room: str, record_id: str | None, result: dict[str, Any] | None) -> None:
    """The game in ``room`` ended with ``result`` (its record's), or vanished without one
    (None): scored, or (aborted, vanished) its pairing is played again, up to MAX_ABORTS."""
    g = next(g for g in doc["games"] if g["room"] == room)
    if g["status"] != "playing":
        return
    g["status"] = "finished"
    g["record"] = record_id
    if result is None or result["reason"] == "aborted":
        g["reason"], g["points"] = "aborted", [0.0, 0.0]
        tries = g.get("aborts", 0) + 1
        if tries < MAX_ABORTS and doc["status"] == "running" and not doc.get("cancel"):
            # seats swapped: an abort is often a first move not made in time
            again = {"round": g["round"], "players": g["players"][::-1], "aborts": tries}
            doc["pending"].append(again)
        return
    g["reason"] = result["reason"]
    w = result["winner"]
    g["points"] = [0.5, 0.5] if w is None else [1.0 if i == w else 0.0 for i in range(2)]


def _key(p: dict[str, Any]) -> tuple[Any, ...]:
    return (p["round"], tuple(p["players"]), p.get("aborts", 0))


def claim(doc: Doc, pending: dict[str, Any], token: str, now: int, ttl_ms: int) -> None:
    """``token`` (a director) takes the pairing to open its room, unless another one
    holds a claim younger than ``ttl_ms``: two directors (a lease that lapsed under load)
    never open two rooms for one pairing; a claim whose node died lapses."""
    for p in doc["pending"]:
        if _key(p) == _key(pending):
            c = p.get("claim")
            if c is None or now - c["at"] > ttl_ms:
                p["claim"] = {"by": token, "at": now}
            return


def claimed(doc: Doc, token: str) -> dict[str, Any] | None:
    return next((p for p in doc["pending"] if p.get("claim", {}).get("by") == token), None)


def unclaim(doc: Doc, token: str) -> None:
    """The room could not be opened: the pairing waits for another try."""
    p = claimed(doc, token)
    if p is not None:
        del p["claim"]


def opened(doc: Doc, pending: dict[str, Any], room: str) -> None:
    """A pending pairing got its room: it is a running game now. (Nothing if the pairing
    is no longer pending, as claimed: the caller sees the room is not among the games.)"""
    if pending not in doc["pending"]:
        return
    doc["pending"] = [p for p in doc["pending"] if p != pending]
    doc["games"].append(
        {
            "round": pending["round"],
            "room": room,
            "players": pending["players"],
            "status": "playing",
            "aborts": pending.get("aborts", 0),
        }
    )


def advance(doc: Doc, now: int) -> None:
    """Forfeits of withdrawn players, the next round or wave, the end."""
    if doc["status"] != "running":
        return
    if doc.get("cancel"):
        doc["pending"] = []
        if not playing(doc):
            finish(doc, now, cancelled=True)
        return
    _forfeits(doc)
    fmt = doc["settings"]["format"]
    if fmt == "arena":
        _arena(doc, now)
    elif not doc["pending"] and not playing(doc):
        _next_round(doc, now)


def _forfeits(doc: Doc) -> None:
    """Pending pairings with a withdrawn player: scored at once, no room (PROTOCOL.md)."""
    gone = {n for n, e in doc["entrants"].items() if e.get("withdrawn")}
    keep = []
    for p in doc["pending"]:
        out = [n in gone for n in p["players"]]
        if not any(out):
            keep.append(p)
            continue
        doc["forfeits"] = doc.get("forfeits", 0) + 1
        doc["games"].append(
            {
                "round": p["round"],
                "room": f"forfeit-{doc['forfeits']}",
                "players": p["players"],
                "status": "finished",
                "points": [0.0 if o else 1.0 for o in out],
                "reason": "forfeit",
                "record": None,
            }
        )
    doc["pending"] = keep


def _next_round(doc: Doc, now: int) -> None:
    s = doc["settings"]
    if s["format"] == "round_robin":
        schedule = doc.get("schedule", [])
        if doc["round"] >= len(schedule):
            finish(doc, now)
            return
        doc["round"] += 1
        doc["pending"] = [
            {"round": doc["round"], "players": list(p), "aborts": 0}
            for p in schedule[doc["round"] - 1]
        ]
        _forfeits(doc)
        return
    # swiss: the players present now (doc["present"], kept by the director)
    if doc["round"] >= (s.get("rounds") or 1):
        finish(doc, now)
        return
    field = [n for n in active(doc) if n in doc.get("present", [])]
    if len(field) < 2:
        return  # wait for players to come back
    met = {frozenset(g["players"]) for g in doc["games"] if g.get("reason") != "aborted"}
    had_bye = {b["name"] for b in doc.get("byes", [])}
    pairs, bye = pairing.swiss(field, points(doc), met, had_bye)
    doc["round"] += 1
    doc["pending"] = [{"round": doc["round"], "players": list(p), "aborts": 0} for p in pairs]
    if bye is not None:
        doc.setdefault("byes", []).append({"round": doc["round"], "name": bye})


def _arena(doc: Doc, now: int) -> None:
    if now >= doc["ends_at"]:
        doc["pending"] = []
        if not playing(doc):
            finish(doc, now)
        return
    here = set(doc.get("present", []))  # a pairing whose player dropped is undone
    doc["pending"] = [p for p in doc["pending"] if here.issuperset(p["players"])]
    taken = busy(doc)
    free = [n for n in active(doc) if n in doc.get("present", []) and n not in taken]
    last: dict[str, str] = {}
    for g in doc["games"]:  # oldest first: the last one wins
        a, b = g["players"]
        last[a], last[b] = b, a
    pairs = pairing.arena(free, points(doc), last)
    if pairs:
        doc["round"] += 1
        doc["pending"] += [{"round": doc["round"], "players": list(p), "aborts": 0} for p in pairs]
