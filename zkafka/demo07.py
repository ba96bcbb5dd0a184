"""The 0.7 line's demo: two 0.7 brokers, a ZooKeeper-discovered keyed Producer and a ZooKeeper consumer group.

``snapshot()`` reads what the 0.7 design doc talks about (broker znodes, partitions and their log ends, the
group's owners, committed offsets and lag) and notes every change of ownership as a rebalance, with what
triggered it.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial

from zkafka.config07 import ConsumerConfig, ProducerConfig
from zkafka.consumer.connector07 import ZookeeperConsumerConnector
from zkafka.demo import DemoCluster, ZkGroupMember
from zkafka.producer.producer07 import Producer
from zkafka.tools.offset_checker import PartitionRow
from zkafka.tools.offset_checker07 import check_offsets, registered_partitions
from zkafka.zk.paths import BROKER_IDS_PATH

ACTIONS = (
    "add-consumer",
    "stop-consumer",
    "stop-broker",
    "start-broker",
    "pause-producer",
    "resume-producer",
)


@dataclass
class BrokerView:
    id: int
    running: bool
    value: str | None = None  # the /brokers/ids/<id> znode, None when absent
    session: int = 0


@dataclass
class Snapshot:
    """What the demo shows at one moment."""

    elapsed: float
    brokers: list[BrokerView]
    rows: list[PartitionRow]
    consumers: dict[str, int]  # consumer id -> messages it consumed
    produced: int
    events: list[str] = field(default_factory=list)

    @property
    def owners(self) -> dict[str, str | None]:
        """Owner of each live partition (one whose broker answered)."""
        return {row.partition: row.owner for row in self.rows if row.log_size is not None}

    def all_owned(self) -> bool:
        owners = self.owners
        return bool(owners) and all(owners.values())

    def total_lag(self) -> int | None:
        lags = [row.lag for row in self.rows]
        return None if any(lag is None for lag in lags) else sum(lags)


def settings07(broker_id: int, port: int, log_dir: str, zk_connect: str, partitions: int) -> dict:
    """A 0.7 demo broker's server.properties."""
    return {
        "brokerid": broker_id,
        "hostname": "127.0.0.1",
        "port": port,
        "log.dir": log_dir,
        "zk.connect": zk_connect,
        "num.partitions": partitions,
        "log.flush.interval": 20,
        "log.default.flush.interval.ms": 200,
        "log.default.flush.scheduler.interval.ms": 200,
    }


def connector07(name: str, zk_connect: str, group: str) -> ZookeeperConsumerConnector:
    config = ConsumerConfig(
        {
            "zk.connect": zk_connect,
            "groupid": group,
            "consumerid": name,
            "autocommit.interval.ms": "1000",
            "rebalance.backoff.ms": "1000",
            "fetcher.backoff.ms": "100",
            "consumer.timeout.ms": "200",
        }
    )
    return ZookeeperConsumerConnector(config)


class DemoCluster07(DemoCluster):
    """A ZooKeeper, ``brokers`` 0.7 brokers with ``partitions`` partitions each, a producer and a consumer group."""

    actions = ACTIONS

    def broker_settings(self, zk_connect: str) -> Callable[[int, int, str], dict]:
        return partial(settings07, zk_connect=zk_connect, partitions=self.partitions)

    def make_producer(self) -> Producer:
        return Producer(
            ProducerConfig(
                {
                    "zk.connect": self.zookeeper.connect_string,
                    "serializer.class": "kafka.serializer.StringEncoder",
                }
            )
        )

    def _after_producer(self) -> None:
        self._wait(
            lambda: len(registered_partitions(self._zk, self.topic)) == self._broker_count * self.partitions,
            "topic on every broker",
        )

    def _send(self, user: str) -> None:
        self._producer.send(self.topic, [f"event {self.produced} of {user}"], key=user)

    def add_consumer(self) -> None:
        name = f"consumer-{self._next_consumer}"
        consumer = ZkGroupMember(connector07(name, self.zookeeper.connect_string, self.group), self.topic)
        self._next_consumer += 1
        self.consumers.append(consumer)
        self._record(f"consumer {consumer.id} joined")

    # -- what the view shows ------------------------------------------------------------------------------

    def snapshot(self) -> Snapshot:
        brokers = []
        for broker_id, broker in sorted(self.brokers.items()):
            stat = self._zk.exists(f"{BROKER_IDS_PATH}/{broker_id}")
            value = self._zk.get(f"{BROKER_IDS_PATH}/{broker_id}")[0].decode() if stat else None
            brokers.append(BrokerView(broker_id, broker.running, value, stat.ephemeralOwner if stat else 0))
        report = check_offsets(self._zk, self.group, [self.topic], socket_timeout_ms=2000)
        snapshot = Snapshot(
            elapsed=time.monotonic() - self.started,
            brokers=brokers,
            rows=report.rows,
            consumers={c.id: c.consumed for c in self.consumers},
            produced=self.produced,
        )
        owners = snapshot.owners
        if snapshot.all_owned() and owners != self._last_owners:
            moved = "every partition owned" if self._last_owners is None else "partitions changed owners"
            self._record(f"rebalance: {moved} (trigger: {self._last_action})")
            self._last_owners = owners
        snapshot.events = self.events[-8:]
        return snapshot


def render(snapshot: Snapshot, group: str) -> list[str]:
    """The facts of a snapshot as lines, for the live view and for ``--no-ui``."""
    lines = [
        f"zkafka demo  t={snapshot.elapsed:.1f}s  produced={snapshot.produced}  total lag={snapshot.total_lag()}"
    ]
    lines.append("brokers (/brokers/ids):")
    for broker in snapshot.brokers:
        state = "running" if broker.running else "stopped"
        znode = f"{broker.value}  [session 0x{broker.session:x}]" if broker.value else "(no znode)"
        lines.append(f"  broker {broker.id} {state:7}  {znode}")
    lines.append(f"partitions of group {group} (committed offsets and owners in ZooKeeper):")
    for row in snapshot.rows:
        lag = "?" if row.lag is None else row.lag
        end = "?" if row.log_size is None else row.log_size
        committed = "-" if row.offset is None else row.offset
        lines.append(
            f"  {row.topic} {row.partition:5} end={end:<8} committed={committed:<8} lag={lag:<6} "
            f"owner={row.owner or '(none)'}"
        )
    consumers = ", ".join(f"{cid}: {n}" for cid, n in snapshot.consumers.items()) or "(none)"
    lines.append(f"consumers (messages consumed): {consumers}")
    lines.append("events:")
    lines.extend(f"  {event}" for event in snapshot.events)
    return lines
