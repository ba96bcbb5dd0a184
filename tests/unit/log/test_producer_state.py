"""The producer state of a partition (KIP-98 idempotence, Kafka 2.2's rules): every check, the duplicate
answer, sequence wrap, snapshots; then in a log: a retried batch stored once, the state kept across a clean
restart, an unclean one and a truncation, and built by a follower from the leader's batches."""

import os

import pytest

from tests.support.logs import Clock, opened
from zkafka.errors import (
    InvalidMessageError,
    InvalidProducerEpochError,
    OutOfOrderSequenceNumberError,
    UnknownProducerIdError,
)
from zkafka.log.log08 import Log08
from zkafka.log.log_config import LogConfig
from zkafka.log.producer_snapshots import snapshot_offsets
from zkafka.log.producer_state import (
    Duplicate,
    ProducerBatch,
    ProducerStateManager,
    decode_snapshot,
    encode_snapshot,
)
from zkafka.records.default_record import Record
from zkafka.records.record_batch import build_batch
from zkafka.utils.java import INT32_MAX

NOW = 1_700_000_000_000


def batch(pid=7, epoch=0, first_seq=0, count=1, first_offset=0, timestamp=NOW) -> ProducerBatch:
    last_seq = (first_seq + count - 1) % (INT32_MAX + 1)
    return ProducerBatch(pid, epoch, first_seq, last_seq, first_offset, first_offset + count - 1, timestamp)


def appended(state: ProducerStateManager, *batches: ProducerBatch) -> None:
    updated = state.analyze(batches)
    assert isinstance(updated, dict)
    state.update(updated)


def test_a_new_producer_starts_at_sequence_0_and_continues_in_order():
    state = ProducerStateManager("t-0")
    appended(state, batch(first_seq=0, count=3), batch(first_seq=3, count=2, first_offset=3))
    entry = state.producers[7]
    assert (entry.epoch, entry.last_seq, entry.last_offset) == (0, 4, 4)


def test_a_retry_of_any_of_the_last_five_batches_is_a_duplicate_answered_with_its_offsets():
    state = ProducerStateManager("t-0")
    for i in range(6):
        appended(state, batch(first_seq=2 * i, count=2, first_offset=100 + 2 * i))
    found = state.analyze([batch(first_seq=4, count=2, first_offset=999)])
    assert found == Duplicate(batch(first_seq=4, count=2, first_offset=104).metadata)
    with pytest.raises(OutOfOrderSequenceNumberError):  # the oldest of six is forgotten: out of order now
        state.analyze([batch(first_seq=0, count=2, first_offset=999)])


@pytest.mark.parametrize(
    "given, error",
    [
        (batch(first_seq=5), OutOfOrderSequenceNumberError),  # a gap after sequence 2
        (batch(first_seq=2), OutOfOrderSequenceNumberError),  # a part of a kept batch, not the same range
        (batch(epoch=1, first_seq=3), OutOfOrderSequenceNumberError),  # a new epoch must start at 0
        (batch(first_seq=3, pid=8), UnknownProducerIdError),  # no state, sequence not 0
    ],
    ids=["gap", "overlap", "new-epoch-not-0", "unknown-producer"],
)
def test_a_batch_out_of_place_is_refused_and_the_state_unchanged(given, error):
    state = ProducerStateManager("t-0")
    appended(state, batch(first_seq=0, count=3))
    before = dict(state.producers)
    with pytest.raises(error, match="producer id"):
        state.analyze([given])
    assert state.producers == before


def test_an_older_epoch_is_fenced_and_a_new_one_forgets_the_old_batches():
    state = ProducerStateManager("t-0")
    appended(state, batch(epoch=3, first_seq=0, count=2))
    with pytest.raises(InvalidProducerEpochError, match="epoch 2 is older"):
        state.analyze([batch(epoch=2, first_seq=2)])
    appended(state, batch(epoch=4, first_seq=0, first_offset=2))
    assert state.producers[7].batches == (batch(epoch=4, first_seq=0, first_offset=2).metadata,)
    with pytest.raises(InvalidProducerEpochError):
        state.analyze([batch(epoch=3, first_seq=0)])  # the old epoch's batch is no duplicate any more


def test_the_sequence_wraps_to_0_after_int32_max():
    state = ProducerStateManager("t-0")
    state.replay([batch(first_seq=INT32_MAX - 1, count=2)])  # a follower takes it unchecked
    assert state.producers[7].last_seq == INT32_MAX
    appended(state, batch(first_seq=0, count=2, first_offset=2))
    assert state.producers[7].last_seq == 1
    wrapping = batch(first_seq=2, count=INT32_MAX, first_offset=4)
    assert wrapping.last_seq == 0 and state.analyze([wrapping]) != {}


def test_a_follower_replays_without_checks_and_the_leader_of_a_request_checks_batch_after_batch():
    state = ProducerStateManager("t-0")
    state.replay([batch(first_seq=9)])  # out of order for a client, taken as the leader wrote it
    assert state.producers[7].last_seq == 9
    with pytest.raises(OutOfOrderSequenceNumberError):
        state.analyze([batch(first_seq=10), batch(first_seq=12, first_offset=1)])
    assert state.producers[7].last_seq == 9


def test_expiration_and_the_log_start_forget_producers():
    state = ProducerStateManager("t-0", expiration_ms=1000)
    appended(state, batch(pid=1, timestamp=NOW - 2000), batch(pid=2, timestamp=NOW, first_offset=5))
    assert state.remove_expired(NOW) == [1]
    state.truncate_head(6)
    assert state.producers == {}


def test_a_snapshot_keeps_each_producers_epoch_and_last_batch_and_refuses_damage():
    state = ProducerStateManager("t-0")
    appended(
        state, batch(pid=1, epoch=2, first_seq=0, count=4), batch(pid=1, epoch=2, first_seq=4, first_offset=4)
    )
    appended(state, batch(pid=2, first_seq=0, count=3, first_offset=5))
    data = state.snapshot()
    assert len(data) == 2 + 4 + 4 + 2 * 46  # version, crc, count, two entries
    loaded = decode_snapshot(data, "00.snapshot")
    assert loaded[1].epoch == 2 and loaded[1].batches == state.producers[1].batches[-1:]
    assert loaded[2].batches == state.producers[2].batches
    assert encode_snapshot(loaded.values()) == data
    damaged = bytearray(data)
    damaged[-1] ^= 1
    with pytest.raises(InvalidMessageError, match="00.snapshot"):
        decode_snapshot(bytes(damaged), "00.snapshot")


# -- in a log ---------------------------------------------------------------------------------------------


def open_log(path, **settings) -> Log08:
    config = LogConfig(**{"segment_bytes": 100_000, "message_format_magic": 2, **settings})
    os.makedirs(path, exist_ok=True)
    return opened(Log08(str(path), "t", 0, config, time_ms=Clock(NOW), need_recovery=False))


def idempotent(seq: int, *values: bytes, pid: int = 7, epoch: int = 0, timestamp: int = NOW) -> bytes:
    records = [Record(i, timestamp, None, v) for i, v in enumerate(values)]
    return build_batch(records, producer_id=pid, producer_epoch=epoch, base_sequence=seq)


def test_a_retried_batch_is_stored_once_and_answered_with_its_first_offset(tmp_path):
    log = open_log(tmp_path)
    log.append(build_batch([Record(0, NOW, None, b"plain")]))
    first = log.append(idempotent(0, b"a", b"b"))
    again = log.append(idempotent(0, b"a", b"b"))
    assert (first.first_offset, first.next_offset) == (again.first_offset, again.next_offset) == (1, 3)
    assert (again.size, again.count, log.log_end_offset) == (0, 0, 3)
    with pytest.raises(OutOfOrderSequenceNumberError):
        log.append(idempotent(5, b"c"))
    assert log.log_end_offset == 3


def test_the_state_survives_a_roll_a_clean_restart_and_an_unclean_one(tmp_path):
    log = open_log(tmp_path)
    log.append(idempotent(0, b"a"))
    log.roll()
    log.append(idempotent(1, b"b"))
    assert snapshot_offsets(str(tmp_path)) == [1]
    log.close()
    assert snapshot_offsets(str(tmp_path)) == [1, 2]
    log = open_log(tmp_path)
    assert log.append(idempotent(1, b"b")).first_offset == 1  # a duplicate, from the snapshot at 2
    os.unlink(tmp_path / "00000000000000000002.snapshot")
    log = open_log(tmp_path)  # unclean: the snapshot at 1 and the batch after it replayed
    assert log.append(idempotent(1, b"b")).count == 0
    assert log.append(idempotent(2, b"c")).first_offset == 2


def test_truncation_rebuilds_the_state_and_a_follower_keeps_the_leaders(tmp_path):
    leader, follower = open_log(tmp_path / "leader"), open_log(tmp_path / "follower")
    for seq, value in enumerate([b"a", b"b", b"c"]):
        leader.append(idempotent(seq, value))
    follower.append(leader.read(0, 100_000).read(), assign_offsets=False)
    assert follower.producer_state.producers == leader.producer_state.producers
    assert follower.append(idempotent(2, b"c")).first_offset == 2  # the new leader dedupes the retry
    follower.truncate_to(2)
    assert follower.producer_state.producers[7].last_seq == 1
    assert follower.append(idempotent(2, b"c")).first_offset == 2 and follower.log_end_offset == 3


def test_the_log_manager_forgets_producers_idle_past_the_expiration_on_its_periodic_check(tmp_path):
    from zkafka.log.log_manager08 import LogManager08

    clock = Clock(NOW)
    config = LogConfig(message_format_magic=2, producer_id_expiration_ms=60_000)
    logs = opened(LogManager08([str(tmp_path)], config, time_ms=clock))
    log = logs.create_log("t", 0)
    log.append(idempotent(0, b"a"))
    log.append(idempotent(0, b"x", pid=8))
    clock.now = NOW + 30_000
    log.append(idempotent(1, b"b", timestamp=clock.now))  # producer 8 goes quiet (batches' CreateTime)
    clock.now = NOW + 60_001
    assert logs.remove_expired_producers() == 1 and set(log.producer_state.producers) == {7}
    with pytest.raises(UnknownProducerIdError):
        log.append(idempotent(1, b"y", pid=8))
    assert log.append(idempotent(2, b"c")).first_offset == 3
    logs.close()


def test_a_second_close_writes_neither_the_snapshot_nor_the_clean_shutdown_marker_again(tmp_path):
    from zkafka.log.log_manager import CLEAN_SHUTDOWN_FILE
    from zkafka.log.log_manager08 import LogManager08

    logs = opened(LogManager08([str(tmp_path)], LogConfig(message_format_magic=2), time_ms=Clock(NOW)))
    log = logs.create_log("t", 0)
    log.append(idempotent(0, b"a"))
    logs.close()
    snapshot, marker = tmp_path / "t-0" / "00000000000000000001.snapshot", tmp_path / CLEAN_SHUTDOWN_FILE
    assert snapshot.exists() and marker.exists()
    snapshot.unlink()
    marker.unlink()
    log.close()
    logs.close()
    assert not snapshot.exists() and not marker.exists()
