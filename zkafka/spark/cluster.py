"""``ClusterView``: what the Spark planner asks of a cluster of either line (``cluster07.Cluster``,
``cluster08.Cluster08``)."""

from __future__ import annotations

from zkafka.protocol import EARLIEST_TIME, LATEST_TIME
from zkafka.spark.options import SourceOptions


class ClusterView:
    """What the planner asks of a cluster, whichever the line: topics, partitions, where to read them, their
    offsets and message boundaries. A context manager: ``close`` ends its connections."""

    # Brokers a read task may ask for its partition's leader (0.8); 0.7 tasks read their broker only.
    bootstrap: tuple[tuple[str, int], ...] = ()

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        raise NotImplementedError

    def topics(self) -> list[str]:
        raise NotImplementedError

    def subscribed_topics(self, options: SourceOptions) -> list[str]:
        if options.subscribe_pattern is None:
            return list(options.subscribe)
        return [t for t in self.topics() if options.subscribes_to(t)]

    def offset(self, tp, time: int) -> int:
        """The earliest (-2) or latest (-1) offset of a partition."""
        raise NotImplementedError

    def earliest(self, tp) -> int:
        return self.offset(tp, EARLIEST_TIME)

    def latest(self, tp) -> int:
        return self.offset(tp, LATEST_TIME)
