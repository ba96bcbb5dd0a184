"""An embedded broker (``BrokerThread``, what these tests and a threaded program run) leaves nothing open once
stopped: its thread's gevent hub and loop go with it (an epoll and an eventfd descriptor each), and its replica
fetchers' connections, a fetch under way included. Once every in-process broker of a test run left the first
two open (~290 of each by the middle of the integration suite) and a follower its fetcher's socket. The same
holds for the producer threads of ``perf produce --threads``, each of which runs a producer on its own hub, and
for a broker refused its id (a live duplicate): it ends the ZooKeeper session it opened, and for a controller
stopped while a broker it sent a request to is frozen."""

from __future__ import annotations

import signal

import gevent
import pytest
from click.testing import CliRunner

from tests.support.brokers import broker_config
from tests.support.descriptors import event_loops, tcp_ports_connected_to
from tests.support.replication import produce, zk_state
from tests.support.server08 import Client08, broker08_props
from zkafka.admin.topics import create_topic_with_assignment
from zkafka.cli.command import main
from zkafka.config08 import BrokerConfig08
from zkafka.server.registry import BrokerIdConflictError
from zkafka.server.start import BrokerThread
from zkafka.utils import wait_until

pytestmark = pytest.mark.integration


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


def test_perf_produce_threads_close_their_event_loops(start_broker08, zk_client):
    broker = start_broker08(0)
    create_topic_with_assignment(zk_client, "perf", "0")
    gevent.get_hub()  # the command asks for metadata on this thread's hub, which stays
    before = event_loops()
    options = ["--broker-list", f"127.0.0.1:{broker.port}", "--topic", "perf", "--messages", "3000", "--threads", "3"]
    result = CliRunner().invoke(main, ["perf", "produce", *options])
    assert result.exit_code == 0, (result.output, result.exception)
    assert event_loops() == before, "a producer thread's loop outlived it"


def test_a_stopped_controller_closes_its_connection_to_a_frozen_broker(start_broker08, broker08_process, zk_client):
    controller = start_broker08(1)
    wait_until(lambda: controller.server.controller.active, 10, message="broker 1 elected")
    frozen = broker08_process(2)
    wait_until(lambda: len(zk_client.get_children("/brokers/ids")) == 2, 30, message="broker 2 registered")
    channels = controller.server.controller.channels
    wait_until(lambda: frozen.port in tcp_ports_connected_to() and channels.pending() == 0, 10, message="sent")
    frozen.signal(signal.SIGSTOP)
    try:
        create_topic_with_assignment(zk_client, "on-the-frozen", "2")  # a LeaderAndIsr it never answers
        wait_until(lambda: channels.pending() == 0, 10, message="the LeaderAndIsr under way")
        controller.stop()
        assert frozen.port not in tcp_ports_connected_to(), "the connection to the frozen broker is still open"
    finally:
        frozen.signal(signal.SIGCONT)


def test_a_broker_refused_its_id_ends_the_zookeeper_session_it_opened(
    start_broker, start_broker08, zk_connect, tmp_path
):
    zk_port = int(zk_connect.split("/")[0].rsplit(":", 1)[1])
    start_broker(5), start_broker08(6)
    sessions = tcp_ports_connected_to().count(zk_port)
    with pytest.raises(BrokerIdConflictError):
        start_broker(5)
    with pytest.raises(BrokerIdConflictError):
        start_broker08(6, log_dirs=str(tmp_path / "another"))
    assert tcp_ports_connected_to().count(zk_port) == sessions, "a refused broker kept its ZooKeeper session"


def test_a_stopped_follower_closes_its_fetchers_connections(start_broker08, zk_client):
    leader, follower = start_broker08(1, replica_fetch_wait_max_ms="200"), start_broker08(2)
    create_topic_with_assignment(zk_client, "r", "1:2")
    wait_until(
        lambda: (s := zk_state(zk_client, "r", 0)) is not None and sorted(s.isr) == [1, 2], 20, message="ISR"
    )
    with Client08(
        leader.port
    ) as client:  # acknowledged: the follower fetches, a long poll under way from now on
        assert produce(client, "r", 0, [b"one"]) == (0, 0)
    assert leader.port in tcp_ports_connected_to()
    follower.stop()
    leader.stop()
    assert leader.port not in tcp_ports_connected_to(), "a connection to the stopped leader is still open"
