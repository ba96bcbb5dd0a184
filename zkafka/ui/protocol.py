"""The web view's protocol panel, built from the brokers' request logs (``zkafka.server.request_log``).

Per coordinator group: a sequence of the requests its members sent (FindCoordinator, JoinGroup, SyncGroup,
Heartbeat, LeaveGroup, OffsetCommit/Fetch), one row each, runs of heartbeats and commits folded into one,
each with the design notes' explanation of the step; and a lane per member saying, from those requests and
answers, when it was consuming, stopped by a rebalance or left without partitions, with its longest stop.
Under the eager protocol a member revokes every partition before its JoinGroup and consumes again only when
its SyncGroup answer arrives; under the cooperative one (``cooperative-sticky``) it keeps its partitions
through the rebalance and only the ones it loses stop. For one traced produce: the replication sequence
(produce, leader append, follower fetches, high watermark, the parked produce answered), each step timed.
Pure: entries in, JSON-ready dicts out.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from zkafka.protocol import api_keys
from zkafka.protocol.api_keys import API_NAMES

ROWS = 24  # rows shown per group, newest last (the latest rebalance and what followed)
FIND_COORDINATOR = API_NAMES[
    api_keys.FIND_COORDINATOR
]  # 0.8.2's name, GroupCoordinator: FindCoordinator since 0.11
FOLDED = {"Heartbeat", "OffsetCommit", "OffsetFetch", FIND_COORDINATOR}
COOPERATIVE = "cooperative-sticky"

NOTES = {
    FIND_COORDINATOR: "FindCoordinator (GroupCoordinator in 0.8.2): the member asks any broker for its group's coordinator: the leader of the "
    "__consumer_offsets partition the group id hashes to. Every later group request goes there.",
    "JoinGroup": "The member (re)joins with its subscription per assignor. The coordinator parks the "
    "JoinGroup in the join purgatory until every known member has rejoined or rebalance_timeout_ms ends, "
    "then answers all at once: a new generation, the chosen protocol, and to the leader alone every "
    "member's subscription.",
    "SyncGroup": "The leader sends the assignment it computed, the others an empty one. The coordinator "
    "stores the group in __consumer_offsets and answers each member its partitions: from here it consumes.",
    "Heartbeat": "Sent every heartbeat.interval.ms by the heartbeat thread; no heartbeat for "
    "session.timeout.ms and the member is dead. REBALANCE_IN_PROGRESS tells the member to rejoin.",
    "LeaveGroup": "A closing member leaves at once instead of letting its session expire; the coordinator "
    "rebalances the others.",
    "OffsetCommit": "The member commits its positions under its generation and member id; a commit from an "
    "older generation is refused (ILLEGAL_GENERATION, REBALANCE_IN_PROGRESS).",
    "OffsetFetch": "After an assignment the member reads the committed offsets of its partitions to know "
    "where to resume.",
}
ERROR_NOTES = {
    "MEMBER_ID_REQUIRED": "A new member is given its member id and asked to join again with it (KIP-394).",
    "REBALANCE_IN_PROGRESS": "The group is rebalancing: the member must send JoinGroup again.",
    "UNKNOWN_MEMBER_ID": "The coordinator no longer knows this member (its session expired): it rejoins "
    "with an empty member id.",
    "ILLEGAL_GENERATION": "The request carries an old generation: a rebalance happened meanwhile.",
}


def build_protocol(entries: Iterable[Mapping[str, Any]], now: float) -> dict[str, Any]:
    """The panel's JSON: ``groups`` (rows and member lanes per group) and ``replication`` (the newest trace)."""
    ordered = sorted(entries, key=lambda e: e["start"])
    by_group: dict[str, list[Mapping[str, Any]]] = {}
    for entry in ordered:
        if entry.get("group") is not None and entry.get("trace") is None:
            by_group.setdefault(entry["group"], []).append(entry)
    groups = [
        _group(name, listed, now)
        for name, listed in sorted(by_group.items())
        if any(e["api"] == "JoinGroup" for e in listed)
    ]
    return {"groups": groups, "replication": replication(ordered)}


def _group(name: str, entries: list[Mapping[str, Any]], now: float) -> dict[str, Any]:
    joins = [e for e in entries if e["api"] == "JoinGroup" and e.get("error") == "NONE"]
    generation = max(
        (e["response"].get("generation_id", -1) for e in joins if e.get("response")), default=None
    )
    protocol = next((e["response"].get("group_protocol") for e in reversed(joins) if e.get("response")), None)
    coordinator = next((e["broker"] for e in reversed(entries) if e["api"] == "JoinGroup"), None)
    clients = list(dict.fromkeys(e["client_id"] or "?" for e in entries))
    return {
        "group": name,
        "coordinator": coordinator,
        "generation": generation,
        "protocol": protocol,
        "rebalance": "cooperative" if protocol == COOPERATIVE else "eager",
        "lanes": clients,
        "rows": _rows(entries)[-ROWS:],
        "members": [member_lane(client, entries, now) for client in clients],
    }


def _rows(entries: list[Mapping[str, Any]]) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    open_runs: dict[tuple, dict[str, Any]] = {}
    for entry in entries:
        key = (entry["client_id"], entry["api"], entry.get("error"))
        run = open_runs.get(key)
        if run is not None and entry["api"] in FOLDED:
            run["count"] += 1
            run["last"] = entry["start"]
            continue
        if entry["api"] not in FOLDED:
            open_runs.clear()
        row = _row(entry)
        rows.append(row)
        if entry["api"] in FOLDED:
            open_runs[key] = row
    return rows


def _row(entry: Mapping[str, Any]) -> dict[str, Any]:
    request, response = entry.get("request") or {}, entry.get("response") or {}
    error = entry.get("error")
    return {
        "start": entry["start"],
        "last": entry["start"],
        "count": 1,
        "client": entry["client_id"] or "?",
        "broker": entry["broker"],
        "api": entry["api"],
        "version": entry["version"],
        "correlation_id": entry["correlation_id"],
        "took_ms": entry.get("took_ms"),
        "parked": entry.get("parked", False),
        "error": error,
        "handler": entry.get("handler"),
        "request": request,
        "response": response,
        "answer": _answer(entry["api"], response, error),
        "note": ERROR_NOTES.get(error or "", NOTES.get(entry["api"], "")),
    }


def _answer(api: str, response: Mapping[str, Any], error: str | None) -> str:
    """The answer in a few words: the generation a JoinGroup reached, the partitions a SyncGroup handed out."""
    if error not in (None, "NONE"):
        return error
    if api == "JoinGroup":
        leader = " (leader)" if response.get("leader_id") == response.get("member_id") else ""
        return f"generation {response.get('generation_id')}{leader}"
    if api == "SyncGroup":
        assigned = (response.get("member_assignment") or {}).get("partitions") if response else None
        return _partitions_text(assigned) if isinstance(assigned, dict) else "no partitions"
    if api == FIND_COORDINATOR:
        return f"broker {response.get('node_id', response.get('coordinator_id', '?'))}"
    return ""


def _partitions_text(assigned: Mapping[str, list[int]]) -> str:
    text = "; ".join(f"{t} {','.join(map(str, ps))}" for t, ps in sorted(assigned.items()) if ps)
    return text or "no partitions"


def member_lane(client: str, entries: Iterable[Mapping[str, Any]], now: float) -> dict[str, Any]:
    """One member's states over time (``consuming``, ``paused`` by a rebalance, ``joining``, ``idle``
    with no partitions, ``left``) and its longest pause, from its requests' times and answers."""
    segments: list[dict[str, Any]] = []
    state, owned, cooperative = None, False, False

    def enter(new: str, at: float) -> None:
        nonlocal state
        if new == state:
            return
        if segments:
            segments[-1]["end"] = at
        segments.append({"state": new, "start": at, "end": None})
        state = new

    for entry in entries:
        if entry["client_id"] != client and (entry["client_id"] or "?") != client:
            continue
        api, error = entry["api"], entry.get("error")
        if api == "JoinGroup":
            response = entry.get("response") or {}
            cooperative = cooperative or response.get("group_protocol") == COOPERATIVE
            if state in (None, "idle", "left"):
                enter("joining", entry["start"])
            elif owned and not cooperative:
                enter("paused", entry["start"])  # eager: every partition revoked before the JoinGroup
        elif api == "SyncGroup" and error == "NONE" and "took_ms" in entry:
            assigned = ((entry.get("response") or {}).get("member_assignment") or {}).get("partitions") or {}
            owned = any(assigned.values()) if isinstance(assigned, dict) else False
            enter("consuming" if owned else "idle", entry["start"] + entry["took_ms"] / 1000)
        elif api == "LeaveGroup":
            owned = False
            enter("left", entry["start"])
    if segments:
        segments[-1]["end"] = now
    pauses = [s["end"] - s["start"] for s in segments if s["state"] == "paused"]
    return {
        "client": client,
        "segments": segments,
        "longest_pause_ms": round(max(pauses) * 1000) if pauses else None,
        "pauses": len(pauses),
        "rebalance": "cooperative" if cooperative else "eager",
    }


# -- replication -----------------------------------------------------------------------------------------------


def replication(entries: list[Mapping[str, Any]]) -> dict[str, Any] | None:
    """The newest finished produce trace as timed steps across producer, leader, followers and consumers."""
    traces: dict[int, list[Mapping[str, Any]]] = {}
    for entry in entries:
        if entry.get("trace") is not None:
            traces.setdefault(entry["trace"], []).append(entry)
    for trace_id in sorted(traces, reverse=True):
        listed = traces[trace_id]
        produce = next((e for e in listed if e["api"] == "Produce"), None)
        if produce is not None and "took_ms" in produce:
            return _trace(produce, [e for e in listed if e["api"] == "Fetch"])
    return None


def _trace(produce: Mapping[str, Any], fetches: list[Mapping[str, Any]]) -> dict[str, Any]:
    leader, client = f"leader (broker {produce['broker']})", produce["client_id"] or "producer"
    topic, partition = produce["partition"]
    before, appended = produce.get("before") or {}, produce.get("after_handler") or {}
    acks, parked = (produce.get("request") or {}).get("acks"), produce.get("parked")
    steps = [
        _step(
            0,
            client,
            leader,
            f"Produce v{produce['version']} acks={acks}",
            f"to {topic}-{partition}; LEO {before.get('log_end_offset')}, HW {before.get('high_watermark')}",
            "The producer sends the batch to the partition's leader.",
            produce,
        ),
        _step(
            produce.get("handled_ms", 0),
            leader,
            leader,
            "appended to the leader's log",
            f"LEO {before.get('log_end_offset')} → {appended.get('log_end_offset')}"
            + ("; parked in the produce purgatory (DelayedProduce)" if parked else ""),
            PARKED_PRODUCE if parked else "acks=0/1: answered after the leader's own append.",
            produce,
        ),
    ]
    lanes = [client, leader]
    for fetch in fetches:
        who, step = _fetch_step(fetch, produce["start"], (topic, partition), leader)
        lanes += [] if who in lanes else [who]
        steps.append(step)
    after = produce.get("after") or {}
    steps.append(
        _step(
            produce["took_ms"],
            leader,
            client,
            f"Produce answered: {produce.get('error') or '?'}",
            f"HW {after.get('high_watermark')} reached the append's end {appended.get('log_end_offset')}",
            ANSWERED if parked else "Answered right after the append.",
            produce,
        )
    )
    steps.sort(key=lambda step: step["at_ms"])
    return {
        "partition": f"{topic}-{partition}",
        "acks": acks,
        "lanes": lanes,
        "steps": steps,
        "started": produce["start"],
    }


PARKED_PRODUCE = (
    "acks=-1: the produce waits in the produce purgatory until the high watermark reaches the end of its append "
    "(every ISR replica has it)."
)
ANSWERED = "The parked produce is completed where the high watermark moved (the follower fetch) and answered."
FOLLOWER_FETCH = (
    "A follower's fetch offset is its log end offset: the leader records it and moves the high watermark to the "
    "smallest LEO of the ISR, completing parked produces below it."
)
CONSUMER_FETCH = (
    "A consumer reads up to the high watermark; with too few bytes its fetch waits in the fetch purgatory until an "
    "append or max_wait_ms."
)


def _fetch_step(fetch: Mapping[str, Any], t0: float, key: tuple[str, int], leader: str) -> tuple[str, dict]:
    """A traced fetch as a step at its arrival, with the high watermark right after the leader served it."""
    request = fetch.get("request") or {}
    replica = request.get("replica_id", -1)
    who = f"follower (broker {replica})" if replica >= 0 else f"consumer {fetch['client_id']}"
    waited = f"; answered {fetch.get('took_ms')} ms later" + (
        " (it waited in the fetch purgatory for new data)" if fetch.get("parked") else ""
    )
    hw = (fetch.get("after_handler") or {}).get("high_watermark")
    return who, _step(
        round((fetch["start"] - t0) * 1000, 3),
        who,
        leader,
        f"Fetch from offset {_fetch_offset(request, *key)}",
        f"HW {hw} after it{waited}",
        FOLLOWER_FETCH if replica >= 0 else CONSUMER_FETCH,
        fetch,
    )


def _step(
    at_ms: float, source: str, target: str, title: str, detail: str, note: str, entry: Mapping[str, Any]
) -> dict[str, Any]:
    return {
        "at_ms": at_ms,
        "from": source,
        "to": target,
        "title": title,
        "detail": detail,
        "note": note,
        "handler": entry.get("handler"),
        "request": entry.get("request"),
        "response": entry.get("response"),
    }


def _fetch_offset(request: Mapping[str, Any], topic: str, partition: int) -> Any:
    for t in request.get("topics") or []:
        if isinstance(t, dict) and t.get("topic") == topic:
            for p in t.get("partitions") or []:
                if isinstance(p, dict) and p.get("partition") == partition:
                    return p.get("fetch_offset")
    return "?"
