"""Partition's replication bookkeeping on a real log, without sockets or ZooKeeper: ISR expand and shrink,
the high watermark, and when a produce waiting for its replicas is done."""

from __future__ import annotations

from typing import NamedTuple

import pytest

from zkafka.cluster.partition import Partition
from zkafka.log.log08 import Log08
from zkafka.log.log_config import LogConfig
from zkafka.protocol.errors import ErrorCode
from zkafka.records import format08

LEADER = 1


class State(NamedTuple):
    leader: int
    leader_epoch: int
    isr: tuple
    controller_epoch: int = 1
    zk_version: int = 0


@pytest.fixture
def log(tmp_path):
    (tmp_path / "t-0").mkdir()
    partition_log = Log08(tmp_path / "t-0", "t", 0, LogConfig(), need_recovery=False)
    yield partition_log
    partition_log.close()


def append(log, count: int) -> None:
    log.append(format08.build_message_set([(None, b"m%d" % i) for i in range(count)]))


def leader(log, isr=(1, 2, 3), replicas=(1, 2, 3), now=0, high_watermark=0) -> Partition:
    partition = Partition("t", 0, LEADER, log, high_watermark)
    partition.make_leader(State(LEADER, 5, tuple(isr)), replicas, now)
    return partition


def test_the_high_watermark_is_the_smallest_log_end_of_the_isr_and_never_goes_back(log):
    append(log, 10)
    p = leader(log)
    assert p.high_watermark == 0  # the followers' offsets are unknown after becoming leader
    p.update_follower(2, 4, now_ms=1)
    assert not p.maybe_increment_high_watermark()
    p.update_follower(3, 7, now_ms=1)
    assert p.maybe_increment_high_watermark() and p.high_watermark == 4
    assert log.visible_end == 4  # what consumers read up to
    p.update_follower(2, 10, now_ms=2)
    assert p.maybe_increment_high_watermark() and p.high_watermark == 7
    p.update_follower(3, 3, now_ms=3)  # a follower that truncated: the HW stays
    assert not p.maybe_increment_high_watermark() and p.high_watermark == 7


def test_a_leader_alone_in_its_isr_has_its_log_end_as_high_watermark(log):
    p = leader(log, isr=(1,))
    append(log, 3)
    assert p.maybe_increment_high_watermark() and p.high_watermark == 3


def test_a_follower_joins_the_isr_once_it_reaches_the_high_watermark(log):
    append(log, 10)
    p = leader(log, isr=(1, 2))
    p.update_follower(2, 6, now_ms=1)
    p.maybe_increment_high_watermark()
    p.update_follower(3, 5, now_ms=1)
    assert p.isr_to_expand(3) is None  # 5 < HW 6
    p.update_follower(3, 6, now_ms=2)
    assert p.isr_to_expand(3) == (1, 2, 3)
    assert p.isr_to_expand(2) is None  # already in
    assert p.isr_to_expand(9) is None  # not an assigned replica


def test_stuck_and_slow_followers_leave_the_isr(log):
    append(log, 100)
    p = leader(log, now=0)
    p.update_follower(2, 100, now_ms=5000)
    p.update_follower(3, 100, now_ms=5000)
    assert p.isr_to_shrink(now_ms=9000, lag_time_ms=10000, lag_max_messages=50) is None
    assert p.isr_to_shrink(now_ms=15001, lag_time_ms=10000, lag_max_messages=50) == (1,)  # both stuck
    append(log, 60)
    p.update_follower(2, 160, now_ms=15000)
    assert p.isr_to_shrink(now_ms=15001, lag_time_ms=10000, lag_max_messages=50) == (1, 2)  # 3 is stuck
    p.update_follower(3, 100, now_ms=15000)
    assert p.isr_to_shrink(now_ms=15001, lag_time_ms=10000, lag_max_messages=50) == (1, 2)  # 3 is slow
    p.update_follower(3, 110, now_ms=15000)
    assert p.isr_to_shrink(now_ms=15001, lag_time_ms=10000, lag_max_messages=50) is None


def test_acks_minus_1_waits_for_the_high_watermark_and_checks_min_insync_replicas(log):
    append(log, 10)
    p = leader(log, isr=(1, 2))
    assert p.replicas_reached(10, -1, 1) == (False, ErrorCode.NONE)
    p.update_follower(2, 10, now_ms=1)
    p.maybe_increment_high_watermark()
    assert p.replicas_reached(10, -1, 1) == (True, ErrorCode.NONE)
    p.isr_written((1,), 7)
    assert p.replicas_reached(10, -1, 2) == (True, ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND)


def test_acks_n_counts_isr_members_holding_the_offset(log):
    append(log, 10)
    p = leader(log)
    assert p.replicas_reached(10, 2, 1) == (False, ErrorCode.NONE)
    p.update_follower(3, 10, now_ms=1)
    assert p.replicas_reached(10, 2, 1) == (True, ErrorCode.NONE)
    assert p.replicas_reached(10, 3, 1) == (False, ErrorCode.NONE)


def test_a_produce_on_a_partition_no_longer_led_answers_not_leader(log):
    p = leader(log)
    p.make_follower(State(2, 6, (2, 3)), (1, 2, 3))
    assert p.replicas_reached(1, -1, 1) == (True, ErrorCode.NOT_LEADER_FOR_PARTITION)
    assert p.update_follower(2, 5, now_ms=1) is False  # a follower's fetch means nothing to a follower


def test_becoming_follower_says_whether_the_leader_changed(log):
    p = Partition("t", 0, LEADER, log)
    assert p.make_follower(State(2, 1, (2, 1)), (2, 1)) is True
    assert p.make_follower(State(2, 2, (2,)), (2, 1)) is False  # same leader, newer epoch
    assert (p.leader, p.leader_epoch, p.isr) == (2, 2, (2,))
    assert p.make_follower(State(3, 3, (3,)), (2, 1, 3)) is True


def test_a_follower_high_watermark_is_capped_by_its_own_log_end(log):
    append(log, 5)
    p = Partition("t", 0, LEADER, log, high_watermark=50)
    assert p.high_watermark == 5  # a checkpoint past the log end is cut
    p.make_follower(State(2, 1, (2, 1)), (2, 1))
    p.follower_high_watermark(3)
    assert p.high_watermark == 3
    p.follower_high_watermark(9)
    assert p.high_watermark == 5


def test_a_checkpointed_high_watermark_past_the_log_end_is_taken_down_to_it(log, caplog):
    append(log, 3)
    with caplog.at_level("WARNING", logger="zkafka.cluster.partition"):
        partition = Partition("t", 0, LEADER, log, 10)  # as 0.8.2's Partition: min(checkpoint, LEO)
    assert partition.high_watermark == 3
    assert (
        "the high watermark 10 in replication-offset-checkpoint is past the log end offset 3" in caplog.text
    )
