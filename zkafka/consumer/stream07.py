"""What the 0.7 high-level consumer's streams hand out: ``MessageAndMetadata``, decoded by ``decode_chunk``.

A fetcher decodes what one fetch returned for one partition into a chunk of ``MessageAndMetadata`` objects
(``decode_chunk``, one pass over the bytes that also finds how far the fetch offset advances) and puts it
on a stream's queue; the stream (``stream.KafkaStream``) hands the messages out one by one.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator

from zkafka.consumer.stream import in_partition
from zkafka.errors import KafkaError
from zkafka.records import native
from zkafka.records.deep_iterator import entry_messages
from zkafka.records.format07 import FORMAT07
from zkafka.records.message07 import CODEC_MASK, Message
from zkafka.records.native_runs import DONE, NO_MIN_OFFSET, WALK, decode_in_place, decoding_walk, walked_to
from zkafka.zk.paths07 import BrokerPartition


class MessageAndMetadata(Message):
    """A consumed message together with its topic, broker partition and the offset to resume from after it.

    It *is* the Message (``mm.message is mm``), so the stream makes one object per message instead of a
    Message plus a tuple: that alone makes iteration about a quarter faster. It unpacks like the tuple
    ``(message, topic, partition, offset)`` and compares by all four.
    """

    __slots__ = ("topic", "partition", "offset")

    topic: str
    partition: BrokerPartition
    offset: int

    def __init__(self, message: Message, topic: str, partition: BrokerPartition, offset: int) -> None:
        self.magic = message.magic
        self.attributes = message.attributes
        self.checksum = message.checksum
        self.payload = message.payload
        self.topic = topic
        self.partition = partition
        self.offset = offset

    @property
    def message(self) -> Message:
        return self

    @property
    def next_offset(self) -> int:
        """The offset a consumer resumes from after this message: a 0.7 offset already is."""
        return self.offset

    def __iter__(self) -> Iterator:
        return iter((self, self.topic, self.partition, self.offset))

    def _key(self) -> tuple:
        return (
            self.magic,
            self.attributes,
            self.checksum,
            self.payload,
            self.topic,
            self.partition,
            self.offset,
        )

    def __eq__(self, other: object) -> bool:
        if isinstance(other, MessageAndMetadata):
            return self._key() == other._key()
        return super().__eq__(other)

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return (
            f"MessageAndMetadata(topic={self.topic!r}, partition={self.partition}, offset={self.offset}, "
            f"codec={self.codec}, size={len(self.payload)})"
        )


_new_item = MessageAndMetadata.__new__
# The native core builds the same objects; the call's constants are (topic, partition).
_LAYOUT = native.layout(
    MessageAndMetadata,
    (
        ("magic", "magic"),
        ("attributes", "attributes"),
        ("checksum", "crc"),
        ("payload", "payload"),
        ("topic", 0),
        ("partition", 1),
        ("offset", "offset"),
    ),
)


def decode_chunk(
    buf: bytes | memoryview,
    initial_offset: int,
    topic: str,
    partition: BrokerPartition,
    deep: bool = True,
    start: int = 0,
    max_items: int = -1,
) -> tuple[list[MessageAndMetadata], KafkaError | None, int | None, int]:
    """Decode a fetched message set from byte ``start`` with exactly the rules of ``format07.iter_messages``.

    Returns ``(items, error, resume, end)``: the messages before the first bad entry; that entry's error
    (or None); the position after the bad entry to decode on from (None when nothing after it can be read);
    and the position decoding stopped at (after the last complete entry, or at an unreadable one), i.e. how
    many bytes of ``buf`` are used up. The entries come from the records walker; wrappers are expanded by it
    with the 0.7 offset rule. A ``buf`` that is not bytes (a received frame) is read in place by the native
    core, and copied only if an entry needs the Python walker; there ``max_items`` (-1: no limit) may stop
    the native run early: then ``error`` is None and ``resume`` (= ``end``) is where to decode on from.
    """
    # The loop makes an object per message and never switches greenlets: pausing the cyclic GC for it saves
    # a young-generation pass every few hundred messages.
    collecting = gc.isenabled()
    if collecting:
        gc.disable()
    try:
        items: list[MessageAndMetadata] = []
        if type(buf) is not bytes:
            start, _, rest = decode_in_place(
                buf,
                FORMAT07,
                start,
                initial_offset,
                NO_MIN_OFFSET,
                _LAYOUT,
                (topic, partition),
                items,
                max_items,
            )
            if rest is not WALK:
                return items, None, None if rest is DONE else start, start
            buf = bytes(buf)
        return _decode(buf, initial_offset, topic, partition, deep, start, items)
    finally:
        if collecting:
            gc.enable()


def _decode(
    data: bytes,
    initial_offset: int,
    topic: str,
    partition: BrokerPartition,
    deep: bool,
    start: int,
    items: list[MessageAndMetadata],
) -> tuple[list[MessageAndMetadata], KafkaError | None, int | None, int]:
    new_item, cls = _new_item, MessageAndMetadata
    append = items.append
    after = start
    entries = decoding_walk(data, FORMAT07, start, initial_offset, _LAYOUT, (topic, partition), items)
    try:
        for pos, after, magic, attributes, crc, payload in entries:
            if deep and attributes & CODEC_MASK:
                try:
                    expanded = entry_messages(
                        data, FORMAT07, pos, after, magic, attributes, crc, payload, initial_offset
                    )
                except KafkaError as err:
                    return items, in_partition(err, topic, partition), after, after
                for offset, message in expanded:
                    append(cls(message, topic, partition, offset))
                continue
            item = new_item(cls)
            item.magic = magic
            item.attributes = attributes
            item.checksum = crc
            item.payload = payload
            item.topic = topic
            item.partition = partition
            item.offset = initial_offset + after
            append(item)
    except KafkaError as err:
        resume = err.resume
        return items, in_partition(err, topic, partition), resume, err.position if resume is None else resume
    return items, None, None, walked_to(entries, after)
