"""What both lines' demo clusters share: a real ZooKeeper, broker processes, a keyed producer and consumers on
loopback, the actions a viewer can take and the event log.

Everything lives under one temporary directory and in one process tree: ZooKeeper and the brokers are
child processes, the producer and the consumers run on this process's gevent hub. Each line's demo
(``demo07.DemoCluster07``, ``demo08.DemoCluster08``) says how its brokers are configured, what it waits for
before and after the producer starts, how it sends and who consumes, and what ``snapshot`` shows.
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
from typing import Any

import gevent

from zkafka.consumer.stream import ConsumerTimeoutError
from zkafka.launch.zookeeper_server import ZooKeeperServer, free_port
from zkafka.utils.process import die_with_parent
from zkafka.zk.client import get_children, gevent_handler, make_zk_client, start_zk_client
from zkafka.zk.paths import BROKER_IDS_PATH

log = logging.getLogger(__name__)


class BrokerProcess:
    """A broker child process; ``settings(broker_id, port, log_dir)`` gives its server.properties."""

    def __init__(self, broker_id: int, root: str, settings: Callable[[int, int, str], dict]) -> None:
        self.id = broker_id
        self.port = free_port()
        self.props = os.path.join(root, f"server-{broker_id}.properties")
        self.log_path = os.path.join(root, f"broker-{broker_id}.log")
        self.settings = settings(broker_id, self.port, os.path.join(root, f"kafka-logs-{broker_id}"))
        with open(self.props, "w") as handle:
            handle.writelines(f"{k}={v}\n" for k, v in self.settings.items())
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
                preexec_fn=die_with_parent(),
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


class ZkGroupMember:
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
    """A ZooKeeper, ``brokers`` broker processes, a producer at ``rate`` keyed messages a second and consumers;
    a line's subclass fills in the hooks below."""

    actions: tuple[str, ...] = ()
    broker_note = ""  # said after "starting broker <id>"
    consumer_note = "starting a consumer"

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
        self.zookeeper = ZooKeeperServer(os.path.join(self.root, "zookeeper"), die_with_parent=True)
        self._broker_count = brokers
        self._consumer_count = consumers
        self.brokers: dict[int, BrokerProcess] = {}
        self.consumers: list[ZkGroupMember] = []
        self._stopped_consumers: dict[str, int] = {}
        self._next_consumer = 1
        self.produced = 0
        self.paused = False
        self.events: list[str] = []
        self._last_action = "start"
        self._last_owners: dict[str, str | None] | None = None
        self._zk = None
        self._producer: Any = None
        self._producer_greenlet: gevent.Greenlet | None = None

    # -- lifecycle ------------------------------------------------------------------------------------------

    def start(self, progress: Callable[[str], None] = lambda line: None) -> DemoCluster:
        progress(f"starting ZooKeeper in {self.root}")
        self.zookeeper.start()
        connect = self.zookeeper.connect_string
        self._zk = start_zk_client(make_zk_client(connect, handler=gevent_handler()))
        settings = self.broker_settings(connect)
        for broker_id in range(self._broker_count):
            progress(f"starting broker {broker_id}{self.broker_note}")
            self.brokers[broker_id] = BrokerProcess(broker_id, self.root, settings)
            self.brokers[broker_id].start()
        self._wait(
            lambda: len(get_children(self._zk, BROKER_IDS_PATH)) == self._broker_count, "brokers registered"
        )
        self._before_producer()
        self._producer = self.make_producer()
        self._producer_greenlet = gevent.spawn(self._produce)
        self._after_producer()
        for _ in range(self._consumer_count):
            progress(self.consumer_note)
            self.add_consumer()
        self._record("cluster started")
        return self

    # -- what a line's demo says ----------------------------------------------------------------------------

    def broker_settings(self, zk_connect: str) -> Callable[[int, int, str], dict]:
        """``(broker_id, port, log_dir) -> server.properties`` of this line's brokers."""
        raise NotImplementedError

    def make_producer(self) -> Any:
        raise NotImplementedError

    def _before_producer(self) -> None:
        """What must hold before the producer starts (the 0.8 line: a controller, the topic, its leaders)."""

    def _after_producer(self) -> None:
        """What must hold before consumers join (the 0.7 line: the topic the producer created everywhere)."""

    def _send(self, user: str) -> None:
        raise NotImplementedError

    def add_consumer(self) -> None:
        raise NotImplementedError

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
