"""Collapsi by Mark S. Ball: rules engine (see ../shared/rules)."""
