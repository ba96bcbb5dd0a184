"""The 0.8 log manager (zkafka.log.log_manager08): log dirs, locks, recovery points, retention, shutdown."""

import logging
import os

import pytest

from tests.support.logs import Clock, opened, set_mtime
from zkafka.errors import InvalidTopicError
from zkafka.log.checkpoint import OffsetCheckpoint
from zkafka.log.log_config import LogConfig
from zkafka.log.log_manager import CLEAN_SHUTDOWN_FILE
from zkafka.log.log_manager08 import LogDirInUseError, LogManager08
from zkafka.log.segmented_log import LogLayoutError
from zkafka.records.format08 import build_message_set, iter_messages

ENTRY = 31


def one(i: int) -> bytes:
    return build_message_set([(None, b"v%04d" % i)])


def dirs(tmp_path, count: int = 1) -> list[str]:
    return [str(tmp_path / f"logs-{i}") for i in range(count)]


def manager(log_dirs, clock=None, **settings) -> LogManager08:
    topic_configs = settings.pop("topic_configs", None)
    config = LogConfig(**{"segment_bytes": 2 * ENTRY, **settings})
    return opened(LogManager08(log_dirs, config, topic_configs=topic_configs, time_ms=clock or Clock()))


def checkpoint(log_dir) -> dict:
    return OffsetCheckpoint(os.path.join(log_dir, "recovery-point-offset-checkpoint")).read()


def test_new_partitions_go_to_the_dir_with_the_fewest(tmp_path):
    first, second = dirs(tmp_path, 2)
    os.makedirs(os.path.join(first, "old-0"))
    os.makedirs(os.path.join(first, "old-1"))
    logs = manager([first, second])
    placed = [logs.log_dir_of(*tp) for tp in (("a", 0), ("a", 0), ("b", 0), ("c", 0), ("d", 0))]
    for topic in "abcd":
        logs.create_log(topic, 0)
        placed.append(logs.log_dir_of(topic, 0))
    assert placed[5:] == [second, second, first, second]
    assert logs.create_log("a", 0) is logs.get_log("a", 0)
    assert os.path.isdir(os.path.join(second, "a-0"))
    assert logs.topics() == {"old", "a", "b", "c", "d"}


def test_a_topics_overrides_are_read_before_the_create_lock_is_taken(tmp_path):
    # The overrides come from ZooKeeper (a greenlet switch): a second greenlet creating a log while the first
    # held the (thread) lock would block the whole hub, as a burst of LeaderAndIsr partitions once did.
    held_while_reading = []

    def overrides(topic):
        held_while_reading.append(logs._create_lock.locked())
        return LogConfig(segment_bytes=4 * ENTRY)

    logs = opened(
        LogManager08(
            dirs(tmp_path), LogConfig(segment_bytes=2 * ENTRY), topic_overrides=overrides, time_ms=Clock()
        )
    )
    created = logs.create_log("t", 0)
    assert held_while_reading == [False]
    assert created.config.segment_bytes == 4 * ENTRY


def test_bad_names_are_refused(tmp_path):
    logs = manager(dirs(tmp_path))
    with pytest.raises(InvalidTopicError):
        logs.create_log("a/b", 0)
    for name in ("x" * 255, "a b"):  # 0.8's rule, not 0.7's
        with pytest.raises(InvalidTopicError):
            logs.create_log(name, 0)
    assert not [n for n in os.listdir(dirs(tmp_path)[0]) if os.path.isdir(os.path.join(dirs(tmp_path)[0], n))]
    with pytest.raises(ValueError, match="negative"):
        logs.create_log("t", -1)


def test_a_log_dir_is_locked_while_in_use(tmp_path):
    log_dirs = dirs(tmp_path, 2)
    logs = manager(log_dirs)
    with pytest.raises(LogDirInUseError, match=f"{log_dirs[0]} is in use"):
        manager(log_dirs[:1])
    assert os.path.exists(os.path.join(log_dirs[0], ".lock"))
    logs.close()
    manager(log_dirs).close()


def test_a_partition_in_two_dirs_stops_the_start(tmp_path):
    first, second = dirs(tmp_path, 2)
    os.makedirs(os.path.join(first, "t-0"))
    os.makedirs(os.path.join(second, "t-0"))
    with pytest.raises(LogLayoutError, match="both"):
        manager([first, second])
    manager([first]).close()  # the locks were released


def test_clean_shutdown_writes_recovery_points_and_markers(tmp_path):
    log_dirs = dirs(tmp_path, 2)
    logs = manager(log_dirs)
    for topic in ("a", "b"):
        log = logs.create_log(topic, 0)
        for i in range(3):
            log.append(one(i))
    logs.close()
    assert [checkpoint(d) for d in log_dirs] == [{("a", 0): 3}, {("b", 0): 3}]
    assert all(os.path.exists(os.path.join(d, CLEAN_SHUTDOWN_FILE)) for d in log_dirs)
    # a torn tail written after the clean shutdown is not looked at: no recovery
    segment = os.path.join(log_dirs[0], "a-0", "00000000000000000002.log")
    with open(segment, "ab") as handle:
        handle.write(b"\x00" * 5)
    again = manager(log_dirs)
    assert not any(os.path.exists(os.path.join(d, CLEAN_SHUTDOWN_FILE)) for d in log_dirs)
    assert os.path.getsize(segment) == ENTRY + 5
    assert again.get_log("a", 0).recovery_point == 3
    again.close()


def test_a_restart_warns_about_strays_only_not_the_log_dirs_own_files(tmp_path, caplog):
    (log_dir,) = dirs(tmp_path)
    logs = manager([log_dir])
    logs.create_log("t", 0).append(one(0))
    logs.close()
    for own in ("replication-offset-checkpoint", "cleaner-offset-checkpoint", "meta.properties"):
        with open(os.path.join(log_dir, own), "w") as handle:
            handle.write("0\n0\n")
    with open(os.path.join(log_dir, "recovery-point-offset-checkpoint.tmp"), "w"):
        pass  # a checkpoint write cut short
    with open(os.path.join(log_dir, "notes.txt"), "w"):
        pass
    own_files = {".lock", CLEAN_SHUTDOWN_FILE, "recovery-point-offset-checkpoint"}
    assert own_files <= set(os.listdir(log_dir))
    with caplog.at_level(logging.WARNING, logger="zkafka.log.log_manager"):
        again = manager([log_dir])
    warned = [record.getMessage() for record in caplog.records]
    assert warned == [
        f"skipping {os.path.join(log_dir, 'notes.txt')} in {log_dir}: it is not a partition directory"
    ]
    assert again.get_log("t", 0).log_end_offset == 1
    again.close()


def test_unclean_start_recovers_from_the_checkpointed_recovery_point(tmp_path):
    (log_dir,) = dirs(tmp_path)
    logs = manager([log_dir])
    log = logs.create_log("t", 0)
    for i in range(5):
        log.append(one(i))
    logs.checkpoint_recovery_points()
    assert checkpoint(log_dir) == {("t", 0): 0}
    assert logs.run_delayed_tasks() == 2  # the flushes after the rolls at offsets 2 and 4
    logs.checkpoint_recovery_points()
    assert checkpoint(log_dir) == {("t", 0): 4}
    logs.close(clean=False)
    assert not os.path.exists(os.path.join(log_dir, CLEAN_SHUTDOWN_FILE))
    first = os.path.join(log_dir, "t-0", "00000000000000000000.log")
    with open(first, "r+b") as handle:  # below the recovery point: not recovered
        handle.seek(ENTRY - 1)
        handle.write(b"X")
    last = os.path.join(log_dir, "t-0", "00000000000000000004.log")
    with open(last, "ab") as handle:
        handle.write(b"\x00" * 9)
    again = manager([log_dir])
    assert os.path.getsize(first) == 2 * ENTRY
    assert os.path.getsize(last) == ENTRY
    assert again.get_log("t", 0).log_end_offset == 5
    again.close()


def test_flush_due_uses_each_topics_flush_interval(tmp_path):
    clock = Clock()
    fast = LogConfig(segment_bytes=10_000, flush_interval_ms=100)
    logs = manager(
        dirs(tmp_path), clock, segment_bytes=10_000, flush_interval_ms=1000, topic_configs={"fast": fast}
    )
    logs.create_log("fast", 0).append(one(0))
    logs.create_log("slow", 0).append(one(0))
    clock.now += 100
    assert logs.flush_due() == 1
    assert [logs.get_log(t, 0).recovery_point for t in ("fast", "slow")] == [1, 0]
    clock.now += 900
    assert logs.flush_due() == 1
    assert logs.get_log("slow", 0).recovery_point == 1


def test_retention_by_time_and_size_then_delayed_deletion(tmp_path):
    clock = Clock()
    capped = LogConfig(segment_bytes=2 * ENTRY, retention_bytes=2 * ENTRY, file_delete_delay_ms=1000)
    logs = manager(
        dirs(tmp_path),
        clock,
        retention_ms=60_000,
        file_delete_delay_ms=1000,
        topic_configs={"capped": capped},
    )
    aged, small = logs.create_log("aged", 0), logs.create_log("capped", 0)
    for i in range(6):
        aged.append(one(i))
        small.append(one(i))
    assert logs.run_delayed_tasks() == 4  # the flushes after the rolls
    for segment in aged.segments[:2]:
        set_mtime(segment.path, clock.now - 61_000)
    assert logs.cleanup_logs() == 2 + 2
    assert [s.start for s in aged.segments] == [4]
    assert [s.start for s in small.segments] == [4]
    deleted = [n for n in os.listdir(os.path.dirname(aged.segments[0].path)) if n.endswith(".deleted")]
    assert len(deleted) == 4
    assert logs.run_delayed_tasks(clock.now + 999) == 0
    assert logs.run_delayed_tasks(clock.now + 1000) == 4
    assert sorted(os.listdir(os.path.dirname(aged.segments[0].path))) == [
        "00000000000000000004.index",
        "00000000000000000004.log",
    ]
    assert [m.offset for m in iter_messages(aged.read(4, 1000).read())] == [4, 5]


def test_compacted_topics_are_left_to_the_cleaner(tmp_path):
    clock = Clock()
    compacted = LogConfig(segment_bytes=2 * ENTRY, retention_ms=1, compact=True)
    logs = manager(dirs(tmp_path), clock, topic_configs={"__consumer_offsets": compacted})
    log = logs.create_log("__consumer_offsets", 0)
    for i in range(4):
        log.append(one(i))
    assert logs.cleanup_logs(clock.now + 10**9) == 0


def test_delete_log_removes_the_directory(tmp_path):
    (log_dir,) = dirs(tmp_path)
    logs = manager([log_dir])
    logs.create_log("t", 3).append(one(0))
    logs.delete_log("t", 3)
    assert logs.get_log("t", 3) is None
    assert not os.path.exists(os.path.join(log_dir, "t-3"))
    logs.close()
    assert checkpoint(log_dir) == {}


def test_log_config_from_topic_keys():
    config = LogConfig.from_topic_config(
        {"segment.bytes": 100, "retention.ms": 5, "cleanup.policy": "compact", "min.insync.replicas": 2}
    )
    assert (config.segment_bytes, config.retention_ms, config.compact) == (100, 5, True)
    assert config.index_interval_bytes == LogConfig().index_interval_bytes
