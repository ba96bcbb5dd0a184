"""DeleteRecords v0-v2 (Kafka 0.11's KIP-107): the leader of each partition moves its log start offset forward.

Records below the new start are no longer served (a fetch there is OFFSET_OUT_OF_RANGE, ListOffsets' earliest
answers it), the segments wholly below it are deleted, and the start is kept in each log directory's
``log-start-offset-checkpoint``. An offset of -1 means the high watermark; one past the high watermark is
OFFSET_OUT_OF_RANGE; a partition led elsewhere NOT_LEADER_FOR_PARTITION. The answer (``low_watermark``: the
leader's new log start) comes once the leader applied it: unlike Kafka's DelayedDeleteRecords it does not wait
for the followers, which keep their older records until their own retention (a follower that falls below the
leader's start starts again there, as on any out-of-range fetch).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from zkafka.errors import KafkaError, OffsetOutOfRangeError
from zkafka.protocol import v08
from zkafka.protocol.api_keys import DELETE_RECORDS
from zkafka.protocol.delete_records import DELETE_RECORDS_APIS, HIGH_WATERMARK
from zkafka.protocol.errors import ErrorCode
from zkafka.protocol.versioned import make
from zkafka.security.acl import Operation
from zkafka.security.auth_helper import ALLOW_ALL, TOPIC, AuthHelper
from zkafka.server.replica_manager import ReplicaManager, error_code

log = logging.getLogger(__name__)


class DeleteRecordsApis:
    """DeleteRecords, answered by each partition's leader."""

    def __init__(
        self, replica_manager: ReplicaManager, checkpoint: Callable[[], None], auth: AuthHelper = ALLOW_ALL
    ) -> None:
        self.replica_manager = replica_manager
        self.checkpoint = checkpoint  # writes the log directories' log-start-offset-checkpoint
        self.auth = auth

    def handlers(self) -> dict[tuple[int, int], Callable[[v08.Request], Any]]:
        return {(DELETE_RECORDS, v): self.handle_delete_records for v in range(len(DELETE_RECORDS_APIS))}

    def handle_delete_records(self, request: v08.Request) -> Any:
        """Delete on each topic (else TOPIC_AUTHORIZATION_FAILED), then each partition's records."""
        deletable = self.auth.filter_authorized(Operation.DELETE, TOPIC, (t.name for t in request.body.topics))
        denied = {"low_watermark": -1, "error": ErrorCode.TOPIC_AUTHORIZATION_FAILED}
        topics = [
            {
                "name": t.name,
                "partitions": [
                    self._delete(t.name, p.partition, p.offset) if t.name in deletable else {"partition": p.partition, **denied}
                    for p in t.partitions
                ],
            }
            for t in request.body.topics
        ]
        self.checkpoint()
        response = make(DELETE_RECORDS_APIS[request.api_version][1], throttle_time_ms=0, topics=topics)
        return v08.encode_response(request.correlation_id, response)

    def _delete(self, topic: str, partition: int, offset: int) -> dict[str, int]:
        try:
            partition_log = self.replica_manager.leader_log(topic, partition)
            high_watermark = self.replica_manager.high_watermark(partition_log)
            if offset == HIGH_WATERMARK:
                offset = high_watermark
            if offset < 0 or offset > high_watermark:
                raise OffsetOutOfRangeError(
                    f"{topic}-{partition}: cannot delete below {offset}, the high watermark is {high_watermark}"
                )
            low_watermark = partition_log.delete_records_before(offset)
            log.info(
                "%s-%d: records below %d deleted (log start %d)", topic, partition, offset, low_watermark
            )
            return {"partition": partition, "low_watermark": low_watermark, "error": 0}
        except KafkaError as exc:
            return {"partition": partition, "low_watermark": -1, "error": error_code(exc)}
