"""InitProducerId (KIP-98) as a ZooKeeper-mode Kafka broker answers it for an idempotent producer: any broker
hands out a new producer id (``ProducerIdManager``) with epoch 0, as Kafka 3.4's ``TransactionCoordinator``
does for a null transactional id. zkafka keeps no transaction state: a transactional id is answered
COORDINATOR_NOT_AVAILABLE (15), as FindCoordinator answers key type 1, and the transaction requests
(AddPartitionsToTxn, EndTxn, ...) are not served; an empty transactional id is INVALID_REQUEST (42).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from kazoo.exceptions import KazooException

from zkafka.coordinator.offset_apis import answer
from zkafka.coordinator.producer_id_manager import ProducerIdManager
from zkafka.errors import KafkaError
from zkafka.protocol import v08
from zkafka.protocol.api_keys import INIT_PRODUCER_ID
from zkafka.protocol.errors import ErrorCode
from zkafka.protocol.init_producer_id import INIT_PRODUCER_ID_APIS, NO_PRODUCER_EPOCH, NO_PRODUCER_ID
from zkafka.security.acl import Operation
from zkafka.security.auth_helper import ALLOW_ALL, TOPIC, AuthHelper

log = logging.getLogger(__name__)


class TransactionCoordinator:
    """Producer ids for idempotent producers; no transactions."""

    def __init__(self, producer_ids: ProducerIdManager, auth: AuthHelper = ALLOW_ALL) -> None:
        self.producer_ids = producer_ids
        self.auth = auth

    def handlers(self) -> dict[tuple[int, int], Callable[[v08.Request], Any]]:
        return {(INIT_PRODUCER_ID, v): self.handle_init_producer_id for v in range(len(INIT_PRODUCER_ID_APIS))}

    def handle_init_producer_id(self, request: v08.Request) -> list:
        transactional_id = request.body.transactional_id
        if transactional_id is not None:
            error = ErrorCode.INVALID_REQUEST if transactional_id == "" else ErrorCode.GROUP_COORDINATOR_NOT_AVAILABLE
            return answer(request, error=error, producer_id=NO_PRODUCER_ID, producer_epoch=NO_PRODUCER_EPOCH)
        if not self._may_write_idempotently():
            error = ErrorCode.CLUSTER_AUTHORIZATION_FAILED
            return answer(request, error=error, producer_id=NO_PRODUCER_ID, producer_epoch=NO_PRODUCER_EPOCH)
        try:
            producer_id = self.producer_ids.generate_producer_id()
        except (KazooException, KafkaError) as exc:
            log.warning("InitProducerId from %s: no producer id block: %s", request.client_id, exc)
            error = ErrorCode.GROUP_COORDINATOR_NOT_AVAILABLE
            return answer(request, error=error, producer_id=NO_PRODUCER_ID, producer_epoch=NO_PRODUCER_EPOCH)
        return answer(request, error=ErrorCode.NONE, producer_id=producer_id, producer_epoch=0)

    def _may_write_idempotently(self) -> bool:
        """IdempotentWrite on the cluster, or (Kafka 3's KIP-679) Write on some topic."""
        return self.auth.authorize_cluster(Operation.IDEMPOTENT_WRITE, log_denied=False) or (
            self.auth.authorize_by_resource_type(Operation.WRITE, TOPIC)
        )
