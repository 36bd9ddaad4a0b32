"""Protocol v1: the one message set spoken between clients and the server (no I/O)."""
