"""What a request's client quotas cost it (Kafka 2.x's ``KafkaApis`` with its ``QuotaManagers``): a produce
counts its records' bytes, a consumer's fetch the bytes of its answer; a client over its quota gets the
throttle time in the answer (``throttle_time_ms``), and its connection reads no further request for that long
(KIP-219: answered at once, the channel muted; Kafka 2.0+ does so at every request version). Followers'
fetches are not counted (replication has its own quotas in Kafka)."""

from __future__ import annotations

from time import monotonic
from typing import Any

from zkafka.network.send import ThrottledResponse
from zkafka.network.server import client_session
from zkafka.quota.quota_manager import ClientQuotaManager, QuotaManagers


def request_user() -> str:
    """The user name of the current request's principal (``ANONYMOUS`` on a plaintext listener)."""
    session = client_session.get()
    return session.principal.partition(":")[2] if session is not None else "ANONYMOUS"


def throttled(response: Any, throttle_ms: int) -> Any:
    """``response`` (parts, or None for none) marked to mute its channel for ``throttle_ms`` after it is sent."""
    return ThrottledResponse(response or (), throttle_ms / 1000.0) if throttle_ms > 0 else response


class Throttler:
    """Records requests against a broker's quota managers and says how long each client waits."""

    def __init__(self, managers: QuotaManagers) -> None:
        self.managers = managers

    @staticmethod
    def client(request: Any) -> tuple[str, str]:
        """``(user, client id)`` of a request, read on the connection's greenlet."""
        return request_user(), request.client_id or ""

    def produce(self, request: Any, size: int) -> int:
        """Count a produce's ``size`` bytes: its throttle time in ms."""
        return self._record(self.managers.produce, self.client(request), size, keep=True)

    def fetch(self, client: tuple[str, str], size: int) -> int:
        """Count a fetch answer's ``size`` bytes; a throttled one answers with nothing, so nothing is counted."""
        return self._record(self.managers.fetch, client, size, keep=False)

    @staticmethod
    def _record(manager: ClientQuotaManager, client: tuple[str, str], size: int, keep: bool) -> int:
        if not manager.enabled:
            return 0
        now = monotonic() * 1000.0
        throttle_ms = manager.record(*client, size, now)
        if throttle_ms > 0:
            if not keep:
                manager.unrecord(*client, size, now)
            manager.throttled(*client, throttle_ms, now)
        return throttle_ms
