"""The 0.8 consumer perf test through SimpleConsumer08 (0.8's SimpleConsumerPerformance, over every partition).

The partitions of the topic and their leaders come from a Metadata request to the ``--broker-list``; each
leader is read by one greenlet with long-poll Fetch requests for all the partitions it leads, from the
earliest offsets (the latest with ``from_latest``). The run ends when ``messages`` were counted or nothing
came for ``consumer_timeout_ms``; the clock stops at the last message.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import gevent
import gevent.event

from zkafka.client08.topic_metadata import TopicMetadataCache, parse_broker_list
from zkafka.consumer.simple08 import SimpleConsumer08
from zkafka.errors import LeaderNotAvailableError
from zkafka.protocol import EARLIEST_TIME, LATEST_TIME
from zkafka.tools.consumer_performance import ConsumerPerfResult

MAX_WAIT_MS = 100


@dataclass
class SimplePerfOptions:
    """What to consume and how (the perf tool's options for the 0.8 line)."""

    broker_list: str
    topic: str
    fetch_size: int = 1024 * 1024
    messages: int | None = None
    from_latest: bool = False
    consumer_timeout_ms: int = 5000
    socket_buffer_size: int = 2 * 1024 * 1024
    client_id: str = "SimpleConsumerPerformanceClient"


class _Run:
    def __init__(self, messages: int | None) -> None:
        self.left = messages
        self.messages = 0
        self.bytes = 0
        self.last_message = 0.0
        self.done = gevent.event.Event()


def _read_leader(
    consumer: SimpleConsumer08, offsets: dict[int, int], options: SimplePerfOptions, run: _Run
) -> None:
    """Fetch the partitions one leader holds until the run is done or nothing came for the timeout."""
    topic, fetch_size = options.topic, options.fetch_size
    idle_since = time.perf_counter()
    while not run.done.is_set():
        requests = [(topic, p, offset, fetch_size) for p, offset in offsets.items()]
        got = size = 0
        for part in consumer.multifetch(requests, MAX_WAIT_MS, 1):
            messages = part.messages()
            if run.left is not None and got + len(messages) >= run.left:
                messages = messages[: run.left - got]
                offsets[part.partition] = messages[-1].next_offset if messages else offsets[part.partition]
            else:
                offsets[part.partition] = part.next_offset
            got += len(messages)
            size += sum([len(m.value) for m in messages if m.value is not None])
            if run.left is not None and got >= run.left:
                break
        now = time.perf_counter()
        if got:
            run.messages += got
            run.bytes += size
            run.last_message = now
            idle_since = now
            if run.left is not None:
                run.left -= got
                if run.left <= 0:
                    run.done.set()
        elif now - idle_since >= options.consumer_timeout_ms / 1000.0:
            return


def run(options: SimplePerfOptions, progress: Callable[[int], None] | None = None) -> ConsumerPerfResult:
    """Run the test; ``progress`` gets the number of messages consumed so far, every 0.1 s."""
    metadata = TopicMetadataCache(parse_broker_list(options.broker_list), options.client_id)
    partitions = metadata.partitions(options.topic)
    consumers: dict[int, SimpleConsumer08] = {}
    offsets: dict[int, dict[int, int]] = {}
    state = _Run(options.messages)
    try:
        for p in partitions:
            if p.leader is None:
                raise LeaderNotAvailableError(f"{options.topic}-{p.partition} has no leader")
            if p.leader not in consumers:
                broker = metadata.brokers[p.leader]
                consumers[p.leader] = SimpleConsumer08(
                    broker.host,
                    broker.port,
                    buffer_size=options.socket_buffer_size,
                    client_id=options.client_id,
                )
            time_ = LATEST_TIME if options.from_latest else EARLIEST_TIME
            offsets.setdefault(p.leader, {})[p.partition] = consumers[p.leader].get_offsets_before(
                options.topic, p.partition, time_
            )[0]
        start_wall, start = time.time(), time.perf_counter()
        greenlets = [gevent.spawn(_read_leader, consumers[b], offsets[b], options, state) for b in consumers]
        while not state.done.is_set() and not all(g.dead for g in greenlets):
            gevent.wait(greenlets + [state.done], timeout=0.1, count=1)
            if progress is not None:
                progress(state.messages)
        gevent.killall(greenlets)
        for g in greenlets:
            if g.exception is not None:
                raise g.exception
    finally:
        for consumer in consumers.values():
            consumer.close()
    end = state.last_message if state.last_message else start
    elapsed = max(end - start, 0.0)
    if progress is not None:
        progress(state.messages)
    return ConsumerPerfResult(
        start_ms=int(start_wall * 1000),
        end_ms=int((start_wall + elapsed) * 1000),
        fetch_size=options.fetch_size,
        total_bytes=state.bytes,
        total_messages=state.messages,
        elapsed_s=elapsed,
        threads=len(consumers),
        group="",
        rebalance_s=0.0,
    )
