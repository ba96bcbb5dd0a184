# Shared test code lives in tests/support; these of its modules are plugins, so their fixtures and hooks apply
# to every test: session hooks (SIGTERM, per-marker timeouts), a real ZooKeeper with a chroot per test,
# in-process and child-process brokers, a socket server recording request frames, the closing of the logs a
# test opened.
pytest_plugins = [
    "tests.support.session",
    "tests.support.codec",
    "tests.support.logs",
    "tests.support.zookeeper",
    "tests.support.brokers",
    "tests.support.server08",
    "tests.support.frame_recorder",
    "tests.support.drills",
    "tests.support.ensemble",
    "tests.support.netcut",
]
