"""What a request's client quotas cost it (Kafka 2.x's ``KafkaApis`` with its ``QuotaManagers``): a produce
counts its records' bytes, a consumer's fetch the bytes of its answer, and every client request the time its
handling took (``request_percentage``, KIP-124); a client over a quota gets the throttle time in the answer
(``throttle_time_ms``; the longer one when two quotas throttle it), and its connection reads no further
request for that long (KIP-219: answered at once, the channel muted; Kafka 2.0+ does so at every request
version).

The handling time is the time the request holds the event loop in its handler: from its start until the
handler returns (an answer, or a result parked in a purgatory: the wait there is not counted). It is
measured only while some request quota is set. The cluster's own requests (LeaderAndIsr, StopReplica,
UpdateMetadata, ControlledShutdown from a principal with ClusterAction, and followers' fetches) are counted
apart and never throttled; followers' fetches count no bytes either (replication has its own quotas in
Kafka). A produce with acks 0 counts no handling time (it has no answer to carry a throttle time)."""

from __future__ import annotations

from collections.abc import Callable
from contextvars import ContextVar
from time import monotonic, perf_counter
from typing import Any

from gevent.event import AsyncResult

from zkafka.network.send import ThrottledResponse
from zkafka.network.server import PendingResponse, client_session
from zkafka.protocol.api_keys import (
    CONTROLLED_SHUTDOWN,
    FETCH,
    LEADER_AND_ISR,
    PRODUCE,
    STOP_REPLICA,
    UPDATE_METADATA,
)
from zkafka.protocol.throttle_time import set_throttle_time, throttle_time_position
from zkafka.quota.quota_manager import UNLIMITED, ClientQuotaManager, QuotaManagers
from zkafka.security.acl import Operation
from zkafka.security.auth_helper import AuthHelper

CLUSTER_ACTION_APIS = frozenset((LEADER_AND_ISR, STOP_REPLICA, UPDATE_METADATA, CONTROLLED_SHUTDOWN))
SELF_RECORDED_APIS = frozenset((PRODUCE, FETCH))  # their handlers count the time along with their bytes


class RequestTimer:
    """When a request's handling began and, once its handler returned, ended (``perf_counter`` seconds)."""

    __slots__ = ("started", "ended")

    def __init__(self) -> None:
        self.started = perf_counter()
        self.ended: float | None = None

    def elapsed(self) -> float:
        """Seconds of handling: until the handler returned, or until now while it runs."""
        return (self.ended if self.ended is not None else perf_counter()) - self.started


request_timer: ContextVar[RequestTimer | None] = ContextVar("request_timer", default=None)


def request_user() -> str:
    """The user name of the current request's principal (``ANONYMOUS`` on a plaintext listener)."""
    session = client_session.get()
    return session.principal.partition(":")[2] if session is not None else "ANONYMOUS"


def throttled(response: Any, throttle_ms: int) -> Any:
    """``response`` (parts, or None for none) marked to mute its channel for ``throttle_ms`` after it is sent."""
    return ThrottledResponse(response or (), throttle_ms / 1000.0) if throttle_ms > 0 else response


def is_exempt(request: Any, auth: AuthHelper) -> bool:
    """Whether the request is the cluster's own, never throttled: a follower's fetch, or an inter-broker
    request its principal may send (ClusterAction on the cluster; an unauthorized one is a client's)."""
    if request.api_key == FETCH:
        return request.body.replica_id >= 0
    return request.api_key in CLUSTER_ACTION_APIS and auth.authorize_cluster(Operation.CLUSTER_ACTION, False)


def throttle_answer(request: Any, response: Any, throttle_ms: int) -> Any:
    """The handler's ``response`` carrying ``throttle_ms`` in its ``throttle_time_ms`` (where its version has
    one) and muting the channel; a parked one so once it completes."""
    if isinstance(response, AsyncResult):
        if not response.ready():
            later = PendingResponse(getattr(response, "cancel", None))
            response.rawlink(lambda done: _complete(later, request, done, throttle_ms))
            return later
        response = response.get()
    parts = list(response or ())
    position = throttle_time_position(request.api_key, request.api_version) if parts else None
    if position is not None:
        throttle_ms = set_throttle_time(parts, position, throttle_ms)
    return ThrottledResponse(parts, throttle_ms / 1000.0)


def _complete(later: PendingResponse, request: Any, done: AsyncResult, throttle_ms: int) -> None:
    if done.successful():
        later.set(throttle_answer(request, done.value, throttle_ms))
    else:
        later.set_exception(done.exception)


class Throttler:
    """Records requests against a broker's quota managers and says how long each client waits."""

    def __init__(self, managers: QuotaManagers) -> None:
        self.managers = managers

    @staticmethod
    def client(request: Any) -> tuple[str, str]:
        """``(user, client id)`` of a request, read on the connection's greenlet."""
        return request_user(), request.client_id or ""

    @classmethod
    def context(cls, request: Any) -> tuple[tuple[str, str], RequestTimer | None]:
        """The request's client and its handling's timer (None while no request quota is set), read on the
        connection's greenlet for an answer made later."""
        return cls.client(request), request_timer.get()

    def timed(self, request: Any, handler: Callable[[Any], Any], exempt: bool) -> Any:
        """``handler(request)`` with its handling time counted (Kafka's ``sendResponseMaybeThrottle``): an
        exempt request's apart, a produce's or fetch's by their handlers, any other against the client's
        request quota, its answer throttled when over it. A handler that raises took its time too (Kafka
        records the requests it answers with an error)."""
        timer = RequestTimer()
        token = request_timer.set(timer)
        try:
            response = handler(request)
        except Exception:
            self._count(request, timer, exempt)
            raise
        finally:
            timer.ended = perf_counter()
            request_timer.reset(token)
        throttle_ms = self._count(request, timer, exempt)
        return throttle_answer(request, response, throttle_ms) if throttle_ms > 0 else response

    def _count(self, request: Any, timer: RequestTimer, exempt: bool) -> int:
        """Count the request's handling time where it belongs; its throttle time in ms (0 when exempt, and for
        a produce or fetch, whose handlers count theirs)."""
        if exempt:
            self.managers.request.record_exempt(timer.elapsed(), monotonic() * 1000.0)
            return 0
        if request.api_key in SELF_RECORDED_APIS:
            return 0
        client = self.client(request)
        return self._throttle(client, self._request_time(client, timer), 0, self.managers.request)

    def produce(self, client: tuple[str, str], size: int, timer: RequestTimer | None) -> int:
        """Count a produce's ``size`` bytes and its handling time (``timer``; None: not counted): its throttle
        time in ms."""
        return self._record(self.managers.produce, client, size, True, timer)

    def fetch(self, client: tuple[str, str], size: int, timer: RequestTimer | None = None) -> int:
        """Count a fetch answer's ``size`` bytes and its handling time; a throttled one answers with nothing,
        so no bytes are counted."""
        return self._record(self.managers.fetch, client, size, False, timer)

    def fetch_cap(self, client: tuple[str, str]) -> int | None:
        """The most bytes a consumer's fetch may answer with (Kafka 2.6+): what its fetch quota's windows take at
        once; None with no fetch quota."""
        cap = self.managers.fetch.max_value_in_quota_window(*client)
        return int(cap) if cap < UNLIMITED else None

    def _record(
        self, manager: ClientQuotaManager, client: tuple[str, str], size: int, keep: bool, timer: RequestTimer | None
    ) -> int:
        if timer is None and not manager.enabled:
            return 0  # no quota of either kind (the common case)
        request_ms = self._request_time(client, timer)
        if not manager.enabled:
            return self._throttle(client, request_ms, 0, manager)
        now = monotonic() * 1000.0
        bytes_ms = manager.record(*client, size, now)
        if not keep and max(bytes_ms, request_ms) > 0:
            manager.unrecord(*client, size, now)
        return self._throttle(client, request_ms, bytes_ms, manager)

    def _request_time(self, client: tuple[str, str], timer: RequestTimer | None) -> int:
        manager = self.managers.request
        if timer is None or not manager.enabled:
            return 0
        return manager.record_time(*client, timer.elapsed(), monotonic() * 1000.0)

    def _throttle(self, client: tuple[str, str], request_ms: int, bytes_ms: int, manager: ClientQuotaManager) -> int:
        """The longer of the two throttle times, noted in the throttle-time metric of the quota giving it."""
        throttle_ms = max(request_ms, bytes_ms)
        if throttle_ms > 0:
            giver = manager if bytes_ms > request_ms else self.managers.request
            giver.throttled(*client, throttle_ms, monotonic() * 1000.0)
        return throttle_ms
