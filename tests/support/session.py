"""Session-wide pytest hooks: a SIGTERM ends the run like Ctrl-C, per-marker test timeouts, no Hypothesis
deadlines, and a run whose unit or integration tests leave descriptors open fails.

Registered as a plugin by tests/conftest.py.
"""

from __future__ import annotations

import gc
import os
import signal

import pytest
from hypothesis import settings

from tests.support.descriptors import fd_targets

# Hypothesis examples assert behaviour, not speed: no per-example deadline, so a loaded CI machine cannot fail
# a property test on time alone (speed targets live in benchmarks). A test's own @settings still applies.
settings.register_profile("zkafka", deadline=None)
settings.load_profile("zkafka")

# The global limit is pyproject's `timeout`; a test marked with one of these (and no timeout of its own) gets
# more, because the first such test also pays for a session fixture (a Spark JVM, a container image pull).
MARKER_TIMEOUTS = {"spark": 300, "container": 600}


def _interrupt(signum, frame):
    raise KeyboardInterrupt(f"signal {signum}")


# A SIGTERM (a CI time limit, `timeout`) ends the run like Ctrl-C: pytest then runs the fixtures' teardown,
# which stops the ZooKeeper and broker processes the tests started instead of leaving them behind.
signal.signal(signal.SIGTERM, _interrupt)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if item.get_closest_marker("timeout") is not None:
            continue
        for marker, seconds in MARKER_TIMEOUTS.items():
            if item.get_closest_marker(marker) is not None:
                item.add_marker(pytest.mark.timeout(seconds))
                break


# The unit tests close what they open (logs, indexes, sockets), and so do the brokers and clients the
# integration tests start: each suite may leave at most this many more descriptors open than before its first
# test. Once ~670 leaked ones took a later select() in the same run past FD_SETSIZE (1024), and ~1,060 were
# open after the integration tests. Now the unit tests leave a few (gevent's hub) and the integration tests
# ~25 (the session's ZooKeeper process and client among them); garbage is collected before counting.
FD_LEAK_LIMITS = {"tests/unit/": 50, "tests/integration/": 50}
_suite_fds: dict[str, dict[str, int]] = {}


def _suite(item: pytest.Item | None) -> str | None:
    return next((s for s in FD_LEAK_LIMITS if item is not None and item.nodeid.startswith(s)), None)


def _open_fds() -> int:
    gc.collect()
    return len(os.listdir("/proc/self/fd"))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None):
    suite = _suite(item)
    if suite is not None and suite not in _suite_fds:
        _suite_fds[suite] = {"before": _open_fds()}
    yield
    if suite is not None and _suite(nextitem) != suite:
        _suite_fds[suite]["after"] = _open_fds()


def pytest_sessionfinish(session: pytest.Session) -> None:
    for suite, counts in _suite_fds.items():
        leaked = counts.get("after", 0) - counts["before"]
        if leaked > FD_LEAK_LIMITS[suite]:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED
            print(
                f"\nFAILED: the tests of {suite} left {leaked} more descriptors open than before them"
                f" (limit {FD_LEAK_LIMITS[suite]}); open now: {fd_targets()[-20:]}"
            )
