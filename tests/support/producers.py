"""Helpers for the producer tests: a producer on the test ZooKeeper, and what the brokers stored read back
with SimpleConsumer (waits poll with a deadline on the gevent hub)."""

from __future__ import annotations

from typing import Any

from zkafka.consumer.simple07 import SimpleConsumer
from zkafka.producer import Producer
from zkafka.records.compression import decompress
from zkafka.records.format07 import iter_messages
from zkafka.utils import wait_until

PARTITIONS = 4  # num.partitions of the test brokers
FAST_ZK = {"zk.sessiontimeout.ms": "4000", "zk.connectiontimeout.ms": "10000"}


def zk_producer(zk_connect: str, **props: str) -> Producer:
    config = {"zk.connect": zk_connect, **FAST_ZK}
    config.update({k.replace("_", "."): v for k, v in props.items()})
    return Producer(config)


def stored(port: int, topic: str, partition: int, deep: bool = True) -> list:
    """Every message of a partition on a broker: payloads (deep) or (codec, inner count) per wrapper."""
    out: list = []
    offset = 0
    with SimpleConsumer("127.0.0.1", port, socket_timeout_ms=10000) as consumer:
        while True:
            messages = consumer.fetch(topic, partition, offset, 1 << 20)
            if not messages.valid_bytes:
                return out
            if deep:
                out.extend(m.payload for m, _ in messages)
            else:
                for wrapper, _ in messages.shallow_iter():
                    inner = len(list(_inner(wrapper))) if wrapper.codec else 1
                    out.append((wrapper.codec, inner))
            offset += messages.valid_bytes


def _inner(wrapper):
    return iter_messages(decompress(wrapper.codec, wrapper.payload))


def stored_by_partition(
    brokers: dict[int, Any], topic: str, prefix: bytes = b""
) -> dict[tuple[int, int], list]:
    """(broker id, partition) → payloads starting with ``prefix``, for every partition of every broker."""
    return {
        (broker_id, p): [m for m in stored(broker.port, topic, p) if m.startswith(prefix)]
        for broker_id, broker in brokers.items()
        for p in range(PARTITIONS)
    }


def seed_topic(broker: Any, topic: str) -> None:
    """Create the topic on one broker (one message to a random partition); the broker registers it in ZK."""
    with Producer({"broker.list": f"9:127.0.0.1:{broker.port}"}) as seeder:
        seeder.send(topic, b"seed")


def wait_stored(brokers: dict[int, Any], topic: str, count: int, prefix: bytes = b"") -> dict:
    """Produce requests get no answer: wait until the brokers have appended ``count`` matching messages."""

    def done():
        found = stored_by_partition(brokers, topic, prefix)
        return found if sum(map(len, found.values())) >= count else None

    return wait_until(done, message=f"{count} messages of {topic} stored")
