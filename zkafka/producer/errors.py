"""The producer's failures, one exception type per kind (the shared ones live in ``zkafka.errors``)."""

from __future__ import annotations

from zkafka.errors import KafkaError


class ProducerConnectionError(KafkaError):
    """No connection to the broker could be made within ``connect.timeout.ms``."""


class ProducerSendError(KafkaError):
    """Writing a request to the broker failed or timed out; the connection was dropped."""


class ProducerClosedError(KafkaError):
    """A send on a producer that has been closed."""


class QueueFullError(KafkaError):
    """The async queue had no room within ``queue.enqueueTimeout.ms``; ``dropped`` events were not queued."""

    def __init__(self, message: str, dropped: int = 0, enqueued: int = 0) -> None:
        super().__init__(message)
        self.dropped = dropped
        self.enqueued = enqueued


class NoBrokersForPartitionError(KafkaError):
    """No live broker can take the topic (none registered, or the chosen one stayed gone after retries)."""


class FailedToSendMessageError(KafkaError):
    """Messages still not delivered after ``message.send.max.retries`` retries (0.8); ``undelivered`` of them."""

    def __init__(self, message: str, undelivered: int = 0) -> None:
        super().__init__(message)
        self.undelivered = undelivered
