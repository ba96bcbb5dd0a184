"""Planning zkafka reads on the Spark driver: which offset ranges each batch or micro-batch reads.

Batch: one range per subscribed broker-partition from ``startingOffsets`` to ``endingOffsets``. Streaming:
offsets are JSON maps; ``latest_offsets`` asks the brokers for their ends (capped by ``maxBytesPerTrigger``
at message boundaries); ``plan_micro_batch`` turns two maps into ranges. Broker-partitions and topics that
appear in ZooKeeper later are picked up by the next ``latest_offsets`` and start at their earliest offset.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable

from zkafka.spark.cluster import Cluster
from zkafka.spark.errors import BrokerGoneError, report_data_loss
from zkafka.spark.offsets import (
    EARLIEST,
    LATEST,
    OffsetRange,
    Offsets,
    TopicPartition,
    cap_targets,
    cut_range,
    cut_targets,
    resolve_range,
    split_counts,
)
from zkafka.spark.options import SourceOptions
from zkafka.spark.reader import ReadTask

log = logging.getLogger(__name__)


def plan_batch(cluster: Cluster, options: SourceOptions) -> list[ReadTask]:
    """The read tasks of a batch query."""
    if isinstance(options.ending, dict):
        keys: Iterable[TopicPartition] = sorted(options.ending)
    else:
        keys = cluster.partitions(cluster.subscribed_topics(options))
    wanted = [(tp, _spec(options.starting, tp, EARLIEST), _spec(options.ending, tp, LATEST)) for tp in keys]
    if not wanted:
        log.warning("no broker-partition found in ZooKeeper for %s", options.describe())
    return plan_ranges(cluster, options, wanted)


def initial_offsets(cluster: Cluster, options: SourceOptions) -> Offsets:
    """Where a new streaming query starts, for every broker-partition now registered."""
    offsets = {}
    if isinstance(options.starting, dict):  # given offsets count even for a broker that is away now
        offsets = {tp: offset for tp, offset in options.starting.items() if offset >= 0}
    for tp in cluster.partitions(cluster.subscribed_topics(options)):
        spec = _spec(options.starting, tp, EARLIEST)
        try:
            offsets[tp] = spec if spec >= 0 else cluster.offset(tp, spec)
        except BrokerGoneError:
            continue
    return offsets


def latest_offsets(
    cluster: Cluster, options: SourceOptions, start: Offsets | None, max_bytes: int | None
) -> Offsets:
    """The end offsets of the next micro-batch: each broker's log end, capped to ``max_bytes`` in all.

    Broker-partitions of ``start`` that are no longer registered keep their offset (a broker that comes
    back with the same id carries on from there). A cap is shared in proportion to the backlogs and each
    capped end is moved back to a message boundary (at least one message per partition with data).
    """
    start = dict(start or {})
    latest: Offsets = dict(start)
    for tp in cluster.partitions(cluster.subscribed_topics(options)):
        try:
            latest[tp] = cluster.latest(tp)
        except BrokerGoneError:
            continue
    if not max_bytes:
        return latest
    backlogs = {tp: (start[tp] if tp in start else cluster.earliest(tp), end) for tp, end in latest.items()}
    targets = cap_targets(backlogs, max_bytes)
    for tp, target in targets.items():
        begin, end = backlogs[tp]
        if target >= end or begin >= end:
            continue
        boundary = cluster.boundary_at_or_before(
            tp, begin, target, options.fetch_size, known=cluster.segment_starts(tp)
        )
        latest[tp] = boundary if boundary > begin else cluster.first_boundary_after(tp, begin)
    return latest


def plan_micro_batch(
    cluster: Cluster, options: SourceOptions, start: Offsets, end: Offsets
) -> list[ReadTask]:
    """The read tasks between two offset maps; partitions new in ``end`` start at their earliest offset."""
    wanted = [
        (tp, start.get(tp, EARLIEST), stop) for tp, stop in sorted(end.items()) if start.get(tp) != stop
    ]
    return plan_ranges(cluster, options, wanted)


def plan_ranges(
    cluster: Cluster, options: SourceOptions, wanted: list[tuple[TopicPartition, int, int]]
) -> list[ReadTask]:
    """Resolve, check for data loss, split for ``minPartitions``, and attach each range's broker address."""
    ranges: list[OffsetRange] = []
    for tp, start, end in wanted:
        address = cluster.address(tp.broker)
        if address is None:
            if start >= 0 and start == end:
                continue
            report_data_loss(
                f"{tp}: broker {tp.broker} is not registered in ZooKeeper, so offsets {_show(start)} to "
                f"{_show(end)} cannot be read",
                options.fail_on_data_loss,
                BrokerGoneError,
            )
            continue
        rng, problems = resolve_range(tp, start, end, cluster.earliest(tp), cluster.latest(tp))
        for problem in problems:
            report_data_loss(problem, options.fail_on_data_loss)
        if rng.size:
            ranges.append(rng)
    ranges = split_ranges(cluster, ranges, options)
    tasks = []
    for rng in ranges:
        host, port = cluster.address(rng.broker)  # type: ignore[misc]
        tasks.append(ReadTask(rng, host, port))
    if tasks:
        total = sum(t.range.size for t in tasks)
        log.info("planned %d range(s), %d bytes of log, for %s", len(tasks), total, options.describe())
    return tasks


def split_ranges(cluster: Cluster, ranges: list[OffsetRange], options: SourceOptions) -> list[OffsetRange]:
    """Cut ranges at message boundaries when there are fewer than ``minPartitions`` of them."""
    counts = split_counts([r.size for r in ranges], options.min_partitions)
    result = []
    for rng, pieces in zip(ranges, counts, strict=True):
        targets = cut_targets(rng.start, rng.end, pieces)
        if not targets:
            result.append(rng)
            continue
        known = cluster.segment_starts(rng.key)
        cuts, pos = [], rng.start
        for target in targets:
            pos = cluster.boundary_at_or_before(rng.key, pos, target, options.fetch_size, known=known)
            cuts.append(pos)
        result.extend(cut_range(rng, cuts))
    return result


def _spec(offsets: str | Offsets, tp: TopicPartition, default: int) -> int:
    if isinstance(offsets, dict):
        return offsets.get(tp, default)
    return EARLIEST if offsets == "earliest" else LATEST


def _show(offset: int) -> str:
    return {EARLIEST: "earliest", LATEST: "latest"}.get(offset, str(offset))
