"""The consumer perf test (``kafka.perf.ConsumerPerformance``): consume N messages with a group, report the rate.

As in the Scala tool: a fresh group ``perf-consumer-<random>`` unless one is given, ``--threads`` streams of
one ZooKeeper consumer (the 0.7 or the 0.8 high-level consumer, as the cluster is), reset to smallest
(largest with ``--from-latest``) and ``consumer.timeout.ms=5000`` to end a run that finds fewer messages
than asked for. The streams are read
by greenlets on the consumer's hub, a fetched chunk at a time (``KafkaStream.next_batch``). The clock starts when the streams are ready (after the first
rebalance) and stops at the last message: at the moment the count is reached, or when the consumer times
out minus the timeout itself.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from operator import attrgetter

import gevent
import gevent.event

from zkafka.config import LINE_08
from zkafka.consumer.connector import BaseConsumerConnector
from zkafka.consumer.connector07 import ZookeeperConsumerConnector
from zkafka.consumer.connector08 import ZookeeperConsumerConnector08
from zkafka.consumer.console import delete_group, zk_session
from zkafka.consumer.stream import ConsumerTimeoutError, KafkaStream
from zkafka.tools.perf_result import MB, Throughput, format_time
from zkafka.utils import now_ms
from zkafka.zk.line import cluster_line

CSV_HEADER = "start.time, end.time, fetch.size, data.consumed.in.MB, MB.sec, data.consumed.in.nMsg, nMsg.sec"
DETAIL_HEADER = "time, thread.id, fetch.size, data.consumed.in.MB, MB.sec, data.consumed.in.nMsg, nMsg.sec"


@dataclass
class ConsumerPerfOptions:
    """What to consume and how (the perf tool's command-line options)."""

    zookeeper: str
    topic: str
    group: str | None = None
    fetch_size: int = 1024 * 1024
    messages: int | None = None
    threads: int = 10
    from_latest: bool = False
    socket_buffer_size: int = 2 * 1024 * 1024
    consumer_timeout_ms: int = 5000
    reporting_interval_ms: int = 5000
    consumer_props: dict[str, str] = field(default_factory=dict)
    line: str | None = None  # "0.7" or "0.8"; None: the cluster's

    def consumer_config(self, group: str) -> dict[str, str]:
        props = {
            "zk.connect": self.zookeeper,
            "groupid": group,
            "fetch.size": str(self.fetch_size),
            "socket.buffersize": str(self.socket_buffer_size),
            "autooffset.reset": "largest" if self.from_latest else "smallest",
            "consumer.timeout.ms": str(self.consumer_timeout_ms),
        }
        props.update(self.consumer_props)
        return props

    def consumer_config08(self, group: str) -> dict[str, str]:
        props = {
            "zookeeper.connect": self.zookeeper,
            "group.id": group,
            "fetch.message.max.bytes": str(self.fetch_size),
            "socket.receive.buffer.bytes": str(self.socket_buffer_size),
            "auto.offset.reset": "largest" if self.from_latest else "smallest",
            "consumer.timeout.ms": str(self.consumer_timeout_ms),
        }
        props.update(self.consumer_props)
        return props

    def connector(self, group: str) -> BaseConsumerConnector:
        """The line's high-level consumer for ``group``."""
        line = self.line
        if line is None:
            with zk_session(self.zookeeper, self.consumer_props) as zk:
                line = cluster_line(zk, group)
        if line == LINE_08:
            return ZookeeperConsumerConnector08(self.consumer_config08(group))
        return ZookeeperConsumerConnector(self.consumer_config(group))


@dataclass
class ConsumerPerfResult(Throughput):
    """One run's totals, printable as Kafka's CSV line or as JSON."""

    start_ms: int
    end_ms: int
    fetch_size: int
    total_bytes: int
    total_messages: int
    elapsed_s: float
    threads: int
    group: str
    rebalance_s: float

    def csv_line(self) -> str:
        return (
            f"{format_time(self.start_ms)}, {format_time(self.end_ms)}, {self.fetch_size}, {self.total_mb:.4f}, "
            f"{self.mb_per_sec:.4f}, {self.total_messages}, {self.messages_per_sec:.4f}"
        )

    def to_json(self) -> dict:
        out = asdict(self)
        out.update(
            start_time=format_time(self.start_ms),
            end_time=format_time(self.end_ms),
            total_mb=round(self.total_mb, 4),
            mb_per_sec=round(self.mb_per_sec, 4),
            messages_per_sec=round(self.messages_per_sec, 4),
        )
        return out


class _Reader:
    """Counts the messages and payload bytes of one stream until the shared budget is used up.

    It reads a batch at a time (``KafkaStream.next_batch``: the rest of one fetched chunk), as fast as the
    consumer hands messages out; every message is still taken and its payload measured."""

    def __init__(self, index: int, stream: KafkaStream, run: _Run) -> None:
        self.index = index
        self.stream = stream
        self.run = run
        self.messages = 0
        self.bytes = 0
        self.timed_out_at: float | None = None

    def __call__(self) -> None:
        run = self.run
        stream = self.stream
        payload = attrgetter("payload")
        try:
            while run.left is None or run.left > 0:
                # a share of what is left, so that the readers together stop close to the count
                most = None if run.left is None else max(1, run.left // run.readers)
                try:
                    batch = stream.next_batch(most)
                except ConsumerTimeoutError:
                    return  # nothing came for consumer.timeout.ms: every message was counted already
                except StopIteration:
                    return  # the stream ended (shutdown)
                if run.line08:  # a MessageBatch08: its values column (a null value has no bytes)
                    size = sum(map(len, filter(None, batch.values)))
                else:
                    size = sum(map(len, map(payload, batch)))
                self._count(len(batch), size, time.perf_counter())
        finally:
            run.finished += 1
            if (run.left is not None and run.left <= 0) or run.finished == run.readers:
                run.done.set()

    def _count(self, got: int, size: int, when: float) -> None:
        run = self.run
        self.messages += got
        self.bytes += size
        if run.left is not None:
            run.left -= got
        if got:
            run.last_message = max(run.last_message, when)


class _Run:
    def __init__(self, messages: int | None, readers: int, timeout_s: float, line08: bool = False) -> None:
        self.line08 = line08
        self.left = messages
        self.timeout_s = timeout_s
        self.readers = readers
        self.finished = 0
        self.last_message = 0.0
        self.done = gevent.event.Event()


def run(
    options: ConsumerPerfOptions,
    progress: Callable[[int], None] | None = None,
    detail: Callable[[str], None] | None = None,
) -> ConsumerPerfResult:
    """Run the test; ``progress`` gets the messages consumed so far (every 0.1 s), ``detail`` the
    per-thread lines of ``--show-detailed-stats`` (every reporting interval)."""
    group = options.group or f"perf-consumer-{random.randint(0, 100000)}"
    connector = options.connector(group)
    readers: list[_Reader] = []
    try:
        began = time.perf_counter()
        streams = connector.create_message_streams({options.topic: options.threads})[options.topic]
        rebalance_s = time.perf_counter() - began
        line08 = isinstance(connector, ZookeeperConsumerConnector08)
        state = _Run(options.messages, len(streams), options.consumer_timeout_ms / 1000.0, line08)
        readers = [_Reader(i, s, state) for i, s in enumerate(streams)]
        start_wall, start = time.time(), time.perf_counter()
        greenlets = [gevent.spawn(r) for r in readers]
        ticker = gevent.spawn(_tick, readers, options, progress, detail, start)
        state.done.wait()
        # The clock stops at the last message counted: when a reader reaches the count, or, for a reader
        # whose stream ran dry before its share, the consumer timeout earlier than it noticed.
        end = state.last_message if state.last_message else start
        gevent.killall(greenlets)
        ticker.kill()
    finally:
        connector.shutdown()
        if options.group is None:
            try:
                delete_group(options.zookeeper, group, options.consumer_props)
            except Exception:
                pass
    total = sum(r.messages for r in readers)
    if progress is not None:
        progress(total)
    elapsed = max(end - start, 0.0)
    return ConsumerPerfResult(
        start_ms=int(start_wall * 1000),
        end_ms=int((start_wall + elapsed) * 1000),
        fetch_size=options.fetch_size,
        total_bytes=sum(r.bytes for r in readers),
        total_messages=total,
        elapsed_s=elapsed,
        threads=options.threads,
        group=group,
        rebalance_s=rebalance_s,
    )


def _tick(readers, options, progress, detail, start) -> None:
    interval = options.reporting_interval_ms / 1000.0
    next_report = start + interval
    last = {r.index: (0, 0) for r in readers}
    last_time = start
    while True:
        gevent.sleep(0.1)
        if progress is not None:
            progress(sum(r.messages for r in readers))
        now = time.perf_counter()
        if detail is not None and now >= next_report:
            span = now - last_time
            for r in readers:
                messages, size = r.messages - last[r.index][0], r.bytes - last[r.index][1]
                last[r.index] = (r.messages, r.bytes)
                detail(
                    f"{format_time(now_ms())}, {r.index}, {options.fetch_size}, "
                    f"{size / MB:.4f}, {size / MB / span:.4f}, {messages}, {messages / span:.4f}"
                )
            last_time = now
            next_report = now + interval
