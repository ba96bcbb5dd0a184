"""KafkaMigrationTool: copy topics from a 0.7 cluster into a 0.8 cluster (0.8.2's ``kafka.tools.KafkaMigrationTool``).

A 0.7 high-level consumer group reads the source (deep: 0.7 compressed wrappers cannot travel into a 0.8
log, each message is re-sent) and 0.8 producers write every payload under the same topic name with a null
key, as 0.8.2 does (0.7's partitioning is not kept). It is MirrorMaker's machinery with a 0.8 sink: the
producers are synchronous and wait for the brokers' acknowledgement (``request.required.acks`` at least 1),
and the 0.7 group's offsets are committed only when every message its streams handed out has been
acknowledged by the 0.8 cluster. Killed at any point (kill -9 included) and started again, it loses
nothing; it repeats at most the batches in hand (and, as any 0.7 consumer, the start of a compressed
wrapper it was in the middle of).
"""

from __future__ import annotations

import logging

from zkafka.config08 import ProducerConfig08
from zkafka.consumer.stream07 import MessageAndMetadata
from zkafka.producer.producer08 import KeyedMessage, Producer08
from zkafka.tools.mirror_maker import MirrorMaker

log = logging.getLogger(__name__)


def migration_producer_config(config: ProducerConfig08) -> ProducerConfig08:
    """The producer config with what the tool needs: synchronous sends, acknowledged by the leader at least."""
    overrides = {}
    if config["producer.type"] != "sync":
        log.warning("producer.type=%s: the migration tool sends synchronously", config["producer.type"])
        overrides["producer_type"] = "sync"
    if config["request.required.acks"] == 0:
        log.warning("request.required.acks=0 acknowledges nothing: the migration tool uses 1")
        overrides["request_required_acks"] = "1"
    return config.with_overrides(**overrides) if overrides else config


class KafkaMigrationTool(MirrorMaker):
    """0.7 consumers, 0.8 producers, and a greenlet per stream handing batches over (see the module docstring)."""

    shallow = False  # every message is re-sent in the 0.8 format

    def _make_producer(self, config: ProducerConfig08) -> Producer08:
        return Producer08(migration_producer_config(config))

    def _send(self, producer: Producer08, topic: str, messages: list[MessageAndMetadata]) -> None:
        """Send and wait for the acknowledgement; FailedToSendMessageError stops the tool uncommitted."""
        producer.send(*(KeyedMessage(topic, None, m.payload) for m in messages))
