"""Collecto: rules engine (see ../shared/rules, rulings 10-15).

Importing this package registers :class:`CollectoGame` as ``"collecto"``.
"""

from engine.collecto.game import CollectoGame

__all__ = ["CollectoGame"]
