"""ZooKeeper: the client helpers (client.py) and each line's znode layout (paths07.py, paths08.py)."""
