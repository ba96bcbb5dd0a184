"""AsyncProducer: batching by size and time, grouping, compression per topic, queue policies, hooks, close.

Runs against FrameRecorder (a real socket server decoding the frames with zkafka.protocol).
"""

from __future__ import annotations

import socket
import time
from collections.abc import Sequence
from typing import Any

import gevent
import pytest

from tests.support.frame_recorder import FrameRecorder
from zkafka.config07 import ProducerConfig
from zkafka.producer.async_producer07 import AsyncProducer
from zkafka.producer.encoders import DefaultEncoder, StringEncoder
from zkafka.producer.errors import ProducerClosedError, QueueFullError
from zkafka.producer.event_handler07 import EventHandler, collate
from zkafka.producer.send_thread import CallbackHandler, EventQueue, QueueItem
from zkafka.producer.sync_producer07 import SyncProducer
from zkafka.protocol.v07 import MULTIPRODUCE
from zkafka.records.compression import GZIP, NO_COMPRESSION, SNAPPY
from zkafka.records.format07 import ByteBufferMessageSet
from zkafka.utils import wait_until as gwait


def unused_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def make_producer(port: int, encoder: Any = None, **overrides: str) -> AsyncProducer:
    props = {"broker.list": f"0:127.0.0.1:{port}", "producer.type": "async", "queue.time": "60000"}
    props.update({k.replace("_", "."): v for k, v in overrides.items()})
    config = ProducerConfig(props)
    return AsyncProducer(config, SyncProducer(config, "127.0.0.1", port), encoder or DefaultEncoder())


def batches(recorder: FrameRecorder) -> list[list[tuple[str, int, int, list[bytes]]]]:
    """Per MULTIPRODUCE frame: its parts as (topic, partition, codec of the first message, payloads)."""
    out = []
    for _, request_type, request in recorder.frames:
        assert request_type == MULTIPRODUCE  # the async producer always sends MULTIPRODUCE
        parts = []
        for part in request.produces:
            data = bytes(part.messages)
            codecs = {m.codec for m, _ in ByteBufferMessageSet(data).shallow_iter()}
            payloads = [m.payload for m, _ in ByteBufferMessageSet(data)]
            parts.append((part.topic, part.partition, codecs.pop(), payloads))
        out.append(parts)
    return out


def batch_sizes(recorder: FrameRecorder) -> list[int]:
    return [sum(len(p[3]) for p in parts) for parts in batches(recorder)]


# -- the queue ---------------------------------------------------------------------------------------------


def test_queue_counts_events_and_splits_items_for_a_batch():
    queue = EventQueue(capacity=10, coalesce=False)
    assert queue.put("t", 0, [1, 2, 3, 4], 0) == 4
    assert queue.put("t", 1, [5, 6, 7, 8, 9, 10, 11, 12], 0) == 6  # only 6 fit
    assert len(queue) == 10
    assert queue.take(0, max_events=3) == [QueueItem([1, 2, 3], "t", 0)]
    assert queue.take(0, max_events=5) == [QueueItem([4], "t", 0), QueueItem([5, 6, 7, 8], "t", 1)]
    assert len(queue) == 2
    assert queue.take(0, max_events=100) == [QueueItem([9, 10], "t", 1)]
    assert len(queue) == 0
    assert queue.take(0.01, max_events=4) == []


def test_queue_merges_events_for_the_same_partition_without_touching_callers_lists():
    queue = EventQueue(capacity=100)
    first, second = [1], [2, 3]
    queue.put("t", 0, first, 0)
    queue.put("t", 0, second, 0)
    queue.put("t", 0, [4], 0)
    queue.put("t", 1, [5], 0)
    queue.put("t", 0, [6], 0)
    assert first == [1] and second == [2, 3]
    assert queue.take(0, 2) == [QueueItem([1, 2], "t", 0)]
    queue.put("t", 0, [7], 0)  # joins the last item, behind the partly taken head
    taken = queue.take(0, 100)
    assert taken == [QueueItem([3, 4], "t", 0), QueueItem([5], "t", 1), QueueItem([6, 7], "t", 0)]
    queue.put("t", 0, [8], 0)  # the handed-out item is not extended any more
    assert taken[-1] == QueueItem([6, 7], "t", 0)
    assert queue.take(0, 100) == [QueueItem([8], "t", 0)]


def test_queue_put_waits_for_room_up_to_the_timeout():
    queue = EventQueue(capacity=2, coalesce=False)
    queue.put("t", 0, [1, 2], 0)
    started = time.monotonic()
    assert queue.put("t", 0, [3], 0.1) == 0
    assert time.monotonic() - started >= 0.09
    gevent.spawn_later(0.05, queue.take, 0, 1)
    assert queue.put("t", 0, [3], None) == 1  # blocks until the take makes room
    assert queue.take(0, 5) == [QueueItem([2], "t", 0), QueueItem([3], "t", 0)]


def test_collate_groups_by_topic_partition_in_order():
    items = [
        QueueItem([1], "a", 0),
        QueueItem([2], "b", 0),
        QueueItem([3, 4], "a", 0),
        QueueItem([5], "a", 1),
    ]
    assert collate(items) == {("a", 0): [1, 3, 4], ("b", 0): [2], ("a", 1): [5]}
    assert items[0].data == [1]  # the queued lists are not modified


# -- batching --------------------------------------------------------------------------------------------


def test_dispatches_full_batches_of_batch_size_events(recorder):
    producer = make_producer(recorder.port, batch_size="10")
    for i in range(12):
        producer.send("t", 0, [b"%d" % i])
    producer.send("t", 0, [b"m%d" % i for i in range(13)])  # one call, split over batches
    gwait(lambda: len(recorder.frames) == 2, message="two full batches")
    assert batch_sizes(recorder) == [10, 10]
    producer.close()
    gwait(lambda: len(recorder.frames) == 3, message="the last batch, sent by close")
    assert batch_sizes(recorder) == [10, 10, 5]
    payloads = [p for parts in batches(recorder) for part in parts for p in part[3]]
    assert payloads == [b"%d" % i for i in range(12)] + [b"m%d" % i for i in range(13)]


def test_dispatches_a_partial_batch_after_queue_time(recorder):
    producer = make_producer(recorder.port, batch_size="1000", queue_time="100")
    producer.send("t", 0, [b"a", b"b"])
    producer.send("t", 0, [b"c"])
    gwait(lambda: recorder.frames, message="a batch sent on queue.time")
    assert batch_sizes(recorder) == [3]
    producer.send("t", 0, [b"d"])
    gwait(lambda: len(recorder.frames) == 2, message="a second batch sent on queue.time")
    assert batch_sizes(recorder) == [3, 1]
    producer.close()
    assert batch_sizes(recorder) == [3, 1]


def test_close_sends_everything_that_was_queued(recorder):
    producer = make_producer(recorder.port, batch_size="50", queue_size="100000")
    expected = []
    for i in range(300):
        events = [b"%d-%d" % (i, j) for j in range(i % 7 + 1)]
        producer.send(f"topic{i % 3}", i % 2, events)
        expected.extend(events)
    producer.close()
    gwait(lambda: len(recorder.messages()) == len(expected), message="every queued event")
    received = [p for parts in batches(recorder) for part in parts for p in part[3]]
    assert sorted(received) == sorted(expected)
    assert all(size == 50 for size in batch_sizes(recorder)[:-1])
    with pytest.raises(ProducerClosedError):
        producer.send("t", 0, [b"late"])


def test_groups_a_batch_by_topic_partition_in_one_multiproduce(recorder):
    producer = make_producer(recorder.port, batch_size="4")
    producer.send("a", 0, [b"1"])
    producer.send("b", 2, [b"2"])
    producer.send("a", 0, [b"3"])
    producer.send("a", 1, [b"4"])
    gwait(lambda: recorder.frames)
    [parts] = batches(recorder)
    assert [(t, p, payloads) for t, p, _, payloads in parts] == [
        ("a", 0, [b"1", b"3"]),
        ("b", 2, [b"2"]),
        ("a", 1, [b"4"]),
    ]
    producer.close()


@pytest.mark.parametrize(
    ("codec", "compressed_topics", "expected"),
    [
        (GZIP, "", {"a": GZIP, "b": GZIP}),
        (SNAPPY, "a", {"a": SNAPPY, "b": NO_COMPRESSION}),
        (GZIP, "a,c", {"a": GZIP, "b": NO_COMPRESSION}),
        (NO_COMPRESSION, "a", {"a": NO_COMPRESSION, "b": NO_COMPRESSION}),
    ],
)
def test_compression_follows_codec_and_compressed_topics(recorder, codec, compressed_topics, expected):
    overrides = {"batch_size": "4", "compression_codec": str(codec)}
    if compressed_topics:
        overrides["compressed_topics"] = compressed_topics
    producer = make_producer(recorder.port, **overrides)
    producer.send("a", 0, [b"x", b"y"])
    producer.send("b", 0, [b"z", b"w"])
    gwait(lambda: recorder.frames)
    [parts] = batches(recorder)
    assert {topic: part_codec for topic, _, part_codec, _ in parts} == expected
    assert [payloads for *_, payloads in parts] == [[b"x", b"y"], [b"z", b"w"]]
    producer.close()


def test_encoder_runs_at_dispatch(recorder):
    producer = make_producer(recorder.port, encoder=StringEncoder(), batch_size="2")
    producer.send("t", 0, ["h\u00e9", "llo"])
    gwait(lambda: recorder.frames)
    assert recorder.messages() == [b"h\xc3\xa9", b"llo"]
    producer.close()


# -- queue-full policies -----------------------------------------------------------------------------------
# The broker is not listening yet, so the send greenlet is stuck connecting with its first batch while
# the queue fills; then the broker comes up and everything queued drains.


def fill_queue(port: int, **overrides: str) -> AsyncProducer:
    producer = make_producer(port, batch_size="10", queue_size="10", connect_timeout_ms="5000", **overrides)
    producer.send("t", 0, [b"first-%d" % i for i in range(10)])  # taken by the send greenlet at once
    assert len(producer.queue) == 0
    producer.send("t", 0, [b"queued-%d" % i for i in range(10)])
    assert len(producer.queue) == 10
    return producer


def test_enqueue_timeout_zero_drops_what_does_not_fit():
    port = unused_port()
    producer = fill_queue(port, queue_enqueueTimeout_ms="0")
    with pytest.raises(QueueFullError) as caught:
        producer.send("t", 0, [b"dropped-0", b"dropped-1"])
    assert (caught.value.dropped, caught.value.enqueued) == (2, 0)
    broker = FrameRecorder(port)
    try:
        producer.close()
        gwait(lambda: len(broker.messages()) == 20)
        assert sorted(broker.messages()) == sorted(
            [b"first-%d" % i for i in range(10)] + [b"queued-%d" % i for i in range(10)]
        )
    finally:
        broker.stop()


def test_enqueue_timeout_positive_waits_then_drops():
    port = unused_port()
    producer = fill_queue(port, queue_enqueueTimeout_ms="200")
    started = time.monotonic()
    with pytest.raises(QueueFullError):
        producer.send("t", 0, [b"dropped"])
    assert time.monotonic() - started >= 0.19
    broker = FrameRecorder(port)
    try:
        producer.close()
        gwait(lambda: len(broker.messages()) == 20)
        assert b"dropped" not in broker.messages()
    finally:
        broker.stop()


def test_enqueue_timeout_negative_blocks_until_there_is_room():
    port = unused_port()
    producer = fill_queue(port, queue_enqueueTimeout_ms="-1")
    late: list[FrameRecorder] = []
    gevent.spawn_later(0.3, lambda: late.append(FrameRecorder(port)))
    started = time.monotonic()
    producer.send("t", 0, [b"blocked"])  # returns once the broker is up and the queue drained
    assert time.monotonic() - started >= 0.25
    try:
        producer.close()
        gwait(lambda: len(late[0].messages()) == 21)
        assert late[0].messages()[-1] == b"blocked"
    finally:
        for server in late:
            server.stop()


# -- retries -----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("retries", "delivered"), [("0", False), ("100", True)])
def test_num_retries_resends_a_failed_batch(retries, delivered):
    port = unused_port()
    producer = make_producer(port, batch_size="1", connect_timeout_ms="20", num_retries=retries)
    producer.send("t", 0, [b"retried"])
    late: list[FrameRecorder] = []
    gevent.sleep(0.15)
    late.append(FrameRecorder(port))
    try:
        producer.close()
        if delivered:
            gwait(lambda: late[0].messages() == [b"retried"])
        else:
            gevent.sleep(0.1)
            assert late[0].messages() == []
    finally:
        late[0].stop()


# -- hooks -------------------------------------------------------------------------------------------------


class RecordingCallbacks(CallbackHandler):
    """Records each hook call; upper-cases queued payloads and adds one item at close."""

    instances: list[RecordingCallbacks] = []

    def __init__(self) -> None:
        self.calls: list[tuple] = []
        RecordingCallbacks.instances.append(self)

    def init(self, props):
        self.calls.append(("init", dict(props)))

    def before_enqueue(self, item):
        self.calls.append(("before_enqueue", list(item.data)))
        return QueueItem([d.upper() for d in item.data], item.topic, item.partition)

    def after_enqueue(self, item, added):
        self.calls.append(("after_enqueue", list(item.data), added))

    def after_dequeuing_existing_data(self, item):
        self.calls.append(("after_dequeuing", list(item.data)))
        return [item]

    def before_sending_data(self, events):
        self.calls.append(("before_sending", [d for item in events for d in item.data]))
        return events

    def last_batch_before_close(self):
        self.calls.append(("last_batch",))
        return [QueueItem([b"BYE"], "t", 0)]

    def close(self):
        self.calls.append(("close",))


class RecordingEventHandler(EventHandler):
    instances: list[RecordingEventHandler] = []

    def __init__(self) -> None:
        self.props: dict = {}
        self.batches: list[list[QueueItem]] = []
        self.closed = False
        RecordingEventHandler.instances.append(self)

    def init(self, props):
        self.props = dict(props)

    def handle(self, events: Sequence[QueueItem], sync_producer, encoder) -> None:
        self.batches.append(list(events))
        assert isinstance(sync_producer, SyncProducer)
        assert isinstance(encoder, StringEncoder)

    def close(self):
        self.closed = True


def test_callback_handler_is_called_at_the_07_points(recorder):
    producer = make_producer(
        recorder.port,
        batch_size="2",
        callback_handler=f"{__name__}.RecordingCallbacks",
        callback_handler_props="a=1,b=two",
    )
    callbacks = producer.callback_handler
    assert isinstance(callbacks, RecordingCallbacks)
    producer.send("t", 0, [b"x", b"y"])
    gwait(lambda: recorder.frames)
    producer.close()
    gwait(lambda: len(recorder.frames) == 2)
    assert callbacks.calls == [
        ("init", {"a": "1", "b": "two"}),
        ("before_enqueue", [b"x", b"y"]),
        ("after_enqueue", [b"X", b"Y"], True),
        ("after_dequeuing", [b"X", b"Y"]),
        ("before_sending", [b"X", b"Y"]),
        ("last_batch",),
        ("before_sending", [b"BYE"]),
        ("close",),
    ]
    assert recorder.messages() == [b"X", b"Y", b"BYE"]


def test_event_handler_replaces_the_default_one(recorder):
    producer = make_producer(
        recorder.port,
        encoder=StringEncoder(),
        batch_size="3",
        event_handler=f"{__name__}.RecordingEventHandler",
        event_handler_props="k=v",
    )
    handler = producer.event_handler
    assert isinstance(handler, RecordingEventHandler) and handler.props == {"k": "v"}
    producer.send("t", 1, ["a", "b"])
    producer.send("u", 0, ["c"])
    gwait(lambda: handler.batches)
    assert handler.batches == [[QueueItem(["a", "b"], "t", 1), QueueItem(["c"], "u", 0)]]
    producer.close()
    assert handler.closed
    assert recorder.frames == []  # the replacement handler sent nothing itself
