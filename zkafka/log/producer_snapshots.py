"""The producer-state snapshot files of a 0.8 log (``<offset>.snapshot`` beside the segments, as Kafka's):
written when a segment rolls and at a clean shutdown, read when the log loads, then the log's batches after
the snapshot replayed (the recovery of Kafka's ``loadProducerState``); those above a truncation point and
below the log start deleted. A damaged snapshot is deleted and the state rebuilt from an older one.
"""

from __future__ import annotations

import logging
import os
import struct
from collections.abc import Sequence

from zkafka.errors import InvalidMessageError
from zkafka.log.producer_state import SNAPSHOT_SUFFIX, ProducerStateManager, decode_snapshot, producer_batches
from zkafka.log.segment import LogSegment, parse_segment_file_name, segment_file_name
from zkafka.records.format08 import LOG_OVERHEAD
from zkafka.records.record_batch import MAGIC, batch_spans

_CHUNK_BYTES = 4 * 1024 * 1024
_INT32 = struct.Struct(">i")
MAGIC_AT = 16

logger = logging.getLogger(__name__)


def snapshot_offsets(dir_path: str) -> list[int]:
    """The offsets of the snapshot files in ``dir_path``, ascending."""
    found = (parse_segment_file_name(name, SNAPSHOT_SUFFIX) for name in os.listdir(dir_path))
    return sorted(offset for offset in found if offset is not None)


def write_snapshot(dir_path: str, offset: int, state: ProducerStateManager) -> None:
    """Write the state of every offset below ``offset`` (through a temporary file, then renamed)."""
    path = os.path.join(dir_path, segment_file_name(offset, SNAPSHOT_SUFFIX))
    with open(path + ".tmp", "wb") as f:
        f.write(state.snapshot())
        f.flush()
        os.fsync(f.fileno())
    os.replace(path + ".tmp", path)


def delete_snapshots(dir_path: str, *, below: int | None = None, above: int | None = None) -> None:
    """Delete the snapshots at offsets under ``below`` or over ``above``."""
    doomed = [
        o
        for o in snapshot_offsets(dir_path)
        if (below is not None and o < below) or (above is not None and o > above)
    ]
    for offset in doomed:
        try:
            os.unlink(os.path.join(dir_path, segment_file_name(offset, SNAPSHOT_SUFFIX)))
        except FileNotFoundError:
            pass


def load_producer_state(
    state: ProducerStateManager, dir_path: str, segments: Sequence[LogSegment], log_end: int, now_ms: int
) -> None:
    """``state`` as of ``log_end``: the newest sound snapshot at or below it, then the batches after it."""
    delete_snapshots(dir_path, above=log_end)
    start = 0
    for offset in reversed(snapshot_offsets(dir_path)):
        path = os.path.join(dir_path, segment_file_name(offset, SNAPSHOT_SUFFIX))
        try:
            with open(path, "rb") as f:
                state.reset(decode_snapshot(f.read(), path))
            start = offset
            break
        except InvalidMessageError as exc:
            logger.warning("%s; deleting it and rebuilding the producer state from the log", exc)
            os.unlink(path)
    else:
        state.reset({})
    replay_segments(state, segments, start)
    state.truncate_head(segments[0].start if segments else 0)
    state.remove_expired(now_ms)


def replay_segments(state: ProducerStateManager, segments: Sequence[LogSegment], start: int) -> None:
    """Replay every idempotent batch at or after ``start`` in ``segments`` (read a few MB at a time)."""
    for i, segment in enumerate(segments):
        following = segments[i + 1].start if i + 1 < len(segments) else None
        if following is not None and following <= start:
            continue
        pos, size = 0, segment.size
        while size - pos > LOG_OVERHEAD:
            chunk = segment.read(pos, min(size - pos, _CHUNK_BYTES))
            whole = sum(n for _, n in batch_spans(chunk)) if chunk[MAGIC_AT] == MAGIC else 0
            if not whole:  # older messages (the format was raised later) or one batch larger than a chunk
                whole = LOG_OVERHEAD + _INT32.unpack_from(chunk, 8)[0]
                chunk = segment.read(pos, whole)
            batches = producer_batches(chunk[:whole])
            state.replay(b for b in batches if b.first_offset >= start)
            pos += whole
