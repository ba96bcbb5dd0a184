"""An embedded broker (``BrokerThread``, what these tests and a threaded program run) leaves nothing open once
stopped: its thread's gevent hub and loop go with it (an epoll and an eventfd descriptor each). Once every
in-process broker of a test run left them open: ~290 of each by the middle of the integration suite."""

from __future__ import annotations

import os

import pytest

from tests.support.brokers import broker_config
from tests.support.server08 import broker08_props
from zkafka.config08 import BrokerConfig08
from zkafka.server.start import BrokerThread

pytestmark = pytest.mark.integration


def event_loops() -> int:
    """The process's epoll descriptors (one per live libev loop, the main thread's included)."""
    count = 0
    for fd in os.listdir("/proc/self/fd"):
        try:
            count += os.readlink(f"/proc/self/fd/{fd}") == "anon_inode:[eventpoll]"
        except OSError:  # the listing's own descriptor
            pass
    return count


def test_stopped_brokers_of_both_lines_close_their_event_loops_and_stop_twice(tmp_path, zk_connect):
    before = event_loops()
    configs = [
        broker_config(0, tmp_path / "broker07", zk_connect),
        BrokerConfig08(broker08_props(1, tmp_path / "broker08", zk_connect)),
    ]
    for config in configs * 2:  # each started and stopped twice
        broker = BrokerThread(config).start()
        assert event_loops() == before + 1, "a running broker has its own loop"
        broker.stop()
        assert event_loops() == before, f"broker {broker.server.broker_id}'s loop outlived it"
        broker.stop()  # a second stop (a test's own, then its fixture's) finds nothing to wake
