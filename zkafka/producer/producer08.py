"""Producer08: the 0.8 (Scala) producer — KeyedMessages to partition leaders found through Metadata requests.

``metadata.broker.list`` only bootstraps: the producer asks those brokers which partitions a topic has and
who leads each (no ZooKeeper). Sync (``producer.type=sync``, the default): ``send`` returns when every
message is acknowledged per ``request.required.acks`` (0: written to the socket; 1: the leader appended
it; -1: every in-sync replica has it), or raises FailedToSendMessageError with the number not delivered.
Async: ``send`` queues (``queue.buffering.max.messages``, ``queue.enqueue.timeout.ms``: -1 waits for room,
0 drops at once with QueueFullError) and a send greenlet delivers batches of ``batch.num.messages`` or what
came within ``queue.buffering.max.ms``; messages it could not deliver are logged, counted in
``undelivered``, passed to ``on_send_failure`` and make ``close`` raise FailedToSendMessageError.

``max.in.flight.requests.per.connection`` (the new producer's property; 1 by default, the Scala producer's
one request at a time) above 1 with acks 1 or -1 pipelines Produce requests (``pipeline08``): a sync ``send``
then returns once its request is written, before its answer; ``flush`` (and ``close``) waits for every
answer, retries what was refused and raises FailedToSendMessageError for what could not be delivered (each
lot also goes to ``on_send_failure``). With retries, messages of one partition may then be stored out of
send order, as Kafka documents for this setting.

Keys and values are encoded by ``key.serializer.class`` and ``serializer.class`` when ``send`` is called (a
``str`` key is also accepted by the default encoder, as its UTF-8 bytes); the partition is chosen from the
key as given (``part_key`` when set), so a ``str`` key lands where a Java producer puts the same String.
Like the 0.7 Producer, a Producer08 belongs to the thread that created it and runs on its gevent hub.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, NamedTuple

import gevent

from zkafka.config08 import ProducerConfig08
from zkafka.producer.encoders import DefaultEncoder, Encoder, load_encoder
from zkafka.producer.errors import FailedToSendMessageError, ProducerClosedError
from zkafka.producer.event_handler08 import DefaultEventHandler08, Serialized, ValueBatch
from zkafka.producer.partitioner import (
    JAVA_DEFAULT_PARTITIONER,
    DefaultPartitioner08,
    Partitioner,
    load_partitioner,
)
from zkafka.producer.pipeline08 import PipelinedSender08
from zkafka.producer.send_thread import BatchingSender, QueueItem
from zkafka.records import native
from zkafka.topic import TopicValidator

log = logging.getLogger(__name__)

YIELD_INTERVAL_S = 0.005  # how often a busy async producer gives the hub a turn
_RAW_VALUE_TYPES = frozenset((bytes, type(None)))  # values a batch sends as they are


def _all_raw(values: list | tuple) -> bool:
    """Every value is exactly bytes or None (sent as it is by the default encoder)."""
    lib = native.lib
    return lib.raw_values(values) if lib is not None else set(map(type, values)) <= _RAW_VALUE_TYPES


class KeyedMessage(NamedTuple):
    """A message for ``topic``: its ``key`` (None: a random partition) and ``value``; ``part_key``, when set,
    picks the partition instead of the key. ``headers`` (``(str, bytes)`` pairs) and ``timestamp_ms`` (its
    CreateTime; None: when sent) go in a record batch, to a broker that takes Produce v3 (message format v2).
    """

    topic: str
    key: Any
    value: Any
    part_key: Any = None
    headers: Sequence[tuple[str, bytes | None]] = ()
    timestamp_ms: int | None = None


class Producer08:
    """Sends KeyedMessages to a 0.8 cluster (see the module docstring).

    ``config`` is a ProducerConfig08 or a mapping of 0.8 producer properties. ``encoder``, ``key_encoder`` and
    ``partitioner`` override ``serializer.class``, ``key.serializer.class`` and ``partitioner.class``.
    ``on_send_failure(error)`` is called with each FailedToSendMessageError of the send greenlet (async) or of
    the requests in flight (pipelined).
    """

    def __init__(
        self,
        config: ProducerConfig08 | Mapping[str, Any],
        *,
        encoder: Encoder | Callable[[Any], bytes] | None = None,
        key_encoder: Encoder | Callable[[Any], bytes] | None = None,
        partitioner: Partitioner | None = None,
        on_send_failure: Callable[[FailedToSendMessageError], None] | None = None,
    ) -> None:
        if not isinstance(config, ProducerConfig08):
            config = ProducerConfig08({k: str(v) for k, v in config.items()})
        self.config = config
        self.encoder = load_encoder(encoder if encoder is not None else config["serializer.class"])
        self.key_encoder = load_encoder(
            key_encoder if key_encoder is not None else config["key.serializer.class"]
        )
        self.partitioner = partitioner or load_partitioner(
            config["partitioner.class"] or JAVA_DEFAULT_PARTITIONER, DefaultPartitioner08
        )
        self._plain_keys = type(self.key_encoder) is DefaultEncoder  # bytes go as they are
        self._plain_values = type(self.encoder) is DefaultEncoder
        self.handler = DefaultEventHandler08(config, self.partitioner)
        self.is_async = config["producer.type"] == "async"
        self.on_send_failure = on_send_failure
        self.undelivered = 0  # async or pipelined: messages given up on
        self._reported = 0  # of those, raised by flush()
        self._check_topic = TopicValidator("0.8")
        self._thread = threading.get_ident()
        self._closed = False
        self._next_yield = 0.0
        self._sender: _AsyncSender | None = None
        self._pipeline: PipelinedSender08 | None = None
        if config["max.in.flight.requests.per.connection"] > 1 and self.handler.acks != 0:
            self._pipeline = PipelinedSender08(
                self.handler, config["max.in.flight.requests.per.connection"], self._failed
            )
        self._deliver = self.handler.handle if self._pipeline is None else self._pipeline.submit
        if self.is_async:
            timeout_ms = config["queue.enqueue.timeout.ms"]
            self._sender = _AsyncSender(
                self,
                config["queue.buffering.max.messages"],
                config["batch.num.messages"],
                config["queue.buffering.max.ms"] / 1000.0,
                None if timeout_ms < 0 else timeout_ms / 1000.0,
            )

    def __repr__(self) -> str:
        return f"Producer08({self.config['producer.type']}, metadata.broker.list={','.join(self.config['metadata.broker.list'])})"

    # -- sending -------------------------------------------------------------------------------------------

    def send(self, *messages: KeyedMessage | tuple) -> None:
        """Send KeyedMessages (or ``(topic, key, value)`` tuples). Topic names are checked before anything
        is sent (InvalidTopicError); see the module docstring for what sync and async ``send`` guarantee."""
        if self._closed or threading.get_ident() != self._thread:
            self._check_open()
        serialized = [self._serialize(m) for m in messages]
        if not serialized:
            return
        if self._sender is None:
            self._deliver(serialized)
            return
        topic = serialized[0].topic
        if all(m.topic == topic for m in serialized):
            self._sender.send(topic, -1, serialized)
        else:
            for message in serialized:
                self._sender.send(message.topic, -1, [message])
        self._give_hub_a_turn()

    def send_batch(self, topic: str, values: Iterable[Any], key: Any = None, part_key: Any = None) -> None:
        """Send ``values`` to ``topic``, each with ``key``: ``send`` of a KeyedMessage per value, except that
        all go to one partition (chosen by ``part_key`` when set, else by the key; a null key takes the
        topic's random partition of the moment) as one message set built in one call. Same guarantees and
        errors as ``send``. An async producer queues the values as events of their own: with a null key, a
        metadata refresh while they wait can send the later ones to another partition."""
        if self._closed or threading.get_ident() != self._thread:
            self._check_open()
        if topic not in self._check_topic.valid:
            self._check_topic(topic)
        if not isinstance(values, list | tuple):
            values = list(values)  # any iterable; read once
        if not values:
            return
        if part_key is None:
            part_key = key
        if key is not None:
            key = self._encode_key(key)
        if not (self._plain_values and _all_raw(values)):
            values = [None if v is None else self._encode_value(v) for v in values]
        if self._sender is None:
            self._deliver([ValueBatch(topic, part_key, key, values)])
            return
        self._sender.send(topic, -1, [Serialized(topic, part_key, key, v) for v in values])
        self._give_hub_a_turn()

    def _give_hub_a_turn(self) -> None:
        now = time.monotonic()
        if now >= self._next_yield:
            self._next_yield = now + YIELD_INTERVAL_S
            gevent.idle()

    def _serialize(self, message: KeyedMessage | tuple) -> Serialized:
        topic, key, value = message[0], message[1], message[2]
        part_key = message[3] if len(message) > 3 and message[3] is not None else key
        if topic not in self._check_topic.valid:  # a set lookup per message; the check once per topic
            self._check_topic(topic)
        if key is not None and not (self._plain_keys and type(key) is bytes):
            key = self._encode_key(key)
        if value is not None and not (self._plain_values and type(value) is bytes):
            value = self._encode_value(value)
        if len(message) > 4:
            stamp = message[5] if len(message) > 5 else None
            return Serialized(topic, part_key, key, value, tuple(message[4] or ()), stamp)
        return Serialized(topic, part_key, key, value)

    def _encode_key(self, key: Any) -> bytes:
        if self._plain_keys:
            if type(key) is bytes:
                return key
            if isinstance(key, str):
                return key.encode("utf-8")
        return bytes(self.key_encoder.encode(key))

    def _encode_value(self, value: Any) -> bytes:
        return bytes(self.encoder.encode(value))

    def _check_open(self) -> None:
        if self._closed:
            raise ProducerClosedError("the producer is closed")
        if threading.get_ident() != self._thread:
            raise RuntimeError("a Producer08 must be used by the thread that created it (one per thread)")

    def _failed(self, error: FailedToSendMessageError) -> None:
        self.undelivered += error.undelivered
        if self.on_send_failure is not None:
            self.on_send_failure(error)

    # -- closing -------------------------------------------------------------------------------------------

    def flush(self) -> None:
        """Pipelined (sync): wait for the answer to every request in flight, send again what was refused, and
        raise FailedToSendMessageError for the messages given up on since the last ``flush``. Otherwise
        nothing waits: a sync send returns acknowledged, and ``close`` drains the async queue."""
        self._check_open()
        if self._pipeline is None or self._sender is not None:
            return
        self._pipeline.flush()
        self._raise_unreported()

    def _raise_unreported(self) -> None:
        unreported = self.undelivered - self._reported
        if unreported:
            self._reported = self.undelivered
            raise FailedToSendMessageError(
                f"{unreported} messages were not delivered (see the errors logged)", undelivered=unreported
            )

    def close(self, timeout: float | None = None) -> None:
        """Deliver what is queued (async; up to ``timeout`` seconds) or in flight (pipelined), close every
        connection; then raise FailedToSendMessageError if some messages could not be delivered (pipelined:
        those no ``flush`` raised for)."""
        if self._closed:
            return
        self._closed = True
        try:
            if self._sender is not None:
                self._sender.close(timeout)
            if self._pipeline is not None:
                self._pipeline.flush()
        finally:
            self.handler.close()
        self._raise_unreported()

    def __enter__(self) -> Producer08:
        return self

    def __exit__(self, exc_type: Any, *exc: object) -> None:
        if exc_type is None:
            self.close()
            return
        try:
            self.close()
        except FailedToSendMessageError:
            pass  # the exception on its way out matters more


class _AsyncSender(BatchingSender):
    """The producer's queue and send greenlet (0.8's ProducerSendThread)."""

    queue_target = "{topic}"

    def __init__(self, producer: Producer08, *args: Any) -> None:
        self.producer = producer
        super().__init__(*args)

    def __repr__(self) -> str:
        return f"{self.producer!r} send queue"

    def handle(self, batch: list[QueueItem]) -> None:
        messages = [m for item in batch for m in item.data]
        try:
            self.producer._deliver(messages)
        except FailedToSendMessageError as exc:
            log.error("%s: %s", self, exc)
            self.producer._failed(exc)
        except Exception as exc:
            log.exception("%s: sending %d messages failed", self, len(messages))
            self.producer._failed(FailedToSendMessageError(f"{exc}", undelivered=len(messages)))

    def dropped_at_close(self, events: int, timeout: float | None) -> None:
        super().dropped_at_close(events, timeout)
        self.producer._failed(
            FailedToSendMessageError(
                f"{events} queued messages not sent within {timeout} s", undelivered=events
            )
        )
