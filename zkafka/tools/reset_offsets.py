"""``consumer-groups --reset-offsets``: which partitions, their new offsets, as kafka-consumer-groups.sh plans
them (Kafka 3.4's ``resetOffsets``). Pure: the committed offsets and log offsets come in, the plan goes out.

Scenarios: ``--to-earliest``/``--to-latest`` (the log start or end), ``--to-current`` (the committed offset;
the log end without one), ``--to-offset N`` and ``--shift-by N`` (the committed offset + N; no committed
offset is an error), ``--to-datetime``/``--by-duration`` (the first offset at or after a time). A new offset
outside the log is taken to its nearest end, with a warning, as Kafka does.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import NamedTuple

TopicPartition = tuple[str, int]
_DURATION = re.compile(
    r"^(?P<sign>[-+]?)P(?:(?P<d>[-+]?\d+)D)?(?:T(?:(?P<h>[-+]?\d+)H)?(?:(?P<m>[-+]?\d+)M)?(?:(?P<s>[-+]?\d+(?:\.\d{1,9})?)S)?)?$",
    re.IGNORECASE,
)


class ResetError(ValueError):
    """A reset that cannot be planned (one line: which option or partition, and why)."""


class Scenario(NamedTuple):
    """One of the --to-*/--shift-by/--by-duration options and its value."""

    kind: str  # earliest, latest, current, offset, shift, datetime, duration
    value: int = 0  # the offset, the shift, or the time in ms


class LogRange(NamedTuple):
    start: int
    end: int


def parse_topic_partitions(value: str) -> tuple[str, list[int] | None]:
    """``T`` (every partition: None) or ``T:p,p``."""
    topic, sep, partitions = value.partition(":")
    if not topic or (sep and not partitions):
        raise ResetError(f"--topic {value!r}: expected TOPIC or TOPIC:PARTITION[,PARTITION...]")
    if not sep:
        return topic, None
    try:
        return topic, sorted({int(p) for p in partitions.split(",")})
    except ValueError:
        raise ResetError(f"--topic {value!r}: partitions must be numbers") from None


def parse_datetime(text: str) -> int:
    """Milliseconds since the epoch of ``YYYY-MM-DDTHH:mm:SS.sss`` (with an optional zone, ``Z`` or ``+hh:mm``;
    without one the local zone, as Kafka's tool)."""
    try:
        moment = datetime.fromisoformat(text.strip().replace("z", "Z").replace("Z", "+00:00"))
    except ValueError:
        raise ResetError(f"--to-datetime {text!r}: expected YYYY-MM-DDTHH:mm:SS.sss (optionally with a zone)") from None
    return int(moment.timestamp() * 1000)


def parse_duration(text: str) -> int:
    """Milliseconds of an ISO-8601 duration ``PnDTnHnMnS`` (Java's ``Duration.parse``)."""
    match = _DURATION.match(text.strip())
    if not match or not any(match.group(k) for k in "dhms"):
        raise ResetError(f"--by-duration {text!r}: expected an ISO-8601 duration such as PT1H30M or P1DT2H")
    parts = {k: float(match.group(k) or 0) for k in "dhms"}
    seconds = parts["d"] * 86400 + parts["h"] * 3600 + parts["m"] * 60 + parts["s"]
    return int(round(-seconds * 1000 if match.group("sign") == "-" else seconds * 1000))


def plan(
    scenario: Scenario,
    partitions: list[TopicPartition],
    committed: dict[TopicPartition, int],
    logs: dict[TopicPartition, LogRange],
    by_time: dict[TopicPartition, int] | None = None,
) -> tuple[dict[TopicPartition, int], list[str]]:
    """The new offset of each partition (those without a leader left out) and the warnings to print."""
    offsets: dict[TopicPartition, int] = {}
    warnings: list[str] = []
    for tp in sorted(partitions):
        log = logs.get(tp)
        if log is None:
            warnings.append(f"Warn: Partition {tp[0]}-{tp[1]} has no leader; it is not reset.")
            continue
        wanted = _wanted(scenario, tp, committed, log, by_time or {})
        offsets[tp] = _in_range(wanted, tp, log, warnings)
    return offsets, warnings


def _wanted(
    scenario: Scenario,
    tp: TopicPartition,
    committed: dict[TopicPartition, int],
    log: LogRange,
    by_time: dict[TopicPartition, int],
) -> int:
    kind = scenario.kind
    if kind == "earliest":
        return log.start
    if kind == "latest":
        return log.end
    if kind == "current":
        return committed.get(tp, log.end)
    if kind == "offset":
        return scenario.value
    if kind == "shift":
        if tp not in committed:
            raise ResetError(
                f"Cannot shift offset for partition {tp[0]}-{tp[1]} since there is no current committed offset"
            )
        return committed[tp] + scenario.value
    return by_time.get(tp, log.end)  # datetime, duration: the log end where nothing is that late


def _in_range(offset: int, tp: TopicPartition, log: LogRange, warnings: list[str]) -> int:
    name = f"{tp[0]}-{tp[1]}"
    if offset > log.end:
        warnings.append(f"New offset ({offset}) is higher than latest offset for topic partition {name}. "
                        f"Value will be set to {log.end}")  # fmt: skip
        return log.end
    if offset < log.start:
        warnings.append(f"New offset ({offset}) is lower than earliest offset for topic partition {name}. "
                        f"Value will be set to {log.start}")  # fmt: skip
        return log.start
    return offset


PLAN_ROW = "%-30s %-30s %-10s %-15s"


def format_plan(group: str, offsets: dict[TopicPartition, int]) -> list[str]:
    """Kafka's plan table: GROUP TOPIC PARTITION NEW-OFFSET."""
    lines = ["", PLAN_ROW % ("GROUP", "TOPIC", "PARTITION", "NEW-OFFSET")]
    lines += [PLAN_ROW % (group, t, p, offset) for (t, p), offset in sorted(offsets.items())]
    return lines


def export_csv(offsets: dict[TopicPartition, int]) -> list[str]:
    """``--export``: one ``topic,partition,offset`` line per partition (Kafka's CSV for one group)."""
    return [f"{t},{p},{offset}" for (t, p), offset in sorted(offsets.items())]
