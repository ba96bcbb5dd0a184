"""KafkaZooKeeper: a 0.7 broker's registration in ZooKeeper, kept across session expiry and crashes.

``/brokers/ids/<id>`` holds ``<host>-<millis>:<host>:<port>``; ``/brokers/topics/<topic>/<id>`` holds the
number of partitions this broker hosts for the topic. The session machinery and the crash-restart wait are
registry.py's ``ZkRegistry``.
"""

from __future__ import annotations

import logging
import socket
import threading
from collections.abc import Callable

from zkafka.config07 import BrokerConfig
from zkafka.server.registry import ZkRegistry
from zkafka.utils import now_ms
from zkafka.zk.client import create_ephemeral_expect_conflict
from zkafka.zk.paths import BROKER_IDS_PATH, BROKER_TOPICS_PATH, broker_id_path
from zkafka.zk.paths07 import Broker, broker_topic_path

log = logging.getLogger(__name__)


def default_host() -> str:
    """The local host's IP address, as 0.7 registers when ``hostname`` is unset."""
    try:
        return socket.gethostbyname(socket.gethostname())
    except OSError:
        return "127.0.0.1"


class KafkaZooKeeper(ZkRegistry):
    """0.7's registration: this broker and its topics, registered again after a session expiry."""

    def __init__(
        self,
        config: BrokerConfig,
        port: int,
        partition_count: Callable[[str], int],
        *,
        use_gevent: bool = True,
    ) -> None:
        super().__init__(
            config["brokerid"],
            config["zk.sessiontimeout.ms"],
            connect=config["zk.connect"],
            connection_timeout_ms=config["zk.connectiontimeout.ms"],
            use_gevent=use_gevent,
        )
        self.config = config
        self.host = config["hostname"] or default_host()
        self.port = port
        self.partition_count = partition_count
        self._topics: set[str] = set()
        self._lock = threading.RLock()

    def startup(self, topics: set[str]) -> None:
        """Connect, register the broker id (refusing a live duplicate) and every topic found on disk."""
        with self._lock:
            self._topics.update(topics)
        self.start((BROKER_IDS_PATH, BROKER_TOPICS_PATH))

    def register_all(self) -> None:
        self.register_broker()
        with self._lock:
            topics = sorted(self._topics)
        for topic in topics:
            self.register_topic(topic)

    def register_broker(self) -> None:
        broker = Broker(self.broker_id, self.host, self.port, f"{self.host}-{now_ms()}")
        self.register_broker_id(broker_id_path(self.broker_id), broker.zk_value(), _address07(self.broker_id))

    def register_topic(self, topic: str) -> None:
        """Write ``/brokers/topics/<topic>/<id>`` = partition count (idempotent)."""
        with self._lock:
            self._topics.add(topic)
        path = broker_topic_path(topic, self.broker_id)
        create_ephemeral_expect_conflict(self.client, path, str(self.partition_count(topic)))
        log.info("registered topic %s on broker %d", topic, self.broker_id)


def _address07(broker_id: int) -> Callable[[bytes], str]:
    def address(value: bytes) -> str:
        broker = Broker.from_zk(broker_id, value.decode("utf-8"))
        return f"{broker.host}:{broker.port}"

    return address
