"""Loading ``__consumer_offsets`` reads whatever format each entry has: magic-0 messages, and record batches
(a log upgraded by ``inter.broker.protocol.version``/``log.message.format.version`` holds both), with the
offsets a compacted batch keeps."""

from __future__ import annotations

from zkafka.coordinator.offsets_log import log_records
from zkafka.records.default_record import Record
from zkafka.records.format08 import build_message_set
from zkafka.records.record_batch import build_batch


def test_magic_0_then_batches_with_gaps_from_compaction_in_offset_order():
    old = build_message_set([(b"k0", b"v0"), (b"k1", b"v1")], base_offset=0)
    compacted = build_batch([Record(2, 1000, b"k2", b"v2"), Record(5, 1001, b"k1", None)])  # 3 and 4 cleaned
    later = build_batch([Record(6, 1002, b"k0", b"v6")])
    data = old + compacted + later
    assert list(log_records(data, 0)) == [(0, b"k0", b"v0"), (1, b"k1", b"v1"), (2, b"k2", b"v2"), (5, b"k1", None),
                                       (6, b"k0", b"v6")]  # fmt: skip
    assert [at for at, _, _ in log_records(data, 3)] == [5, 6]  # a read that starts inside a batch
    assert [at for at, _, _ in log_records(data + later[:20], 0)] == [0, 1, 2, 5, 6]  # a partial tail is left out
