"""Launchers of local server processes (a real Apache ZooKeeper) for the CLI, the demo and the tests."""
