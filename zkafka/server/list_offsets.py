"""The ListOffsets handler of the 0.8 line's broker, v0-v5: Kafka's ``KafkaApis.handleListOffsetRequest``.

v0 (0.8.2's Offsets) answers up to ``max_num_offsets`` segment starts before a time, newest first. v1+
(KIP-79) answer one ``(timestamp, offset)``: -1 (latest) the high watermark for a consumer (the log end for a
follower), -2 (earliest) the log start, both with timestamp -1; another time the first offset whose
timestamp is at or after it, which ``offset_for_timestamp`` finds in the log's time index (message format v0
has no timestamps: UNSUPPORTED_FOR_MESSAGE_FORMAT; no such record: timestamp and offset -1). A partition named twice in a v1+ request answers
INVALID_REQUEST. v4+ check the request's ``current_leader_epoch`` as Fetch does and answer the leader epoch
of a latest offset (-1 otherwise: a message format v0 log records no epochs).
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Callable
from typing import Any, NamedTuple

from zkafka.errors import KafkaError, UnknownTopicOrPartitionError
from zkafka.protocol import EARLIEST_TIME, LATEST_TIME, v08
from zkafka.protocol.api_keys import LIST_OFFSETS
from zkafka.protocol.errors import ErrorCode
from zkafka.protocol.fetch import CONSUMER_REPLICA_ID, DEBUGGING_REPLICA_ID
from zkafka.protocol.offsets import LIST_OFFSETS_RESPONSE, NO_TIMESTAMP, response_partition_class
from zkafka.protocol.versioned import make
from zkafka.security.acl import Operation
from zkafka.security.auth_helper import ALLOW_ALL, TOPIC, AuthHelper
from zkafka.server.log_read import NO_EPOCH, check_leader_epoch
from zkafka.server.replica_manager import ReplicaManager, error_code

log = logging.getLogger(__name__)


class TimestampAndOffset(NamedTuple):
    """A ListOffsets v1+ answer: the offset found, the timestamp it has (-1 for latest and earliest) and the
    leader epoch it was written in (-1 unknown)."""

    timestamp: int
    offset: int
    leader_epoch: int = NO_EPOCH


def offset_for_timestamp(partition_log: Any, timestamp: int) -> TimestampAndOffset | None:
    """The first record of ``partition_log`` stamped at or after ``timestamp`` (None when there is none):
    Kafka's ``Log.fetchOffsetByTimestamp`` for a real time, from the log's time index (KIP-33); a message
    format v0 log has no timestamps (UNSUPPORTED_FOR_MESSAGE_FORMAT, as Kafka answers for a pre-0.10 format).
    The leader epoch is unknown (-1): the log keeps no epoch cache."""
    found = partition_log.fetch_offset_by_timestamp(timestamp)
    return None if found is None else TimestampAndOffset(*found)


class ListOffsetsApis:
    """Answers ListOffsets ``versions`` from the partitions hosted here."""

    def __init__(self, replica_manager: ReplicaManager, versions: range, auth: AuthHelper = ALLOW_ALL) -> None:
        self.replica_manager = replica_manager
        self.versions = versions
        self.auth = auth

    def handlers(self) -> dict[tuple[int, int], Callable[[v08.Request], Any]]:
        return {(LIST_OFFSETS, version): self.handle_list_offsets for version in self.versions}

    def handle_list_offsets(self, request: v08.Request) -> list:
        body = request.body
        version = request.api_version
        named = Counter((data.topic, p.partition) for data in body.topics for p in data.partitions)
        described = self.auth.filter_authorized(Operation.DESCRIBE, TOPIC, (data.topic for data in body.topics))
        topics = []
        for data in body.topics:
            partitions = []
            for p in data.partitions:
                if data.topic not in described:
                    values = _failed(p.partition, ErrorCode.TOPIC_AUTHORIZATION_FAILED)
                elif version == 0:
                    values = self._offsets_before(body.replica_id, data.topic, p)
                elif named[(data.topic, p.partition)] > 1:
                    values = _failed(p.partition, ErrorCode.INVALID_REQUEST)
                else:
                    values = self._offset(body.replica_id, data.topic, p)
                partitions.append(make(response_partition_class(version), **values))
            topics.append({"topic": data.topic, "partitions": partitions})
        answer = make(LIST_OFFSETS_RESPONSE[version], throttle_time_ms=0, topics=topics)
        return v08.encode_response(request.correlation_id, answer)

    def _log(self, replica_id: int, topic: str, partition: int) -> Any:
        """The partition's log: led here, or for the debugging replica id hosted here at all."""
        if replica_id != DEBUGGING_REPLICA_ID:
            return self.replica_manager.leader_log(topic, partition)
        partition_log = self.replica_manager.local_log(topic, partition)
        if partition_log is None:
            raise UnknownTopicOrPartitionError(f"{topic}-{partition} is not hosted here")
        return partition_log

    def _offsets_before(self, replica_id: int, topic: str, p: Any) -> dict[str, Any]:
        """v0: up to ``max_num_offsets`` segment starts before the time, newest first."""
        try:
            partition_log = self._log(replica_id, topic, p.partition)
            offsets = partition_log.offsets_before(p.time, p.max_num_offsets)
            if replica_id == CONSUMER_REPLICA_ID:
                # An ordinary consumer's "latest" is the high watermark; newer offsets are not offered.
                high_watermark = self.replica_manager.high_watermark(partition_log)
                if any(offset > high_watermark for offset in offsets):
                    offsets = [high_watermark, *(o for o in offsets if o <= high_watermark)]
            return {"partition": p.partition, "error": 0, "offsets": offsets}
        except Exception as exc:  # noqa: BLE001 - every failure is this partition's answer
            return {"partition": p.partition, "error": _code(topic, p.partition, exc), "offsets": []}

    def _offset(self, replica_id: int, topic: str, p: Any) -> dict[str, Any]:
        """v1+: one offset and its timestamp (and leader epoch)."""
        try:
            check_leader_epoch(
                self.replica_manager, topic, p.partition, getattr(p, "current_leader_epoch", -1)
            )
            partition_log = self._log(replica_id, topic, p.partition)
            found = self._find(replica_id, partition_log, p.time)
            if found is None:
                found = TimestampAndOffset(NO_TIMESTAMP, -1)
            return {
                "partition": p.partition,
                "error": 0,
                "timestamp": found.timestamp,
                "offset": found.offset,
                "leader_epoch": found.leader_epoch,
            }
        except Exception as exc:  # noqa: BLE001 - every failure is this partition's answer
            return _failed(p.partition, _code(topic, p.partition, exc))

    def _find(self, replica_id: int, partition_log: Any, time_ms: int) -> TimestampAndOffset | None:
        if time_ms == LATEST_TIME:
            hosted = self.replica_manager.partition(partition_log.topic, partition_log.partition)
            epoch = hosted.leader_epoch if hosted is not None else NO_EPOCH
            if replica_id >= 0:
                return TimestampAndOffset(NO_TIMESTAMP, partition_log.log_end_offset, epoch)
            return TimestampAndOffset(NO_TIMESTAMP, self.replica_manager.high_watermark(partition_log), epoch)
        if time_ms == EARLIEST_TIME:
            return TimestampAndOffset(NO_TIMESTAMP, partition_log.log_start)
        return offset_for_timestamp(partition_log, time_ms)


def _failed(partition: int, error: int) -> dict[str, Any]:
    return {
        "partition": partition,
        "error": error,
        "timestamp": NO_TIMESTAMP,
        "offset": -1,
        "leader_epoch": -1,
        "offsets": [],
    }


def _code(topic: str, partition: int, exc: Exception) -> int:
    if isinstance(exc, KafkaError):
        log.debug("offsets of %s-%d: %s", topic, partition, exc)
        return error_code(exc)
    log.exception("offsets of %s-%d failed", topic, partition, exc_info=exc)
    return ErrorCode.UNKNOWN
