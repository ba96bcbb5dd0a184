import signal

pytest_plugins = ["tests.zk_fixture", "tests.broker_fixture"]


def _interrupt(signum, frame):
    raise KeyboardInterrupt(f"signal {signum}")


# A SIGTERM (a CI time limit, `timeout`) ends the run like Ctrl-C: pytest then runs the fixtures' teardown,
# which stops the ZooKeeper and broker processes the tests started instead of leaving them behind.
signal.signal(signal.SIGTERM, _interrupt)
