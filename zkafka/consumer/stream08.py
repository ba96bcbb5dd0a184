"""What the 0.8 high-level consumer's streams hand out: ``MessageAndMetadata08``, a fetch piece at a time in a
``MessageBatch08``, decoded by ``decode_batch08`` (``decode_chunk08``: the same as a list).

The streams themselves are the 0.7 ``KafkaStream`` (with its ownership rule: nothing of a partition the
consumer gave up is handed out); only the items differ. A 0.8 message has a key, logical offsets, and the
consumer resumes at ``offset + 1`` (``next_offset``). A fetch answer is raw log bytes: a compressed wrapper
may hold messages before the fetch offset (skipped), and its last entry may be cut short (not a message:
the next fetch starts there). At Fetch v4+ it holds the log's record batches too (magic 2): a batch's records
are messages (their timestamps and headers left out), a control batch holds none, and the consumer resumes
past a batch's last offset.
"""

from __future__ import annotations

import gc
import struct
import zlib
from array import array
from collections.abc import Callable, Iterator, Sequence
from operator import itemgetter
from typing import NamedTuple, overload

from zkafka.consumer.stream import in_partition
from zkafka.errors import KafkaError
from zkafka.records import native
from zkafka.records.compression import CODECS_V2, DEFAULT_MAX_INFLATED, decompress
from zkafka.records.deep_iterator import entry_messages
from zkafka.records.entries import spans, walk
from zkafka.records.fetched import MAGIC_AT, batch_records
from zkafka.records.format08 import CODEC_MASK, FORMAT08, MIN_MESSAGE_SIZE, entry_offset, key_value
from zkafka.records.native_runs import DONE, WALK, decode_in_place, what_follows
from zkafka.records.record_batch import MAGIC as BATCH_MAGIC

_unpack_offset = struct.Struct(">q").unpack_from
_unpack_int = struct.Struct(">i").unpack_from
_HEAD = struct.Struct(">qiIBBi")  # offset, N, crc, magic, attributes, key length
_HEAD_SIZE = _HEAD.size + 4  # and the value length: the smallest whole entry
_unpack_head = _HEAD.unpack_from


class MessageAndMetadata08(NamedTuple):
    """A consumed 0.8 message: key and message (the value; None when null), topic, partition id, offset."""

    key: bytes | None
    message: bytes | None
    topic: str
    partition: int
    offset: int

    @property
    def value(self) -> bytes | None:
        return self.message

    @property
    def next_offset(self) -> int:
        """The offset a consumer resumes from after this message."""
        return self.offset + 1


_new_item = tuple.__new__
_key_of, _value_of, _offset_of = itemgetter(0), itemgetter(1), itemgetter(4)
_LAYOUT = native.layout(MessageAndMetadata08, ("key", "value", 0, 1, "offset"))  # constants: topic, partition


class MessageBatch08(Sequence):
    """The messages of one fetch piece of one partition, in offset order: a sequence of ``MessageAndMetadata08``
    that also reads as columns.

    ``topic``, ``partition``; ``keys`` and ``values`` (lists of bytes or None: every payload its own bytes
    object, every CRC checked when decoded) and ``offsets`` (a ``range`` when they run on one by one, as a
    leader's log has them; else an ``array('q')``). Reading the columns makes no per-message object; iterating
    or indexing makes each ``MessageAndMetadata08`` as it is read (natively on the native core). ``next_offset``
    is where the partition resumes after the batch. The pure path keeps the messages it decoded as rows and
    makes the columns when they are first read. Slicing gives a batch.
    """

    __slots__ = ("topic", "partition", "_keys", "_values", "_offsets", "_rows")

    def __init__(
        self,
        topic: str,
        partition: int,
        keys: list[bytes | None],
        values: list[bytes | None],
        offsets: Sequence[int],
    ) -> None:
        if not len(keys) == len(values) == len(offsets):
            raise ValueError(
                f"{len(keys)} keys, {len(values)} values and {len(offsets)} offsets: a batch needs as many of each"
            )
        self.topic = topic
        self.partition = partition
        self._keys: list[bytes | None] | None = keys
        self._values: list[bytes | None] | None = values
        self._offsets: Sequence[int] | None = offsets
        self._rows: list[MessageAndMetadata08] | None = None

    @classmethod
    def of(cls, topic: str, partition: int, items: list[MessageAndMetadata08]) -> MessageBatch08:
        """A batch of already made messages (of ``topic`` and ``partition``), its columns made when read."""
        batch = cls.__new__(cls)
        batch.topic, batch.partition = topic, partition
        batch._keys = batch._values = batch._offsets = None
        batch._rows = items
        return batch

    @property
    def keys(self) -> list[bytes | None]:
        if self._keys is None:
            self._keys = list(map(_key_of, self._rows))
        return self._keys

    @property
    def values(self) -> list[bytes | None]:
        if self._values is None:
            self._values = list(map(_value_of, self._rows))
        return self._values

    @property
    def offsets(self) -> Sequence[int]:
        if self._offsets is None:
            self._offsets = array("q", map(_offset_of, self._rows))
        return self._offsets

    @property
    def next_offset(self) -> int:
        """The offset the partition resumes from after the batch's last message (IndexError when empty)."""
        return self.offsets[-1] + 1

    def __len__(self) -> int:
        return len(self._rows) if self._rows is not None else len(self._values)

    def __iter__(self) -> Iterator[MessageAndMetadata08]:
        """The messages, made one by one; the iterator tells what is left (``__length_hint__``) and goes on
        from an index (``__setstate__``), as a list's does."""
        if self._rows is not None:
            return iter(self._rows)
        built, offsets = native.built, self._offsets
        if built is None:
            return iter([self[i] for i in range(len(self))])
        first = 0
        if type(offsets) is range and offsets.step == 1:
            first, offsets = offsets.start, None
        elif type(offsets) is not array:
            offsets = array("q", offsets)
        cls = MessageAndMetadata08
        return built.ColumnItems(cls, self._keys, self._values, self.topic, self.partition, first, offsets)

    @overload
    def __getitem__(self, index: int) -> MessageAndMetadata08: ...

    @overload
    def __getitem__(self, index: slice) -> MessageBatch08: ...

    def __getitem__(self, index):
        rows = self._rows
        if isinstance(index, slice):
            if rows is not None:
                return MessageBatch08.of(self.topic, self.partition, rows[index])
            return MessageBatch08(
                self.topic, self.partition, self._keys[index], self._values[index], self._offsets[index]
            )
        if rows is not None:
            return rows[index]
        return _new_item(
            MessageAndMetadata08,
            (self._keys[index], self._values[index], self.topic, self.partition, self._offsets[index]),
        )

    def __repr__(self) -> str:
        span = f", offsets {self.offsets[0]}..{self.offsets[-1]}" if len(self) else ""
        return f"MessageBatch08({self.topic}:{self.partition}, {len(self)} messages{span})"


def decode_batch08(
    data: bytes | memoryview,
    fetch_offset: int,
    topic: str,
    partition: int,
    start: int = 0,
    max_inflated: int = DEFAULT_MAX_INFLATED,
    max_items: int = -1,
) -> tuple[MessageBatch08, KafkaError | None, int | None, int]:
    """``decode_chunk08`` into a ``MessageBatch08``: ``(batch, error, resume, next_offset)``, the same rules.

    On the native core a run of plain entries and plain record batches (not control; a compressed one's
    records inflated as ``record_batch`` does) from ``start`` (at most ``max_items`` messages, past it by the
    rest of a batch; -1: no limit) becomes a batch of columns, read from ``data`` in place in one call; when
    the run stops before the end of the set (the limit, or an entry that needs the Python walker) ``error``
    is None and ``resume`` is where to decode on from.
    Anything else (the pure path, a compressed wrapper, a bad entry) is ``decode_chunk08``'s list.
    """
    lib = native.lib
    next_offset = fetch_offset
    if lib is not None:
        keys: list[bytes | None] = []
        values: list[bytes | None] = []
        inflate = _inflater(max_inflated)
        stop, last, first, spread = lib.decode_columns(data, start, fetch_offset, keys, values, max_items, inflate)
        next_offset = max(next_offset, last + 1)
        if values:
            if spread is None:
                offsets: Sequence[int] = range(first, first + len(values))
            else:
                offsets = array("q")
                offsets.frombytes(spread)
            batch = MessageBatch08(topic, partition, keys, values, offsets)
            if (max_items < 0 or len(values) < max_items) and what_follows(data, FORMAT08, stop) is DONE:
                return batch, None, None, next_offset
            return batch, None, stop, next_offset
        start = stop
    items, error, resume, after = decode_chunk08(
        data, fetch_offset, topic, partition, start, max_inflated, max_items
    )
    return MessageBatch08.of(topic, partition, items), error, resume, max(next_offset, after)


def _inflater(max_inflated: int) -> Callable[[int, bytes], bytes | None]:
    """How the native core inflates a compressed record batch's records: as ``record_batch.read_batch`` does
    (at most ``max_inflated`` bytes), or None where that fails: the pure path then reads the batch and names
    what is wrong."""

    def inflate(codec: int, payload: bytes) -> bytes | None:
        try:
            return decompress(codec, payload, max_inflated, CODECS_V2, magic=BATCH_MAGIC)
        except Exception:  # noqa: BLE001 - any failure is the pure path's to name
            return None

    return inflate


def decode_chunk08(
    data: bytes | memoryview,
    fetch_offset: int,
    topic: str,
    partition: int,
    start: int = 0,
    max_inflated: int = DEFAULT_MAX_INFLATED,
    max_items: int = -1,
) -> tuple[list[MessageAndMetadata08], KafkaError | None, int | None, int]:
    """Decode a fetched message set (record batches too) from byte ``start``: ``(items, error, resume,
    next_offset)``.

    ``items`` are the messages at or past ``fetch_offset`` before the first bad entry; ``error`` is that
    entry's error (None if there is none); ``resume`` the byte position after it to decode on from (None when
    nothing after it can be read); ``next_offset`` where the next fetch starts: past the bad entry when it can
    be skipped, else past the last whole entry read (``fetch_offset`` if none). A wrapper that inflates to
    more than ``max_inflated`` bytes is a bad entry (MessageSizeTooLargeError), found before it is all inflated.
    A ``data`` that is not bytes (a received frame) is read in place by the native core, and copied only if an
    entry needs the Python walker; there ``max_items`` (-1: no limit) may stop the native run early: then
    ``error`` is None and ``resume`` is where to decode on from.
    """
    collecting = gc.isenabled()
    if collecting:
        gc.disable()  # one object per message and no greenlet switch: skip the young-generation passes
    try:
        items: list[MessageAndMetadata08] = []
        next_offset = fetch_offset
        if type(data) is not bytes:  # a received frame: the native core reads it in place
            start, last, rest = decode_in_place(
                data, FORMAT08, start, 0, fetch_offset, _LAYOUT, (topic, partition), items, max_items
            )
            next_offset = max(next_offset, last + 1)
            if rest is not WALK:
                return items, None, None if rest is DONE else start, next_offset
            data = bytes(data)
        return _decode(data, fetch_offset, topic, partition, start, max_inflated, items, next_offset)
    finally:
        if collecting:
            gc.enable()


def _decode(
    data: bytes,
    fetch_offset: int,
    topic: str,
    partition: int,
    start: int,
    max_inflated: int,
    items: list[MessageAndMetadata08],
    next_offset: int,
) -> tuple[list[MessageAndMetadata08], KafkaError | None, int | None, int]:
    pos = start
    while True:
        pos, next_offset = _plain_run(data, fetch_offset, topic, partition, pos, items, next_offset)
        # Anything else (a wrapper, a short or bad entry, the end): one entry through the checked walk.
        try:
            read = _checked_entry(data, fetch_offset, topic, partition, pos, max_inflated, items)
        except KafkaError as err:
            resume = getattr(err, "resume", None)
            if resume is not None:  # past the bad entry (a record batch: past its last offset)
                bad_offset = entry_offset(data, err.position, resume - err.position)
                next_offset = max(next_offset, bad_offset + 1)
            return items, in_partition(err, topic, partition), resume, next_offset
        if read is None:
            return items, None, None, next_offset  # the end, or a partial entry
        offset, after, error = read
        if error is not None:
            return items, in_partition(error, topic, partition), after, max(next_offset, offset + 1)
        if offset >= next_offset:
            next_offset = offset + 1
        pos = after


def _plain_run(
    data: bytes,
    fetch_offset: int,
    topic: str,
    partition: int,
    pos: int,
    items: list[MessageAndMetadata08],
    next_offset: int,
) -> tuple[int, int]:
    """The fast path: whole plain messages with good CRCs from ``pos`` on, each read with two unpacks (by the
    native core first, when built); ``(where the run stopped, next_offset)``."""
    lib = native.lib
    if lib is not None:  # the same fast path, compiled
        pos, last = lib.decode(data, 8, pos, 0, fetch_offset, _LAYOUT, (topic, partition), items)
        next_offset = max(next_offset, last + 1)
    new_item, cls = _new_item, MessageAndMetadata08
    head, unpack_int, crc32 = _unpack_head, _unpack_int, zlib.crc32
    append = items.append
    end = len(data)
    while end - pos >= _HEAD_SIZE:
        offset, size, crc, magic, attributes, key_size = head(data, pos)
        after = pos + 12 + size
        if magic or attributes & CODEC_MASK or size < MIN_MESSAGE_SIZE or after > end:
            break
        if crc32(data[pos + 16 : after]) != crc:
            break
        if key_size < 0:
            key, at = None, pos + 22
        else:
            key, at = data[pos + 22 : pos + 22 + key_size], pos + 22 + key_size
        if at + 4 > after:
            break
        (value_size,) = unpack_int(data, at)
        if at + 4 + value_size > after:
            break
        if offset >= fetch_offset:
            value = data[at + 4 : at + 4 + value_size] if value_size >= 0 else None
            append(new_item(cls, (key, value, topic, partition, offset)))
        if offset >= next_offset:
            next_offset = offset + 1
        pos = after
    return pos, next_offset


def _checked_entry(
    data: bytes,
    fetch_offset: int,
    topic: str,
    partition: int,
    pos: int,
    max_inflated: int,
    items: list[MessageAndMetadata08],
) -> tuple[int, int, KafkaError | None] | None:
    """The entry at ``pos`` read through the checked walk, its messages at or past ``fetch_offset`` appended:
    ``(its offset, the position after it, None)``, or the error of a wrapper that cannot be inflated in place
    of None; None at the end or before a partial entry. A bad entry raises its KafkaError. A record batch's
    records are read as a Fetch v4+ consumer reads them (``fetched.batch_records``); its offset is its last."""
    span = next(spans(data, FORMAT08, pos), None)
    if span is not None and data[pos + MAGIC_AT] == BATCH_MAGIC:
        after = pos + span[1]
        for r in batch_records(data, pos, after, fetch_offset, max_inflated):
            items.append(_new_item(MessageAndMetadata08, (r.key, r.value, topic, partition, r.offset)))
        return entry_offset(data, pos, span[1]), after, None
    entry = next(walk(data, FORMAT08, pos), None)
    if entry is None:
        return None
    _, after, magic, attributes, crc, body = entry
    (offset,) = _unpack_offset(data, pos)
    if attributes & CODEC_MASK:
        try:
            inner = entry_messages(data, FORMAT08, pos, after, magic, attributes, crc, body, 0, max_inflated)
        except KafkaError as err:
            return offset, after, err
        for inner_offset, message in inner:
            if inner_offset >= fetch_offset:
                items.append(
                    _new_item(MessageAndMetadata08, (message.key, message.value, topic, partition, inner_offset))
                )
    elif offset >= fetch_offset:
        key, value = key_value(data, pos, after)
        items.append(_new_item(MessageAndMetadata08, (key, value, topic, partition, offset)))
    return offset, after, None
