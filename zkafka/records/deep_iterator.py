"""Deep iteration of a message set: every message, those inside compressed wrappers included.

On top of the shallow walk of ``entries``: a wrapper is inflated (under the ``max_inflated`` cap shared by
the wrappers nested in it) and its inner set read before any of its messages is returned, and the line's
``EntryFormat`` gives the offsets reported with them (0.7: the wrapper's position, its end for the last one;
0.8: the offsets stored inside). As Kafka's ``ByteBufferMessageSet`` deep iterator.
With the native core built, ``decoded_messages`` has runs of plain entries decoded by it
(``native_runs.decoding_walk``). Pure: bytes in, values out.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from zkafka.errors import KafkaError
from zkafka.records.compression import DEFAULT_MAX_INFLATED
from zkafka.records.entries import EntryFormat, InflateBudget, inflate_wrapper, walk
from zkafka.records.native_runs import NO_MIN_OFFSET, decoding_walk


def entry_messages(
    data: Any,
    fmt: EntryFormat,
    pos: int,
    end: int,
    magic: int,
    attributes: int,
    crc: int,
    body: Any,
    base: int = 0,
    max_inflated: int | InflateBudget = DEFAULT_MAX_INFLATED,
) -> list[tuple[int, Any]]:
    """``(offset, message)`` of what one checked top-level entry holds: itself, or a wrapper's messages.

    A wrapper is decompressed and its inner set read deep (nested wrappers too) before anything is
    returned, so a bad inner message yields none of them; the line's rule gives the offsets. Inflating it
    (nested wrappers included) past ``max_inflated`` bytes raises MessageSizeTooLargeError.
    """
    if not attributes & fmt.codec_mask:
        message = fmt.make_message(data, pos, end, magic, attributes, crc, body)
        return [(fmt.entry_offset(data, pos, end, base), message)]
    budget = max_inflated if type(max_inflated) is InflateBudget else InflateBudget(max_inflated)
    inflated = inflate_wrapper(data, fmt, pos, end, attributes, body, budget)
    inner = list(messages(inflated, fmt, 0, True, max_inflated=budget))
    offsets = fmt.wrapper_offsets(pos, end, base, [offset for offset, _ in inner])
    return [(offset, message) for offset, (_, message) in zip(offsets, inner, strict=True)]


def messages(
    data: Any,
    fmt: EntryFormat,
    base: int = 0,
    deep: bool = True,
    start: int = 0,
    max_inflated: int | InflateBudget = DEFAULT_MAX_INFLATED,
) -> Iterator[tuple[int, Any]]:
    """``(offset, message)`` of every message of a set, wrappers expanded when ``deep`` (each top-level one
    inflating to at most ``max_inflated`` bytes)."""
    entry_offset, make_message, mask = fmt.entry_offset, fmt.make_message, fmt.codec_mask
    for pos, end, magic, attributes, crc, body in walk(data, fmt, start, base):
        if deep and attributes & mask:
            yield from entry_messages(data, fmt, pos, end, magic, attributes, crc, body, base, max_inflated)
        else:
            yield (
                entry_offset(data, pos, end, base),
                make_message(data, pos, end, magic, attributes, crc, body),
            )


def decoded_messages(
    data: Any,
    fmt: EntryFormat,
    base: int,
    deep: bool,
    layout: Any,
    convert: Any,
    min_offset: int = NO_MIN_OFFSET,
    max_inflated: int = DEFAULT_MAX_INFLATED,
    constants: tuple = (),
) -> Iterator[Any]:
    """Every message of a set as the line's reader object: plain entries decoded by ``layout`` (with
    ``constants``) on the native path, the rest (and everything on the pure path) as ``convert(offset,
    message)`` of ``messages``; on the 0.8 line only those at or past ``min_offset``; each wrapper inflating
    to at most ``max_inflated`` bytes. A bad entry raises after the messages before it."""
    out: list = []
    entries = decoding_walk(data, fmt, 0, base, layout, constants, out, min_offset)
    mask, entry_offset, make_message = fmt.codec_mask, fmt.entry_offset, fmt.make_message
    while True:
        try:
            pos, end, magic, attributes, crc, body = next(entries)
        except StopIteration:
            yield from out
            return
        except KafkaError as err:
            yield from out
            raise err
        if out:
            yield from out
            out.clear()
        if deep and attributes & mask:
            found = entry_messages(data, fmt, pos, end, magic, attributes, crc, body, base, max_inflated)
        else:
            found = [
                (
                    entry_offset(data, pos, end, base),
                    make_message(data, pos, end, magic, attributes, crc, body),
                )
            ]
        for offset, message in found:
            if offset >= min_offset:
                yield convert(offset, message)
