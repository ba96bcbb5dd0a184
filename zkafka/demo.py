"""The demo cluster: a real ZooKeeper, broker processes, a keyed producer and a consumer group on loopback.

Everything lives under one temporary directory and in one process tree: ZooKeeper and the brokers are
child processes, the producer and the consumers run on this process's gevent hub. ``snapshot()`` reads
what the design doc talks about (broker znodes, partitions and their log ends, the group's owners,
committed offsets and lag) and notes every change of ownership as a rebalance, with what triggered it.
"""

from __future__ import annotations

import logging
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial

import gevent

from zkafka.config07 import ConsumerConfig, ProducerConfig
from zkafka.consumer.connector07 import ZookeeperConsumerConnector
from zkafka.consumer.stream import ConsumerTimeoutError
from zkafka.launch.zookeeper_server import ZooKeeperServer, free_port
from zkafka.producer.producer07 import Producer
from zkafka.tools.offset_checker import PartitionRow
from zkafka.tools.offset_checker07 import check_offsets, registered_partitions
from zkafka.zk.client import get_children, gevent_handler, make_zk_client, start_zk_client
from zkafka.zk.paths import BROKER_IDS_PATH

log = logging.getLogger(__name__)

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


class _BrokerProcess:
    """A broker child process; ``settings(broker_id, port, log_dir)`` gives its server.properties."""

    def __init__(self, broker_id: int, root: str, settings: Callable[[int, int, str], dict]) -> None:
        self.id = broker_id
        self.port = free_port()
        self.props = os.path.join(root, f"server-{broker_id}.properties")
        self.log_path = os.path.join(root, f"broker-{broker_id}.log")
        settings = settings(broker_id, self.port, os.path.join(root, f"kafka-logs-{broker_id}"))
        with open(self.props, "w") as handle:
            handle.writelines(f"{k}={v}\n" for k, v in settings.items())
        self.proc: subprocess.Popen | None = None

    @property
    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def start(self) -> None:
        with open(self.log_path, "ab") as out:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "zkafka.cli", "broker", "start", self.props],
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )

    def stop(self, timeout: float = 20.0, signum: int = signal.SIGTERM) -> None:
        if not self.running:
            return
        self.proc.send_signal(signum)
        deadline = time.monotonic() + timeout
        while self.proc.poll() is None and time.monotonic() < deadline:
            gevent.sleep(0.05)
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


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


class _Consumer:
    """A ZooKeeper group member (``connector``, of either line) reading one stream of ``topic``."""

    def __init__(self, connector, topic: str) -> None:
        self.connector = connector
        self.id = self.connector.consumer_id
        self.consumed = 0
        self.stream = self.connector.create_message_streams({topic: 1})[topic][0]
        self.greenlet = gevent.spawn(self._consume)

    def _consume(self) -> None:
        while True:
            try:
                for _ in self.stream:
                    self.consumed += 1
                return  # the stream ends at shutdown
            except ConsumerTimeoutError:
                continue

    def stop(self) -> None:
        self.connector.shutdown()
        self.greenlet.join(timeout=10)


class DemoCluster:
    """A ZooKeeper, ``brokers`` brokers with ``partitions`` partitions each, a producer and a consumer group."""

    actions = ACTIONS

    def __init__(
        self,
        brokers: int = 2,
        partitions: int = 2,
        consumers: int = 2,
        topic: str = "demo",
        group: str = "demo-group",
        rate: float = 20.0,
        root: str | None = None,
    ) -> None:
        self.root = root or tempfile.mkdtemp(prefix="zkafka-demo-")
        self.topic = topic
        self.group = group
        self.rate = rate
        self.partitions = partitions
        self.started = time.monotonic()
        self.zookeeper = ZooKeeperServer(os.path.join(self.root, "zookeeper"))
        self._broker_count = brokers
        self._consumer_count = consumers
        self.brokers: dict[int, _BrokerProcess] = {}
        self.consumers: list[_Consumer] = []
        self._stopped_consumers: dict[str, int] = {}
        self._next_consumer = 1
        self.produced = 0
        self.paused = False
        self.events: list[str] = []
        self._last_action = "start"
        self._last_owners: dict[str, str | None] | None = None
        self._zk = None
        self._producer: Producer | None = None
        self._producer_greenlet: gevent.Greenlet | None = None

    # -- lifecycle ------------------------------------------------------------------------------------------

    def start(self, progress: Callable[[str], None] = lambda line: None) -> DemoCluster:
        progress(f"starting ZooKeeper in {self.root}")
        self.zookeeper.start()
        connect = self.zookeeper.connect_string
        self._zk = start_zk_client(make_zk_client(connect, handler=gevent_handler()))
        for broker_id in range(self._broker_count):
            progress(f"starting broker {broker_id}")
            settings = partial(settings07, zk_connect=connect, partitions=self.partitions)
            self.brokers[broker_id] = _BrokerProcess(broker_id, self.root, settings)
            self.brokers[broker_id].start()
        self._wait(
            lambda: len(get_children(self._zk, BROKER_IDS_PATH)) == self._broker_count, "brokers registered"
        )
        self._producer = Producer(
            ProducerConfig({"zk.connect": connect, "serializer.class": "kafka.serializer.StringEncoder"})
        )
        self._producer_greenlet = gevent.spawn(self._produce)
        self._wait(
            lambda: len(registered_partitions(self._zk, self.topic)) == self._broker_count * self.partitions,
            "topic on every broker",
        )
        for _ in range(self._consumer_count):
            progress("starting a consumer")
            self.add_consumer()
        self._record("cluster started")
        return self

    def _wait(self, condition: Callable[[], bool], what: str, timeout: float = 60.0) -> None:
        deadline = time.monotonic() + timeout
        while not condition():
            for broker in self.brokers.values():
                if broker.proc is not None and broker.proc.poll() not in (None, 0):
                    raise RuntimeError(f"broker {broker.id} exited; see {broker.log_path}")
            if time.monotonic() > deadline:
                raise TimeoutError(f"demo: {what} not reached within {timeout:.0f}s")
            gevent.sleep(0.05)

    def _produce(self) -> None:
        """Keyed messages at ``rate`` per second: each user's events go to one partition."""
        interval = 1.0 / self.rate if self.rate > 0 else 1.0
        while True:
            if self.paused:
                gevent.sleep(0.1)
                continue
            user = f"user-{random.randrange(16)}"
            try:
                self._send(user)
                self.produced += 1
            except Exception as exc:  # a broker just stopped: the producer's cache catches up
                log.info("demo producer: %s", exc)
            gevent.sleep(interval)

    def _send(self, user: str) -> None:
        self._producer.send(self.topic, [f"event {self.produced} of {user}"], key=user)

    def close(self, keep: bool = False) -> None:
        """Stop everything this demo started; remove its directory unless ``keep``."""
        if self._producer_greenlet is not None:
            self._producer_greenlet.kill()
        for consumer in self.consumers:
            consumer.stop()
        self.consumers = []
        if self._producer is not None:
            self._producer.close()
        for broker in self.brokers.values():
            broker.stop()
        if self._zk is not None:
            self._zk.stop()
            self._zk.close()
        self.zookeeper.stop()
        if not keep:
            shutil.rmtree(self.root, ignore_errors=True)

    # -- actions ----------------------------------------------------------------------------------------------

    def act(self, action: str) -> None:
        """Run one of ``self.actions`` by name: ``stop-consumer`` calls ``stop_consumer()``."""
        if action not in self.actions:
            raise ValueError(f"demo: unknown action {action!r}")
        getattr(self, action.replace("-", "_"))()

    def pause_producer(self) -> None:
        if not self.paused:
            self.paused = True
            self._record("producer paused")

    def resume_producer(self) -> None:
        if self.paused:
            self.paused = False
            self._record("producer resumed")

    def add_consumer(self) -> None:
        name = f"consumer-{self._next_consumer}"
        consumer = _Consumer(connector07(name, self.zookeeper.connect_string, self.group), self.topic)
        self._next_consumer += 1
        self.consumers.append(consumer)
        self._record(f"consumer {consumer.id} joined")

    def stop_consumer(self) -> None:
        if not self.consumers:
            return
        consumer = self.consumers.pop()
        consumer.stop()
        self._stopped_consumers[consumer.id] = consumer.consumed
        self._record(f"consumer {consumer.id} left")

    def stop_broker(self) -> None:
        running = [b for b in self.brokers.values() if b.running]
        if len(running) > 1:  # keep one, so the demo keeps flowing
            running[-1].stop()
            self._record(f"broker {running[-1].id} stopped")

    def start_broker(self) -> None:
        stopped = [b for b in self.brokers.values() if not b.running]
        if stopped:
            stopped[0].start()
            self._record(f"broker {stopped[0].id} started")

    def _record(self, what: str, action: bool = True) -> None:
        """Note an event; an ``action`` becomes the trigger named by what is observed next."""
        if action:
            self._last_action = what
        self.events.append(f"{time.monotonic() - self.started:6.1f}s  {what}")

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
