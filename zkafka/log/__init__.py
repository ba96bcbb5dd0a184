"""Logs: segments and their indexes, each line's partition log and log manager, checkpoints, the cleaner."""
