"""The console producer: one message per line of input, optionally ``key<separator>message``.

Input is read on gevent's thread pool, so the async send greenlet and the ZooKeeper watches keep running
while the producer waits for the next line.
"""

from __future__ import annotations

import logging
import os
import stat
from collections.abc import Iterable, Iterator
from typing import Any

import gevent.os

from zkafka.producer.producer07 import Producer

log = logging.getLogger(__name__)

READ_CHUNK = 64 * 1024


def read_lines(fd: int, chunk_size: int = READ_CHUNK) -> Iterator[bytes]:
    """The lines of a file descriptor without their line ends (``\\n`` or ``\\r\\n``), read cooperatively."""
    # A regular file never blocks; a pipe or terminal is read on the thread pool.
    read = os.read if _is_regular_file(fd) else gevent.os.tp_read
    pending = b""
    while True:
        chunk = read(fd, chunk_size)
        if not chunk:
            break
        lines = (pending + chunk).split(b"\n")
        pending = lines.pop()
        for line in lines:
            yield line[:-1] if line.endswith(b"\r") else line
    if pending:
        yield pending[:-1] if pending.endswith(b"\r") else pending


def _is_regular_file(fd: int) -> bool:
    try:
        return stat.S_ISREG(os.fstat(fd).st_mode)
    except OSError:
        return False


def split_key(line: bytes, separator: bytes | None) -> tuple[Any, bytes]:
    """``(key, message)`` of a line; the key is the text before the first separator (a ``str`` when it is
    UTF-8, so that it hashes like a Java String key), or None when the line has no separator."""
    if not separator:
        return None, line
    key, sep, message = line.partition(separator)
    if not sep:
        return None, line
    try:
        return key.decode("utf-8"), message
    except UnicodeDecodeError:
        return key, message


def produce_lines(
    producer: Producer, topic: str, lines: Iterable[bytes], key_separator: bytes | None = None
) -> int:
    """Send every line as one message; returns the number of messages sent."""
    count = 0
    for line in lines:
        key, message = split_key(line, key_separator)
        producer.send(topic, [message], key=key)
        count += 1
    return count


def produce_lines08(
    producer: Any, topic: str, lines: Iterable[bytes], key_separator: bytes | None = None
) -> tuple[int, int]:
    """Send every line as one KeyedMessage through a Producer08; returns (lines read, messages a sync
    producer could not deliver). Undelivered lines are logged and the reading goes on."""
    from zkafka.producer.errors import FailedToSendMessageError
    from zkafka.producer.producer08 import KeyedMessage

    read = undelivered = 0
    for line in lines:
        key, message = split_key(line, key_separator)
        read += 1
        try:
            producer.send(KeyedMessage(topic, key, message))
        except FailedToSendMessageError as exc:
            log.error("%s", exc)
            undelivered += exc.undelivered
    return read, undelivered
