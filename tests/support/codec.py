"""The ``codec_path`` fixture: a module's tests run once with the native codec core and once without it.

A test module opts in with ``pytestmark = pytest.mark.usefixtures("codec_path")`` (tests/unit/records does it
for all its modules). Without a built extension (or with ``ZKAFKA_NO_EXTENSIONS=1``) there is no native run:
the fixture has the pure path only. ``agreed`` runs a call on every path there is and gives its one outcome.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from zkafka.records import native


@contextmanager
def codec(enabled: bool) -> Iterator[None]:
    """The native core in use (``enabled``) or the pure-Python codec, inside the block."""
    before = native.lib
    native.use(enabled)
    try:
        yield
    finally:
        native.lib = before


# The paths this run has: the native core's only where it is built and not disabled.
PATHS = ("native", "pure") if native.built is not None else ("pure",)


@pytest.fixture(scope="module", params=PATHS)
def codec_path(request: pytest.FixtureRequest) -> Iterator[str]:
    with codec(request.param == "native"):
        yield request.param


def outcome(call: Callable[[], Any]) -> tuple[str, Any]:
    """What a call did, comparable across the two paths: its result, or its error's type, text and place."""
    try:
        return "value", call()
    except Exception as err:  # noqa: BLE001 - every error is part of the behaviour compared
        return "error", (type(err), str(err), getattr(err, "position", None), getattr(err, "resume", None))


def agreed(call: Callable[[], Any]) -> tuple[str, Any]:
    """``outcome`` of the call on the pure path, checked to be the native core's too where it is built. Tests
    assert on what it returns, so a run without the core still checks the behaviour, on the pure path."""
    if native.built is not None:
        with codec(True):
            fast = outcome(call)
    with codec(False):
        pure = outcome(call)
    if native.built is not None:
        assert fast == pure  # the native core's outcome, then the pure path's
    return pure
