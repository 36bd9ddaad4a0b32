"""``arena tui``: the full-screen terminal client, on Textual (see :mod:`clients.tui.app`)."""
