"""Client quotas (KIP-13, KIP-55): byte rates per client id, per user and per user and client id, measured over
sampled windows, and the throttle time a client over its quota gets (Kafka 2.x's ``ClientQuotaManager`` with
its default quota callback). Pure: the caller passes the time; ZooKeeper is ``server.quota_config_handler``'s.

A quota entity is ``(user, client_id)`` with ``None`` for a part it does not name and ``"<default>"`` for the
default of that part (``/config/users/<user>/clients/<client-id>``, ``/config/users/<user>``,
``/config/clients/<client-id>``, each with ``<default>`` entities). A client's quota is the most specific one
set, in Kafka's order; without any, ``quota.producer.default``/``quota.consumer.default`` per client id.
Clients sharing a quota share its rate: the rate is kept per metric tags ``(user, client_id)``, which leave
out the part the quotas in use do not name.

The ``Request`` quota (KIP-124) counts handling time in percent of one thread instead of bytes, the same way.

The rate is Kafka's ``Rate``: the sum of ``quota.window.num`` samples of ``quota.window.size.seconds`` each,
over the time since the oldest sample began, but never less than ``window.num - 1`` whole windows. A record
that takes the rate over the bound costs ``(rate - bound) / bound * window`` ms of throttle time.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import NamedTuple

from zkafka.config import LONG_MAX, int_key, long_key
from zkafka.quota.quota_entity import (
    CONSUMER_BYTE_RATE,
    DEFAULT,
    PRODUCER_BYTE_RATE,
    REQUEST_PERCENTAGE,
    QuotaEntity,
)

UNLIMITED = float(LONG_MAX)  # Long.MaxValue: no quota
PERCENT = 100.0  # one second of a thread's time, in request_percentage's unit (percent-seconds)

QUOTA_KEYS = (  # the broker's keys (0.9, KIP-13; the two defaults deprecated in 2.x, still read)
    long_key("quota.producer.default", LONG_MAX, 1),
    long_key("quota.consumer.default", LONG_MAX, 1),
    int_key("quota.window.num", 11, 1),
    int_key("quota.window.size.seconds", 1, 1),
)



@dataclass
class _Sample:
    start_ms: float
    value: float = 0.0
    count: int = 0


@dataclass
class SampledStat:
    """``samples`` windows of ``window_ms`` each, the oldest reused when a new one begins (Kafka's
    ``SampledStat``)."""

    samples: int
    window_ms: float
    _samples: list[_Sample] = field(default_factory=list)
    _current: int = 0

    def record(self, value: float, now_ms: float) -> None:
        if not self._samples:
            self._samples.append(_Sample(now_ms))
        sample = self._samples[self._current]
        if now_ms - sample.start_ms >= self.window_ms:
            self._current = (self._current + 1) % self.samples
            if self._current >= len(self._samples):
                self._samples.append(_Sample(now_ms))
            else:
                self._samples[self._current] = _Sample(now_ms)
            sample = self._samples[self._current]
        sample.value += value
        sample.count += 1

    def purge(self, now_ms: float) -> None:
        """Reset the samples older than all the windows together (no record came for that long)."""
        expire = self.samples * self.window_ms
        for i, sample in enumerate(self._samples):
            if now_ms - sample.start_ms >= expire:
                self._samples[i] = _Sample(now_ms)

    def total(self, now_ms: float) -> float:
        self.purge(now_ms)
        return sum(s.value for s in self._samples)

    def average(self, now_ms: float) -> float:
        """The mean of the recorded values (0 when none)."""
        self.purge(now_ms)
        count = sum(s.count for s in self._samples)
        return sum(s.value for s in self._samples) / count if count else 0.0

    def oldest_start(self, now_ms: float) -> float:
        return min((s.start_ms for s in self._samples), default=now_ms)


class Rate(SampledStat):
    """Units per second over the retained samples (Kafka's ``Rate``)."""

    def elapsed_ms(self, now_ms: float) -> float:
        """The span the rate is over: since the oldest sample began, at least ``samples - 1`` whole windows."""
        self.purge(now_ms)
        elapsed = now_ms - self.oldest_start(now_ms)
        full = int(elapsed // self.window_ms)
        if full < self.samples - 1:
            elapsed += (self.samples - 1 - full) * self.window_ms
        return elapsed

    def measure(self, now_ms: float) -> float:
        elapsed = self.elapsed_ms(now_ms)
        return self.total(now_ms) / (elapsed / 1000.0) if elapsed > 0 else 0.0


def throttle_time_ms(rate: float, bound: float, window_ms: float) -> int:
    """How long a client measured at ``rate`` waits for its rate to come back to ``bound`` (Kafka's
    ``ClientQuotaManager.throttleTime``)."""
    return round((rate - bound) / bound * window_ms) if rate > bound else 0


class ClientSensors(NamedTuple):
    """One quota's measurements: the rate it bounds and the throttle times it gave."""

    rate: Rate
    throttle: SampledStat


class ClientQuotaManager:
    """One kind of client quota (``Produce``, ``Fetch`` or ``Request``): the overrides set in ZooKeeper, the
    static per-client-id default, and the rates measured per metric tags."""

    def __init__(
        self, quota_type: str, static_default: float = UNLIMITED, samples: int = 11, window_s: int = 1
    ) -> None:
        self.quota_type = quota_type
        self.static_default = float(static_default)
        self.samples = samples
        self.window_ms = window_s * 1000.0
        self.overrides: dict[QuotaEntity, float] = {}
        self.sensors: dict[tuple[str, str], ClientSensors] = {}

    @property
    def enabled(self) -> bool:
        return bool(self.overrides) or self.static_default < UNLIMITED

    def update_quota(self, user: str | None, client_id: str | None, bound: float | None) -> None:
        """Set (``bound``) or remove (None) the quota of an entity."""
        if bound is None:
            self.overrides.pop((user, client_id), None)
        else:
            self.overrides[(user, client_id)] = float(bound)

    def quota(self, user: str, client_id: str) -> float:
        """The bound of the client's quota (UNLIMITED when none applies)."""
        return self._limit(self.metric_tags(user, client_id))

    def max_value_in_quota_window(self, user: str, client_id: str) -> float:
        """The most a client can record at once without a certain throttle, even with nothing recorded before:
        its bound over ``samples - 1`` windows (UNLIMITED with no quota). Kafka caps a consumer's fetch to it."""
        bound = self.quota(user, client_id) if self.enabled else UNLIMITED
        return bound * (self.samples - 1) * self.window_ms / 1000.0 if bound < UNLIMITED else UNLIMITED

    def metric_tags(self, user: str, client_id: str) -> tuple[str, str]:
        """The ``(user, client-id)`` tags whose rate the client counts in: the parts of the most specific
        quota that applies to it ("" for a part that quota leaves out)."""
        entities = {(u is not None, c is not None) for u, c in self.overrides}
        if entities <= {(False, True)}:
            return ("", client_id)
        if entities == {(True, False)}:
            return (user, "")
        if entities == {(True, True)}:
            return (user, client_id)
        for u, c in _precedence(user, client_id):
            if (u, c) in self.overrides:
                return (user if u is not None else "", client_id if c is not None else "")
        return ("", client_id)

    def _limit(self, tags: tuple[str, str]) -> float:
        user, client_id = tags
        if user and client_id:
            candidates = [(user, client_id), (user, DEFAULT), (DEFAULT, client_id), (DEFAULT, DEFAULT)]
        elif user:
            candidates = [(user, None), (DEFAULT, None)]
        elif client_id:
            candidates = [(None, client_id), (None, DEFAULT)]
        else:
            return UNLIMITED
        for entity in candidates:
            if entity in self.overrides:
                return self.overrides[entity]
        return self.static_default if not user else UNLIMITED

    def sensors_for(self, tags: tuple[str, str]) -> ClientSensors:
        sensors = self.sensors.get(tags)
        if sensors is None:
            sensors = self.sensors[tags] = ClientSensors(
                Rate(self.samples, self.window_ms), SampledStat(self.samples, self.window_ms)
            )
        return sensors

    def record(self, user: str, client_id: str, value: float, now_ms: float) -> int:
        """Count ``value`` against the client's quota: the throttle time in ms (0 while within it)."""
        if not self.enabled:
            return 0
        tags = self.metric_tags(user, client_id)
        rate = self.sensors_for(tags).rate
        rate.record(value, now_ms)
        bound = self._limit(tags)
        if bound >= UNLIMITED:
            return 0
        return throttle_time_ms(rate.measure(now_ms), bound, rate.elapsed_ms(now_ms))

    def unrecord(self, user: str, client_id: str, value: float, now_ms: float) -> None:
        """Take back a recorded ``value`` (a throttled fetch answers without its data)."""
        if self.enabled:
            self.sensors_for(self.metric_tags(user, client_id)).rate.record(-value, now_ms)

    def throttled(self, user: str, client_id: str, throttle_ms: int, now_ms: float) -> None:
        """Note a throttle time given (the ``throttle-time`` metric: its average over the windows)."""
        self.sensors_for(self.metric_tags(user, client_id)).throttle.record(throttle_ms, now_ms)

    def measurements(self, now_ms: float) -> Iterator[tuple[str, str, float, float]]:
        """``(user, client_id, rate, average throttle ms)`` of every measured quota (the metrics)."""
        for (user, client_id), sensors in list(self.sensors.items()):
            yield user, client_id, sensors.rate.measure(now_ms), sensors.throttle.average(now_ms)


def _precedence(user: str, client_id: str) -> list[QuotaEntity]:
    """Kafka's order of quota entities for one client, most specific first."""
    return [
        (user, client_id),
        (user, DEFAULT),
        (user, None),
        (DEFAULT, client_id),
        (DEFAULT, DEFAULT),
        (DEFAULT, None),
        (None, client_id),
        (None, DEFAULT),
    ]


class ClientRequestQuotaManager(ClientQuotaManager):
    """The ``Request`` quota (KIP-124): the time request handling takes, as a percentage of one thread's time
    (``request_percentage``; 100 is one whole thread), its throttle time at most one window. Requests the
    cluster makes of itself are counted apart (``exempt-request-time``) and never throttled."""

    def __init__(self, samples: int = 11, window_s: int = 1) -> None:
        super().__init__("Request", UNLIMITED, samples, window_s)
        self.exempt = Rate(samples, self.window_ms)

    def record_time(self, user: str, client_id: str, seconds: float, now_ms: float) -> int:
        """Count ``seconds`` of handling against the client's quota: the throttle time in ms (0 within it), at
        most one window."""
        return min(self.record(user, client_id, seconds * PERCENT, now_ms), round(self.window_ms))

    def record_exempt(self, seconds: float, now_ms: float) -> None:
        """Count ``seconds`` of an exempt request's handling (no client's quota)."""
        if self.enabled:
            self.exempt.record(seconds * PERCENT, now_ms)


class QuotaManagers(NamedTuple):
    """A broker's client quotas: ``producer_byte_rate``, ``consumer_byte_rate``, ``request_percentage``."""

    produce: ClientQuotaManager
    fetch: ClientQuotaManager
    request: ClientRequestQuotaManager

    @classmethod
    def from_config(cls, config) -> QuotaManagers:
        samples, window_s = config["quota.window.num"], config["quota.window.size.seconds"]
        return cls(
            ClientQuotaManager("Produce", config["quota.producer.default"], samples, window_s),
            ClientQuotaManager("Fetch", config["quota.consumer.default"], samples, window_s),
            ClientRequestQuotaManager(samples, window_s),
        )

    def by_config(self) -> dict[str, ClientQuotaManager]:
        """Each manager under the entity config key that sets its quotas."""
        return {
            PRODUCER_BYTE_RATE: self.produce,
            CONSUMER_BYTE_RATE: self.fetch,
            REQUEST_PERCENTAGE: self.request,
        }
