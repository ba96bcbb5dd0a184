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

    def __init__(
        self,
        group_id: str,
        cluster: Cluster,
        retry_backoff_s: float,
        suspect_s: float = 0.0,
    ) -> None:
        self.group_id = group_id
        self.cluster = cluster
        self.retry_backoff_s = retry_backoff_s
        self.suspect_s = suspect_s  # how long a coordinator that did not answer in time is not taken again
        self._suspect: tuple[int, float] | None = None  # (broker id, until when)
        self.endpoint: Any = None  # the GroupCoordinator answer: node_id, host, port
        self._channel: BlockingChannel | None = None
        self._lock = RLock()

    def ensure_known(self, deadline: float) -> None:
        """Ask any broker for the group's coordinator until one is named (CoordinatorLostError after
        ``deadline``)."""
        last: Any = None
        while self.endpoint is None:
            try:
                response = self.cluster.any_broker(GroupCoordinatorRequestV0(self.group_id))
                if self.endpoint is not None:
                    return  # another greenlet found it meanwhile
                if response.error == ErrorCode.NONE and self._suspected(response.node_id):
                    last = f"broker {response.node_id} is still named but did not answer in time"
                elif response.error == ErrorCode.NONE:
                    self.endpoint = response
                    self._channel = self.cluster.channel(response.host, response.port)
                    log.info("group %s: coordinator is broker %d", self.group_id, response.node_id)
                    return
                else:
                    last = error_name(response.error)
            except KafkaError as exc:
                last = exc
            if time.monotonic() >= deadline:
                raise CoordinatorLostError(f"group {self.group_id!r}: no coordinator found: {last}")
            gevent.sleep(self.retry_backoff_s)

    def _suspected(self, node_id: int) -> bool:
        return (
            self._suspect is not None and self._suspect[0] == node_id and time.monotonic() < self._suspect[1]
        )

    def dead(self, why: object, unresponsive: bool = False) -> None:
        """Forget the coordinator and close the channel at once: a request waiting on it fails now. An
        ``unresponsive`` one is not taken again for ``suspect_s`` though brokers still name it (their
        metadata may not know yet that it is gone)."""
        if self.endpoint is not None:
            log.info("group %s: coordinator %d lost (%s)", self.group_id, self.endpoint.node_id, why)
            if unresponsive:
                self._suspect = (self.endpoint.node_id, time.monotonic() + self.suspect_s)
        self.endpoint = None
        channel, self._channel = self._channel, None
        if channel is not None:
            channel.disconnect()
            channel.close()

    def request(self, request: Any, timeout_s: float | None = None, within_s: float | None = None) -> Any:
        """``request`` answered by the coordinator (waiting up to ``timeout_s`` when that is longer than the
        request timeout: a JoinGroup waits for the rebalance); CoordinatorLostError on a lost connection.
        With ``within_s`` (a heartbeat: what is left of the session) no answer within that time, the wait
        for the channel included, means a dead coordinator: it is dropped, and with it any request that was
        waiting on it."""
        if within_s is not None:
            started = time.monotonic()
            if not self._lock.acquire(timeout=max(within_s, 0.0)):
                self.dead(f"no answer within {within_s:.1f} s", unresponsive=True)
                raise CoordinatorLostError(f"group {self.group_id!r}: the coordinator did not answer in time")
            within_s -= time.monotonic() - started
        else:
            self._lock.acquire()
        try:
            channel = self._channel
            if channel is None:
                raise CoordinatorLostError(f"group {self.group_id!r}: no coordinator")
            usual = channel.socket_timeout, channel.connect_timeout
            try:
                _set_timeout(channel, *_bounded(usual, timeout_s, within_s))
                return channel.request(request, retries=0)
            except OSError as exc:
                self.cluster.failed(channel.host, channel.port)
                if self._channel is channel:
                    self.dead(exc, unresponsive=within_s is not None and isinstance(exc, TimeoutError))
                raise CoordinatorLostError(f"group {self.group_id!r}: {exc}") from exc
            finally:
                _set_timeout(channel, *usual)
        finally:
            self._lock.release()

    def on_error(self, code: int) -> None:
        """An error answer: one naming a moved or unavailable coordinator drops the channel."""
        if code in COORDINATOR_LOST:
            self.dead(error_name(code))


def _bounded(
    usual: tuple[float | None, float | None], longer: float | None, within: float | None
) -> tuple[float | None, float | None]:
    """One request's socket and connect timeouts: the usual socket timeout, or ``longer`` when longer, at
    most ``within``; the usual connect timeout unless that is shorter."""
    timeout, connect = usual
    if longer is not None and timeout is not None and longer > timeout:
        timeout = longer
    if within is not None:
        timeout = max(min(timeout, within) if timeout is not None else within, 0.001)
    if timeout is not None and (connect is None or timeout < connect):
        connect = timeout
    return timeout, connect


def _set_timeout(channel: BlockingChannel, timeout_s: float | None, connect_s: float | None) -> None:
    channel.socket_timeout, channel.connect_timeout = timeout_s, connect_s
    if channel.sock is not None:
        channel.sock.settimeout(timeout_s)
