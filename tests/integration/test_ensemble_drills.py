"""ZooKeeper ensemble drills: three ZooKeeper processes, brokers of either line listing all three in their
connect string, and load running through four faults in turn (tests/support/ensemble.py): a follower killed
(clients carry on), the leader killed (sessions survive the election, the brokers keep their ephemeral
registrations), the quorum lost for longer than the brokers' 4 s sessions (6 s: long enough for their sessions
to be at risk; a ZooKeeper session does not expire without a leader, and a new leader renews every session),
and a member restarted with an empty data directory (it syncs from the leader). Then nothing acknowledged is
lost: every replica's log holds every acknowledged message. Figures go to the terminal summary.
"""

from __future__ import annotations

import contextlib
import random
from pathlib import Path

import gevent
import pytest
from kazoo.client import KazooClient

from tests.support.brokers import TEST_BROKER_PROPS, broker_processes
from tests.support.consumers import Collector, consumer_config
from tests.support.drills import FIGURES, Producer08Load, check_no_loss, settle
from tests.support.ensemble import run_ensemble_drills
from tests.support.producers import PARTITIONS, seed_topic, stored, zk_producer
from tests.support.replication import WatchingConsumer, leader_port, read_all
from tests.support.server08 import broker08_props
from tests.support.zookeeper import wait_topic_registered
from zkafka.admin.topics import create_topic
from zkafka.consumer import ZookeeperConsumerConnector
from zkafka.records import format08
from zkafka.utils import wait_until

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.timeout(240)]

OUTAGE_S = 6.0  # longer than the brokers' zookeeper.session.timeout.ms (4 s)


@pytest.fixture
def zk(zookeeper_ensemble):
    """The test's own client on every member, retrying its reads while it moves between them."""
    client = KazooClient(
        hosts=zookeeper_ensemble.connect_string,
        timeout=20,
        command_retry={"max_tries": -1, "max_delay": 0.5, "deadline": 30},
        connection_retry={"max_tries": -1, "max_delay": 0.5},
    )
    client.start(timeout=15)
    yield client
    client.stop()
    client.close()


def record(drill: str, figures: dict[str, dict], **totals) -> None:
    for fault, numbers in figures.items():
        FIGURES.append((f"{drill}: {fault}", numbers))
        print(f"\n{drill}: {fault}: " + ", ".join(f"{k}={v}" for k, v in numbers.items()))
    FIGURES.append((drill, totals))


# -- the 0.8 line: three brokers, a partition replicated three times, acks=-1 ----------------------------------


class Load08:
    def __init__(self, producer: Producer08Load, consumer: WatchingConsumer) -> None:
        self.producer, self.consumer = producer, consumer

    def acked(self) -> int:
        return len(self.producer.acked)

    def consumed(self) -> int:
        return len(self.consumer.seen)


def log_on_disk(log_dir: Path, topic: str, partition: int = 0) -> list[tuple[int, bytes]]:
    """(offset, value) of every message in a replica's segment files, read from its disk."""
    segments = sorted((log_dir / f"{topic}-{partition}").glob("*.log"))
    return [(m.offset, m.value) for s in segments for m in format08.iter_messages(s.read_bytes())]


def test_zookeeper_faults_under_the_08_line(zookeeper_ensemble, zk, tmp_path):
    def props(broker_id: int, port: int) -> dict[str, str]:
        return broker08_props(
            broker_id, tmp_path / f"log-{broker_id}", zookeeper_ensemble.connect_string, port=str(port),
            replica_fetch_wait_max_ms="100", unclean_leader_election_enable="false",
        )  # fmt: skip

    with contextlib.contextmanager(broker_processes)(tmp_path / "server08", props) as start:
        brokers = {b: start(b) for b in (1, 2, 3)}
        ports = lambda: [p.port for p in brokers.values()]  # noqa: E731
        wait_until(lambda: zk.exists("/brokers/ids") and len(zk.get_children("/brokers/ids")) == 3, 30)
        create_topic(zk, "ens", 1, 3, rng=random.Random(3))
        settle(zk, ports, "ens")
        producer = Producer08Load(ports, "ens", pause_s=0.01)
        consumer = WatchingConsumer(lambda: leader_port(ports, "ens"), "ens")
        producer.start()
        consumer.start()
        try:
            figures = run_ensemble_drills(zookeeper_ensemble, zk, Load08(producer, consumer), OUTAGE_S)
        finally:
            producer.stop()
            consumer.stop()
        assert not producer.failures, f"sends failed beyond their retries: {producer.failures[:3]}"
        state, length = check_no_loss(zk, ports, "ens", producer.acked, consumer.seen)
        _, leader_log = read_all(brokers[state.leader].port, "ens", 0)
        for broker_id in brokers:  # every replica holds the leader's log, read from its own disk
            wait_until(lambda b=broker_id: log_on_disk(tmp_path / f"log-{b}", "ens")[:length] == leader_log, 30)
    record("ensemble 0.8", figures, acked=len(producer.acked), consumed=len(consumer.seen), log=length)


# -- the 0.7 line: two brokers, a sync producer and a consumer group, both through ZooKeeper ------------------


class Load07:
    """A greenlet sending numbered batches with the sync producer; a consumer group's streams collected."""

    def __init__(self, connect: str) -> None:
        self.producer = zk_producer(connect)
        self.sent: set[bytes] = set()
        self.failures: list[str] = []
        self.greenlet = gevent.spawn(self._produce)
        self.connector = ZookeeperConsumerConnector(consumer_config(connect, "ens", autooffset_reset="smallest"))
        self.collector = Collector(self.connector.create_message_streams({"ens07": 2})["ens07"])

    def _produce(self) -> None:
        n = 0
        while True:
            values = [b"ens07-%07d" % i for i in range(n, n + 10)]
            try:
                self.producer.send("ens07", values)
            except Exception as exc:  # noqa: BLE001 - counted: a send the producer gave up on
                self.failures.append(repr(exc))
            else:
                self.sent.update(values)
            n += 10
            gevent.sleep(0.01)

    def acked(self) -> int:
        return len(self.sent)

    def consumed(self) -> int:
        return len(self.collector.messages)

    def stop(self) -> None:
        self.greenlet.kill()
        self.producer.close()


def test_zookeeper_faults_under_the_07_line(zookeeper_ensemble, zk, tmp_path):
    def props(broker_id: int, port: int) -> dict[str, str]:
        return {
            **TEST_BROKER_PROPS, "brokerid": str(broker_id), "port": str(port),
            "zk.connect": zookeeper_ensemble.connect_string, "log.dir": str(tmp_path / f"log-{broker_id}"),
        }  # fmt: skip

    with contextlib.contextmanager(broker_processes)(tmp_path / "server", props) as start:
        brokers = {b: start(b) for b in (1, 2)}
        wait_until(lambda: zk.exists("/brokers/ids") and len(zk.get_children("/brokers/ids")) == 2, 30)
        for broker in brokers.values():
            seed_topic(broker, "ens07")
        wait_topic_registered(zk, "ens07", brokers)
        load = Load07(zookeeper_ensemble.connect_string)
        try:
            figures = run_ensemble_drills(zookeeper_ensemble, zk, load, OUTAGE_S)
        finally:
            load.stop()
        sent = load.sent
        wait_until(lambda: set(load.collector.payloads()) >= sent, 30, message="every sent message consumed")
        load.collector.stop()
        load.connector.shutdown()
        stored_values = [v for b in brokers.values() for p in range(PARTITIONS) for v in stored(b.port, "ens07", p)]
    stored_values = [v for v in stored_values if v != b"seed"]
    lost = sent - set(stored_values)
    assert not lost, f"{len(lost)} sent messages not in any broker's log, e.g. {sorted(lost)[:3]}"
    assert len(stored_values) == len(set(stored_values)) >= len(sent)
    record("ensemble 0.7", figures, sent=len(sent), failed_sends=len(load.failures), stored=len(stored_values))
