"""KafkaZooKeeper: the broker's registration in ZooKeeper, kept across session expiry.

``/brokers/ids/<id>`` holds ``<host>-<millis>:<host>:<port>``; ``/brokers/topics/<topic>/<id>`` holds the
number of partitions this broker hosts for the topic. Both are ephemeral: they vanish when the broker's
session ends, and the broker writes them again when a new session replaces an expired one.
"""

from __future__ import annotations

import logging
import socket
import threading
import time
from collections.abc import Callable

from kazoo.client import KazooState
from kazoo.exceptions import NodeExistsError

from zkafka.config import BrokerConfig
from zkafka.zk.client import create_ephemeral_expect_conflict, gevent_handler, make_zk_client, start_zk_client
from zkafka.zk.paths07 import BROKER_IDS_PATH, BROKER_TOPICS_PATH, Broker, broker_id_path, broker_topic_path

log = logging.getLogger(__name__)


class BrokerIdConflictError(RuntimeError):
    """Another live broker holds our ``/brokers/ids/<id>``."""


def default_host() -> str:
    """The local host's IP address, as 0.7 registers when ``hostname`` is unset."""
    try:
        return socket.gethostbyname(socket.gethostname())
    except OSError:
        return "127.0.0.1"


class KafkaZooKeeper:
    """Registers this broker and its topics, and registers them again after a session expiry."""

    def __init__(
        self,
        config: BrokerConfig,
        port: int,
        partition_count: Callable[[str], int],
        *,
        use_gevent: bool = True,
    ) -> None:
        self.config = config
        self.broker_id: int = config["brokerid"]
        self.host = config["hostname"] or default_host()
        self.port = port
        self.partition_count = partition_count
        self.client = make_zk_client(
            config["zk.connect"],
            config["zk.sessiontimeout.ms"],
            config["zk.connectiontimeout.ms"],
            handler=gevent_handler() if use_gevent else None,
        )
        self._topics: set[str] = set()
        self._lock = threading.RLock()
        self._session_lost = False
        self.registrations = 0  # how many times /brokers/ids/<id> was written (1 + re-registrations)

    def startup(self, topics: set[str]) -> None:
        """Connect, register the broker id (refusing a conflict) and every topic found on disk."""
        start_zk_client(self.client)
        for path in (BROKER_IDS_PATH, BROKER_TOPICS_PATH):
            self.client.ensure_path(path)
        self.register_broker()
        for topic in sorted(topics):
            self.register_topic(topic)
        self.client.add_listener(self._on_state_change)

    def register_broker(self) -> None:
        broker = Broker(self.broker_id, self.host, self.port, f"{self.host}-{int(time.time() * 1000)}")
        path = broker_id_path(self.broker_id)
        try:
            create_ephemeral_expect_conflict(self.client, path, broker.zk_value())
        except NodeExistsError:
            holder = self.client.get(path)[0].decode("utf-8", "replace")
            raise BrokerIdConflictError(
                f"broker id {self.broker_id} is already registered by another live broker ({path} = {holder})"
            ) from None
        self.registrations += 1
        log.info("registered broker %d at %s as %s", self.broker_id, path, broker.zk_value())

    def register_topic(self, topic: str) -> None:
        """Write ``/brokers/topics/<topic>/<id>`` = partition count (idempotent)."""
        with self._lock:
            self._topics.add(topic)
        path = broker_topic_path(topic, self.broker_id)
        create_ephemeral_expect_conflict(self.client, path, str(self.partition_count(topic)))
        log.info("registered topic %s on broker %d", topic, self.broker_id)

    def _on_state_change(self, state: str) -> None:
        # Runs on kazoo's event thread/greenlet: it must not block, so re-registration is spawned.
        if state == KazooState.LOST:
            log.warning("ZooKeeper session of broker %d expired", self.broker_id)
            self._session_lost = True
        elif state == KazooState.CONNECTED and self._session_lost:
            self._session_lost = False
            self.client.handler.spawn(self._reregister)

    def _reregister(self) -> None:
        log.info("new ZooKeeper session: re-registering broker %d and its topics", self.broker_id)
        try:
            self.register_broker()
            with self._lock:
                topics = sorted(self._topics)
            for topic in topics:
                self.register_topic(topic)
        except Exception:
            log.exception("re-registration of broker %d failed", self.broker_id)

    def close(self) -> None:
        """End the session so the ephemeral znodes vanish at once."""
        self.client.remove_listener(self._on_state_change)
        try:
            self.client.stop()
        finally:
            self.client.close()
