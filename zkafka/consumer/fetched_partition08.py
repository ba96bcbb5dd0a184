"""FetchedPartition: what one partition of a 0.8 Fetch answer holds, read as 0.8's ByteBufferMessageSet is
(message sets of magic 0 or 1, deep), and as record batches where a Fetch v4+ answer holds them.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Iterator
from typing import Any

from zkafka.client08.channel import check_error
from zkafka.errors import MessageSizeTooLargeError
from zkafka.records import native
from zkafka.records.compression import DEFAULT_MAX_INFLATED
from zkafka.records.deep_iterator import decoded_messages
from zkafka.records.fetched import FetchedRecord, batch_records, has_batches, walk_runs
from zkafka.records.format08 import FORMAT08, LOG_OVERHEAD, MessageAndOffset08, entries, iter_messages

_NOT_READ = object()
_unpack_size = struct.Struct(">i").unpack_from


def _same(record: FetchedRecord) -> FetchedRecord:
    return record


class FetchedPartition:
    """What one partition of a Fetch answer holds: its error code, high watermark and message bytes.

    Iterating raises the partition's error, then yields ``MessageAndOffset08`` (offset, key, value, codec,
    crc; ``next_offset``) from the fetch offset on, deep (compressed sets unpacked).
    """

    __slots__ = (
        "topic",
        "partition",
        "fetch_offset",
        "max_bytes",
        "error",
        "high_watermark",
        "data",
        "_extent_read",
        "_last_read",
        "_batches",
    )

    def __init__(
        self,
        topic: str,
        partition: int,
        fetch_offset: int,
        error: int,
        high_watermark: int,
        data: Any,
        max_bytes: int | None = None,
    ) -> None:
        self.topic = topic
        self.partition = partition
        self.fetch_offset = fetch_offset
        self.max_bytes = max_bytes
        self.error = error
        self.high_watermark = high_watermark
        self.data = data
        self._extent_read: tuple[int | None, int] | None = None
        self._last_read: Any = _NOT_READ  # the offset of the last message once all were read
        self._batches: bool | None = None  # whether the data holds record batches (Fetch v4+), once looked

    def __repr__(self) -> str:
        return (
            f"FetchedPartition({self.topic}-{self.partition} from {self.fetch_offset}: error {self.error}, "
            f"hw {self.high_watermark}, {len(self.data)} bytes)"
        )

    def check_error(self) -> None:
        check_error(self.error, f"fetch of {self.topic}-{self.partition} at offset {self.fetch_offset}")

    def _extent(self) -> tuple[int | None, int]:
        """The offset of the last whole top-level entry (a record batch's: its last; None if none) and the
        bytes of the whole entries, read from the entries' lengths."""
        if self._extent_read is None:
            lib = native.lib
            if lib is not None:  # one pass over the lengths, which also tells whether any entry is a batch
                last, valid, self._batches = lib.extent08(self.data)
                self._extent_read = (last, valid)
            else:
                last, valid = None, 0
                for offset, position, size in entries(self.data):
                    last, valid = offset, position + size
                self._extent_read = (last, valid)
        return self._extent_read

    @property
    def has_batches(self) -> bool:
        """Whether the data holds record batches (message format v2: a Fetch v4+ answer of such a log)."""
        if self._batches is None:
            if native.lib is not None:
                self._extent()
            else:
                self._batches = has_batches(self.data)
        return self._batches

    def _with_batches(self, messages_of: Callable[[Any], Iterator], from_record: Callable) -> Iterator:
        """The data's messages run by run: a batch's records by ``from_record(FetchedRecord)``, messages of
        magic 0 or 1 by ``messages_of(their bytes)``."""
        data, limit = self.data, self.max_bytes or DEFAULT_MAX_INFLATED
        for is_batch, start, end in walk_runs(data):
            if is_batch:
                yield from map(from_record, batch_records(data, start, end, self.fetch_offset, limit))
            else:
                yield from messages_of(data[start:end])

    def __iter__(self) -> Iterator[MessageAndOffset08]:
        self._check_readable()
        return self._read()

    def _check_readable(self) -> None:
        self.check_error()
        data = self.data
        if data and (len(data) < LOG_OVERHEAD or LOG_OVERHEAD + _unpack_size(data, 8)[0] > len(data)):
            raise MessageSizeTooLargeError(
                f"{self.topic}-{self.partition} at offset {self.fetch_offset}: the message there is larger "
                f"than the fetch size of {len(data)} bytes; fetch with a larger max_bytes"
            )

    def _read(self) -> Iterator[MessageAndOffset08]:
        last = None
        try:
            for message in self._messages():
                last = message.offset
                yield message
        except MessageSizeTooLargeError as err:
            raise self._inflated_too_far(err) from None
        self._last_read = last

    def messages(self) -> list[MessageAndOffset08]:
        """All the messages at once (cheaper than iterating)."""
        self._check_readable()
        return self._all(self._messages(), 0)

    def records(
        self,
        layout: Any,
        convert: Callable[[int, Any], Any],
        constants: tuple = (),
        offset_at: int = 0,
        from_record: Callable[[FetchedRecord], Any] = _same,
    ) -> list:
        """``messages()`` as other objects, made once each: a plain message by ``layout`` (a ``native.layout``
        using ``constants``) on the native core, any other (and every one on the pure path) by
        ``convert(offset, message)`` (a ``Message08``), a record of a batch by ``from_record``; ``offset_at``
        is the index of an object's offset. The same rules and errors as ``messages()``."""
        self._check_readable()
        data = self.data if type(self.data) is bytes else bytes(self.data)
        limit = self.max_bytes or DEFAULT_MAX_INFLATED

        def messages_of(data: bytes) -> Iterator:
            return decoded_messages(
                data, FORMAT08, 0, True, layout, convert, self.fetch_offset, limit, constants
            )

        if not self.has_batches:
            return self._all(messages_of(data), offset_at)
        return self._all(self._with_batches(messages_of, from_record), offset_at)

    def _all(self, messages: Iterator, offset_at: int) -> list:
        """``messages`` read to the end (a bomb's error naming this partition); the last one's offset, at
        index ``offset_at`` of it, is where reading got to."""
        try:
            found = list(messages)
        except MessageSizeTooLargeError as err:
            raise self._inflated_too_far(err) from None
        self._last_read = found[-1][offset_at] if found else None
        return found

    def _messages(self) -> Iterator[MessageAndOffset08 | FetchedRecord]:
        # A wrapper may inflate to at most the fetch size: what a broker accepts under a message.max.bytes
        # the fetch size fits; a bomb stops there.
        limit = self.max_bytes or DEFAULT_MAX_INFLATED
        if not self.has_batches:
            return iter_messages(self.data, self.fetch_offset, max_inflated=limit)
        return self._with_batches(lambda d: iter_messages(d, self.fetch_offset, max_inflated=limit), _same)

    def _inflated_too_far(self, err: MessageSizeTooLargeError) -> MessageSizeTooLargeError:
        return MessageSizeTooLargeError(
            f"{self.topic}-{self.partition} at offset {self.fetch_offset}: {err}; fetch with a larger max_bytes"
        )

    @property
    def valid_bytes(self) -> int:
        """Bytes of the whole entries (a partial trailing entry excluded)."""
        return self._extent()[1]

    @property
    def next_offset(self) -> int:
        """Where the next fetch starts: after the last whole entry, or the fetch offset if there is none.
        (Once every message was read, the last one says it: a wrapper's offset is its last message's.)"""
        last = self._last_read
        if last is _NOT_READ or last is None:
            last = self._extent()[0]
        return self.fetch_offset if last is None else max(last + 1, self.fetch_offset)
