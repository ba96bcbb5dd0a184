"""What the producer and consumer perf tools share: Kafka's time format and the throughput figures."""

from __future__ import annotations

from datetime import datetime

MB = 1024 * 1024


def format_time(millis: int) -> str:
    """Kafka's default ``yyyy-MM-dd HH:mm:ss:SSS``."""
    stamp = datetime.fromtimestamp(millis / 1000.0)
    return stamp.strftime("%Y-%m-%d %H:%M:%S:") + f"{millis % 1000:03d}"


class Throughput:
    """Totals and rates of a perf run; subclasses are dataclasses with these four fields."""

    total_bytes: int
    total_messages: int
    elapsed_s: float

    @property
    def total_mb(self) -> float:
        return self.total_bytes / MB

    @property
    def mb_per_sec(self) -> float:
        return self.total_mb / self.elapsed_s if self.elapsed_s > 0 else 0.0

    @property
    def messages_per_sec(self) -> float:
        return self.total_messages / self.elapsed_s if self.elapsed_s > 0 else 0.0
