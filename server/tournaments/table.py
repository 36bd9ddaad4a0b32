"""A tournament document as the protocol shows it: its summary, its standings (summed
from its games, so they always agree with the records) and its games."""

from __future__ import annotations

from typing import Any

from protocol import messages as m

#: a pairing aborted this many times counts 0 to both (PROTOCOL.md, Tournaments)
MAX_ABORTS = 3


def scored(g: dict[str, Any]) -> bool:
    """A finished game that counts in the table (a voided pairing does not)."""
    return g["status"] == "finished" and g.get("reason") != "aborted"


def points(doc: dict[str, Any]) -> dict[str, float]:
    """Each entrant's points: finished games and byes."""
    pts = dict.fromkeys(doc["entrants"], 0.0)
    for g in doc["games"]:
        if scored(g):
            for name, p in zip(g["players"], g["points"], strict=True):
                pts[name] = pts.get(name, 0.0) + p
    for b in doc.get("byes", []):
        pts[b["name"]] = pts.get(b["name"], 0.0) + 1.0
    return pts


def rows(doc: dict[str, Any]) -> list[m.StandingRow]:
    """The standings: points, then Sonneborn-Berger, then wins, then name."""
    pts = points(doc)
    stats = {n: {"games": 0, "wins": 0, "draws": 0, "losses": 0, "sb": 0.0} for n in pts}
    for g in doc["games"]:
        if not scored(g):
            continue
        for i, name in enumerate(g["players"]):
            mine, other = g["points"][i], g["players"][1 - i]
            st = stats[name]
            st["games"] += 1
            key = "wins" if mine == 1.0 else "draws" if mine == 0.5 else "losses"
            st[key] += 1
            st["sb"] += mine * pts.get(other, 0.0)
    order = sorted(pts, key=lambda n: (-pts[n], -stats[n]["sb"], -stats[n]["wins"], n))
    return [
        m.StandingRow(
            rank=i + 1,
            name=n,
            points=pts[n],
            games=int(stats[n]["games"]),
            wins=int(stats[n]["wins"]),
            draws=int(stats[n]["draws"]),
            losses=int(stats[n]["losses"]),
            withdrawn=bool(doc["entrants"].get(n, {}).get("withdrawn")),
            tiebreak=round(stats[n]["sb"], 2),
        )
        for i, n in enumerate(order)
    ]


def summary(doc: dict[str, Any]) -> m.TournamentSummary:
    s = doc["settings"]
    return m.TournamentSummary.model_validate(
        {
            "tournament": doc["id"],
            "name": s["name"],
            "game": s["game"],
            "variant": s["variant"],
            "format": s["format"],
            "status": doc["status"],
            "players": len(doc["entrants"]),
            "max_players": s.get("max_players"),
            "time_control": s["time_control"],
            "starts_at": s.get("starts_at"),
            "rules": s["rules"],
            "rated": s["rated"],
            "rounds": s.get("rounds"),
            "duration_ms": s.get("duration_ms"),
            "round": doc["round"],
            "ends_at": doc.get("ends_at"),
            "cancelled": doc.get("cancelled") or None,
        }
    )


def games(doc: dict[str, Any]) -> list[m.TournamentGame]:
    return [
        m.TournamentGame(
            round=g["round"],
            room=g["room"],
            players=g["players"],
            status=g["status"],
            points=g.get("points"),
            reason=g.get("reason"),
            record=g.get("record"),
        )
        for g in doc["games"][-500:]
    ]


def standings(doc: dict[str, Any], re: Any = None) -> m.Standings:
    return m.Standings(
        re=re,
        tournament=doc["id"],
        status=doc["status"],
        round=doc["round"],
        rows=rows(doc)[:500],
        summary=summary(doc),
        games=games(doc),
    )
