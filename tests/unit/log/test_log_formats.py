"""A 0.8-line log storing message format v1 or v2 (``message.format.version``): offsets assigned in place,
conversion up and down, LogAppendTime, recovery of a torn batch, a follower's append, fetch down-conversion."""

import os
import struct

import pytest
from crc32c import crc32c

from tests.support.logs import Clock, opened
from zkafka.config08 import BrokerConfig08
from zkafka.errors import InvalidConfigError, InvalidRecordError, UnsupportedForMessageFormatError
from zkafka.log.log08 import Log08
from zkafka.log.log_cleaner import LogCleaner
from zkafka.log.log_config import LogConfig
from zkafka.records import message_v1
from zkafka.records.compression import GZIP, LZ4
from zkafka.records.convert import down_convert
from zkafka.records.default_record import Header, Record
from zkafka.records.format08 import build_message_set, entries, iter_messages
from zkafka.records.record_batch import build_batch, read_batches
from zkafka.tools.dump_log_segments import dump_log08, dump_time_index

pytestmark = pytest.mark.usefixtures("codec_path")

NOW = 1_700_000_000_000


def open_log(path, magic=2, **settings) -> Log08:
    options = {"need_recovery": settings.pop("need_recovery", False)}
    config = LogConfig(**{"segment_bytes": 100_000, "message_format_magic": magic, **settings})
    os.makedirs(path, exist_ok=True)
    return opened(Log08(str(path), "t", 0, config, time_ms=Clock(NOW), **options))


def batch(*values: bytes, timestamp=NOW - 5, headers=(), **options) -> bytes:
    records = [Record(i, timestamp + i, b"k", v, headers) for i, v in enumerate(values)]
    return build_batch(records, **options)


def hand_built_batch(base_offset: int, timestamp: int, value: bytes) -> bytes:
    """One plain record with a null key and no headers, written field by field as the format's spec says."""
    body = (
        b"\x00" + b"\x00" + b"\x00" + b"\x01" + bytes([len(value) * 2]) + value + b"\x00"
    )  # zig-zag varints
    record = bytes([len(body) * 2]) + body
    after_crc = struct.pack(">hiqqqhii", 0, 0, timestamp, timestamp, -1, -1, -1, 1) + record
    head = struct.pack(">qiib", base_offset, 4 + 1 + 4 + len(after_crc), -1, 2)
    return head + struct.pack(">I", crc32c(after_crc)) + after_crc


def test_the_format_version_keys_take_kafka_versions_and_name_the_key_when_bad():
    base = {"zookeeper.connect": "localhost:2181", "broker.id": "0"}
    assert BrokerConfig08(base)["log.message.format.version"] == "0.8.2"
    assert (
        BrokerConfig08({**base, "inter.broker.protocol.version": "2.2"})["log.message.format.version"]
        == "2.2"
    )
    assert BrokerConfig08({**base, "log.message.format.version": "0.10.2-IV0"})["log.message.format.version"]
    with pytest.raises(InvalidConfigError, match="log.message.format.version"):
        BrokerConfig08({**base, "log.message.format.version": "0.7"})
    config = LogConfig.from_topic_config(
        {"message.format.version": "0.10.0", "message.timestamp.type": "LogAppendTime"}
    )
    assert (config.message_format_magic, config.log_append_time) == (1, True)


def test_a_v2_log_stores_the_producers_batch_as_it_is_with_offsets_from_its_end(tmp_path):
    log = open_log(tmp_path)
    first = hand_built_batch(0, NOW, b"hello")
    assert log.append(first).next_offset == 1
    second = batch(b"a", b"b", b"c")
    info = log.append(second)
    assert (info.first_offset, info.next_offset, info.count) == (1, 4, 3)
    stored = log.segments[-1].read(0, log.segments[-1].size)
    assert stored == first + struct.pack(">q", 1) + second[8:]  # only the base offset changed
    assert [r.offset for b in read_batches(stored) for r in b.records] == [0, 1, 2, 3]
    region = log.read(2, 10_000)  # an offset inside the second batch finds that batch
    assert region.position == len(first)


def test_log_append_time_stamps_the_batch_and_writes_its_crc_again(tmp_path):
    log = open_log(tmp_path, log_append_time=True)
    assert log.append(batch(b"a", b"b", compression=GZIP)).log_append_time == NOW  # Produce v2+ answers it
    (stored,) = read_batches(log.segments[-1].read(0, 10_000))  # read_batch checks the CRC-32C
    assert stored.header.max_timestamp == NOW and stored.header.timestamp_type == 1
    assert [r.timestamp for r in stored.records] == [NOW, NOW]


def test_older_formats_are_converted_up_and_batches_down_to_the_logs_format(tmp_path):
    v2 = open_log(tmp_path / "v2")
    v2.append(build_message_set([(None, b"x"), (b"k", b"y")], GZIP))
    (stored,) = read_batches(v2.segments[-1].read(0, 10_000))
    assert stored.header.compression == GZIP
    assert [(r.offset, r.timestamp, r.key, r.value) for r in stored.records] == [
        (0, -1, None, b"x"),
        (1, -1, b"k", b"y"),
    ]
    v1 = open_log(tmp_path / "v1", magic=1)
    v1.append(batch(b"a", b"b", compression=LZ4))
    found = list(message_v1.iter_messages(v1.segments[-1].read(0, 10_000)))
    assert [(o, m.timestamp, m.value) for o, m in found] == [(0, NOW - 5, b"a"), (1, NOW - 4, b"b")]
    with pytest.raises(UnsupportedForMessageFormatError):
        v1.append(batch(b"h", headers=(Header("h", b"v"),)))


def test_batches_a_client_may_not_write_are_refused(tmp_path):
    log = open_log(tmp_path)
    with pytest.raises(UnsupportedForMessageFormatError, match="transactional"):
        log.append(batch(b"a", producer_id=7, producer_epoch=0, base_sequence=0, transactional=True))
    with pytest.raises(UnsupportedForMessageFormatError, match="message format v1"):
        open_log(tmp_path / "v1", magic=1).append(batch(b"a", producer_id=7, producer_epoch=0, base_sequence=0))
    with pytest.raises(InvalidRecordError):
        log.append(batch(b"a", control=True))
    assert log.log_end_offset == 0


def test_recovery_cuts_a_torn_batch_and_keeps_the_whole_ones(tmp_path):
    log = open_log(tmp_path, index_interval_bytes=1)
    for i in range(3):
        log.append(batch(b"v%d" % i, b"w%d" % i))
    path, size = log.segments[-1].path, log.segments[-1].size
    log.close()
    with open(path, "r+b") as handle:
        handle.truncate(size - 5)
    log = open_log(tmp_path, index_interval_bytes=1, need_recovery=True)
    assert log.log_end_offset == 4
    assert log.read(3, 10_000).position > 0
    log.append(batch(b"again"))
    assert [r.offset for b in read_batches(log.read(0, 100_000).read()) for r in b.records] == [0, 1, 2, 3, 4]


def test_a_follower_appends_the_leaders_batches_as_they_are(tmp_path):
    leader, follower = open_log(tmp_path / "l"), open_log(tmp_path / "f")
    leader.append(batch(b"a", b"b"))
    leader.append(build_message_set([(None, b"c")]))
    data = leader.read(0, 100_000, leader.log_end_offset).read()
    info = follower.append(data, assign_offsets=False)
    assert (info.first_offset, info.next_offset) == (0, 3)
    assert follower.read(0, 100_000).read() == data


def test_a_fetch_of_an_old_version_gets_the_batches_converted_down():
    data = build_batch([Record(5, NOW, None, b"a"), Record(6, NOW + 1, b"k", b"b", (Header("h", b"v"),))])
    data += build_batch([Record(7, NOW + 2, None, b"c")], compression=GZIP)
    v0 = down_convert(data, 0, first_offset=6)
    assert [(m.offset, m.key, m.value) for m in iter_messages(v0)] == [(6, b"k", b"b"), (7, None, b"c")]
    assert [offset for offset, _, _ in entries(v0)] == [6, 7]
    v1 = down_convert(data, 1)
    assert [(o, m.timestamp) for o, m in message_v1.iter_messages(v1)] == [
        (5, NOW),
        (6, NOW + 1),
        (7, NOW + 2),
    ]
    assert down_convert(data[:30], 0) == data[:30]  # only a partial batch: the reader asks for more


# -- the time index (KIP-33) ------------------------------------------------------------------------------


def stamped(log: Log08, *timestamps: int) -> None:
    for i, timestamp in enumerate(timestamps):
        log.append(build_batch([Record(0, timestamp, None, b"v%d" % i)]))


def test_each_segment_gets_a_timeindex_of_12_byte_entries_at_the_index_cadence(tmp_path):
    log = open_log(tmp_path, index_interval_bytes=1)
    stamped(log, 100, 300, 200, 400)
    index = log.segments[-1].time_index
    assert os.path.basename(index.path) == "00000000000000000000.timeindex"
    assert [index.entry(i) for i in range(index.entries)] == [(100, 0), (300, 1)]  # 200 is not above 300
    assert log.segments[-1].max_timestamp == 400
    log.close()
    with open(index.path, "rb") as handle:  # closing adds the largest timestamp and trims the file
        assert handle.read() == b"".join(struct.pack(">qi", t, o) for t, o in [(100, 0), (300, 1), (400, 3)])


def test_list_offsets_by_timestamp_finds_the_first_record_at_or_after_it(tmp_path):
    log = open_log(tmp_path, index_interval_bytes=1)
    stamped(log, 100, 300, 200, 400)
    assert log.fetch_offset_by_timestamp(250) == (300, 1)
    assert log.fetch_offset_by_timestamp(50) == (100, 0)
    assert log.fetch_offset_by_timestamp(401) is None
    with pytest.raises(UnsupportedForMessageFormatError):
        open_log(tmp_path / "v0", magic=0).fetch_offset_by_timestamp(0)


def test_recovery_rebuilds_the_timeindex(tmp_path):
    log = open_log(tmp_path, index_interval_bytes=1)
    stamped(log, 100, 300, 200, 400)
    path = log.segments[-1].time_index.path
    log.close()
    os.truncate(path, 0)
    log = open_log(tmp_path, index_interval_bytes=1, need_recovery=True)
    assert log.segments[-1].max_timestamp == 400
    assert log.fetch_offset_by_timestamp(350) == (400, 3)


def test_time_retention_ages_a_segment_by_its_largest_timestamp(tmp_path):
    log = open_log(tmp_path, segment_bytes=200)
    stamped(log, NOW - 10_000, NOW - 9_000, NOW - 10)
    assert len(log.segments) >= 2
    assert log.segments[0].largest_timestamp < NOW - 5_000
    deleted = log.delete_expired_segments(NOW, 5_000)
    assert deleted >= 1 and log.segments[0].largest_timestamp == NOW - 10


def test_dump_log_segments_prints_batches_and_records_as_kafka_does(tmp_path):
    log = open_log(tmp_path)
    log.append(
        build_batch([Record(0, 1000, b"k", b"hello", (Header("h", b"v"),)), Record(1, 1001, None, b"w")])
    )
    path = log.segments[-1].path
    log.close()
    lines: list[str] = []
    report = dump_log08(path, lines.append, print_data=True)
    assert report.valid and report.messages == 2
    assert lines[2].startswith(
        "baseOffset: 0 lastOffset: 1 count: 2 baseSequence: -1 lastSequence: -1 producerId: -1"
    )
    assert " position: 0 CreateTime: 1001 size: 86 magic: 2 compresscodec: NONE crc: " in lines[2]
    assert lines[2].endswith(" isvalid: true")
    assert (
        lines[3]
        == "| offset: 0 CreateTime: 1000 keysize: 1 valuesize: 5 sequence: -1 headerKeys: [h] key: k payload: hello"
    )
    assert (
        lines[4]
        == "| offset: 1 CreateTime: 1001 keysize: -1 valuesize: 1 sequence: -1 headerKeys: [] payload: w"
    )


def test_a_log_whose_format_is_raised_holds_both_and_reads_recovers_and_converts_them(tmp_path):
    log = open_log(tmp_path, magic=0, index_interval_bytes=1)
    log.append(build_message_set([(None, b"old-%d" % i) for i in range(3)]))
    log.close()
    log = open_log(tmp_path, magic=2, index_interval_bytes=1, need_recovery=True)
    log.append(batch(b"new-3", b"new-4"))
    log.close()
    os.truncate(log.segments[-1].path[: -len(".log")] + ".timeindex", 5)  # not whole entries: rebuilt
    log = open_log(tmp_path, magic=2, index_interval_bytes=1, need_recovery=True)
    assert log.log_end_offset == 5 and log.segments[-1].max_timestamp == NOW - 4
    data = log.read(0, 100_000).read()
    assert log.read(4, 100_000).read() == data[log.read(3, 100_000).position :]
    assert [(m.offset, m.value) for m in iter_messages(down_convert(data, 0))] == [
        (i, b"%s-%d" % (b"old" if i < 3 else b"new", i)) for i in range(5)
    ]
    follower = open_log(tmp_path / "f")
    assert follower.append(data, assign_offsets=False).next_offset == 5


def test_dump_log_segments_prints_a_timeindex(tmp_path):
    log = open_log(tmp_path, index_interval_bytes=1)
    stamped(log, 100, 300)
    path = log.segments[-1].time_index.path
    log.close()
    lines: list[str] = []
    assert dump_time_index(path, lines.append).valid
    assert lines[1:] == ["timestamp: 100 offset: 0", "timestamp: 300 offset: 1"]


def test_the_cleaner_compacts_a_v2_log_keeping_each_batchs_offsets_and_a_timeindex(tmp_path):
    log = open_log(
        tmp_path / "t-0", segment_bytes=400, index_interval_bytes=1, compact=True, min_cleanable_ratio=0.01
    )
    for i in range(12):  # keys a, b, c, each batch of two records
        log.append(
            build_batch(
                [
                    Record(0, NOW + i, b"abc"[i % 3 : i % 3 + 1], b"%d" % i),
                    Record(1, NOW + i, b"z", b"z%d" % i),
                ],
                compression=GZIP if i % 2 else 0,
            )
        )
    assert len(log.segments) > 2
    stats = LogCleaner(lambda: [log]).clean_once()
    assert stats is not None and stats.messages_written < stats.messages_read
    batches = list(read_batches(log.read(0, 1 << 20).read()))
    kept = [(r.offset, r.key, r.value) for b in batches for r in b.records if r.offset < stats.end_offset]
    assert stats.end_offset == 16  # batches 0-7: the last record of each key below it stays
    assert kept == [(10, b"c", b"5"), (12, b"a", b"6"), (14, b"b", b"7"), (15, b"z", b"z7")]
    for b in batches:  # a batch keeps its base and last offsets whatever it lost
        assert (b.header.base_offset % 2, b.header.last_offset_delta) == (0, 1)
    cleaned = log.segments[1]  # offsets 8-15: what stayed of them, with a time index written by the cleaner
    assert cleaned.time_index is not None and cleaned.max_timestamp == NOW + 7
    assert log.fetch_offset_by_timestamp(NOW + 6) == (NOW + 6, 12)
