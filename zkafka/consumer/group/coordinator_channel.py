"""The connection from a group member to its group's coordinator (the lookup half of 0.9's
``AbstractCoordinator``): GroupCoordinator (FindCoordinator v0) asked of any broker until one is named, then
one channel to it that every group request goes through, one at a time. An error answer naming a moved or
unavailable coordinator, or a lost connection, drops the channel; the next request looks it up again.
"""

from __future__ import annotations

import logging
import time
from typing import Any

import gevent
from gevent.lock import RLock

from zkafka.consumer.group.cluster import Cluster
from zkafka.errors import KafkaError
from zkafka.network.client import BlockingChannel
from zkafka.protocol.errors import ErrorCode, error_name
from zkafka.protocol.offset_commit import GroupCoordinatorRequestV0

log = logging.getLogger(__name__)

# answers that mean "look for the coordinator again"
COORDINATOR_LOST = {ErrorCode.GROUP_COORDINATOR_NOT_AVAILABLE, ErrorCode.NOT_COORDINATOR_FOR_GROUP}


class CoordinatorLostError(KafkaError):
    """The coordinator could not be reached or said it is not the coordinator; it is looked up again."""


class CoordinatorChannel:
    """The group's coordinator (``endpoint``, None until known) and the channel to it."""

    def __init__(self, group_id: str, cluster: Cluster, retry_backoff_s: float) -> None:
        self.group_id = group_id
        self.cluster = cluster
        self.retry_backoff_s = retry_backoff_s
        self.endpoint: Any = None  # the GroupCoordinator answer: node_id, host, port
        self._channel: BlockingChannel | None = None
        self._lock = RLock()

    def ensure_known(self, deadline: float) -> None:
        """Ask any broker for the group's coordinator until one is named (CoordinatorLostError after
        ``deadline``)."""
        while self.endpoint is None:
            try:
                response = self.cluster.any_broker(GroupCoordinatorRequestV0(self.group_id))
                if response.error == ErrorCode.NONE:
                    self.endpoint = response
                    self._channel = self.cluster.channel(response.host, response.port)
                    log.info("group %s: coordinator is broker %d", self.group_id, response.node_id)
                    return
                last: Any = error_name(response.error)
            except KafkaError as exc:
                last = exc
            if time.monotonic() >= deadline:
                raise CoordinatorLostError(f"group {self.group_id!r}: no coordinator found: {last}")
            gevent.sleep(self.retry_backoff_s)

    def dead(self, why: object) -> None:
        if self.endpoint is not None:
            log.info("group %s: coordinator %d lost (%s)", self.group_id, self.endpoint.node_id, why)
        self.endpoint = None
        if self._channel is not None:
            self._channel.close()
            self._channel = None

    def request(self, request: Any, timeout_s: float | None = None) -> Any:
        """``request`` answered by the coordinator (waiting up to ``timeout_s`` when that is longer than the
        request timeout: a JoinGroup waits for the rebalance); CoordinatorLostError on a lost connection."""
        with self._lock:
            channel = self._channel
            if channel is None:
                raise CoordinatorLostError(f"group {self.group_id!r}: no coordinator")
            usual = channel.socket_timeout
            try:
                if timeout_s is not None and usual is not None and timeout_s > usual:
                    _set_timeout(channel, timeout_s)
                return channel.request(request, retries=0)
            except OSError as exc:
                if self._channel is channel:
                    self.dead(exc)
                raise CoordinatorLostError(f"group {self.group_id!r}: {exc}") from exc
            finally:
                _set_timeout(channel, usual)

    def on_error(self, code: int) -> None:
        """An error answer: one naming a moved or unavailable coordinator drops the channel."""
        if code in COORDINATOR_LOST:
            self.dead(error_name(code))


def _set_timeout(channel: BlockingChannel, timeout_s: float | None) -> None:
    channel.socket_timeout = timeout_s
    if channel.sock is not None:
        channel.sock.settimeout(timeout_s)
