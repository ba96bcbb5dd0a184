"""What the drills watch and what they conclude: a ZooKeeper poller on the host, and the invariant checks
over its samples, the agents' events and the brokers' logs.
"""

from __future__ import annotations

import re
import threading
import time
from collections import Counter
from dataclasses import dataclass, field

from kazoo.client import KazooClient
from kazoo.exceptions import NoNodeError
from kazoo.retry import KazooRetry

from zkafka.launch.zookeeper_server import four_letter_word


@dataclass
class Owner:
    """One incarnation of an owner znode: who, created when (ZooKeeper's clock, ms), seen when (host clock)."""

    thread: str
    ctime_ms: int
    session: int
    first_seen: float
    last_seen: float


@dataclass
class Sample:
    t: float
    brokers: dict[str, int]  # broker id -> session that registered it
    topic_brokers: set[str]
    consumers: dict[str, int]  # consumer id -> its session
    owners: dict[str, tuple[str, int, int]]  # partition -> (thread id, ctime ms, session)
    offsets: dict[str, int]
    live: set[int] = field(default_factory=set)  # sessions with a client connected (``cons``)


@dataclass
class ZkWatcher:
    """Polls brokers, consumers, owners and committed offsets of one group and topic every ``interval`` s.

    A poll that fails (ZooKeeper down) is skipped; the gaps are counted.
    """

    connect: str
    group: str
    topic: str
    interval: float = 0.1
    samples: list[Sample] = field(default_factory=list)
    failed_polls: int = 0

    def __post_init__(self) -> None:
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="zk-watcher", daemon=True)
        # Reconnect at once when ZooKeeper is back, not after an exponential back-off: a drill restarts it.
        retry = KazooRetry(max_tries=-1, delay=0.05, backoff=1.5, max_delay=0.5)
        self._client = KazooClient(hosts=self.connect, timeout=10, connection_retry=retry)

    def start(self) -> ZkWatcher:
        self._client.start(timeout=20)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(10)
        self._client.stop()
        self._client.close()

    def latest(self) -> Sample | None:
        return self.samples[-1] if self.samples else None

    def _children(self, path: str) -> list[str]:
        try:
            return self._client.get_children(path)
        except NoNodeError:
            return []

    def _poll(self) -> Sample:
        g, topic = self.group, self.topic
        owners_dir = f"/consumers/{g}/owners/{topic}"
        offsets_dir = f"/consumers/{g}/offsets/{topic}"
        t = time.time()
        registered = {
            b: self._client.exists_async(f"/brokers/ids/{b}") for b in self._children("/brokers/ids")
        }
        topic_brokers = set(self._children(f"/brokers/topics/{topic}"))
        members = {
            c: self._client.exists_async(f"/consumers/{g}/ids/{c}")
            for c in self._children(f"/consumers/{g}/ids")
        }
        owned = {p: self._client.get_async(f"{owners_dir}/{p}") for p in self._children(owners_dir)}
        committed = {p: self._client.get_async(f"{offsets_dir}/{p}") for p in self._children(offsets_dir)}
        owners, offsets, brokers, consumers = {}, {}, {}, {}
        for found, results in ((brokers, registered), (consumers, members)):
            for name, result in results.items():
                stat = result.get(timeout=10)
                if stat is not None:
                    found[name] = stat.ephemeralOwner
        for p, result in owned.items():
            try:
                data, stat = result.get(timeout=10)
            except NoNodeError:
                continue
            owners[p] = (data.decode(), stat.ctime, stat.ephemeralOwner)
        for p, result in committed.items():
            try:
                offsets[p] = int(result.get(timeout=10)[0].decode())
            except NoNodeError:
                continue
        return Sample(t, brokers, topic_brokers, consumers, owners, offsets, self._live_sessions())

    def _live_sessions(self) -> set[int]:
        """Sessions a client is connected to now; a session ZooKeeper restored after a restart and nobody
        resumed still holds its ephemeral znodes until it expires."""
        host, port = self.connect.split("/")[0].split(",")[0].rsplit(":", 1)
        try:
            answer = four_letter_word(host, int(port), "cons", timeout=2.0)
        except OSError:
            return set()
        return {int(sid, 16) for sid in re.findall(r"sid=0x([0-9a-f]+)", answer)}

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                self.samples.append(self._poll())
            except Exception:
                self.failed_polls += 1
            self._stop.wait(self.interval)

    # -- conclusions ---------------------------------------------------------------------------------------

    def owner_history(self) -> dict[str, list[Owner]]:
        """Per partition, the owner znode incarnations seen, in order of creation."""
        seen: dict[tuple[str, int, int], Owner] = {}
        parts: dict[str, list[tuple[str, int, int]]] = {}
        for s in self.samples:
            for p, (thread, ctime, session) in s.owners.items():
                key = (p, ctime, session)
                if key not in seen:
                    seen[key] = Owner(thread, ctime, session, s.t, s.t)
                    parts.setdefault(p, []).append(key)
                seen[key].last_seen = s.t
        return {p: sorted((seen[k] for k in keys), key=lambda o: o.ctime_ms) for p, keys in parts.items()}

    def offset_regressions(self) -> list[tuple[str, int, int, float]]:
        """Committed offsets that went backwards: (partition, before, after, when)."""
        last: dict[str, int] = {}
        found = []
        for s in self.samples:
            for p, offset in s.offsets.items():
                if p in last and offset < last[p]:
                    found.append((p, last[p], offset, s.t))
                last[p] = offset
        return found


def with_claims(history: dict[str, list[Owner]], claims: dict[str, list[dict]]) -> dict[str, list[Owner]]:
    """``history`` plus the owner znodes the members reported creating (``own`` events with ``ctimes``),
    thread ``<group>_<member>-0`` given as ``claims`` keys: incarnations too short-lived for the poller."""
    merged = {p: list(owners) for p, owners in history.items()}
    for thread, events in claims.items():
        for e in events:
            for p, ctime in e.get("ctimes", {}).items():
                if not any(o.ctime_ms == ctime and o.thread == thread for o in merged.get(p, [])):
                    merged.setdefault(p, []).append(Owner(thread, ctime, -1, e["t"], e["t"]))
    return {p: sorted(owners, key=lambda o: o.ctime_ms) for p, owners in merged.items()}


def double_owner_deliveries(
    history: dict[str, list[Owner]], deliveries: dict[str, list[dict]], slack_ms: float = 5.0
) -> list[tuple[str, str, float, str]]:
    """Messages a member got while ZooKeeper named another member's thread owner of the partition.

    ``deliveries``: consumer id -> its ``msg`` events. The owner at time t is the incarnation with the latest
    creation time at or before t (creation times are exact; both clocks are this machine's). Returns
    (consumer, partition, t, owner thread) for each such message.
    """
    found = []
    for consumer, events in deliveries.items():
        for e in events:
            t_ms = e["t"] * 1000.0
            current = [o for o in history.get(e["p"], []) if o.ctime_ms <= t_ms + slack_ms]
            if current and not _thread_of(current[-1].thread, consumer):
                found.append((consumer, e["p"], e["t"], current[-1].thread))
    return found


def _thread_of(thread: str, consumer: str) -> bool:
    """Thread ids are ``<group>_<consumerid>-<i>``."""
    return thread.rsplit("-", 1)[0].endswith(f"_{consumer}")


def settled(sample: Sample | None, partitions: set[str], consumers: set[str], brokers: set[str]) -> bool:
    """Every broker and consumer registered by a connected session, every partition owned once by a
    registered consumer."""
    if sample is None or set(sample.brokers) != brokers or set(sample.consumers) != consumers:
        return False
    if not all(s in sample.live for s in (*sample.brokers.values(), *sample.consumers.values())):
        return False
    if set(sample.owners) != partitions:
        return False
    return all(thread.rsplit("-", 1)[0] in sample.consumers for thread, _, _ in sample.owners.values())


@dataclass
class Ledger:
    """Message accounting of a drill: what was sent, flushed before the fault, stored at the end, consumed."""

    sent: set[str]
    failed: set[str]
    flushed_before: set[str]
    stored_after: Counter
    consumed: Counter

    def figures(self) -> dict[str, int]:
        stored = set(self.stored_after)
        return {
            "sent": len(self.sent),
            "send_errors": len(self.failed),
            "flushed_before_fault": len(self.flushed_before),
            "read_back": len(stored & self.sent),
            "consumed": len(set(self.consumed) & self.sent),
            "duplicates_consumed": sum(self.consumed.values()) - len(self.consumed),
            "duplicates_stored": sum(self.stored_after.values()) - len(self.stored_after),
            "lost_flushed": len(self.flushed_before - stored),
            "flushed_not_consumed": len((stored & self.sent) - set(self.consumed)),
        }


def sent_ids(events: list[dict], run: str) -> tuple[set[str], set[str]]:
    """(sent, failed) payload ids from a producer agent's events."""
    sent, failed = set(), set()
    for e in events:
        if e["e"] in ("sent", "error"):
            ids = {f"{run}:{seq}" for seq in range(e["first"], e["first"] + e["n"])}
            (sent if e["e"] == "sent" else failed).update(ids)
    return sent, failed


def send_times(events: list[dict], run: str) -> dict[str, float]:
    """Payload id -> when the producer agent's send of it returned."""
    return {
        f"{run}:{seq}": e["t"]
        for e in events
        if e["e"] == "sent"
        for seq in range(e["first"], e["first"] + e["n"])
    }
