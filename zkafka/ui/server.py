"""``zkafka ui``'s server: polls the cluster on the gevent hub and serves the page, its JSON and a stream of
server-sent events from a gevent WSGI server on 127.0.0.1.

Two loops: every ``GROUP_INTERVAL_S`` the ZooKeeper groups' members and owners (cheap ZooKeeper reads) go to
the timeline, so the owner changes of a rebalance are seen as they happen; every ``interval`` the whole
state (brokers, topics with their log ends, groups with lag, coordinator groups) is read and pushed to every
open page. Routes: ``/`` the page, ``/static/*`` its script and style, ``/api/state``, ``/events`` (SSE),
``/api/znode?path=`` (one node of the ZooKeeper tree), ``POST /api/action/<name>`` (the demo's actions,
with the page's token: ``zkafka.ui.guard``; every request must name 127.0.0.1 or localhost as its Host).

With ``request_logs`` (the brokers' ``metrics.port`` ``/requests`` URLs) each refresh also reads the brokers'
request logs, keeps what it read (a dead broker's requests stay shown) and builds the protocol panel
(``zkafka.ui.protocol``). A broker whose znode vanishes stays listed as gone, with when and why.
"""

from __future__ import annotations

import json
import logging
import time
import urllib.request
from collections import deque
from collections.abc import Callable, Iterator, Mapping
from importlib import resources
from typing import Any
from urllib.parse import parse_qs, urlencode

import gevent
import gevent.event
from gevent.pywsgi import WSGIServer
from kazoo.exceptions import NoNodeError

from zkafka.config import LINE_08
from zkafka.consumer.group.coordinator_groups import CoordinatorGroups
from zkafka.ui.cluster_state import read_brokers, read_controller, read_topics, read_zk_groups, read_znode
from zkafka.ui.guard import new_token, refusal, with_token
from zkafka.ui.protocol import build_protocol
from zkafka.ui.timeline import Timeline
from zkafka.ui.zk_groups import read_zk_group, zk_group_names
from zkafka.zk.client import gevent_handler, make_zk_client, start_zk_client
from zkafka.zk.line import cluster_line

log = logging.getLogger(__name__)

GROUP_INTERVAL_S = 0.1
HISTORY = 300  # lag points kept per group
REQUESTS_KEPT = 4000  # request-log entries kept by the view, across brokers
STATIC = {"app.js": "text/javascript", "style.css": "text/css", "index.html": "text/html"}


class ClusterView:
    """The live picture of one cluster: the latest state, the lag history and the rebalance timeline."""

    def __init__(
        self,
        zk_connect: str,
        bootstrap: str | None = None,
        interval: float = 1.0,
        actions: Mapping[str, Callable[[], Any]] | None = None,
        extra: Callable[[], dict] | None = None,
        request_logs: Callable[[], list[str]] | None = None,
    ) -> None:
        self.zk_connect = zk_connect
        self.coordinator = CoordinatorGroups(bootstrap) if bootstrap else None
        self.interval = interval
        self.actions = dict(actions or {})
        self.extra = extra  # more facts for the page (the demo's producer and consumers)
        self.request_logs = request_logs
        self.requests: dict[tuple, dict] = {}
        self._read_to: dict[str, tuple[float | None, int]] = {}  # request-log URL -> (its log, last id read)
        self.gone: dict[int, dict[str, Any]] = {}  # broker id -> its last registration, when and why it went
        self._brokers: list[dict[str, Any]] = []
        self._led: dict[int, list[str]] = {}
        self.timeline = Timeline()
        self.lag: dict[str, deque] = {}
        self.state: dict[str, Any] = {}
        self.version = 0
        self._changed = gevent.event.Event()
        self._zk = None
        self._greenlets: list[gevent.Greenlet] = []
        self.line = "0.7"
        self.token = new_token()  # this run's: the page carries it, every POST must send it

    def start(self) -> ClusterView:
        self._zk = start_zk_client(
            make_zk_client(self.zk_connect, handler=gevent_handler()), create_chroot=False
        )
        self.refresh()
        self._greenlets = [gevent.spawn(self._loop, self.interval, self.refresh)]
        self._greenlets.append(gevent.spawn(self._loop, GROUP_INTERVAL_S, self._watch_groups))
        return self

    def close(self) -> None:
        gevent.killall(self._greenlets)
        if self._zk is not None:
            self._zk.stop()
            self._zk.close()

    def _loop(self, interval: float, task: Callable[[], Any]) -> None:
        while True:
            gevent.sleep(interval)
            try:
                task()
            except Exception:
                log.exception("%s failed", task.__name__)

    def _watch_groups(self) -> None:
        now = time.time()
        for name in zk_group_names(self._zk):
            self.timeline.observe_zk_group(now, read_zk_group(self._zk, name, self.line))

    def refresh(self) -> None:
        """Read everything once, feed the timeline and the lag history, and push the new state."""
        zk, now = self._zk, time.time()
        self.line = line = cluster_line(zk)
        brokers = read_brokers(zk, line)
        topics = read_topics(zk, line)
        groups = read_zk_groups(zk, line)
        for group, view in groups:
            self.timeline.observe_zk_group(now, group)
            history = self.lag.setdefault(view["name"], deque(maxlen=HISTORY))
            history.append([round(now, 3), view["total_lag"]])
        alive = {b["id"] for b in brokers}
        brokers = self._with_gone(now, brokers, topics)
        if line == LINE_08:
            gone_at = {broker_id: b["dead"]["at"] for broker_id, b in self.gone.items()}
            self.timeline.observe_partition_states(now, topics, alive, gone_at)
        coordinator_groups = self.coordinator.read() if self.coordinator else None
        for group in coordinator_groups or ():
            self.timeline.observe_coordinator_group(now, group)
        self.state = {
            "zookeeper": self.zk_connect,
            "line": line,
            "updated": now,
            "brokers": brokers,
            "controller": read_controller(zk) if line == LINE_08 else None,
            "topics": [t for t in topics if not t["name"].startswith("__")],
            "zk_groups": [view for _, view in groups],
            "coordinator_groups": coordinator_groups,
            "timeline": self.timeline.to_json(),
            "lag_history": {name: list(points) for name, points in self.lag.items()},
            "actions": sorted(self.actions),
            "extra": self.extra() if self.extra else None,
            "protocol": self._protocol(now) if self.request_logs else None,
        }
        self.version += 1
        self._changed.set()
        self._changed = gevent.event.Event()

    def _with_gone(self, now: float, brokers: list[dict], topics: list[dict]) -> list[dict]:
        """``brokers`` plus the ones registered before and gone since: when their znode vanished and why."""
        alive = {b["id"] for b in brokers}
        for broker in self._brokers:
            if broker["id"] not in alive and broker["id"] not in self.gone:
                self.gone[broker["id"]] = {
                    **broker,
                    "dead": gone_reason(now, self._led.get(broker["id"], [])),
                }
        for broker_id in alive:
            self.gone.pop(broker_id, None)
        self._brokers = brokers
        self._led = {}
        for topic in topics:
            for p in topic["partitions"]:
                if p.get("leader", -1) >= 0:
                    self._led.setdefault(p["leader"], []).append(f"{topic['name']}-{p['partition']}")
        return sorted(brokers + list(self.gone.values()), key=lambda b: str(b["id"]).zfill(6))

    def _protocol(self, now: float) -> dict[str, Any]:
        """Read what is new in every broker's request log (a broker that does not answer keeps what was read
        before): the entries after the last one read, or from the oldest one read still without its answer."""
        pool = gevent.get_hub().threadpool
        for url in self.request_logs():
            log_id, after = self._read_to.get(url, (None, 0))
            try:
                entries = pool.apply(
                    _read_json, (f"{url}?{urlencode({'after': after, 'log': repr(log_id)})}",)
                )
            except (OSError, ValueError):
                continue
            waiting = []
            for entry in entries:
                self.requests[(entry["broker"], entry["id"], entry["start"])] = entry
                if entry["log"] != log_id:
                    log_id, after, waiting = entry["log"], 0, []
                after = max(after, entry["id"])
                if "took_ms" not in entry:
                    waiting.append(entry["id"] - 1)
            self._read_to[url] = (log_id, min(waiting, default=after))
        if len(self.requests) > REQUESTS_KEPT:
            for key in sorted(self.requests, key=lambda k: k[2])[: len(self.requests) - REQUESTS_KEPT]:
                del self.requests[key]
        return build_protocol(self.requests.values(), now)

    def wait_change(self, version: int, timeout: float) -> int:
        """Block (cooperatively) until the state is newer than ``version`` or ``timeout`` passes."""
        if self.version == version:
            self._changed.wait(timeout)
        return self.version

    def znode(self, path: str) -> dict[str, Any]:
        return read_znode(self._zk, path)

    # -- the web app ------------------------------------------------------------------------------------------

    def __call__(self, environ: dict, start_response: Callable) -> Any:
        method, path = environ["REQUEST_METHOD"], environ.get("PATH_INFO", "/")
        try:
            refused = refusal(environ, self.token)
            if refused is not None:
                log.info("refused %s %s: %s", method, path, refused)
                return _json({"error": refused}, start_response, "403 Forbidden")
            if path in ("/", "/index.html"):
                return _static("index.html", start_response, self.token)
            if path.startswith("/static/") and path[len("/static/") :] in STATIC:
                return _static(path[len("/static/") :], start_response)
            if path == "/api/state":
                return _json(self.state, start_response)
            if path == "/events":
                start_response(
                    "200 OK",
                    [
                        ("Content-Type", "text/event-stream"),
                        ("Cache-Control", "no-cache"),
                        ("X-Accel-Buffering", "no"),
                    ],
                )
                return self._events()
            if path == "/api/znode":
                wanted = parse_qs(environ.get("QUERY_STRING", "")).get("path", ["/"])[0]
                try:
                    return _json(self.znode(wanted), start_response)
                except NoNodeError:
                    return _json({"error": f"no znode {wanted}"}, start_response, "404 Not Found")
            if path.startswith("/api/action/") and method == "POST":
                name = path[len("/api/action/") :]
                if name not in self.actions:
                    return _json({"error": f"no action {name}"}, start_response, "404 Not Found")
                self.actions[name]()
                gevent.spawn(self.refresh)
                return _json({"done": name}, start_response)
            return _json({"error": f"no page {path}"}, start_response, "404 Not Found")
        except Exception as exc:
            log.exception("%s %s failed", method, path)
            return _json(
                {"error": f"{type(exc).__name__}: {exc}"}, start_response, "500 Internal Server Error"
            )

    def _events(self) -> Iterator[bytes]:
        version = -1
        while True:
            if self.version != version:
                version = self.version
                yield b"data: " + json.dumps(self.state).encode() + b"\n\n"
            elif self.wait_change(version, 15.0) == version:
                yield b": keep-alive\n\n"


def gone_reason(now: float, led: list[str]) -> dict[str, Any]:
    """Why a broker's znode vanished, told from what it still led: leaderships handed over first is a
    controlled shutdown; still leading is a crash or kill whose ZooKeeper session expired."""
    if led:
        why = (
            f"its ZooKeeper session expired while it still led {', '.join(led[:6])}: a crash or kill "
            "(no controlled shutdown); the controller elects new leaders"
        )
    else:
        why = (
            "it led no partition when its znode went: a controlled shutdown (its leaderships moved to other "
            "brokers first), or a broker that led nothing"
        )
    return {"at": now, "why": why, "session_expired": bool(led)}


def _read_json(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=1.5) as answer:
        return json.loads(answer.read())


def _static(name: str, start_response: Callable, token: str = "") -> list[bytes]:
    body = resources.files("zkafka.ui").joinpath("static", name).read_bytes()
    if name == "index.html":
        body = with_token(body, token)
    start_response(
        "200 OK", [("Content-Type", f"{STATIC[name]}; charset=utf-8"), ("Content-Length", str(len(body)))]
    )
    return [body]


def _json(value: Any, start_response: Callable, status: str = "200 OK") -> list[bytes]:
    body = json.dumps(value).encode()
    start_response(status, [("Content-Type", "application/json"), ("Content-Length", str(len(body)))])
    return [body]


def serve(view: ClusterView, port: int = 8080, host: str = "127.0.0.1") -> WSGIServer:
    """Start serving ``view`` on ``host:port`` (0: a free port); returns the started server."""
    server = WSGIServer((host, port), view, log=None, error_log=None)
    server.start()
    return server
