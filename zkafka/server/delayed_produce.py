"""DelayedProduce: a produce with acks -1 (or more than 1) waiting in the purgatory for its replicas (§9.3).

Each partition appended without error needs its messages (up to ``required_offset`` = the last offset + 1) on
the replicas: with acks -1, the leader's high watermark reaching it (then NOT_ENOUGH_REPLICAS_AFTER_APPEND if
the ISR fell below ``min.insync.replicas`` meanwhile); with acks N > 1, N replicas of the ISR (leader
included) holding it. A partition whose leader moved away answers NOT_LEADER_FOR_PARTITION. The produce is
watched under its partitions, re-checked when a high watermark moves or a follower's log end offset does,
and answered when every partition is done, or at ``timeout_ms`` with REQUEST_TIMED_OUT for those still
waiting.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from zkafka.protocol.errors import ErrorCode, error_name
from zkafka.server.purgatory import DelayedOperation

log = logging.getLogger(__name__)


@dataclass
class ProduceStatus:
    """One partition of a delayed produce: the answer so far and the offset it waits for."""

    topic: str
    partition: int
    error: int
    base_offset: int
    required_offset: int
    pending: bool
    log_start_offset: int = -1  # the log's start after the append (Produce v5+ answers it)
    log_append_time: int = -1  # the append time a LogAppendTime log stamped (Produce v2+ answers it)


class DelayedProduce(DelayedOperation):
    """A parked produce; ``respond(statuses)`` builds the answer once it completes."""

    def __init__(
        self,
        timeout_ms: int,
        acks: int,
        statuses: list[ProduceStatus],
        check: Callable[[str, int, int, int], tuple[bool, int]],
        respond: Callable[[list[ProduceStatus]], Any],
    ) -> None:
        super().__init__(timeout_ms)
        self.acks = acks
        self.statuses = statuses
        self.check = check
        self.respond = respond

    def watch_keys(self) -> list[tuple[str, int]]:
        return list(dict.fromkeys((s.topic, s.partition) for s in self.statuses if s.pending))

    def try_complete(self) -> bool:
        for status in self.statuses:
            if status.pending:
                done, error = self.check(status.topic, status.partition, status.required_offset, self.acks)
                if done:
                    status.pending = False
                    status.error = error
        if any(status.pending for status in self.statuses):
            return False
        return self.force_complete()

    def on_complete(self) -> Any:
        for status in self.statuses:
            if status.pending:
                status.pending = False
                status.error = ErrorCode.REQUEST_TIMED_OUT
        return self.respond(self.statuses)


# Refusals 0.8.2's KafkaApis logs at WARN (the client looks the leader up again or waits); any other is an ERROR.
_RETRIABLE_REFUSALS = frozenset(
    {
        ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
        ErrorCode.NOT_LEADER_FOR_PARTITION,
        ErrorCode.INVALID_TOPIC_EXCEPTION,
        ErrorCode.NOT_ENOUGH_REPLICAS,
        ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND,
        ErrorCode.REQUEST_TIMED_OUT,
    }
)


def log_refused(statuses: list[ProduceStatus], correlation_id: int, client_id: str | None) -> None:
    """Log the partitions of a produce request that were refused, as 0.8.2's KafkaApis does."""
    for status in statuses:
        if status.error:
            log.log(
                logging.WARNING if status.error in _RETRIABLE_REFUSALS else logging.ERROR,
                "Produce request with correlation id %d from client %s on partition [%s,%d] failed due to %s",
                correlation_id,
                client_id,
                status.topic,
                status.partition,
                error_name(status.error),
            )
