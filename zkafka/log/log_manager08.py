"""All 0.8 partition logs of one broker, spread over the directories of ``log.dirs``.

Each log directory is locked (``.lock``) while the broker runs, has its own clean-shutdown marker and its own
``recovery-point-offset-checkpoint``. A new partition goes to the directory holding the fewest partitions.
The broker schedules the periodic tasks: ``flush_due`` every ``log.flush.scheduler.interval.ms``,
``checkpoint_recovery_points`` every ``log.flush.offset.checkpoint.interval.ms``, ``cleanup_logs`` every
``log.retention.check.interval.ms`` and ``run_delayed_tasks`` often (the delayed deletions of segments and
the flushes after a roll, unless a scheduler of its own was given).
"""

from __future__ import annotations

import fcntl
import heapq
import itertools
import logging
import os
import threading
from collections.abc import Callable, Mapping, Sequence

from zkafka import utils
from zkafka.log.checkpoint import (
    CHECKPOINT_FILES,
    LOG_START_OFFSET_CHECKPOINT,
    RECOVERY_POINT_CHECKPOINT,
    TMP_SUFFIX,
    OffsetCheckpoint,
)
from zkafka.log.log08 import Log08, Scheduler
from zkafka.log.log_config import LogConfig
from zkafka.log.log_manager import (
    CLEAN_SHUTDOWN_FILE,
    close_logs,
    partition_dirs,
    write_clean_shutdown_marker,
)
from zkafka.log.segmented_log import LogLayoutError, Offload, run_here
from zkafka.topic import DEFAULT_MAX_TOPIC_LENGTH, log_dir_name, validate_topic_08

logger = logging.getLogger(__name__)

LOCK_FILE = ".lock"
# The files a log directory holds besides its partitions (meta.properties: Kafka 0.9's broker id file).
LOG_DIR_FILES = frozenset(
    (LOCK_FILE, CLEAN_SHUTDOWN_FILE, "meta.properties")
    + CHECKPOINT_FILES
    + tuple(name + TMP_SUFFIX for name in CHECKPOINT_FILES)
)


class LogDirInUseError(RuntimeError):
    """Another process holds the lock of a log directory."""


class LogManager08:
    """Every partition log of one 0.8 broker: loaded at start, created on demand, flushed, checkpointed, cleaned."""

    def __init__(
        self,
        log_dirs: Sequence[str],
        default_config: LogConfig,
        *,
        topic_configs: Mapping[str, LogConfig] | None = None,
        scheduler: Scheduler | None = None,
        time_ms: Callable[[], int] = utils.now_ms,
        offload: Offload = run_here,
        on_open_log: Callable[[Log08], None] | None = None,
        topic_overrides: Callable[[str], LogConfig | None] | None = None,
    ) -> None:
        if not log_dirs:
            raise ValueError("log.dirs names no directory")
        if len(set(map(os.path.realpath, log_dirs))) != len(log_dirs):
            raise ValueError(f"log.dirs names a directory twice: {list(log_dirs)}")
        self.log_dirs = [os.fspath(d) for d in log_dirs]
        self.default_config = default_config
        self.topic_configs: dict[str, LogConfig] = dict(topic_configs or {})
        self._topic_overrides = (
            topic_overrides  # a topic's /config/topics settings (None: none, or unknown yet)
        )
        self._time_ms = time_ms
        self._offload = offload
        self._on_open_log = on_open_log  # told every log opened or created (the broker's metrics)
        self._scheduler = scheduler or self._schedule
        self._delayed: list[tuple[int, int, Callable[[], object]]] = []
        self._sequence = itertools.count()
        self._logs: dict[tuple[str, int], Log08] = {}
        self._dir_of: dict[tuple[str, int], str] = {}
        self._create_lock = threading.Lock()
        self._locks: list[int] = []
        self._closed = False
        try:
            for log_dir in self.log_dirs:
                os.makedirs(log_dir, exist_ok=True)
                self._locks.append(_lock_dir(log_dir))
            for log_dir in self.log_dirs:
                self._load_dir(log_dir)
        except BaseException:
            close_logs(self.all_logs())
            self._release_locks()
            raise

    def _load_dir(self, log_dir: str) -> None:
        marker = os.path.join(log_dir, CLEAN_SHUTDOWN_FILE)
        clean = os.path.exists(marker)
        recovery_points = OffsetCheckpoint(os.path.join(log_dir, RECOVERY_POINT_CHECKPOINT)).read()
        log_starts = OffsetCheckpoint(os.path.join(log_dir, LOG_START_OFFSET_CHECKPOINT)).read()
        logger.info("loading logs from %s (recovery %s)", log_dir, "off" if clean else "on")
        # A directory already on disk loads even if its topic is longer than today's 249 (an older broker's).
        for topic, partition, path in partition_dirs(log_dir, DEFAULT_MAX_TOPIC_LENGTH, LOG_DIR_FILES):
            key = (topic, partition)
            if key in self._logs:
                raise LogLayoutError(
                    f"partition {topic}-{partition} has a directory in both {self._dir_of[key]} and {log_dir}"
                )
            self._logs[key] = Log08(
                path,
                topic,
                partition,
                self.config_for(topic),
                recovery_point=recovery_points.get(key, 0),
                need_recovery=not clean,
                scheduler=self._scheduler,
                time_ms=self._time_ms,
                offload=self._offload,
            )
            self._logs[key].log_start_offset = log_starts.get(key, 0)
            self._opened(self._logs[key])
            self._dir_of[key] = log_dir
        if clean:
            os.unlink(marker)

    def _opened(self, log: Log08) -> None:
        if self._on_open_log is not None:
            self._on_open_log(log)

    def config_for(self, topic: str) -> LogConfig:
        """The topic's log settings (its overrides, else the broker's defaults)."""
        config = self.topic_configs.get(topic)
        if config is None and self._topic_overrides is not None:
            config = self._topic_overrides(topic)
        return self.default_config if config is None else config

    def refresh_configs(self) -> None:
        """Every open log takes its topic's settings again (logs load before the topics' overrides can be read)."""
        for log in self.all_logs():
            log.config = self.config_for(log.topic)

    def update_topic_config(self, topic: str) -> None:
        """A topic's overrides changed: its live logs take its settings again (Kafka's TopicConfigHandler)."""
        for (name, _), log in self._logs.items():
            if name == topic:
                log.config = self.config_for(topic)

    # -- lookup and creation ----------------------------------------------------------------------------------

    def get_log(self, topic: str, partition: int) -> Log08 | None:
        return self._logs.get((topic, partition))

    def create_log(self, topic: str, partition: int) -> Log08:
        """The partition's log, created in the log directory with the fewest partitions if there is none."""
        log = self._logs.get((topic, partition))
        if log is not None:
            return log
        validate_topic_08(topic)
        if partition < 0:
            raise ValueError(f"partition {partition} of topic {topic!r} is negative")
        # The topic's overrides may be read from ZooKeeper (a greenlet switch): never while holding the lock,
        # or a second greenlet creating a log blocks the whole hub on it.
        config = self.config_for(topic)
        with self._create_lock:
            log = self._logs.get((topic, partition))
            if log is not None:
                return log
            log_dir = self._next_log_dir()
            path = os.path.join(log_dir, log_dir_name(topic, partition))
            os.makedirs(path, exist_ok=True)
            log = Log08(
                path,
                topic,
                partition,
                config,
                need_recovery=False,
                scheduler=self._scheduler,
                time_ms=self._time_ms,
                offload=self._offload,
            )
            self._opened(log)
            self._logs = {**self._logs, (topic, partition): log}
            self._dir_of[(topic, partition)] = log_dir
        logger.info("created log %s in %s", log.name, log_dir)
        return log

    def _next_log_dir(self) -> str:
        counts = dict.fromkeys(self.log_dirs, 0)
        for log_dir in self._dir_of.values():
            counts[log_dir] += 1
        return min(self.log_dirs, key=lambda d: counts[d])  # the first of the least used

    def delete_log(self, topic: str, partition: int) -> None:
        """Remove the partition's log and its directory (StopReplica with delete)."""
        with self._create_lock:
            logs = dict(self._logs)
            log = logs.pop((topic, partition), None)
            self._logs = logs
            self._dir_of.pop((topic, partition), None)
        if log is not None:
            log.delete()
            logger.info("deleted log %s", log.name)

    def all_logs(self) -> list[Log08]:
        return list(self._logs.values())

    def topics(self) -> set[str]:
        return {topic for topic, _ in self._logs}

    def log_dir_of(self, topic: str, partition: int) -> str | None:
        return self._dir_of.get((topic, partition))

    # -- periodic tasks --------------------------------------------------------------------------------------

    def flush_due(self, now_ms: int | None = None) -> int:
        """Flush each log whose last flush is at least its ``flush.ms`` old; returns the logs flushed."""
        now = self._time_ms() if now_ms is None else now_ms
        flushed = 0
        for log in self.all_logs():
            if now - log.last_flush_ms >= log.config.flush_interval_ms and log.flush():
                flushed += 1
        return flushed

    def checkpoint_recovery_points(self) -> None:
        """Write every log directory's ``recovery-point-offset-checkpoint`` (through ``offload``: it fsyncs)."""
        points: dict[str, dict[tuple[str, int], int]] = {log_dir: {} for log_dir in self.log_dirs}
        for key, log in list(self._logs.items()):
            points[self._dir_of[key]][key] = log.recovery_point
        for log_dir, offsets in points.items():
            self.write_checkpoint(log_dir, RECOVERY_POINT_CHECKPOINT, offsets)
        self.checkpoint_log_start_offsets()

    def checkpoint_log_start_offsets(self) -> None:
        """Write every log directory's ``log-start-offset-checkpoint`` (the starts DeleteRecords moved)."""
        starts: dict[str, dict[tuple[str, int], int]] = {log_dir: {} for log_dir in self.log_dirs}
        for key, log in list(self._logs.items()):
            if log.log_start_offset > 0:
                starts[self._dir_of[key]][key] = log.log_start_offset
        for log_dir, offsets in starts.items():
            self.write_checkpoint(log_dir, LOG_START_OFFSET_CHECKPOINT, offsets)

    def write_checkpoint(self, log_dir: str, name: str, offsets: Mapping[tuple[str, int], int]) -> None:
        """Replace the checkpoint file ``name`` of ``log_dir`` with ``offsets`` through ``offload``: the write
        fsyncs the file and the directory, which must not stall the event loop while the disk is busy."""
        checkpoint = OffsetCheckpoint(os.path.join(log_dir, name))
        self._offload(lambda: checkpoint.write(offsets))

    def cleanup_logs(self, now_ms: int | None = None) -> int:
        """Delete segments past ``retention.ms``, then past ``retention.bytes``; returns the segments deleted.

        Compacted topics are left alone.
        """
        now = self._time_ms() if now_ms is None else now_ms
        total = 0
        for log in self.all_logs():
            if log.config.compact:
                continue
            total += log.delete_expired_segments(now, log.config.retention_ms)
            total += log.delete_segments_over_size(log.config.retention_bytes)
        if total:
            logger.info("log retention deleted %d segment(s)", total)
        return total

    def remove_expired_producers(self, now_ms: int | None = None) -> int:
        """Forget, in every log, the producers idle past ``transactional.id.expiration.ms`` (2.x's periodic
        check, every ``producer.id.expiration.check.interval.ms``); how many were forgotten."""
        now = self._time_ms() if now_ms is None else now_ms
        expired = sum(len(log.producer_state.remove_expired(now)) for log in self.all_logs())
        if expired:
            logger.info("%d producer ids expired", expired)
        return expired

    def _schedule(self, delay_ms: int, task: Callable[[], object]) -> None:
        heapq.heappush(self._delayed, (self._time_ms() + delay_ms, next(self._sequence), task))

    def run_delayed_tasks(self, now_ms: int | None = None) -> int:
        """Run the delayed tasks that are due (segment deletions, flushes after a roll); returns how many ran."""
        now = self._time_ms() if now_ms is None else now_ms
        ran = 0
        while self._delayed and self._delayed[0][0] <= now:
            _, _, task = heapq.heappop(self._delayed)
            try:
                task()
            except OSError:
                raise
            except Exception:
                logger.exception("delayed log task %r failed", task)
            ran += 1
        return ran

    # -- shutdown -----------------------------------------------------------------------------------------

    def close(self, clean: bool = True) -> None:
        """Flush and close every log, write the recovery points and, if ``clean``, the clean-shutdown markers.

        Segment deletions still waiting run now. ``clean=False`` is for a start that failed half-way. A second
        close does nothing.
        """
        if self._closed:
            return
        self._closed = True
        failure = close_logs(self.all_logs())
        if failure is None:
            self.checkpoint_recovery_points()
            if clean:
                for log_dir in self.log_dirs:
                    write_clean_shutdown_marker(log_dir)
        self.run_delayed_tasks(2**62)
        self._release_locks()
        if failure is not None:
            raise failure

    def _release_locks(self) -> None:
        for fd in self._locks:
            os.close(fd)
        self._locks = []


def _lock_dir(log_dir: str) -> int:
    """Take the ``.lock`` of a log directory for this process; LogDirInUseError if another holds it."""
    fd = os.open(os.path.join(log_dir, LOCK_FILE), os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        raise LogDirInUseError(
            f"log directory {log_dir} is in use by another broker (its {LOCK_FILE} is locked)"
        ) from None
    return fd
