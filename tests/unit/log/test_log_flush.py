"""Flushes that do not hold the log's lock while they fsync (both lines), and what readers see meanwhile.

The disk is a ``HeldDisk`` on the log's ``fsync`` seam: each fsync waits until the test releases it, then
fsyncs the real file. The flushing side runs on a thread of its own, as the broker's disk pool would.
"""

import os
import threading

import gevent

from tests.support.logs import Clock, HeldDisk, entry, opened
from zkafka.log.checkpoint import RECOVERY_POINT_CHECKPOINT, REPLICATION_OFFSET_CHECKPOINT
from zkafka.log.log07 import Log
from zkafka.log.log08 import Log08
from zkafka.log.log_config import LogConfig
from zkafka.log.log_manager08 import LogManager08
from zkafka.records.format08 import build_message_set
from zkafka.server.replica_manager import ReplicaManager
from zkafka.server.server_base import DiskPool
from zkafka.utils import wait_until

HOUR_MS = 3600 * 1000


def log07(path, **overrides) -> Log:
    settings = dict(
        max_segment_size=1_000_000,
        roll_ms=HOUR_MS,
        flush_interval=100,
        max_message_size=1_000_000,
        need_recovery=False,
        time_ms=Clock(),
    )
    settings.update(overrides)
    os.makedirs(path, exist_ok=True)
    return opened(Log(path, "t", 0, **settings))


def log08(path, **settings) -> Log08:
    os.makedirs(path, exist_ok=True)
    config = LogConfig(**{"segment_bytes": 10_000, **settings})
    return opened(Log08(str(path), "t", 0, config, need_recovery=False, time_ms=Clock()))


def one(i: int) -> bytes:
    return build_message_set([(None, b"v%04d" % i)], 0, 0)


def in_thread(call) -> threading.Thread:
    thread = threading.Thread(target=call, daemon=True)
    thread.start()
    return thread


def finish(disk: HeldDisk, *threads: threading.Thread) -> None:
    disk.release()
    for thread in threads:
        thread.join(10)
        assert not thread.is_alive()


# -- 0.7: readers see only bytes whose fsync completed -----------------------------------------------------


def test_appends_go_on_during_an_fsync_and_stay_invisible_until_theirs(tmp_path):
    log = log07(tmp_path / "t-0")
    first = entry(b"first")
    log.append(first)
    log.fsync = disk = HeldDisk()
    flusher = in_thread(log.flush)
    assert disk.started.wait(10)

    later = entry(b"appended while the disk is busy")
    info = log.append(later)  # the lock is free: the append does not wait for the fsync
    assert (info.first_offset, log.log_end_offset) == (len(first), len(first + later))
    assert (log.flushed_end, log.read(0, 1000)) == (0, b"")  # nothing visible before the fsync is done

    finish(disk, flusher)
    assert log.flushed_end == len(first)  # only what that fsync covered
    assert log.read(0, 1000) == first
    assert log.flush() is True
    assert (log.flushed_end, log.read(0, 1000)) == (len(first + later), first + later)


def test_a_count_triggered_flush_waits_outside_the_lock(tmp_path):
    log = log07(tmp_path / "t-0", flush_interval=1)
    log.fsync = disk = HeldDisk()
    a, b = entry(b"a"), entry(b"bb")
    first = in_thread(lambda: log.append(a))
    assert disk.started.wait(10)
    second = in_thread(lambda: log.append(b))  # writes, then waits for its own flush
    wait_until(lambda: log.log_end_offset == len(a + b), timeout=10, message="the second append written")
    assert log.flushed_end == 0
    finish(disk, first, second)
    assert (log.flushed_end, log.unflushed_messages) == (len(a + b), 0)


def test_a_roll_and_close_during_an_fsync_leave_the_flushed_end_right(tmp_path):
    log = log07(tmp_path / "t-0", max_segment_size=5)
    first = entry(b"first")
    log.append(first)
    log.fsync = disk = HeldDisk()
    flusher = in_thread(log.flush)
    assert disk.started.wait(10)
    rolled = in_thread(lambda: log.append(entry(b"next segment")))  # the roll fsyncs the old one itself
    finish(disk, flusher, rolled)
    assert [s.flushed_size == s.size for s in log.segments] == [True, False]
    assert log.flushed_end == len(first)
    log.close()


def test_a_roll_fsyncs_the_sealed_segment_outside_the_lock_and_readers_wait_for_it(tmp_path):
    first, second = entry(b"first"), entry(b"second")
    log = log07(tmp_path / "t-0", max_segment_size=len(first), flush_interval=1000)
    log.append(first)
    log.flush()
    log.append(second)  # unflushed when the next append rolls
    log.fsync = disk = HeldDisk()
    rolled = in_thread(lambda: log.append(entry(b"third")))  # rolls, then waits for the sealed tail's fsync
    assert disk.started.wait(10)
    wait_until(lambda: len(log.segments) == 2, timeout=10, message="the roll done")
    later = entry(b"appended while the sealed segment syncs")
    log.append(later)  # the lock is free during the roll's fsync
    assert log.flushed_end == len(first)  # the sealed segment's unsynced tail is not visible
    assert log.read(0, 1000) == first
    finish(disk, rolled)
    assert log.flushed_end == len(first + second)  # the whole sealed segment, nothing of the new one
    assert log.read(len(first), 1000) == second
    log.close()
    assert log.flushed_end == log.log_end_offset


def test_every_fsync_goes_through_the_seam(tmp_path):
    log = log07(tmp_path / "t-0")
    log.fsync = disk = HeldDisk(held=False)
    log.append(entry(b"x"))
    log.flush()
    log.close()  # nothing new: no fsync
    assert disk.calls == 1


# -- 0.8: the recovery point advances to what the fsync covered; the log end is visible at once -------------


def test_the_recovery_point_advances_only_to_the_flushed_offset(tmp_path):
    log = log08(tmp_path / "t-0")
    for i in range(3):
        log.append(one(i))
    log.fsync = disk = HeldDisk()
    flusher = in_thread(log.flush)
    assert disk.started.wait(10)
    log.append(one(3))
    assert (log.log_end_offset, log.visible_end, log.recovery_point) == (4, 4, 0)
    finish(disk, flusher)
    assert (log.recovery_point, log.unflushed_messages) == (3, 1)
    assert disk.calls == 2  # the segment and its index


def test_a_truncation_during_the_fsync_keeps_the_recovery_point(tmp_path):
    log = log08(tmp_path / "t-0")
    for i in range(5):
        log.append(one(i))
    log.fsync = disk = HeldDisk()
    flusher = in_thread(log.flush)
    assert disk.started.wait(10)
    log.truncate_to(2)
    finish(disk, flusher)
    assert (log.log_end_offset, log.recovery_point) == (2, 0)


def test_a_segment_deleted_during_the_fsync_is_still_synced_safely(tmp_path):
    log = log08(tmp_path / "t-0", segment_bytes=100, file_delete_delay_ms=0)
    for i in range(6):
        log.append(one(i))
    assert len(log.segments) > 1
    log.fsync = disk = HeldDisk()
    flusher = in_thread(log.flush)
    assert disk.started.wait(10)
    deleted = log.delete_old_segments(lambda segment: segment is not log.segments[-1])
    assert deleted
    finish(disk, flusher)
    assert log.recovery_point == 6


# -- the broker's disk pool ---------------------------------------------------------------------------------


def test_the_disk_pool_lets_other_greenlets_run_during_an_fsync(tmp_path):
    pool = DiskPool()
    try:
        log = Log(
            tmp_path,
            "t",
            0,
            max_segment_size=1_000_000,
            roll_ms=HOUR_MS,
            flush_interval=1,
            max_message_size=1_000_000,
            need_recovery=False,
            offload=pool.run,
        )
        log.fsync = disk = HeldDisk()
        producer = gevent.spawn(log.append, entry(b"held"))
        ticks = []
        ticker = gevent.spawn(lambda: [ticks.append(gevent.sleep(0.001)) for _ in range(20)])
        ticker.join(10)
        assert len(ticks) == 20 and disk.started.is_set()  # the hub ran while the fsync waited
        assert not producer.ready() and log.flushed_end == 0
        disk.release()
        producer.join(10)
        assert producer.successful()
        assert log.flushed_end == len(entry(b"held"))
        log.close()
    finally:
        pool.close()


def test_a_roll_fsyncs_on_the_disk_pool_while_the_hub_runs(tmp_path):
    pool = DiskPool()
    try:
        log = log07(tmp_path / "t-0", max_segment_size=5, flush_interval=1000, offload=pool.run)
        first = entry(b"first")
        log.append(first)
        log.fsync = disk = HeldDisk()
        producer = gevent.spawn(log.append, entry(b"rolls"))
        ticks = []
        ticker = gevent.spawn(lambda: [ticks.append(gevent.sleep(0.001)) for _ in range(20)])
        ticker.join(10)
        assert len(ticks) == 20 and disk.started.is_set()  # the hub ran while the roll's fsync waited
        assert not producer.ready() and len(log.segments) == 2 and log.flushed_end == 0
        disk.release()
        producer.join(10)
        assert producer.successful() and log.flushed_end == len(first)
        log.close()
    finally:
        pool.close()


def test_the_0_8_checkpoints_are_written_on_the_disk_offload(tmp_path):
    # Both checkpoint writes fsync (file and directory): neither may run on the event loop.
    on_pool = []

    def offload(task):
        result = []
        worker = threading.Thread(target=lambda: result.append(task()))
        worker.start()
        worker.join(10)
        on_pool.append(task)
        return result[0]

    logs = LogManager08([str(tmp_path)], LogConfig(), offload=offload)
    try:
        replicas = ReplicaManager(0, logs)
        replicas.checkpoint_high_watermarks()
        assert len(on_pool) == 1
        assert (tmp_path / REPLICATION_OFFSET_CHECKPOINT).read_text() == "0\n0\n"
        logs.checkpoint_recovery_points()  # with the log start offsets (DeleteRecords')
        assert len(on_pool) == 3
        assert (tmp_path / RECOVERY_POINT_CHECKPOINT).read_text() == "0\n0\n"
        assert (tmp_path / "log-start-offset-checkpoint").read_text() == "0\n0\n"
    finally:
        logs.close()
