"""Collecto: rules engine (see ../shared/rules, rulings 10-15)."""
