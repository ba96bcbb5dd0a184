"""What reading an offset range on a Spark executor is on either line (``reader07``, ``reader08``): the task,
and where to go on when the broker says an offset is out of range."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from zkafka.spark.errors import report_data_loss


@dataclass(frozen=True)
class ReadTask:
    """One Spark input partition: an offset range and the broker that holds it (0.7) or led it when the read
    was planned (0.8: ``bootstrap`` lists the brokers to ask for its leader should that change)."""

    range: Any  # OffsetRange or OffsetRange08
    host: str
    port: int
    bootstrap: tuple[tuple[str, int], ...] = ()

    def __str__(self) -> str:
        return f"{self.range} on {self.host}:{self.port}"


def after_out_of_range(rng: Any, pos: int, earliest: int, latest: int, fail: bool) -> int:
    """Where to go on after the broker said ``pos`` is out of range (``rng.end`` to stop), given the log's
    earliest and latest offsets now; the loss is reported (raised with ``fail``)."""
    if pos < earliest:
        report_data_loss(
            f"{rng.key}: offsets {pos} to {min(earliest, rng.end)} were deleted by retention while being read "
            f"(the log now starts at {earliest})",
            fail,
        )
        return min(earliest, rng.end)
    report_data_loss(
        f"{rng.key}: the log ends at offset {latest}, before offset {pos} it was read up to", fail
    )
    return rng.end
