"""What the 0.7 async producer does with a batch: the EventHandler (the hooks around its queue, the
CallbackHandler, are ``send_thread``'s).

Both are pluggable by import path, as in 0.7: ``event.handler`` replaces :class:`DefaultEventHandler`
(it gets ``init(props)`` with ``event.handler.props``); ``callback.handler`` gets ``init(props)`` with
``callback.handler.props`` and is called at the points ``send_thread.CallbackHandler`` names. One instance
of each per broker.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any

from zkafka.producer.encoders import Encoder, codec_for_topic, encode_message_set, import_object
from zkafka.producer.send_thread import CallbackHandler, QueueItem
from zkafka.producer.sync_producer07 import SyncProducer
from zkafka.protocol.v07 import ProducerRequest

log = logging.getLogger(__name__)


class EventHandler:
    """Sends one batch of queued events through the broker's SyncProducer."""

    def init(self, props: Mapping[str, str]) -> None:
        """Called once with ``event.handler.props`` when loaded from the config."""

    def handle(self, events: Sequence[QueueItem], sync_producer: SyncProducer, encoder: Encoder) -> None:
        raise NotImplementedError

    def close(self) -> None:
        """Called when the async producer closes, after the last batch."""


class DefaultEventHandler(EventHandler):
    """0.7's batch handling: group by (topic, partition) keeping order, one message set per group,
    compressed iff ``compression.codec`` is set and the topic is in ``compressed.topics`` (or that list is
    empty), all groups in one MULTIPRODUCE, retried ``num.retries`` times, then the batch is dropped."""

    def __init__(self, config: Mapping[str, Any], callback_handler: CallbackHandler | None = None) -> None:
        self.codec: int = config["compression.codec"]
        self.compressed_topics = frozenset(config["compressed.topics"])
        self.num_retries: int = config["num.retries"]
        self.callback_handler = callback_handler

    def codec_for(self, topic: str) -> int:
        return codec_for_topic(self.codec, self.compressed_topics, topic)

    def handle(self, events: Sequence[QueueItem], sync_producer: SyncProducer, encoder: Encoder) -> None:
        if self.callback_handler is not None:
            events = self.callback_handler.before_sending_data(events)
        requests = self.serialize(collate(events), encoder)
        if requests:
            self.send(requests, sync_producer)

    def serialize(
        self, groups: Mapping[tuple[str, int], list[Any]], encoder: Encoder
    ) -> list[ProducerRequest]:
        requests = []
        for (topic, partition), data in groups.items():
            try:
                message_set = encode_message_set(encoder, data, self.codec_for(topic))
            except Exception:
                log.exception(
                    "dropping %d events for %s-%d that could not be encoded", len(data), topic, partition
                )
                continue
            requests.append(ProducerRequest(topic, partition, message_set))
        return requests

    def send(self, requests: list[ProducerRequest], sync_producer: SyncProducer) -> None:
        attempts = self.num_retries + 1
        while True:
            attempts -= 1
            try:
                sync_producer.multi_send(requests)
                return
            except Exception as exc:
                if attempts <= 0:
                    raise
                log.warning(
                    "%s: sending a batch failed (%s); %d attempts remaining", sync_producer, exc, attempts
                )


def collate(events: Sequence[QueueItem]) -> dict[tuple[str, int], list[Any]]:
    """Events grouped by (topic, partition), groups in order of first appearance, events in queue order."""
    groups: dict[tuple[str, int], list[Any]] = {}
    for item in events:
        key = (item.topic, item.partition)
        group = groups.get(key)
        if group is None:
            groups[key] = list(item.data)
        else:
            group.extend(item.data)
    return groups


def load_handler(class_path: str | None, props: Mapping[str, str], what: str) -> Any:
    """Instantiate the handler class named by ``event.handler``/``callback.handler`` and ``init`` it."""
    if not class_path:
        return None
    handler = import_object(class_path, what)()
    init = getattr(handler, "init", None)
    if callable(init):
        init(dict(props))
    return handler
