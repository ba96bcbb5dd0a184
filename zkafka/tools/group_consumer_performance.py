"""The consumer perf test with ``--bootstrap-server``: one GroupConsumer member of a coordinator-managed
group (0.9's ``ConsumerPerformance --new-consumer``). The clock starts once the group assigned the partitions
(the join is the rebalance time) and stops at the last message; the run ends after ``messages`` or when
nothing came for ``consumer_timeout_ms``. A group made up for the run (``perf-consumer-<n>``) commits nothing.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable

from zkafka.consumer.group.consumer import GroupConsumer, checked_consumer
from zkafka.errors import KafkaError
from zkafka.tools.consumer_performance import ConsumerPerfResult

JOIN_TIMEOUT_S = 60.0


def group_perf_consumer(
    bootstrap: str,
    topic: str,
    group: str | None = None,
    fetch_size: int = 1024 * 1024,
    from_latest: bool = False,
    properties: dict[str, str] | None = None,
) -> GroupConsumer:
    """The run's member of ``group`` (None: a made-up group), once the brokers answered (``checked_consumer``)."""
    config = {
        "bootstrap.servers": bootstrap,
        "group.id": group or f"perf-consumer-{random.randint(0, 99999)}",
        "auto.offset.reset": "latest" if from_latest else "earliest",
        "enable.auto.commit": "true" if group else "false",
        "max.partition.fetch.bytes": str(fetch_size),
        "client.id": "ConsumerPerformance",
        **(properties or {}),
    }
    return checked_consumer(config, [topic])


def run_group_perf(
    consumer: GroupConsumer,
    topic: str,
    messages: int | None = None,
    consumer_timeout_ms: int = 5000,
    progress: Callable[[int], None] | None = None,
) -> ConsumerPerfResult:
    """Run the test with ``consumer`` (closed at the end); ``progress`` gets the number of messages consumed so
    far after each poll."""
    count = size = 0
    began = time.perf_counter()
    start_wall, start = time.time(), began
    joined = False
    with consumer:
        consumer.subscribe([topic])
        last = idle_since = began
        while messages is None or count < messages:
            batch = consumer.poll(100)
            now = time.perf_counter()
            if not joined and consumer.assignment():  # the clock starts with the first assignment
                joined = True
                start_wall, start = time.time(), now
                idle_since = now
            for records in batch.values():
                for record in records[: None if messages is None else messages - count]:
                    count += 1
                    size += len(record.value) if record.value is not None else 0
                last = idle_since = now
            if progress is not None:
                progress(count)
            if not batch and now - idle_since >= consumer_timeout_ms / 1000.0:
                if joined:
                    break
                if now - began >= JOIN_TIMEOUT_S:
                    raise KafkaError(f"group {consumer.group_id!r}: no partitions of {topic} were assigned")
    elapsed = max(last - start, 0.0) if count else 0.0
    return ConsumerPerfResult(
        start_ms=int(start_wall * 1000),
        end_ms=int((start_wall + elapsed) * 1000),
        fetch_size=consumer.config["max.partition.fetch.bytes"],
        total_bytes=size,
        total_messages=count,
        elapsed_s=elapsed,
        threads=1,
        group=consumer.group_id,
        rebalance_s=start - began,
    )
