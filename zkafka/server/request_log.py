"""A broker's recent requests, kept for watching the protocol: a bounded ring the web view reads.

Every group request (FindCoordinator, JoinGroup, SyncGroup, Heartbeat, LeaveGroup, OffsetCommit,
OffsetFetch) is kept: api, version, client id, correlation id, the request's fields, the answer's fields and
error code, when it arrived and how long it took, and the zkafka function that handled it. Produce and fetch
requests are the hot path, so they are only *traced*: at most one produce a ``trace_interval_s`` opens a
trace of its first partition, and the fetches of that partition (followers' and consumers') that arrive
while the trace is open are kept with it, each with the leader's log end offset and high watermark after it
was served; the trace closes when the produce is answered and the high watermark has reached the end of
what it appended (or after ``TRACE_LIMIT_S``). An untraced produce costs one clock read; an untraced fetch
one attribute test.

Pure: the broker calls ``begin`` before its handler and ``handled`` with what the handler returned (a
response's parts, None, or a pending result with ``rawlink``); ``probe(topic, partition)`` gives the leader's
``(log_end_offset, high_watermark)``.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable
from typing import Any

from zkafka.protocol import v08
from zkafka.protocol.api_keys import (
    API_NAMES,
    FETCH,
    FIND_COORDINATOR,
    HEARTBEAT,
    JOIN_GROUP,
    LEAVE_GROUP,
    OFFSET_COMMIT,
    OFFSET_FETCH,
    PRODUCE,
    SYNC_GROUP,
)
from zkafka.protocol.errors import ErrorCode
from zkafka.protocol.group_membership import ConsumerProtocolAssignment, ConsumerProtocolMetadata

GROUP_APIS = frozenset(
    {FIND_COORDINATOR, JOIN_GROUP, SYNC_GROUP, HEARTBEAT, LEAVE_GROUP, OFFSET_COMMIT, OFFSET_FETCH}
)
CAPACITY = 600
TRACE_INTERVAL_S = 1.0
TRACE_LIMIT_S = 5.0
TRACE_FETCHES = 12  # fetches kept per trace at most
MAX_ITEMS = 8  # elements of an array shown; the rest counted

Probe = Callable[[str, int], "tuple[int, int] | None"]


class RequestLog:
    """The ring of recent requests and the one open produce trace."""

    def __init__(
        self,
        broker_id: int,
        handler_of: Callable[[Any], Any] | None = None,
        probe: Probe | None = None,
        capacity: int = CAPACITY,
        trace_interval_s: float = TRACE_INTERVAL_S,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.broker_id = broker_id
        self.handler_of = handler_of
        self.probe = probe
        self.trace_interval_s = trace_interval_s
        self.clock = clock
        self.entries: deque[dict[str, Any]] = deque(maxlen=capacity)
        self.started = clock()  # this log's identity: a restarted broker's ids begin again
        self._next_id = 1
        self._last_trace = 0.0
        self._trace: dict[str, Any] | None = None  # the open trace: id, topic, partition, produce entry, end

    def begin(self, request: Any) -> dict[str, Any] | None:
        """The entry ``request`` is kept as, or None when it is not kept (most produces and fetches)."""
        key = request.api_key
        if key in GROUP_APIS:
            entry = self._open(request)
            group = getattr(request.body, "group_id", None)
            entry["group"] = group if group is not None else getattr(request.body, "key", None)
            return entry
        if key == PRODUCE:
            return self._maybe_trace_produce(request)
        if key == FETCH and self._trace is not None:
            return self._traced_fetch(request)
        return None

    def handled(self, entry: dict[str, Any] | None, response: Any) -> None:
        """The handler returned ``response``: finish ``entry`` now, or when a parked answer is set."""
        if entry is None:
            return
        entry["handled_ms"] = self._since(entry)
        self._probe(entry, "after_handler")
        link = getattr(response, "rawlink", None)
        if link is None:
            self._finish(entry, response)
            return
        entry["parked"] = True
        link(lambda result: self._finish(entry, result.value if result.successful() else None))

    def snapshot(self, query: dict[str, str] | None = None) -> list[dict[str, Any]]:
        """The kept requests, oldest first (JSON-ready). With ``after`` (an id) and ``log`` (this log's
        ``started``, which every entry carries), only the entries after that id: a reader asks from before the
        oldest entry it holds unanswered."""
        query = query or {}
        after = int(query.get("after", 0)) if query.get("log") == repr(self.started) else 0
        return [e for e in self.entries if e["id"] > after]

    # -- internals -------------------------------------------------------------------------------------------

    def _open(self, request: Any) -> dict[str, Any]:
        handler = self.handler_of(request) if self.handler_of else None
        entry = {
            "id": self._next_id,
            "broker": self.broker_id,
            "log": self.started,
            "api": API_NAMES.get(request.api_key, str(request.api_key)),
            "api_key": request.api_key,
            "version": request.api_version,
            "client_id": request.client_id,
            "correlation_id": request.correlation_id,
            "handler": f"{handler.__module__}.{handler.__qualname__}" if handler else None,
            "start": self.clock(),
            "request": fields(request.body, request.api_key),
            "parked": False,
        }
        self._next_id += 1
        self.entries.append(entry)
        return entry

    def _maybe_trace_produce(self, request: Any) -> dict[str, Any] | None:
        now = self.clock()
        if self._trace is not None and now - self._trace["opened"] > TRACE_LIMIT_S:
            self._trace = None
        if self._trace is not None or now - self._last_trace < self.trace_interval_s:
            return None
        topics = request.body.topics
        if not topics or not topics[0].partitions:
            return None
        self._last_trace = now
        topic, partition = topics[0].topic, topics[0].partitions[0].partition
        entry = self._open(request)
        entry["partition"] = [topic, partition]
        entry["trace"] = entry["id"]
        self._trace = {"id": entry["id"], "key": (topic, partition), "opened": now, "produce": entry}
        self._probe(entry, "before")
        return entry

    def _traced_fetch(self, request: Any) -> dict[str, Any] | None:
        trace = self._trace
        if self.clock() - trace["opened"] > TRACE_LIMIT_S or trace.get("fetches", 0) >= TRACE_FETCHES:
            self._trace = None
            return None
        topic, partition = trace["key"]
        for t in request.body.topics:
            if t.topic == topic and any(p.partition == partition for p in t.partitions):
                trace["fetches"] = trace.get("fetches", 0) + 1
                entry = self._open(request)
                entry["partition"] = [topic, partition]
                entry["trace"] = trace["id"]
                return entry
        return None

    def _finish(self, entry: dict[str, Any], response: Any) -> None:
        entry["took_ms"] = self._since(entry)
        answer = _decode_answer(entry, response)
        if answer is not None:
            entry["response"] = fields(answer, entry["api_key"])
            entry["error"] = _error_name(answer)
        elif response is None and entry["api_key"] != PRODUCE:
            entry["error"] = "no response (the connection closed)"
        if entry.get("trace") is not None:
            self._probe(entry, "after")
            self._maybe_close_trace(entry)

    def _maybe_close_trace(self, entry: dict[str, Any]) -> None:
        trace = self._trace
        if trace is None or trace["id"] != entry["trace"]:
            return
        produce = trace["produce"]
        appended_to = (produce.get("after_handler") or {}).get("log_end_offset")
        done = "took_ms" in produce
        hw = (entry.get("after") or {}).get("high_watermark")
        if done and (appended_to is None or (hw is not None and hw >= appended_to)):
            self._trace = None

    def _probe(self, entry: dict[str, Any], when: str) -> None:
        if self.probe is None or "partition" not in entry:
            return
        offsets = self.probe(*entry["partition"])
        if offsets is not None:
            entry[when] = {"log_end_offset": offsets[0], "high_watermark": offsets[1]}

    def _since(self, entry: dict[str, Any]) -> float:
        return round((self.clock() - entry["start"]) * 1000, 3)


def _decode_answer(entry: dict[str, Any], response: Any) -> Any:
    """The decoded response body when its parts are all bytes (a fetch carrying log regions is not read)."""
    if not response or not all(isinstance(part, (bytes, bytearray, memoryview)) for part in response):
        return None
    frame = b"".join(response)[4:]
    try:
        return v08.decode_response(entry["api_key"], entry["version"], frame).body
    except Exception:  # an answer this codec cannot read back: leave it out
        return None


def _error_name(body: Any) -> str | None:
    """The answer's error code by name: the body's own, else its first partition's (Produce)."""
    code = getattr(body, "error_code", getattr(body, "error", None))
    if code is None:
        topics = getattr(body, "topics", None) or getattr(body, "responses", None)
        partitions = getattr(topics[0], "partitions", None) if topics else None
        if not partitions:
            return None
        code = getattr(partitions[0], "error_code", getattr(partitions[0], "error", None))
    if code is None:
        return None
    try:
        return ErrorCode(code).name
    except ValueError:
        return str(code)


def fields(value: Any, api_key: int | None = None) -> Any:
    """A request or response body as JSON-ready values: nested structs as dicts, arrays cut to ``MAX_ITEMS``,
    bytes as their size, except the consumer protocol's subscription and assignment, decoded."""
    if hasattr(value, "_asdict"):
        out = {}
        for name, item in value._asdict().items():
            if name == "unknown_tagged_fields":
                continue
            embedded = _embedded(name, item) if api_key in (JOIN_GROUP, SYNC_GROUP) else None
            out[name] = embedded if embedded is not None else fields(item, api_key)
        return out
    if isinstance(value, (bytes, bytearray, memoryview)):
        return f"{len(value)} bytes"
    if isinstance(value, (list, tuple)):
        shown = [fields(item, api_key) for item in value[:MAX_ITEMS]]
        if len(value) > MAX_ITEMS:
            shown.append(f"… {len(value) - MAX_ITEMS} more")
        return shown
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    size = getattr(value, "size", None)
    return f"{type(value).__name__} ({size} bytes)" if isinstance(size, int) else type(value).__name__


def _embedded(name: str, data: Any) -> Any:
    """The "consumer" protocol inside JoinGroup's metadata and SyncGroup's assignments, decoded."""
    if not isinstance(data, (bytes, bytearray, memoryview)) or not data:
        return None
    try:
        if name in ("protocol_metadata", "member_metadata"):
            return {"subscription": list(ConsumerProtocolMetadata.decode(data).subscription)}
        if name == "member_assignment":
            decoded = ConsumerProtocolAssignment.decode(data)
            return {"partitions": {tp.topic: list(tp.partitions) for tp in decoded.partitions}}
    except Exception:  # not the consumer protocol (connect, or a client's own): its size only
        return None
    return None
