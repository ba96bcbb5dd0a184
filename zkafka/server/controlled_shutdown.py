"""The broker's side of a controlled shutdown (0.8-line only): 0.8.2's ``KafkaServer.controlledShutdown``.

Before a clean stop the broker asks the controller (found through ``/controller`` and its registration) to
move its leaderships away with a ControlledShutdown request, up to ``controlled.shutdown.max.retries``
attempts ``controlled.shutdown.retry.backoff.ms`` apart, until the answer lists no partition still led here.
The request goes to the controller's end point of the inter-broker listener, secured as that listener is.
The controller's side is controller/controller.py's ``shutdown_broker``.
"""

from __future__ import annotations

import logging
from typing import Any

import gevent

from zkafka.client08.channel import broker_channel
from zkafka.config08 import BrokerConfig08
from zkafka.errors import KafkaError
from zkafka.network.channel_builders import PLAINTEXT_INTER_BROKER, InterBrokerSecurity
from zkafka.protocol import inter_broker as admin
from zkafka.zk.client import get_data
from zkafka.zk.paths import broker_id_path
from zkafka.zk.paths08 import CONTROLLER_PATH, BrokerRegistration, parse_controller

log = logging.getLogger(__name__)


def controlled_shutdown(zk_client: Any, broker_id: int, config: BrokerConfig08) -> bool:
    """Ask the controller to move this broker's leaderships away; True once it leads nothing."""
    attempts = max(config["controlled.shutdown.max.retries"], 1)
    security = InterBrokerSecurity.from_config(config)
    for attempt in range(1, attempts + 1):
        try:
            remaining = ask_controller_to_shut_down(
                zk_client, broker_id, config["controller.socket.timeout.ms"], security
            )
            if remaining == []:
                log.info("broker %d: controlled shutdown succeeded", broker_id)
                return True
            log.info(
                "broker %d: controlled shutdown attempt %d: still leads %s", broker_id, attempt, remaining
            )
        except Exception as exc:
            log.warning("broker %d: controlled shutdown attempt %d failed: %s", broker_id, attempt, exc)
        if attempt < attempts:
            gevent.sleep(config["controlled.shutdown.retry.backoff.ms"] / 1000.0)
    log.warning("broker %d: controlled shutdown failed; shutting down anyway", broker_id)
    return False


def ask_controller_to_shut_down(
    zk_client: Any,
    broker_id: int,
    socket_timeout_ms: int,
    security: InterBrokerSecurity = PLAINTEXT_INTER_BROKER,
) -> list[tuple[str, int]]:
    """One ControlledShutdown request to the current controller: the partitions this broker still leads."""
    data = get_data(zk_client, CONTROLLER_PATH)
    if data is None:
        raise KafkaError("there is no controller")
    controller_id = parse_controller(data)
    registration = get_data(zk_client, broker_id_path(controller_id))
    if registration is None:
        raise KafkaError(f"controller {controller_id} is not registered")
    broker = BrokerRegistration.parse(controller_id, registration)
    secure = None if security.plaintext else security.secure
    channel = broker_channel(*security.address(broker), socket_timeout_ms=socket_timeout_ms, secure=secure)
    try:
        answer = channel.request(admin.ControlledShutdownRequestV0(broker_id), retries=0)
    finally:
        channel.close()
    if answer.error:
        raise KafkaError(f"controller {controller_id} answered error {answer.error}")
    return [(p.topic, p.partition) for p in answer.partitions_remaining]
