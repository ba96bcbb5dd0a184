"""All partition logs of one broker, and one run each of the time-based flusher and the retention cleaner.

The broker server schedules the runs: ``flush_due`` every ``log.default.flush.scheduler.interval.ms`` and
``cleanup_logs`` every ``log.cleanup.interval.mins`` (the first ``log.cleanup.initial.delay.ms`` after start).
"""

from __future__ import annotations

import logging
import os
import random
import threading
from collections.abc import Callable

from zkafka import utils
from zkafka.config import HOUR_MS
from zkafka.config07 import BrokerConfig
from zkafka.errors import InvalidPartitionError
from zkafka.log.log07 import Log
from zkafka.log.log_manager import (
    close_logs,
    partition_dirs,
    take_clean_shutdown_marker,
    write_clean_shutdown_marker,
)
from zkafka.log.segmented_log import Offload, run_here
from zkafka.topic import log_dir_name, validate_topic

logger = logging.getLogger(__name__)

# Topic names already validated, with their partition counts (bounded: clients choose the names).
MAX_CHECKED_TOPICS = 10000


class LogManager:
    """Every partition log of one broker: loaded at start, created on first produce, flushed and cleaned.

    ``offload`` runs the logs' fsyncs (the broker passes its disk thread pool; by default they run in place).
    """

    def __init__(
        self,
        config: BrokerConfig,
        *,
        time_ms: Callable[[], int] = utils.now_ms,
        on_new_topic: Callable[[str], None] | None = None,
        offload: Offload = run_here,
        on_open_log: Callable[[Log], None] | None = None,
    ) -> None:
        self.config = config
        self._offload = offload
        self._on_open_log = on_open_log  # told every log opened or created (the broker's metrics)
        self.log_dir: str = config["log.dir"]
        self._time_ms = time_ms
        self._on_new_topic = on_new_topic
        self._logs: dict[str, dict[int, Log]] = {}
        self._checked_topics: dict[str, int] = {}
        self._create_lock = threading.Lock()
        self._closed = False
        os.makedirs(self.log_dir, exist_ok=True)
        self.need_recovery = not take_clean_shutdown_marker(self.log_dir)
        self._load_logs()

    def _load_logs(self) -> None:
        logger.info("loading logs from %s (recovery %s)", self.log_dir, "on" if self.need_recovery else "off")
        try:
            for topic, partition, _ in partition_dirs(self.log_dir, self.config["max.topic.name.length"]):
                logger.info("loading log %s", log_dir_name(topic, partition))
                self._logs.setdefault(topic, {})[partition] = self._open_log(
                    topic, partition, self.need_recovery
                )
        except BaseException:
            for log in self.all_logs():
                log.close()
            raise

    def _open_log(self, topic: str, partition: int, need_recovery: bool) -> Log:
        config = self.config
        log = Log(
            os.path.join(self.log_dir, log_dir_name(topic, partition)),
            topic,
            partition,
            max_segment_size=config["topic.log.file.size"].get(topic, config["log.file.size"]),
            roll_ms=config["topic.log.roll.hours"].get(topic, config["log.roll.hours"]) * HOUR_MS,
            flush_interval=config["log.flush.interval"],
            max_message_size=config["max.message.size"],
            need_recovery=need_recovery,
            time_ms=self._time_ms,
            offload=self._offload,
        )
        if self._on_open_log is not None:
            self._on_open_log(log)
        return log

    # -- lookup ---------------------------------------------------------------------------------------------

    def partition_count(self, topic: str) -> int:
        """Partitions of the topic on this broker (``topic.partition.count.map`` else ``num.partitions``)."""
        return self.config.partitions_for(topic)

    def _check(self, topic: str, partition: int) -> None:
        count = self._checked_topics.get(topic)
        if count is None:
            validate_topic(topic, self.config["max.topic.name.length"])
            count = self.partition_count(topic)
            if len(self._checked_topics) < MAX_CHECKED_TOPICS:
                self._checked_topics[topic] = count
        if not 0 <= partition < count:
            raise InvalidPartitionError(
                f"partition {partition} of topic {topic!r} is not in [0, {count}) on this broker"
            )

    def get_log(self, topic: str, partition: int) -> Log | None:
        """The partition's log, or None if this broker has none yet; raises for a bad topic or partition."""
        self._check(topic, partition)
        return self._logs.get(topic, {}).get(partition)

    def get_or_create_log(self, topic: str, partition: int) -> Log:
        """The partition's log, created (directory and first segment) if this broker has none yet.

        The first log of a topic on this broker calls ``on_new_topic(topic)`` (synchronously, so it must
        not block: the broker queues the ZooKeeper registration).
        """
        self._check(topic, partition)
        log = self._logs.get(topic, {}).get(partition)
        if log is not None:
            return log
        with self._create_lock:
            partitions = self._logs.get(topic, {})
            log = partitions.get(partition)
            if log is not None:
                return log
            os.makedirs(os.path.join(self.log_dir, log_dir_name(topic, partition)), exist_ok=True)
            log = self._open_log(topic, partition, need_recovery=False)
            self._logs[topic] = {**partitions, partition: log}
            logger.info("created log %s", log.name)
        if not partitions and self._on_new_topic is not None:
            self._on_new_topic(topic)
        return log

    def choose_partition(self, topic: str) -> int:
        """A uniformly random partition of the topic, for a produce request to partition -1."""
        count = self._checked_topics.get(topic)
        return random.randrange(count if count is not None else self.partition_count(topic))

    def topics(self) -> set[str]:
        """Topics with at least one log on this broker."""
        return set(self._logs)

    def all_logs(self) -> list[Log]:
        return [log for partitions in list(self._logs.values()) for log in partitions.values()]

    # -- flusher and cleaner --------------------------------------------------------------------------------

    def flush_due(self, now_ms: int | None = None) -> int:
        """Flush each log whose last flush is at least its flush interval old; returns the logs flushed.

        The interval is ``topic.flush.intervals.ms`` for the topic, else ``log.default.flush.interval.ms``.
        OSError propagates: the broker halts on it.
        """
        now = self._time_ms() if now_ms is None else now_ms
        intervals = self.config["topic.flush.intervals.ms"]
        default = self.config["log.default.flush.interval.ms"]
        flushed = 0
        for log in self.all_logs():
            if now - log.last_flush_ms >= intervals.get(log.topic, default) and log.flush():
                flushed += 1
        return flushed

    def cleanup_logs(self, now_ms: int | None = None) -> int:
        """Delete segments past the retention age, then past the retention size; returns the segments deleted."""
        now = self._time_ms() if now_ms is None else now_ms
        config = self.config
        total = 0
        for log in self.all_logs():
            hours = config["topic.log.retention.hours"].get(log.topic, config["log.retention.hours"])
            total += log.delete_expired_segments(now, hours * HOUR_MS)
            total += log.delete_segments_over_size(
                config["topic.log.retention.size"].get(log.topic, config["log.retention.size"])
            )
        if total:
            logger.info("log cleanup deleted %d segment(s)", total)
        return total

    # -- shutdown -------------------------------------------------------------------------------------------

    def close(self, clean: bool = True) -> None:
        """Flush and close every log, then, if ``clean`` and every close succeeded, write the marker.

        ``clean=False`` is for a start that failed half-way: the next start recovers as after a crash. A second
        close does nothing.
        """
        if self._closed:
            return
        self._closed = True
        failure = close_logs(self.all_logs())
        if failure is not None:
            raise failure
        if clean:
            write_clean_shutdown_marker(self.log_dir)
