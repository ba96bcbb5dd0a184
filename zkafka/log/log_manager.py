"""What both lines' log managers do with a log directory: the clean-shutdown marker, closing every log,
finding the partition directories."""

from __future__ import annotations

import logging
import os
from collections.abc import Collection, Iterable, Iterator

from zkafka.errors import InvalidTopicError
from zkafka.log.segmented_log import SegmentedLog
from zkafka.topic import parse_log_dir_name, validate_topic

logger = logging.getLogger(__name__)

CLEAN_SHUTDOWN_FILE = ".kafka_cleanshutdown"


def take_clean_shutdown_marker(log_dir: str) -> bool:
    """Whether the last stop was clean (``.kafka_cleanshutdown`` exists); the marker is deleted."""
    marker = os.path.join(log_dir, CLEAN_SHUTDOWN_FILE)
    if not os.path.exists(marker):
        return False
    os.unlink(marker)
    return True


def close_logs(logs: Iterable[SegmentedLog]) -> OSError | None:
    """Flush and close every log, going on after a failure; returns the first OSError (None: all closed)."""
    failure = None
    for log in logs:
        try:
            log.close()
        except OSError as exc:
            logger.error("closing log %s failed: %s", log.name, exc)
            failure = failure or exc
    return failure


def write_clean_shutdown_marker(log_dir: str) -> None:
    with open(os.path.join(log_dir, CLEAN_SHUTDOWN_FILE), "w"):
        pass


def partition_dirs(
    log_dir: str, max_topic_length: int, own_files: Collection[str] = ()
) -> Iterator[tuple[str, int, str]]:
    """``(topic, partition, path)`` of every partition directory in a log directory, by name.

    The log directory's own files (``own_files``: its lock, marker, checkpoints) are skipped silently;
    anything else (other files, names that are not ``<topic>-<partition>``, invalid topics) with a warning.
    """
    for name in sorted(os.listdir(log_dir)):
        path = os.path.join(log_dir, name)
        if not os.path.isdir(path):
            if name not in own_files:
                logger.warning("skipping %s in %s: it is not a partition directory", path, log_dir)
            continue
        try:
            topic, partition = parse_log_dir_name(name)
            validate_topic(topic, max_topic_length)
        except (ValueError, InvalidTopicError) as exc:
            logger.warning("skipping directory %s in %s: %s", path, log_dir, exc)
            continue
        yield topic, partition, path
