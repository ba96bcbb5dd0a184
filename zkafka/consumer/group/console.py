"""The console consumer with ``--bootstrap-server`` (0.9's ``--new-consumer``): a GroupConsumer member of a
coordinator-managed group prints what it reads, in 0.8.2's format (``MessageFormatter08``).

``--topic`` subscribes to that topic, ``--whitelist`` to the topics the regex matches (``--blacklist`` has no
group-consumer form). The group is ``--group`` (or ``group.id``), else ``console-consumer-<random>``; with
``--from-beginning`` a group without committed offsets starts at the oldest message (``auto.offset.reset``).
What was printed is committed, every ``--autocommit-interval-ms``, before partitions are revoked and at the
end (never a message read but not printed, as with ``--max-messages``).
"""

from __future__ import annotations

import logging
import random
import sys
import time
from collections.abc import Callable, Mapping
from types import SimpleNamespace
from typing import Any, BinaryIO, TextIO

import gevent
from gevent.event import Event

from zkafka.consumer.console import ConsoleOptions, MessageFormatter08
from zkafka.consumer.group.consumer import GroupConsumer, checked_consumer
from zkafka.consumer.group.subscription import TopicPartition
from zkafka.errors import KafkaError
from zkafka.utils.process import STOP_SIGNALS

log = logging.getLogger(__name__)


def group_config(options: ConsoleOptions, bootstrap: str, group: str) -> dict[str, str]:
    props = {
        "bootstrap.servers": bootstrap,
        "group.id": group,
        "auto.offset.reset": "earliest" if options.from_beginning else "latest",
        "enable.auto.commit": "false",  # the console commits what it printed
        "max.partition.fetch.bytes": str(options.fetch_size),
        "client.id": "console-consumer",
    }
    props.update(options.properties)
    return props


class _Printed:
    """How many messages were printed and the next offsets of what was printed, committed on a timer, on
    revocation and at the end."""

    def __init__(self, interval_ms: int) -> None:
        self.consumer: GroupConsumer | None = None
        self.pending: dict[TopicPartition, int] = {}
        self.count = 0  # messages printed
        self.interval_s = interval_ms / 1000.0
        self.due = time.monotonic() + self.interval_s

    def commit(self, partitions: Any = None) -> None:
        chosen = {tp: o for tp, o in self.pending.items() if partitions is None or tp in partitions}
        if not chosen or self.consumer is None:
            return
        try:
            self.consumer.commit(chosen)
        except KafkaError as exc:
            log.warning("committing the printed offsets failed: %s", exc)
        for tp in chosen:
            self.pending.pop(tp, None)
        self.due = time.monotonic() + self.interval_s

    def on_partitions_revoked(self, revoked: Any) -> None:
        self.commit(set(revoked))

    def on_partitions_assigned(self, assigned: Any) -> None:
        pass


def run_group(
    options: ConsoleOptions,
    bootstrap: str,
    out: BinaryIO | None = None,
    err: TextIO | None = None,
    on_start: Callable[[GroupConsumer], None] | None = None,
) -> int:
    """Consume and print until ``max_messages``, a consumer timeout or SIGINT/SIGTERM/SIGHUP; the number printed."""
    out = out if out is not None else sys.stdout.buffer
    err = err if err is not None else sys.stderr
    if options.blacklist is not None:
        raise KafkaError("--blacklist is not supported with --bootstrap-server; use --whitelist")
    group = (
        options.group or options.properties.get("group.id") or f"console-consumer-{random.randint(0, 99999)}"
    )
    formatter = MessageFormatter08(options.formatter_properties, options.print_offsets)
    topics = [options.topic] if options.topic is not None else []
    consumer = checked_consumer(group_config(options, bootstrap, group), topics)
    printed = _Printed(options.autocommit_interval_ms)
    stop = Event()
    handlers = [gevent.signal_handler(s, stop.set) for s in STOP_SIGNALS]
    printed.consumer = consumer
    try:
        if options.topic is not None:
            consumer.subscribe([options.topic], listener=printed)
        else:
            consumer.subscribe(pattern=options.whitelist, listener=printed)
        if on_start is not None:
            on_start(consumer)
        _consume(consumer, options, formatter, printed, out, stop)
    except BrokenPipeError:
        pass
    finally:
        for handler in handlers:
            handler.cancel()
        try:
            printed.commit()
        finally:
            consumer.close()
        print(f"Consumed {printed.count} messages", file=err)
    return printed.count


def _consume(
    consumer: GroupConsumer,
    options: ConsoleOptions,
    formatter: MessageFormatter08,
    printed: _Printed,
    out: BinaryIO,
    stop: Event,
) -> None:
    """Poll and print until ``max_messages``, ``stop`` or ``consumer.timeout.ms`` without a message once
    partitions are assigned; commit what was printed every ``auto.commit.interval.ms``."""
    limit = options.max_messages
    idle_since = time.monotonic()
    timeout_s = options.consumer_timeout_ms / 1000.0
    while not stop.is_set() and (limit is None or printed.count < limit):
        batch = consumer.poll(100)
        _print_batch(batch, formatter, printed, out, limit)
        now = time.monotonic()
        if batch or not consumer.assignment():  # the timeout runs once partitions are assigned
            idle_since = now
        elif timeout_s >= 0 and now - idle_since >= timeout_s:
            break
        if now >= printed.due:
            printed.commit()


def _print_batch(
    batch: Mapping[TopicPartition, list],
    formatter: MessageFormatter08,
    printed: _Printed,
    out: BinaryIO,
    limit: int | None,
) -> None:
    """Print a poll's records, partitions in order, up to ``limit`` printed in all; note each one's next offset."""
    for tp, records in sorted(batch.items()):
        for record in records:
            if limit is not None and printed.count >= limit:
                break
            item = SimpleNamespace(
                topic=tp.topic,
                partition=tp.partition,
                offset=record.offset,
                key=record.key,
                message=record.value,
                timestamp=record.timestamp,
                timestamp_type=record.timestamp_type,
                headers=record.headers,
            )
            out.write(formatter(item))
            printed.pending[tp] = record.offset + 1
            printed.count += 1
    out.flush()
