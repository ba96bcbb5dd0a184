"""Planning zkafka reads on the Spark driver: which offset ranges each batch or micro-batch reads.

Batch: one range per subscribed partition from ``startingOffsets`` to ``endingOffsets``. Streaming:
offsets are JSON maps; ``latest_offsets`` asks the brokers for their ends (capped by ``maxBytesPerTrigger``
at message boundaries on the 0.7 line, by ``maxOffsetsPerTrigger`` on the 0.8 line); ``plan_micro_batch``
turns two maps into ranges. Partitions and topics that appear later are picked up by the next
``latest_offsets`` and start at their earliest offset. Both lines plan here: ``cluster`` is a ``Cluster``
(broker-partitions, byte offsets) or a ``Cluster08`` (partitions read from their leaders, logical offsets).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import Any

from zkafka.config import LINE_08
from zkafka.spark.cluster import ClusterView
from zkafka.spark.errors import BrokerGoneError, report_data_loss
from zkafka.spark.offsets import (
    EARLIEST,
    LATEST,
    Offsets,
    cap_targets,
    cut_range,
    cut_targets,
    resolve_range,
    split_counts,
)
from zkafka.spark.options import SourceOptions
from zkafka.spark.reader import ReadTask

log = logging.getLogger(__name__)


def partitions(cluster: ClusterView, options: SourceOptions) -> list:
    """The partitions a read covers now: those assigned, or those of the subscribed topics."""
    if options.assign:
        return list(options.assign)
    return cluster.partitions(cluster.subscribed_topics(options))


def plan_batch(cluster: ClusterView, options: SourceOptions) -> list[ReadTask]:
    """The read tasks of a batch query."""
    if isinstance(options.ending, dict):
        keys: Iterable = sorted(options.ending)
    else:
        keys = partitions(cluster, options)
    wanted = [(tp, _spec(options.starting, tp, EARLIEST), _spec(options.ending, tp, LATEST)) for tp in keys]
    if not wanted:
        log.warning("no partition found for %s", options.describe())
    return plan_ranges(cluster, options, wanted)


def initial_offsets(cluster: ClusterView, options: SourceOptions) -> Offsets:
    """Where a new streaming query starts, for every partition there now."""
    offsets = {}
    if isinstance(options.starting, dict):  # given offsets count even for a broker that is away now
        offsets = {tp: offset for tp, offset in options.starting.items() if offset >= 0}
    for tp in partitions(cluster, options):
        spec = _spec(options.starting, tp, EARLIEST)
        try:
            offsets[tp] = spec if spec >= 0 else cluster.offset(tp, spec)
        except BrokerGoneError:
            continue
    return offsets


def latest_offsets(
    cluster: ClusterView,
    options: SourceOptions,
    start: Offsets | None,
    max_bytes: int | None = None,
    *,
    max_offsets: int | None = None,
) -> Offsets:
    """The end offsets of the next micro-batch: each log's end (the high watermark on 0.8), capped to
    ``max_bytes`` (0.7) or ``max_offsets`` (0.8) in all.

    Partitions of ``start`` that cannot be reached now keep their offset (a broker that comes back with the
    same id, or a new leader, carries on from there). A cap is shared in proportion to the backlogs and each
    capped end is moved back to a message boundary (at least one message per partition with data).
    """
    start = dict(start or {})
    latest: Offsets = dict(start)
    for tp in partitions(cluster, options):
        try:
            latest[tp] = cluster.latest(tp)
        except BrokerGoneError:
            continue
    budget = max_bytes or max_offsets
    if not budget:
        return latest
    backlogs = {tp: (start[tp] if tp in start else cluster.earliest(tp), end) for tp, end in latest.items()}
    targets = cap_targets(backlogs, budget)
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
    cluster: ClusterView, options: SourceOptions, start: Offsets, end: Offsets
) -> list[ReadTask]:
    """The read tasks between two offset maps; partitions new in ``end`` start at their earliest offset."""
    wanted = [
        (tp, start.get(tp, EARLIEST), stop) for tp, stop in sorted(end.items()) if start.get(tp) != stop
    ]
    return plan_ranges(cluster, options, wanted)


def plan_ranges(
    cluster: ClusterView, options: SourceOptions, wanted: list[tuple[Any, int, int]]
) -> list[ReadTask]:
    """Resolve, check for data loss, split for ``minPartitions``, and attach each range's broker address."""
    ranges, addresses = [], {}
    for tp, start, end in wanted:
        address = cluster.address(tp)
        if address is None:
            if start >= 0 and start == end:
                continue
            report_data_loss(
                f"{tp}: {cluster.unavailable(tp)}, so offsets {_show(start)} to {_show(end)} cannot be read",
                options.fail_on_data_loss,
                BrokerGoneError,
            )
            continue
        rng, problems = resolve_range(tp, start, end, cluster.earliest(tp), cluster.latest(tp))
        for problem in problems:
            report_data_loss(problem, options.fail_on_data_loss)
        if rng.size:
            ranges.append(rng)
            addresses[tp] = address
    ranges = split_ranges(cluster, ranges, options)
    tasks = [ReadTask(rng, *addresses[rng.key], cluster.bootstrap) for rng in ranges]
    if tasks:
        total = sum(t.range.size for t in tasks)
        unit = "offsets" if options.line == LINE_08 else "bytes of log"
        log.info("planned %d range(s), %d %s, for %s", len(tasks), total, unit, options.describe())
    return tasks


def split_ranges(cluster: ClusterView, ranges: list, options: SourceOptions) -> list:
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


def _spec(offsets: str | Offsets, tp: Any, default: int) -> int:
    if isinstance(offsets, dict):
        return offsets.get(tp, default)
    return EARLIEST if offsets == "earliest" else LATEST


def _show(offset: int) -> str:
    return {EARLIEST: "earliest", LATEST: "latest"}.get(offset, str(offset))
