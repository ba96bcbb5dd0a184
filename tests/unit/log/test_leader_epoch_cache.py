"""The leader epoch cache and its ``leader-epoch-checkpoint``: assignment, the end offset of an epoch
(OffsetForLeaderEpoch's answer), truncation with the log, and the file read back; then Partition's KIP-101 /
KIP-279 truncation offset on a real log."""

from __future__ import annotations

import pytest

from tests.unit.cluster.test_partition import State, append
from zkafka.cluster.partition import Partition
from zkafka.log.checkpoint import CheckpointError
from zkafka.log.leader_epoch_cache import LEADER_EPOCH_CHECKPOINT, EpochEntry, LeaderEpochCache
from zkafka.log.log08 import Log08
from zkafka.log.log_config import LogConfig
from zkafka.log.log_validator import validate_and_assign
from zkafka.records import format08
from zkafka.records.convert import build_set
from zkafka.records.default_record import Record
from zkafka.records.message_v1 import TIMESTAMP_TYPE_MASK
from zkafka.records.record_batch import build_batch, read_batch, read_batch_header, read_batches


def test_the_end_of_an_epoch_is_the_start_of_the_next_higher_one_and_the_log_end_for_the_latest(tmp_path):
    cache = LeaderEpochCache.load(tmp_path)
    assert cache.latest_epoch == -1 and cache.end_offset_for(0, 5) == (-1, -1)
    cache.assign(1, 0)
    cache.assign(1, 3)  # the same epoch again: its start stays
    cache.assign(3, 7)
    cache.assign(5, 12)
    assert cache.entries == [EpochEntry(1, 0), EpochEntry(3, 7), EpochEntry(5, 12)]
    assert cache.end_offset_for(1, 20) == (1, 7)
    assert cache.end_offset_for(2, 20) == (1, 7)  # unknown epoch 2: the largest known below it, ending at 3's start
    assert cache.end_offset_for(3, 20) == (3, 12)
    assert cache.end_offset_for(5, 20) == (5, 20)
    assert cache.end_offset_for(0, 20) == (-1, -1)  # before the first known epoch
    assert cache.end_offset_for(6, 20) == (-1, -1)  # after the latest
    assert (tmp_path / LEADER_EPOCH_CHECKPOINT).read_text() == "0\n3\n1 0\n3 7\n5 12\n"
    assert LeaderEpochCache.load(tmp_path).entries == cache.entries


def test_truncation_and_a_contradicting_assignment_remove_later_epochs(tmp_path):
    cache = LeaderEpochCache.load(tmp_path)
    for epoch, start in ((0, 0), (2, 4), (4, 9)):
        cache.assign(epoch, start)
    cache.truncate_from_end(9)
    assert cache.entries == [EpochEntry(0, 0), EpochEntry(2, 4)]
    cache.assign(3, 2)  # a new leader's epoch starting before epoch 2 did: 2 gives way
    assert cache.entries == [EpochEntry(0, 0), EpochEntry(3, 2)]
    cache.clear()
    assert LeaderEpochCache.load(tmp_path).entries == []


@pytest.mark.parametrize("content", ["1\n0\n", "0\n2\n1 0\n", "0\n1\n1\n", "0\n1\nx 0\n"])
def test_a_malformed_checkpoint_names_the_file(tmp_path, content):
    (tmp_path / LEADER_EPOCH_CHECKPOINT).write_text(content)
    with pytest.raises(CheckpointError, match=LEADER_EPOCH_CHECKPOINT):
        LeaderEpochCache.load(tmp_path)


@pytest.fixture
def partition(tmp_path):
    (tmp_path / "t-0").mkdir()
    log = Log08(tmp_path / "t-0", "t", 0, LogConfig(), need_recovery=False)
    yield Partition("t", 0, 2, log, 0, LeaderEpochCache.load(tmp_path / "t-0"))
    log.close()


def test_a_leader_starts_its_epoch_at_its_log_end_and_a_follower_takes_its_leaders(partition):
    partition.make_leader(State(2, 1, (2,)), (2, 3), now_ms=0)
    append(partition.log, 4)
    partition.make_follower(State(3, 2, (3,)), (2, 3))
    partition.appending_as_follower(format08.build_message_set([(None, b"m")]))  # magic 0: no epoch in it
    append(partition.log, 2)
    assert partition.epochs.entries == [EpochEntry(1, 0), EpochEntry(2, 4)]
    partition.log.truncate_to(3)
    partition.truncated()
    assert partition.epochs.entries == [EpochEntry(1, 0)]


def test_kip_279_truncates_to_the_lesser_of_the_leaders_end_and_our_own_end_of_its_epoch(partition):
    partition.make_leader(State(2, 1, (2,)), (2, 3), now_ms=0)
    append(partition.log, 4)  # epoch 1: 0-3
    partition.make_leader(State(2, 3, (2,)), (2, 3), now_ms=0)
    append(partition.log, 4)  # epoch 3: 4-7, never replicated
    partition.make_follower(State(3, 4, (3,)), (2, 3))
    assert partition.epoch_truncation_offset(3, 6) == 6  # the leader knows epoch 3 up to 6
    assert partition.epoch_truncation_offset(2, 9) == 4  # the leader's epoch 2 is our epoch 1, ending at 4
    assert partition.epoch_truncation_offset(3, 20) == 8  # never past our own end
    assert partition.epochs.end_offset_for(4, 8) == (-1, -1)  # a follower takes epoch 4 at its first append
    assert partition.epoch_truncation_offset(-1, -1) == partition.high_watermark  # the leader knows no epochs


def batch(count: int, **fields) -> bytes:
    return build_batch([Record(i, 1000 + i, None, b"v%d" % i) for i in range(count)], **fields)


@pytest.mark.parametrize("append_time", [False, True])
def test_the_leader_stamps_its_epoch_into_each_batch_and_the_crc_stays_valid(append_time):
    config = LogConfig(message_format_magic=2, log_append_time=append_time)
    given = batch(2) + batch(3, compression=1, partition_leader_epoch=9)  # a client's epoch is overwritten
    assigned = validate_and_assign(given, 40, config, now_ms=5000, leader_epoch=7)
    batches = list(read_batches(assigned.data))  # read_batch checks each CRC-32C
    assert [(b.header.base_offset, b.header.partition_leader_epoch) for b in batches] == [(40, 7), (42, 7)]
    assert [r.offset for b in batches for r in b.records] == list(range(40, 45))
    assert all(bool(b.header.attributes & TIMESTAMP_TYPE_MASK) == append_time for b in batches)
    converted = validate_and_assign(format08.build_message_set([(None, b"old")]), 0, config, 0, leader_epoch=3)
    assert read_batch(converted.data).header.partition_leader_epoch == 3  # magic 0 brought up to v2


def test_a_follower_learns_each_epoch_from_the_batches_it_appends(tmp_path):
    (tmp_path / "t-0").mkdir()
    log = Log08(tmp_path / "t-0", "t", 0, LogConfig(message_format_magic=2), need_recovery=False)
    partition = Partition("t", 0, 2, log, 0, LeaderEpochCache.load(tmp_path / "t-0"))
    try:
        partition.make_follower(State(3, 6, (3,)), (2, 3))
        fetched = b"".join(
            build_set(2, [Record(0, 1, None, b"v")] * count, 0, base, leader_epoch=epoch)
            for base, count, epoch in ((0, 2, 1), (2, 1, 1), (3, 2, 4), (5, 1, 6))
        )
        partial = batch(1, partition_leader_epoch=9)[:-3]  # a fetch may end in part of a batch
        partition.appending_as_follower(fetched + partial)
        log.append(fetched + partial, assign_offsets=False)
        assert partition.epochs.entries == [EpochEntry(1, 0), EpochEntry(4, 3), EpochEntry(6, 5)]
        stale = build_set(2, [Record(0, 1, None, b"v")], 0, 6, leader_epoch=4)  # older than the latest: ignored
        partition.appending_as_follower(stale)
        unstamped = build_set(2, [Record(0, 1, None, b"v")], 0, 7)  # written before leaders stamped: the approximation
        partition.make_follower(State(3, 8, (3,)), (2, 3))
        partition.appending_as_follower(unstamped)
        assert partition.epochs.entries[-2:] == [EpochEntry(6, 5), EpochEntry(8, 6)]
        assert read_batch_header(fetched).partition_leader_epoch == 1
    finally:
        log.close()
