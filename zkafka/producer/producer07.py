"""Producer: the user-facing producer. Picks a broker partition per send and hands the messages to a sync or
async per-broker producer.

- ZooKeeper mode (``zk.connect``): the candidates of a topic come from ZooKeeper (see
  broker_partition_info); no key → a random candidate, a key → ``partitioner.partition(key, n)``.
- ``broker.list`` mode: a random broker of the list, partition -1 (the broker picks one); keys are ignored.

Threads and gevent: a Producer runs on the gevent hub of the thread that creates it and must only be used
from that thread (in a gevent program, from any greenlet of it). Background work — the async send
greenlets, ZooKeeper watches and session keep-alive — runs whenever that thread waits in gevent: inside
producer calls (``send`` yields to the hub every few milliseconds), in ``gevent.sleep``/``gevent.wait``,
or in any gevent-aware I/O. No monkey-patching is needed. A thread that blocks outside gevent for longer
than ``zk.sessiontimeout.ms`` loses its ZooKeeper session, which the producer survives by re-reading the
registry; it also delays async dispatch until it is back. Threaded programs use one Producer per thread.
"""

from __future__ import annotations

import logging
import random
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from threading import get_ident
from typing import Any

import gevent

from zkafka.config07 import ProducerConfig
from zkafka.errors import InvalidConfigError, InvalidPartitionError
from zkafka.producer.async_producer07 import AsyncProducer
from zkafka.producer.broker_partition_info07 import (
    BrokerPartitionInfo,
    ConfigBrokerPartitionInfo,
    ZKBrokerPartitionInfo,
)
from zkafka.producer.encoders import Encoder, encode_message_set, load_encoder
from zkafka.producer.errors import NoBrokersForPartitionError, ProducerClosedError
from zkafka.producer.partitioner import JAVA_DEFAULT_PARTITIONER, Partitioner, load_partitioner
from zkafka.producer.sync_producer07 import SyncProducer
from zkafka.protocol.v07 import RANDOM_PARTITION, ProducerRequest
from zkafka.records.message07 import Message
from zkafka.topic import TopicValidator
from zkafka.zk.paths07 import Broker

log = logging.getLogger(__name__)

# How often a busy producer gives the hub a turn (ZooKeeper events, async timers), in seconds.
YIELD_INTERVAL_S = 0.005
_SINGLE = (bytes, bytearray, memoryview, str, Message)


@dataclass(slots=True)
class ProducerData:
    """Messages for one topic, all sent to the partition chosen for ``key`` (random when None)."""

    topic: str
    data: Sequence[Any]
    key: Any = None


class Producer:
    """Sends messages to the brokers of a cluster; ``producer.type`` sync (default) or async.

    ``config`` is a ProducerConfig or a mapping of 0.7 producer properties. ``encoder`` (an object with
    ``encode(event) -> bytes`` or a callable) and ``partitioner`` (with ``partition(key, n) -> int``)
    override ``serializer.class`` and ``partitioner.class``. ``zk_client`` lets the producer share a
    started kazoo client that uses the gevent handler.
    """

    def __init__(
        self,
        config: ProducerConfig | Mapping[str, Any],
        *,
        encoder: Encoder | Callable[[Any], bytes] | None = None,
        partitioner: Partitioner | None = None,
        zk_client: Any = None,
    ) -> None:
        if not isinstance(config, ProducerConfig):
            config = ProducerConfig({k: str(v) for k, v in config.items()})
        self.config = config
        self.encoder = load_encoder(encoder if encoder is not None else config["serializer.class"])
        self.is_async = config["producer.type"] == "async"
        self.codec: int = config["compression.codec"]
        self.zk_mode = bool(config["zk.connect"])
        self.zk_read_retries: int = config["zk.read.num.retries"]
        self._thread = threading.get_ident()
        self._random = random.Random()
        self._pool: dict[int, SyncProducer | AsyncProducer] = {}
        self._senders: list[AsyncProducer] = []  # every async producer made, for ``undelivered``
        self._check_topic = TopicValidator("0.7")
        self._closing: list[gevent.Greenlet] = []
        self._closed = False
        self._next_yield = 0.0
        self.partitioner: Partitioner | None
        self.info: BrokerPartitionInfo
        if self.zk_mode:
            self.partitioner = partitioner or load_partitioner(
                config["partitioner.class"] or JAVA_DEFAULT_PARTITIONER
            )
            self.info = ZKBrokerPartitionInfo(
                config,
                on_new_broker=self._add_broker,
                on_broker_gone=self._remove_broker,
                zk_client=zk_client,
            )
        else:
            if partitioner is not None:
                raise InvalidConfigError("partitioner.class: cannot be used together with broker.list")
            self.partitioner = None
            self.info = ConfigBrokerPartitionInfo(config)
            self._broker_ids = sorted(self.info.get_all_brokers_info())
        for broker in self.info.get_all_brokers_info().values():
            self._add_broker(broker)

    def __repr__(self) -> str:
        mode = (
            f"zk.connect={self.config['zk.connect']}"
            if self.zk_mode
            else f"broker.list={self.config['broker.list']}"
        )
        return f"Producer({self.config['producer.type']}, {mode})"

    # -- sending -------------------------------------------------------------------------------------------

    def send(self, topic: str, messages: Any, key: Any = None) -> None:
        """Send messages (a sequence, or one bytes/str/Message) to one partition of ``topic``.

        Sync: returns when the request is written to the broker's socket. Async: returns when the messages
        are queued; QueueFullError if the queue had no room under ``queue.enqueueTimeout.ms``. A topic name
        the broker would refuse raises InvalidTopicError before anything is sent.
        """
        if self._closed or get_ident() != self._thread:
            self._check_open()
        if isinstance(messages, _SINGLE):
            messages = [messages]
        elif self.is_async or not isinstance(messages, list | tuple):
            messages = list(messages)  # async: the caller may reuse its list once send returns
        broker_id, partition = self._choose(topic, key)
        producer = self._pool[broker_id]
        if self.is_async:
            producer.send(topic, partition, messages)  # type: ignore[call-arg]
        else:
            producer.send(topic, partition, encode_message_set(self.encoder, messages, self.codec))  # type: ignore[call-arg]
        now = time.monotonic()
        if now >= self._next_yield:
            self._next_yield = now + YIELD_INTERVAL_S
            # Not sleep(0): while greenlets keep queueing callbacks, that may not poll sockets for a long
            # time; idle() returns after a loop iteration that did (ZooKeeper events, broker sockets).
            gevent.idle()

    def send_all(self, batch: Iterable[ProducerData]) -> None:
        """Send several ProducerData at once; in sync mode one request per broker (PRODUCE, or MULTIPRODUCE
        when a broker gets more than one)."""
        if self.is_async:
            for data in batch:
                self.send(data.topic, data.data, data.key)
            return
        self._check_open()
        per_broker: dict[int, list[ProducerRequest]] = {}
        for data in batch:
            messages = [data.data] if isinstance(data.data, _SINGLE) else list(data.data)
            broker_id, partition = self._choose(data.topic, data.key)
            message_set = encode_message_set(self.encoder, messages, self.codec)
            per_broker.setdefault(broker_id, []).append(ProducerRequest(data.topic, partition, message_set))
        for broker_id, requests in per_broker.items():
            self._pool[broker_id].send_requests(requests)  # type: ignore[union-attr]

    def _check_open(self) -> None:
        if self._closed:
            raise ProducerClosedError("the producer is closed")
        if threading.get_ident() != self._thread:
            raise RuntimeError(
                "a Producer must be used by the thread that created it (one Producer per thread)"
            )

    def _choose(self, topic: str, key: Any) -> tuple[int, int]:
        """(broker id, partition) for a send; refreshes from ZooKeeper when the chosen broker is gone."""
        self._check_topic(topic)  # the broker would close the connection and drop the messages unseen
        if not self.zk_mode:
            ids = self._broker_ids
            return ids[int(self._random.random() * len(ids))], RANDOM_PARTITION
        for _ in range(self.zk_read_retries + 1):
            candidates = self.info.get_broker_partition_info(topic)
            n = len(candidates)
            if n == 0:
                raise NoBrokersForPartitionError(f"no live broker can take topic {topic!r}")
            if key is None:
                index = int(self._random.random() * n)
            else:
                index = self.partitioner.partition(key, n)  # type: ignore[union-attr]
                if not 0 <= index < n:
                    raise InvalidPartitionError(
                        f"partitioner returned {index} for key {key!r}; expected a value in [0, {n})"
                    )
            chosen = candidates[index]
            if chosen.broker_id in self._pool:
                return chosen.broker_id, chosen.part_id
            broker = self.info.get_broker_info(chosen.broker_id)
            if broker is not None:
                self._add_broker(broker)
                return chosen.broker_id, chosen.part_id
            log.info("broker %d chosen for %s is gone; re-reading ZooKeeper", chosen.broker_id, topic)
            self.info.update_info()
        raise NoBrokersForPartitionError(
            f"the brokers chosen for topic {topic!r} stayed gone after {self.zk_read_retries} re-reads"
        )

    # -- the per-broker producers --------------------------------------------------------------------------

    def _add_broker(self, broker: Broker) -> None:
        current = self._pool.get(broker.id)
        if current is not None:
            sync = current.sync_producer if isinstance(current, AsyncProducer) else current
            if (sync.host, sync.port) == (broker.host, broker.port):
                return
            self._remove_broker(broker.id)
        sync_producer = SyncProducer(self.config, broker.host, broker.port)
        if self.is_async:
            sender = AsyncProducer(self.config, sync_producer, self.encoder)
            self._pool[broker.id] = sender
            self._senders.append(sender)
        else:
            self._pool[broker.id] = sync_producer

    def _remove_broker(self, broker_id: int) -> None:
        producer = self._pool.pop(broker_id, None)
        if producer is not None:
            # Closing an async producer sends what it still holds: not on the watch greenlet.
            self._closing = [g for g in self._closing if not g.dead]
            self._closing.append(gevent.spawn(producer.close))

    @property
    def undelivered(self) -> int:
        """Async: messages the send greenlets gave up on (a batch whose send failed, or still queued when a
        close timed out; each is logged). 0.7 produce requests have no answer: a message written to a
        broker's socket counts as delivered."""
        return sum(sender.dropped for sender in self._senders)

    @property
    def brokers(self) -> dict[int, Broker]:
        """The live brokers this producer knows."""
        return self.info.get_all_brokers_info()

    def partitions_for(self, topic: str) -> list[tuple[int, int]]:
        """The (broker id, partition) candidates the producer currently chooses from for ``topic``."""
        return [(p.broker_id, p.part_id) for p in self.info.get_broker_partition_info(topic)]

    # -- closing -------------------------------------------------------------------------------------------

    def close(self, timeout: float | None = None) -> None:
        """Send everything still queued (async), then close every connection and the ZooKeeper client."""
        if self._closed:
            return
        self._closed = True
        try:
            for producer in list(self._pool.values()):
                if isinstance(producer, AsyncProducer):
                    producer.close(timeout)
                else:
                    producer.close()
            gevent.joinall(self._closing, timeout=timeout)
        finally:
            self._pool.clear()
            self.info.close()

    def __enter__(self) -> Producer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
