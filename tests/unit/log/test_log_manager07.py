"""The broker's logs (zkafka.log.log_manager07) and topic names (zkafka.topic)."""

import logging
import os
import re

import pytest

from tests.support.logs import Clock, entry, opened, set_mtime
from zkafka.config07 import BrokerConfig
from zkafka.errors import InvalidPartitionError, InvalidTopicError
from zkafka.log.log07 import segment_file_name
from zkafka.log.log_manager import CLEAN_SHUTDOWN_FILE
from zkafka.log.log_manager07 import HOUR_MS, LogManager
from zkafka.topic import log_dir_name, parse_log_dir_name, validate_topic


def make_config(tmp_path, **props) -> BrokerConfig:
    base = {"brokerid": "0", "log.dir": str(tmp_path / "logs"), "enable.zookeeper": "false"}
    base.update(props)
    return BrokerConfig(base)


def open_manager(config: BrokerConfig, **options) -> LogManager:
    return opened(LogManager(config, **options))


# -- topic names ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name", ["t", "my-topic", "a.b_c", "..a", "x" * 255, "caf\u00e9", "\u00a0", "\ufeff"]
)
def test_valid_topic_names(name):
    assert validate_topic(name) == name


@pytest.mark.parametrize(
    "name, reason",
    [
        ("", "empty"),
        ("x" * 256, "256 characters"),
        (".", "not allowed"),
        ("..", "not allowed"),
        ("a/b", "U+002F"),
        ("a\x00b", "U+0000"),
        ("tab\t", "U+0009"),
        ("del\x7f", "U+007F"),
        ("c1\x9f", "U+009F"),
        ("sur\ud800", "U+D800"),
        ("private\ue000", "U+E000"),
        ("spec\ufff0", "U+FFF0"),
        ("nonchar\uffff", "U+FFFF"),
        ("emoji\U0001f600", "U+1F600"),
    ],
)
def test_invalid_topic_names(name, reason):
    with pytest.raises(InvalidTopicError, match=re.escape(reason)) as info:
        validate_topic(name)
    assert repr(name) in str(info.value) or not name


def test_topic_length_limit_is_configurable():
    assert validate_topic("abcd", max_length=4) == "abcd"
    with pytest.raises(InvalidTopicError):
        validate_topic("abcde", max_length=4)


@pytest.mark.parametrize(
    "dirname, parsed",
    [("t-0", ("t", 0)), ("my-topic-12", ("my-topic", 12)), ("a--1", ("a-", 1)), ("x.y-7", ("x.y", 7))],
)
def test_log_dir_names_split_at_the_last_dash(dirname, parsed):
    assert parse_log_dir_name(dirname) == parsed
    assert log_dir_name(*parsed) == dirname


@pytest.mark.parametrize("dirname", ["nodash", "-3", "t-", "t-x", "t-01", "t-+1", "t-1.0", "t-\u0663"])
def test_names_that_are_not_log_dirs(dirname):
    with pytest.raises(ValueError, match="not a log directory"):
        parse_log_dir_name(dirname)


# -- startup and shutdown -------------------------------------------------------------------------------


def test_startup_creates_log_dir_and_clean_shutdown_writes_the_marker(tmp_path):
    manager = open_manager(make_config(tmp_path))
    assert (tmp_path / "logs").is_dir()
    assert manager.need_recovery is True
    assert manager.topics() == set()
    manager.get_or_create_log("t", 0).append(entry(b"x"))
    manager.close()
    assert (tmp_path / "logs" / CLEAN_SHUTDOWN_FILE).exists()
    again = open_manager(make_config(tmp_path))
    assert again.need_recovery is False
    assert not (tmp_path / "logs" / CLEAN_SHUTDOWN_FILE).exists()
    assert again.get_log("t", 0).read(0, 100) == entry(b"x")


def test_close_without_clean_writes_no_marker_nor_does_a_second_close(tmp_path):
    manager = LogManager(make_config(tmp_path))
    manager.close(clean=False)
    manager.close()
    assert not (tmp_path / "logs" / CLEAN_SHUTDOWN_FILE).exists()


def write_torn_partition(tmp_path) -> tuple[str, bytes]:
    good = entry(b"kept")
    directory = tmp_path / "logs" / "t-0"
    directory.mkdir(parents=True)
    path = directory / segment_file_name(0)
    path.write_bytes(good + entry(b"torn")[:6])
    return str(path), good


def test_startup_without_the_marker_recovers(tmp_path):
    path, good = write_torn_partition(tmp_path)
    manager = open_manager(make_config(tmp_path))
    assert os.path.getsize(path) == len(good)
    assert manager.get_log("t", 0).flushed_end == len(good)


def test_startup_after_a_clean_shutdown_skips_recovery_and_deletes_the_marker(tmp_path):
    path, good = write_torn_partition(tmp_path)
    (tmp_path / "logs" / CLEAN_SHUTDOWN_FILE).touch()
    manager = open_manager(make_config(tmp_path))
    assert manager.need_recovery is False
    assert os.path.getsize(path) == len(good) + 6
    assert not (tmp_path / "logs" / CLEAN_SHUTDOWN_FILE).exists()


def test_startup_loads_partition_dirs_and_skips_the_rest(tmp_path, caplog):
    logs = tmp_path / "logs"
    for name in ("my-topic-0", "my-topic-3", "other-1", "nodash", "..-0", "t-01"):
        (logs / name).mkdir(parents=True)
    (logs / "stray-file-0").write_text("not a directory")
    with caplog.at_level(logging.WARNING, logger="zkafka.log.log_manager"):
        manager = open_manager(make_config(tmp_path, **{"num.partitions": "4"}))
    assert manager.topics() == {"my-topic", "other"}
    assert sorted(log.name for log in manager.all_logs()) == ["my-topic-0", "my-topic-3", "other-1"]
    assert manager.get_log("my-topic", 3).topic == "my-topic"
    for skipped in ("nodash", "..-0", "t-01", "stray-file-0"):
        assert skipped in caplog.text


def test_startup_stops_on_a_broken_log(tmp_path):
    directory = tmp_path / "logs" / "t-0"
    directory.mkdir(parents=True)
    (directory / segment_file_name(0)).write_bytes(entry(b"a"))
    (directory / segment_file_name(1000)).write_bytes(entry(b"b"))
    with pytest.raises(RuntimeError, match="not contiguous"):
        LogManager(make_config(tmp_path))


# -- lookup and creation --------------------------------------------------------------------------------


def test_get_or_create_log_creates_the_directory_once_and_announces_the_topic(tmp_path):
    announced = []
    manager = open_manager(make_config(tmp_path, **{"num.partitions": "3"}), on_new_topic=announced.append)
    assert manager.get_log("events", 1) is None
    log = manager.get_or_create_log("events", 1)
    assert (tmp_path / "logs" / "events-1" / segment_file_name(0)).is_file()
    assert manager.get_or_create_log("events", 1) is log
    assert manager.get_log("events", 1) is log
    manager.get_or_create_log("events", 2)
    manager.get_or_create_log("more-events", 0)
    assert announced == ["events", "more-events"]
    assert manager.topics() == {"events", "more-events"}


def test_topics_loaded_at_startup_are_not_announced_again(tmp_path):
    (tmp_path / "logs" / "old-0").mkdir(parents=True)
    announced = []
    manager = open_manager(make_config(tmp_path, **{"num.partitions": "2"}), on_new_topic=announced.append)
    manager.get_or_create_log("old", 1)
    assert announced == []


@pytest.mark.parametrize("partition", [-1, 2, 100])
def test_partition_out_of_range(tmp_path, partition):
    manager = open_manager(make_config(tmp_path, **{"num.partitions": "2"}))
    with pytest.raises(InvalidPartitionError, match=r"\[0, 2\)"):
        manager.get_log("t", partition)
    with pytest.raises(InvalidPartitionError):
        manager.get_or_create_log("t", partition)
    assert not os.listdir(tmp_path / "logs")


def test_partition_count_per_topic(tmp_path):
    manager = open_manager(make_config(tmp_path, **{"topic.partition.count.map": "big:8"}))
    assert (manager.partition_count("big"), manager.partition_count("small")) == (8, 1)
    manager.get_or_create_log("big", 7)
    with pytest.raises(InvalidPartitionError):
        manager.get_or_create_log("small", 1)
    assert {manager.choose_partition("big") for _ in range(400)} == set(range(8))
    assert {manager.choose_partition("small") for _ in range(20)} == {0}


@pytest.mark.parametrize("topic", ["", "..", ".", "a/b", "bad\x01name", "x" * 256])
def test_bad_topic_names_are_rejected(tmp_path, topic):
    manager = open_manager(make_config(tmp_path))
    with pytest.raises(InvalidTopicError):
        manager.get_log(topic, 0)
    with pytest.raises(InvalidTopicError):
        manager.get_or_create_log(topic, 0)
    assert not os.listdir(tmp_path / "logs")


def test_max_topic_name_length_comes_from_the_config(tmp_path):
    manager = open_manager(make_config(tmp_path, **{"max.topic.name.length": "5"}))
    manager.get_or_create_log("abcde", 0)
    with pytest.raises(InvalidTopicError):
        manager.get_or_create_log("abcdef", 0)


def test_per_topic_log_settings(tmp_path):
    config = make_config(
        tmp_path,
        **{
            "log.file.size": "1000",
            "topic.log.file.size": "small:100",
            "log.roll.hours": "24",
            "topic.log.roll.hours": "fast:2",
            "log.flush.interval": "7",
            "max.message.size": "500",
        },
    )
    manager = open_manager(config)
    small, fast = manager.get_or_create_log("small", 0), manager.get_or_create_log("fast", 0)
    assert (small.max_segment_size, small.roll_ms) == (100, 24 * HOUR_MS)
    assert (fast.max_segment_size, fast.roll_ms) == (1000, 2 * HOUR_MS)
    assert (fast.flush_interval, fast.max_message_size) == (7, 500)


# -- the time-based flusher -----------------------------------------------------------------------------


def test_flush_due_uses_the_topic_interval_else_the_default(tmp_path):
    clock = Clock()
    config = make_config(
        tmp_path,
        **{
            "log.flush.interval": "1000",
            "log.default.flush.interval.ms": "1000",
            "topic.flush.intervals.ms": "fast:100",
        },
    )
    manager = open_manager(config, time_ms=clock)
    start = clock.now
    fast, slow = manager.get_or_create_log("fast", 0), manager.get_or_create_log("slow", 0)
    fast.append(entry(b"f"))
    slow.append(entry(b"s"))
    assert manager.flush_due(start + 99) == 0
    clock.now = start + 100
    assert manager.flush_due() == 1
    assert (fast.flushed_end, slow.flushed_end) == (len(entry(b"f")), 0)
    assert fast.last_flush_ms == start + 100
    assert manager.flush_due(start + 999) == 0
    clock.now = start + 1000
    assert manager.flush_due() == 1
    assert slow.flushed_end == len(entry(b"s"))
    clock.now = start + 5000
    assert manager.flush_due() == 0  # nothing unflushed: no fsync
    assert slow.last_flush_ms == start + 1000


# -- retention ------------------------------------------------------------------------------------------


def rolled(manager: LogManager, topic: str, count: int = 3):
    """A log of ``count`` flushed segments of one 20-byte entry each, then an empty last segment."""
    log = manager.get_or_create_log(topic, 0)
    for i in range(count):
        log.append(entry(b"payload-%02d" % i))
        log.roll()
    assert [(s.start, s.size) for s in log.segments] == [(20 * i, 20) for i in range(count)] + [
        (20 * count, 0)
    ]
    return log


def test_cleanup_by_age_deletes_from_the_oldest_up_to_the_first_young_one(tmp_path):
    clock = Clock()
    config = make_config(tmp_path, **{"log.retention.hours": "2", "topic.log.retention.hours": "short:1"})
    manager = open_manager(config, time_ms=clock)
    log = rolled(manager, "t")
    short = rolled(manager, "short")
    for target in (log, short):
        mtimes = [clock.now - 3 * HOUR_MS, clock.now - 90 * 60 * 1000, clock.now - 3 * HOUR_MS, clock.now]
        for segment, mtime in zip(target.segments, mtimes, strict=True):
            set_mtime(segment.path, mtime)
    assert manager.cleanup_logs() == 1 + 3
    assert [s.start for s in log.segments] == [20, 40, 60]
    assert [s.start for s in short.segments] == [60]


def test_cleanup_by_age_when_every_segment_expired(tmp_path):
    clock = Clock()
    manager = open_manager(make_config(tmp_path, **{"log.retention.hours": "1"}), time_ms=clock)
    log = manager.get_or_create_log("t", 0)
    log.append(entry(b"old"))
    log.flush()
    set_mtime(log.segments[0].path, clock.now - 2 * HOUR_MS)
    assert manager.cleanup_logs() == 1
    assert [(s.start, s.size) for s in log.segments] == [(len(entry(b"old")), 0)]
    assert os.listdir(tmp_path / "logs" / "t-0") == [segment_file_name(len(entry(b"old")))]
    # now the only segment is empty and old: it is kept and its mtime reset
    set_mtime(log.segments[0].path, clock.now - 2 * HOUR_MS)
    assert manager.cleanup_logs() == 0
    assert log.segments[0].mtime_ms == clock.now
    assert manager.cleanup_logs(clock.now + HOUR_MS) == 0


def test_cleanup_by_age_at_exactly_the_retention_keeps_the_segment(tmp_path):
    clock = Clock()
    manager = open_manager(make_config(tmp_path, **{"log.retention.hours": "1"}), time_ms=clock)
    log = rolled(manager, "t", 1)
    set_mtime(log.segments[0].path, clock.now - HOUR_MS)
    assert manager.cleanup_logs() == 0
    assert manager.cleanup_logs(clock.now + 1) == 1


@pytest.mark.parametrize(
    "limit, remaining",
    [
        ("-1", [0, 20, 40, 60, 80]),  # off
        ("100", [0, 20, 40, 60, 80]),  # at the limit: an excess of 0 bytes
        ("81", [0, 20, 40, 60, 80]),  # 19 bytes over: less than the oldest segment
        ("80", [20, 40, 60, 80]),
        ("45", [40, 60, 80]),
        ("40", [60, 80]),
        ("1", [80]),
        ("0", [100]),  # every segment: the non-empty last one is rolled first
    ],
)
def test_cleanup_by_size(tmp_path, limit, remaining):
    manager = open_manager(make_config(tmp_path, **{"log.retention.size": limit}))
    log = rolled(manager, "t", 4)
    log.append(entry(b"payload-xx"))  # 100 bytes: five segments of 20
    log.flush()
    manager.cleanup_logs()
    assert [s.start for s in log.segments] == remaining


def test_cleanup_by_size_counts_only_flushed_bytes(tmp_path):
    config = make_config(tmp_path, **{"log.retention.size": "40", "log.flush.interval": "1000"})
    manager = open_manager(config)
    log = rolled(manager, "t", 2)  # 40 flushed bytes
    log.append(entry(b"unflushed!"))
    assert manager.cleanup_logs() == 0
    log.flush()
    assert manager.cleanup_logs() == 1
    assert [s.start for s in log.segments] == [20, 40]


def test_cleanup_by_size_per_topic(tmp_path):
    config = make_config(tmp_path, **{"log.retention.size": "-1", "topic.log.retention.size": "capped:40"})
    manager = open_manager(config)
    free, capped = rolled(manager, "free"), rolled(manager, "capped")
    assert manager.cleanup_logs() == 1
    assert [s.start for s in free.segments] == [0, 20, 40, 60]
    assert [s.start for s in capped.segments] == [20, 40, 60]
