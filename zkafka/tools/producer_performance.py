"""The producer perf test (0.7's ``kafka.perf.ProducerPerformance``): send N messages, report the rate.

Sync mode sends ``batch_size`` messages per ``send`` call (one message set per request); async mode sends
one message per call and lets the async producer batch them (``batch.size``), blocking when the queue is
full (``queue.enqueueTimeout.ms=-1``), as the Scala tool does. Each thread has its own Producer. The clock
runs from the first send to the end of ``close`` (so async runs include draining the queue).

A ``host:port,...`` broker list selects the 0.8 line: a Producer08 per thread with
``request.required.acks`` (1 by default), ``batch_size`` null-key messages per ``send_batch`` call.
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field

from zkafka.client08.topic_metadata import is_broker_list_08
from zkafka.producer.errors import FailedToSendMessageError
from zkafka.records.compression import CODEC_NAMES
from zkafka.tools.perf_result import Throughput, format_time
from zkafka.utils import now_ms
from zkafka.utils.hub import destroy_thread_hub

CSV_HEADER = (
    "start.time, end.time, compression, message.size, batch.size, total.data.sent.in.MB, MB.sec, "
    "total.data.sent.in.nMsg, nMsg.sec"
)
PROGRESS_INTERVAL_S = 0.1


@dataclass
class PerfOptions:
    """What to send and how (the perf tool's command-line options)."""

    topic: str
    messages: int
    message_size: int = 100
    batch_size: int = 200
    compression: int = 0
    is_async: bool = False
    threads: int = 1
    initial_message_id: int | None = None
    vary_message_size: bool = False
    zookeeper: str | None = None
    broker_list: str | None = None
    producer_props: dict[str, str] = field(default_factory=dict)
    request_required_acks: int = 1  # 0.8 line only

    @property
    def line08(self) -> bool:
        """A ``host:port,...`` broker list means the 0.8 line (0.7's is ``id:host:port,...``)."""
        return bool(self.broker_list) and is_broker_list_08(self.broker_list)

    def producer_config(self) -> dict[str, str]:
        if self.line08:
            return self.producer_config08()
        props = {
            "producer.type": "async" if self.is_async else "sync",
            "compression.codec": str(self.compression),
            "batch.size": str(self.batch_size),
        }
        if self.is_async:
            props["queue.enqueueTimeout.ms"] = "-1"
        if self.zookeeper:
            props["zk.connect"] = self.zookeeper
        if self.broker_list:
            props["broker.list"] = self.broker_list
        props.update(self.producer_props)
        return props

    def producer_config08(self) -> dict[str, str]:
        props = {
            "metadata.broker.list": self.broker_list or "",
            "producer.type": "async" if self.is_async else "sync",
            "compression.codec": str(self.compression),
            "batch.num.messages": str(self.batch_size),
            "request.required.acks": str(self.request_required_acks),
            "client.id": "ProducerPerformance",
        }
        if self.is_async:
            props["queue.enqueue.timeout.ms"] = "-1"
            props["queue.buffering.max.messages"] = str(max(10000, self.batch_size))
        props.update(self.producer_props)
        return props


@dataclass
class PerfResult(Throughput):
    """One run's totals, printable as Kafka's CSV line or as JSON."""

    start_ms: int
    end_ms: int
    compression: int
    message_size: int
    batch_size: int
    total_bytes: int
    total_messages: int
    elapsed_s: float
    mode: str
    threads: int
    line: str = "0.7"

    def csv_line(self) -> str:
        return (
            f"{format_time(self.start_ms)}, {format_time(self.end_ms)}, {self.compression}, {self.message_size}, "
            f"{self.batch_size}, {self.total_mb:.2f}, {self.mb_per_sec:.4f}, {self.total_messages}, "
            f"{self.messages_per_sec:.4f}"
        )

    def to_json(self) -> dict:
        out = asdict(self)
        out.update(
            start_time=format_time(self.start_ms),
            end_time=format_time(self.end_ms),
            compression_name=CODEC_NAMES.get(self.compression, str(self.compression)),
            total_mb=round(self.total_mb, 4),
            mb_per_sec=round(self.mb_per_sec, 4),
            messages_per_sec=round(self.messages_per_sec, 4),
        )
        return out


def payloads(options: PerfOptions, count: int, first_id: int) -> Iterator[list[bytes]]:
    """Lists of at most ``batch_size`` payloads, ``count`` payloads in all.

    Fixed-size messages are zero bytes (as in the Scala tool) and cost nothing to make; with
    ``initial_message_id`` each payload starts with its zero-padded id; ``vary_message_size`` picks sizes
    in ``[1, message_size]``.
    """
    size = options.message_size
    step = options.batch_size if not options.is_async else min(options.batch_size, 1000)
    fixed = bytes(size)
    rng = random.Random(first_id)
    varied = [bytes(rng.randint(1, size)) for _ in range(997)] if options.vary_message_size else None
    full_batch = [fixed] * step
    sent = 0
    while sent < count:
        n = min(step, count - sent)
        if options.initial_message_id is not None:
            base = options.initial_message_id + first_id + sent
            batch = [_with_id(base + i, size) for i in range(n)]
        elif varied is not None:
            batch = [varied[(first_id + sent + i) % len(varied)] for i in range(n)]
        else:
            batch = full_batch if n == step else full_batch[:n]
        yield batch
        sent += n


def _with_id(message_id: int, size: int) -> bytes:
    head = b"%010d" % message_id
    return head[:size] + b"x" * (size - len(head))


class _Worker(threading.Thread):
    def __init__(self, options: PerfOptions, index: int, count: int, first_id: int) -> None:
        super().__init__(name=f"perf-producer-{index}", daemon=True)
        self.options = options
        self.count = count
        self.first_id = first_id
        self.sent = 0
        self.bytes = 0
        self.error: BaseException | None = None
        self.finished = 0.0  # perf_counter() when close() returned
        self.cancelled = False
        self.ready = threading.Event()
        self.go = threading.Event()

    def run(self) -> None:
        try:
            self._run()
        finally:
            destroy_thread_hub()  # its producer ran on this thread's hub

    def _run(self) -> None:
        from zkafka.producer import Producer
        from zkafka.producer.producer08 import Producer08

        options = self.options
        try:
            producer = (
                Producer08(options.producer_config())
                if options.line08
                else Producer(options.producer_config())
            )
        except BaseException as exc:
            self.error = exc
            self.ready.set()
            return
        self.ready.set()
        self.go.wait()
        try:
            if self.cancelled:
                return
            topic = options.topic
            size = options.message_size
            send = producer.send
            line08, is_async = options.line08, options.is_async  # line08 parses the broker list: once
            for batch in payloads(options, self.count, self.first_id):
                if line08:
                    producer.send_batch(topic, batch)
                elif is_async:
                    for payload in batch:
                        send(topic, payload)
                else:
                    send(topic, batch)
                self.sent += len(batch)
                self.bytes += sum(map(len, batch)) if options.vary_message_size else size * len(batch)
        except BaseException as exc:
            self.error = exc
        finally:
            try:
                producer.close()
            except BaseException as exc:
                self.error = self.error or exc
            undelivered = getattr(producer, "undelivered", 0)  # 0.7 async: counted, not raised at close
            if undelivered and self.error is None:
                self.error = FailedToSendMessageError(
                    f"{undelivered} of {self.sent} messages were not delivered (see the errors logged)",
                    undelivered=undelivered,
                )
            self.finished = time.perf_counter()


def run(options: PerfOptions, progress: Callable[[int], None] | None = None) -> PerfResult:
    """Run the test; ``progress`` is called with the number of messages sent so far, every 0.1 s."""
    threads = max(options.threads, 1)
    per_thread = options.messages // threads
    counts = [per_thread + (1 if i < options.messages % threads else 0) for i in range(threads)]
    workers = []
    first = 0
    for i, count in enumerate(counts):
        workers.append(_Worker(options, i, count, first))
        first += count
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.ready.wait()
    failed = [w.error for w in workers if w.error is not None]
    if failed:
        for worker in workers:
            worker.cancelled = True
            worker.go.set()
        for worker in workers:
            worker.join()
        raise failed[0]
    start_ms = now_ms()
    start = time.perf_counter()
    for worker in workers:
        worker.go.set()
    for worker in workers:
        while worker.is_alive():
            worker.join(PROGRESS_INTERVAL_S)
            if progress is not None:
                progress(sum(w.sent for w in workers))
    elapsed = max(w.finished for w in workers) - start
    end_ms = start_ms + int(elapsed * 1000)
    errors = [w.error for w in workers if w.error is not None]
    if errors:
        raise errors[0]
    return PerfResult(
        start_ms=start_ms,
        end_ms=end_ms,
        compression=options.compression,
        message_size=options.message_size,
        batch_size=options.batch_size,
        total_bytes=sum(w.bytes for w in workers),
        total_messages=sum(w.sent for w in workers),
        elapsed_s=elapsed,
        mode="async" if options.is_async else "sync",
        threads=threads,
        line="0.8" if options.line08 else "0.7",
    )
