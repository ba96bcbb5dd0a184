"""Session-wide pytest hooks: a SIGTERM ends the run like Ctrl-C, per-marker test timeouts, and no Hypothesis
deadlines.

Registered as a plugin by tests/conftest.py.
"""

from __future__ import annotations

import signal

import pytest
from hypothesis import settings

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
