"""Prometheus metrics of a broker (either line) and of a ZooKeeper consumer, served on ``metrics.port``.

What 0.7's JMX beans showed, under Prometheus names: per-topic messages and bytes in (``BrokerTopicStat``)
and bytes out, request counts and times by request type (``SocketServerStats``), log flush times
(``LogFlushStats``); on the 0.8 line also under-replicated partitions, ISR shrinks and expands, purgatory
sizes and the active controller count; a consumer's lag per owned partition. Each server keeps its own
registry (several brokers can share a process in tests) and serves it from a gevent WSGI server on its own
hub. The instrumented code calls one method per concept: ``request_done`` at the request dispatch,
``appended``/``flushed`` from the log (``SegmentedLog.observer``), ``sent`` where a fetch response is built.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterable
from time import monotonic
from typing import Any
from urllib.parse import parse_qs

from gevent.pywsgi import WSGIServer
from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, make_wsgi_app
from prometheus_client.core import GaugeMetricFamily

from zkafka.protocol.api_keys import API_NAMES

log = logging.getLogger(__name__)

# 0.7's request names (RequestKeys) for its request classes.
_V07_NAMES = {
    "ProducerRequest": "Produce",
    "MultiProducerRequest": "MultiProduce",
    "FetchRequest": "Fetch",
    "MultiFetchRequest": "MultiFetch",
    "OffsetRequest": "Offsets",
}
_TIME_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)


def request_name(request: Any) -> str:
    """The request type of a decoded request of either line: ``Produce``, ``Fetch``, ``Metadata``..."""
    api_key = getattr(request, "api_key", None)
    if api_key is not None:
        return API_NAMES.get(api_key, f"ApiKey{api_key}")
    name = type(request).__name__
    return _V07_NAMES.get(name, name)


class MetricsServer:
    """A registry served at ``/metrics`` (any path, as prometheus_client answers) on the current gevent hub;
    ``routes`` adds JSON paths (a broker's ``/requests``: its request log, read by the web view)."""

    def __init__(self, registry: CollectorRegistry) -> None:
        self.registry = registry
        self.routes: dict[str, Callable[[dict[str, str]], Any]] = {}  # path -> f(query) -> JSON value
        self._server: WSGIServer | None = None

    def serve(self, host: str, port: int) -> int:
        """Listen on ``host:port`` (0: any free port); returns the port."""
        self._server = WSGIServer(
            (host or "0.0.0.0", port), self._app(make_wsgi_app(self.registry)), log=None
        )
        self._server.start()
        log.info("metrics served on %s:%d", host or "0.0.0.0", self._server.server_port)
        return self._server.server_port

    def _app(self, metrics_app: Callable) -> Callable:
        def app(environ: dict, start_response: Callable) -> Any:
            route = self.routes.get(environ.get("PATH_INFO", ""))
            if route is None:
                return metrics_app(environ, start_response)
            query = {k: v[-1] for k, v in parse_qs(environ.get("QUERY_STRING", "")).items()}
            body = json.dumps(route(query)).encode()
            start_response(
                "200 OK", [("Content-Type", "application/json"), ("Content-Length", str(len(body)))]
            )
            return [body]

        return app

    @property
    def port(self) -> int | None:
        return self._server.server_port if self._server is not None else None

    def close(self) -> None:
        if self._server is not None:
            self._server.stop(timeout=1)
            self._server = None


class BrokerMetrics(MetricsServer):
    """One broker's metrics. Pass it as the socket server's ``observer``, the log manager's ``observer``..."""

    def __init__(self, broker_id: int, line: str) -> None:
        super().__init__(CollectorRegistry())
        r = self.registry
        info = Gauge(
            "kafka_server_info", "This broker: its id and protocol line.", ["broker_id", "line"], registry=r
        )
        info.labels(str(broker_id), line).set(1)
        self.messages_in = Counter(
            "kafka_server_messages_in", "Messages appended to the topic's logs.", ["topic"], registry=r
        )
        self.bytes_in = Counter(
            "kafka_server_bytes_in", "Bytes appended to the topic's logs.", ["topic"], registry=r
        )
        self.bytes_out = Counter(
            "kafka_server_bytes_out",
            "Bytes of the topic's logs sent in fetch responses.",
            ["topic"],
            registry=r,
        )
        self.requests = Histogram(
            "kafka_network_request_seconds",
            "Time from a request's arrival to its response written (its _count: requests served), by type.",
            ["request"],
            buckets=_TIME_BUCKETS,
            registry=r,
        )
        self.flushes = Histogram(
            "kafka_log_flush_seconds",
            "Time of each log flush (the fsyncs).",
            buckets=_TIME_BUCKETS,
            registry=r,
        )
        self.isr_shrinks = Counter(
            "kafka_server_isr_shrinks", "Times the ISR of a partition led here lost a replica.", registry=r
        )
        self.isr_expands = Counter(
            "kafka_server_isr_expands", "Times the ISR of a partition led here gained a replica.", registry=r
        )
        self._gauges: list[
            tuple[str, str, Callable[[], Iterable[tuple[tuple[str, ...], float]]], list[str]]
        ] = []
        r.register(_Callbacks(self._gauges))
        self._isr: dict[tuple[str, int], frozenset[int]] = {}

    # -- the hooks -------------------------------------------------------------------------------------------

    def attach(self, partition_log: Any) -> None:
        """Count a log's appends and time its flushes (the log managers' ``on_open_log``)."""
        partition_log.add_listener(self.appended)
        partition_log.on_flush = self.flushed

    def request_done(self, request: Any, seconds: float) -> None:
        """The socket server answered (or dropped) ``request`` after ``seconds``."""
        self.requests.labels(request_name(request)).observe(seconds)

    def appended(self, partition_log: Any, info: Any) -> None:
        """A log append wrote ``info.count`` messages in ``info.size`` bytes (``LogAppendInfo``)."""
        if info.size:
            self.messages_in.labels(partition_log.topic).inc(info.count)
            self.bytes_in.labels(partition_log.topic).inc(info.size)

    def flushed(self, partition_log: Any, seconds: float) -> None:
        self.flushes.observe(seconds)

    def sent(self, topic: str, size: int) -> None:
        """A fetch response carries ``size`` bytes of the topic's log."""
        if size > 0:
            self.bytes_out.labels(topic).inc(size)

    # -- 0.8 state read at scrape time -----------------------------------------------------------------------

    def gauge(
        self, name: str, doc: str, read: Callable[[], Iterable[tuple[tuple[str, ...], float]]], labels=()
    ) -> None:
        """A gauge whose samples ``read()`` gives at each scrape as ``(label values, value)`` pairs."""
        self._gauges.append((name, doc, read, list(labels)))

    def watch_purgatories(self, purgatories: Callable[[], Iterable[Any]]) -> None:
        """``kafka_server_purgatory_size`` (watch entries) and ``..._delayed_operations`` per purgatory."""
        self.gauge(
            "kafka_server_purgatory_size",
            "Watch entries of the purgatory's parked operations (an operation counts once per key).",
            lambda: [((p.name,), p.watched()) for p in purgatories()],
            ["purgatory"],
        )
        self.gauge(
            "kafka_server_purgatory_delayed_operations",
            "Operations parked in the purgatory.",
            lambda: [((p.name,), p.delayed()) for p in purgatories()],
            ["purgatory"],
        )

    def watch_quotas(self, quotas: Iterable[Any]) -> None:
        """Per quota type and measured ``(user, client_id)``: ``kafka_server_quota_byte_rate`` (Produce,
        Fetch), ``kafka_server_quota_request_time`` (Request: percent of one thread's time, KIP-124) and
        ``kafka_server_quota_throttle_time_ms`` (the average throttle time given over the quota windows);
        ``kafka_server_quota_exempt_request_time`` for the cluster's own requests."""

        def read(field: int, request: bool | None) -> Callable[[], list]:
            return lambda: [
                ((q.quota_type, user, client), m[field])
                for q in quotas
                if request is None or (q.quota_type == "Request") == request
                for user, client, *m in q.measurements(monotonic() * 1000.0)
            ]

        def exempt() -> list:
            return [((), q.exempt.measure(monotonic() * 1000.0)) for q in quotas if q.quota_type == "Request"]

        labels = ["quota_type", "user", "client_id"]
        rate = "kafka_server_quota_byte_rate", "Bytes per second counted against the quota."
        self.gauge(*rate, read(0, False), labels)
        time = "kafka_server_quota_request_time", "Percent of one thread's time counted against the quota."
        self.gauge(*time, read(0, True), labels)
        throttle = "kafka_server_quota_throttle_time_ms", "Average throttle time of the client."
        self.gauge(*throttle, read(1, None), labels)
        self.gauge("kafka_server_quota_exempt_request_time", "Percent of one thread's time exempt requests took.", exempt)

    def on_partition_states(
        self, broker_id: int, partitions: Iterable[tuple[str, int, int, Iterable[int]]]
    ) -> None:
        """The cluster's partition states ``(topic, partition, leader, isr)``: count ISR changes of partitions
        led here (a shrink or an expand each time a known ISR loses or gains replicas)."""
        seen: dict[tuple[str, int], frozenset[int]] = {}
        for topic, partition, leader, isr in partitions:
            if leader != broker_id:
                continue
            now = seen[(topic, partition)] = frozenset(isr)
            before = self._isr.get((topic, partition))
            if before is not None and now < before:
                self.isr_shrinks.inc()
            elif before is not None and now > before:
                self.isr_expands.inc()
        self._isr = seen


class _Callbacks:
    """A collector of gauges read at scrape time."""

    def __init__(self, gauges: list) -> None:
        self.gauges = gauges

    def collect(self):
        for name, doc, read, labels in self.gauges:
            family = GaugeMetricFamily(name, doc, labels=labels)
            try:
                for values, value in read():
                    family.add_metric(list(values), value)
            except Exception:
                log.exception("reading gauge %s failed", name)
                continue
            yield family


class ConsumerMetrics(MetricsServer):
    """A ZooKeeper consumer's lag per owned partition: ``log_end(info)`` minus the consumed offset."""

    def __init__(self, connector: Any, log_end: Callable[[list], dict]) -> None:
        super().__init__(CollectorRegistry())
        self.connector = connector
        self.log_end = log_end
        self.registry.register(self)

    def collect(self):
        group, consumer_id = self.connector.group, self.connector.consumer_id
        lag = GaugeMetricFamily(
            "kafka_consumer_lag",
            "Messages (0.8) or bytes (0.7) between the partition's log end and this consumer's position.",
            labels=["group", "consumer", "topic", "partition"],
        )
        consumed = GaugeMetricFamily(
            "kafka_consumer_consumed_offset",
            "Offset this consumer resumes the partition from.",
            labels=["group", "consumer", "topic", "partition"],
        )
        infos = [info for info in list(self.connector.owned.infos.values()) if not info.revoked]
        try:
            ends = self.log_end(infos)
        except Exception:
            log.exception("%s: could not read the log ends", consumer_id)
            ends = {}
        for info in infos:
            labels = [group, consumer_id, info.topic, str(info.partition)]
            position = info.consumed_offset
            consumed.add_metric(labels, position)
            end = ends.get((info.topic, str(info.partition)))
            if end is not None and position >= 0:
                lag.add_metric(labels, max(end - position, 0))
        yield lag
        yield consumed
