"""ReplicaApis: the 0.8 broker's handlers for the controller's requests and for ControlledShutdown (§5).

LeaderAndIsr and StopReplica go to the replica manager, UpdateMetadata to the broker's metadata cache (all
three refused with STALE_CONTROLLER_EPOCH (11), changing nothing, unless they come from the controller
ZooKeeper names: controller_fence.py); ControlledShutdown goes
to this broker's controller, which answers with the partitions the broker still leads (an error when this
broker is not the controller, or the broker is not live). OffsetForLeaderEpoch v0-v4 (KIP-101) answers where
a leader epoch ends on the partitions led here (leader_epoch_cache.py), UNDEFINED (-1) when it is unknown.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from zkafka.errors import InvalidRequestError, KafkaError
from zkafka.protocol import inter_broker as admin
from zkafka.protocol import v08
from zkafka.protocol.api_keys import (
    CONTROLLED_SHUTDOWN,
    LEADER_AND_ISR,
    OFFSET_FOR_LEADER_EPOCH,
    STOP_REPLICA,
    UPDATE_METADATA,
)
from zkafka.protocol.errors import ErrorCode
from zkafka.protocol.versioned import make
from zkafka.security.acl import Operation
from zkafka.security.auth_helper import ALLOW_ALL, CLUSTER, TOPIC, AuthHelper
from zkafka.server.controller_fence import ControllerFence
from zkafka.server.log_read import check_leader_epoch
from zkafka.server.metadata_cache import MetadataCache
from zkafka.server.replica_manager import ReplicaManager, error_code

log = logging.getLogger(__name__)


class ReplicaApis:
    """Inter-broker request handlers, added to KafkaApis' table through ``handlers()``."""

    def __init__(
        self,
        replica_manager: ReplicaManager,
        metadata_cache: MetadataCache,
        fence: ControllerFence,
        controller: Callable[[], Any] = lambda: None,
        auth: AuthHelper = ALLOW_ALL,
    ) -> None:
        self.replica_manager = replica_manager
        self.metadata_cache = metadata_cache
        self.fence = fence
        self.controller = controller
        self.auth = auth

    def handlers(self) -> dict[tuple[int, int], Callable[[v08.Request], Any]]:
        return {
            (LEADER_AND_ISR, 0): self.handle_leader_and_isr,
            (STOP_REPLICA, 0): self.handle_stop_replica,
            (UPDATE_METADATA, 0): self.handle_update_metadata,
            (UPDATE_METADATA, 1): self.handle_update_metadata,
            (UPDATE_METADATA, 2): self.handle_update_metadata,
            (UPDATE_METADATA, 3): self.handle_update_metadata,
            (CONTROLLED_SHUTDOWN, 0): self.handle_controlled_shutdown,
            (CONTROLLED_SHUTDOWN, 1): self.handle_controlled_shutdown,
            **{(OFFSET_FOR_LEADER_EPOCH, v): self.handle_offset_for_leader_epoch for v in range(5)},
        }

    def _refusal(self, request: v08.Request) -> int:
        """Why a controller's request is refused: CLUSTER_AUTHORIZATION_FAILED without ClusterAction on the
        cluster, STALE_CONTROLLER_EPOCH when the fence does not admit its controller (logged); else 0."""
        if not self.auth.authorize_cluster(Operation.CLUSTER_ACTION):
            return ErrorCode.CLUSTER_AUTHORIZATION_FAILED
        body = request.body
        if self.fence.admits(body.controller_id, body.controller_epoch):
            return ErrorCode.NONE
        log.warning(
            "%s from %s refused: controller %d with epoch %d, but ZooKeeper names controller %d with epoch %d",
            request.name,
            request.client_id,
            body.controller_id,
            body.controller_epoch,
            self.fence.controller_id,
            self.fence.epoch,
        )
        return ErrorCode.STALE_CONTROLLER_EPOCH

    def handle_leader_and_isr(self, request: v08.Request) -> list:
        refusal = self._refusal(request)
        if refusal:
            return v08.encode_response(request.correlation_id, admin.LeaderAndIsrResponseV0(refusal, []))
        error, results = self.replica_manager.become_leader_or_follower(request.body)
        partitions = [admin.TopicPartitionError(topic, partition, code) for topic, partition, code in results]
        return v08.encode_response(request.correlation_id, admin.LeaderAndIsrResponseV0(error, partitions))

    def handle_stop_replica(self, request: v08.Request) -> list:
        if request.body.delete_partitions not in (0, 1):
            raise InvalidRequestError(
                f"StopReplica delete_partitions {request.body.delete_partitions} is not 0 or 1"
            )
        refusal = self._refusal(request)
        if refusal:
            return v08.encode_response(request.correlation_id, admin.StopReplicaResponseV0(refusal, []))
        error, results = self.replica_manager.stop_replicas(request.body)
        partitions = [admin.TopicPartitionError(topic, partition, code) for topic, partition, code in results]
        return v08.encode_response(request.correlation_id, admin.StopReplicaResponseV0(error, partitions))

    def handle_update_metadata(self, request: v08.Request) -> list:
        body = request.body
        response = v08.SCHEMAS[(request.api_key, request.api_version)][1]
        refusal = self._refusal(request)
        if refusal:
            return v08.encode_response(request.correlation_id, response(refusal))
        self.replica_manager.controller_epoch = body.controller_epoch
        self.metadata_cache.update(body)
        return v08.encode_response(request.correlation_id, response(ErrorCode.NONE))

    def handle_controlled_shutdown(self, request: v08.Request) -> list:
        response = (
            admin.ControlledShutdownResponseV1
            if request.api_version >= 1
            else admin.ControlledShutdownResponseV0
        )
        controller = self.controller()
        if not self.auth.authorize_cluster(Operation.CLUSTER_ACTION):
            return v08.encode_response(request.correlation_id, response(ErrorCode.CLUSTER_AUTHORIZATION_FAILED, []))
        try:
            if controller is None:
                raise KafkaError("this broker runs no controller")
            remaining = controller.shutdown_broker(request.body.broker_id)
            body = response(ErrorCode.NONE, [admin.TopicPartition(t, p) for t, p in remaining])
        except KafkaError as exc:
            log.info("controlled shutdown of broker %d: %s", request.body.broker_id, exc)
            body = response(error_code(exc), [])
        except Exception as exc:
            log.warning("controlled shutdown of broker %d failed: %r", request.body.broker_id, exc)
            body = response(ErrorCode.UNKNOWN, [])
        return v08.encode_response(request.correlation_id, body)

    def handle_offset_for_leader_epoch(self, request: v08.Request) -> list:
        """ClusterAction (a follower's) or Describe on each topic asked (KIP-320's consumers)."""
        names = [t.topic for t in request.body.topics]
        if self.auth.authorize(Operation.CLUSTER_ACTION, CLUSTER, log_denied=False):
            allowed = set(names)
        else:
            allowed = self.auth.filter_authorized(Operation.DESCRIBE, TOPIC, names)
        topics = [
            {"topic": t.topic, "partitions": [self._epoch_end(t.topic, p, t.topic in allowed) for p in t.partitions]}
            for t in request.body.topics
        ]
        response = v08.SCHEMAS[(request.api_key, request.api_version)][1]
        return v08.encode_response(request.correlation_id, make(response, throttle_time_ms=0, topics=topics))

    def _epoch_end(self, topic: str, asked: Any, authorized: bool) -> dict[str, int]:
        """One partition's answer: the epoch found and where it ends, or an error (not led here, fenced)."""
        answer = {"partition": asked.partition, "error": ErrorCode.NONE, "leader_epoch": -1, "end_offset": -1}
        if not authorized:
            return {**answer, "error": ErrorCode.TOPIC_AUTHORIZATION_FAILED}
        try:
            check_leader_epoch(
                self.replica_manager, topic, asked.partition, getattr(asked, "current_leader_epoch", -1)
            )
            self.replica_manager.leader_log(topic, asked.partition)  # raises unless led here
            hosted = self.replica_manager.partition(topic, asked.partition)
            epoch, end = hosted.epochs.end_offset_for(asked.leader_epoch, hosted.log_end_offset)
            answer.update(leader_epoch=epoch, end_offset=end)
        except KafkaError as exc:
            answer["error"] = error_code(exc)
        return answer
