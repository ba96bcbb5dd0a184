"""The ``codec_path`` fixture: a module's tests run once with the native codec core and once without it.

A test module opts in with ``pytestmark = pytest.mark.usefixtures("codec_path")`` (tests/unit/records does it
for all its modules). Without a built extension the native run is skipped; ``run_both`` runs a call on each.
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


@pytest.fixture(scope="module", params=["native", "pure"])
def codec_path(request: pytest.FixtureRequest) -> Iterator[str]:
    if request.param == "native" and native.built is None:
        pytest.skip("the native codec core is not built")
    with codec(request.param == "native"):
        yield request.param


def outcome(call: Callable[[], Any]) -> tuple[str, Any]:
    """What a call did, comparable across the two paths: its result, or its error's type, text and place."""
    try:
        return "value", call()
    except Exception as err:  # noqa: BLE001 - every error is part of the behaviour compared
        return "error", (type(err), str(err), getattr(err, "position", None), getattr(err, "resume", None))


def run_both(call: Callable[[], Any]) -> tuple[tuple[str, Any], tuple[str, Any]]:
    """``outcome`` of the call on the native path and on the pure path."""
    with codec(True):
        fast = outcome(call)
    with codec(False):
        pure = outcome(call)
    return fast, pure
