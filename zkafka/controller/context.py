"""ControllerContext: the cluster as ZooKeeper describes it on the 0.8 line, kept current with watches.

Live brokers (``/brokers/ids``), topics and their replica assignments (``/brokers/topics``) and every
partition's leader, epoch and ISR (the state znodes, with their versions). A watch only marks what changed;
one worker re-reads the marked znodes (re-arming their watches), publishes an immutable ``ClusterSnapshot``
and tells the listeners. A new session re-reads everything. The controller decides from these snapshots,
and a 0.8 broker learns from ``add_leadership_listener`` which partitions it leads.
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Callable

from kazoo.client import KazooClient, KazooState
from kazoo.exceptions import ConnectionLoss, NoNodeError, SessionExpiredError
from kazoo.protocol.states import WatchedEvent

from zkafka.cluster.snapshot import ClusterSnapshot, PartitionMetadata, TopicPartition
from zkafka.zk.paths import BROKER_IDS_PATH, BROKER_TOPICS_PATH, broker_id_path
from zkafka.zk.paths08 import (
    BrokerRegistration,
    PartitionState,
    ZkDataError,
    parse_topic_assignment,
    partition_state_path,
    topic_path,
)

log = logging.getLogger(__name__)


_TOPIC = re.compile(re.escape(BROKER_TOPICS_PATH) + r"/([^/]+)")
_STATE = re.compile(re.escape(BROKER_TOPICS_PATH) + r"/([^/]+)/partitions/(\d+)/state")
RETRY_AFTER_ERROR_S = 1.0


class ControllerContext:
    """A watched view of ``/brokers``; ``snapshot()`` is always a complete, consistent-per-znode picture."""

    def __init__(self, client: KazooClient) -> None:
        self.client = client
        self._lock = threading.Lock()
        self._wake = client.handler.event_object()
        self._closed = False
        self._all_dirty = True
        self._brokers_dirty = False
        self._topics_dirty = False
        self._dirty_topics: set[str] = set()
        self._dirty_states: set[TopicPartition] = set()
        self._brokers: dict[int, BrokerRegistration] = {}
        self._assignments: dict[str, dict[int, tuple[int, ...]]] = {}
        self._states: dict[TopicPartition, PartitionState | None] = {}
        self._snapshot = ClusterSnapshot()
        self._listeners: list[Callable[[ClusterSnapshot], None]] = []
        self._worker = None

    def start(self) -> None:
        """Read everything (arming the watches) before returning, then follow changes on a worker."""
        self.client.ensure_path(BROKER_IDS_PATH)
        self.client.ensure_path(BROKER_TOPICS_PATH)
        self._refresh()
        self.client.add_listener(self._on_state_change)
        self._worker = self.client.handler.spawn(self._run)

    def snapshot(self) -> ClusterSnapshot:
        return self._snapshot

    def add_listener(self, listener: Callable[[ClusterSnapshot], None]) -> None:
        """Call ``listener(snapshot)`` on the worker after every change."""
        self._listeners.append(listener)

    def add_leadership_listener(
        self, broker_id: int, listener: Callable[[frozenset[TopicPartition], frozenset[TopicPartition]], None]
    ) -> None:
        """Call ``listener(became_leader, stopped_leading)`` when the partitions ``broker_id`` leads change.

        Called at once with what it leads now (if anything).
        """
        led = [self._snapshot.partitions_led_by(broker_id)]

        def on_change(snapshot: ClusterSnapshot) -> None:
            now = snapshot.partitions_led_by(broker_id)
            became, stopped = now - led[0], led[0] - now
            led[0] = now
            if became or stopped:
                listener(became, stopped)

        if led[0]:
            listener(led[0], frozenset())
        self.add_listener(on_change)

    def refresh_all(self) -> None:
        """Mark everything to be read again."""
        with self._lock:
            self._all_dirty = True
        self._wake.set()

    def close(self) -> None:
        self._closed = True
        self.client.remove_listener(self._on_state_change)
        self._wake.set()

    # -- watches and the worker ------------------------------------------------------------------------

    def _on_watch(self, event: WatchedEvent) -> None:
        path = event.path or ""
        with self._lock:
            if path == BROKER_IDS_PATH or path.startswith(BROKER_IDS_PATH + "/"):
                self._brokers_dirty = True
            elif path == BROKER_TOPICS_PATH:
                self._topics_dirty = True
            elif match := _STATE.fullmatch(path):
                self._dirty_states.add((match.group(1), int(match.group(2))))
            elif match := _TOPIC.fullmatch(path):
                self._dirty_topics.add(match.group(1))
            else:
                return
        self._wake.set()

    def _on_state_change(self, state: str) -> None:
        if state == KazooState.CONNECTED:
            self.refresh_all()

    def _run(self) -> None:
        while not self._closed:
            self._wake.wait()
            self._wake.clear()
            if self._closed:
                break
            try:
                self._refresh()
            except (ConnectionLoss, SessionExpiredError):
                self.refresh_all_later()  # the state listener wakes us once connected again
            except Exception:
                log.exception("reading the cluster metadata from ZooKeeper failed; retrying")
                self.refresh_all_later()
                self.client.handler.sleep_func(RETRY_AFTER_ERROR_S)
                self._wake.set()

    def refresh_all_later(self) -> None:
        with self._lock:
            self._all_dirty = True

    def _take_dirty(self) -> tuple[bool, bool, set[str], set[TopicPartition]]:
        with self._lock:
            if self._all_dirty:
                self._all_dirty = False
                self._brokers_dirty = self._topics_dirty = False
                self._dirty_topics.clear()
                self._dirty_states.clear()
                return True, True, set(self._assignments), set(self._states)
            taken = (
                self._brokers_dirty,
                self._topics_dirty,
                set(self._dirty_topics),
                set(self._dirty_states),
            )
            self._brokers_dirty = self._topics_dirty = False
            self._dirty_topics.clear()
            self._dirty_states.clear()
            return taken

    def _refresh(self) -> None:
        brokers_dirty, topics_dirty, topics, states = self._take_dirty()
        if brokers_dirty:
            self._brokers = self._read_brokers()
        if topics_dirty:
            names = set(self.client.get_children(BROKER_TOPICS_PATH, watch=self._on_watch))
            for gone in set(self._assignments) - names:
                self._drop_topic(gone)
            topics |= names - set(self._assignments)
        for topic in sorted(topics):
            states |= self._read_topic(topic)
        self._read_states([(t, p) for t, p in sorted(states) if p in self._assignments.get(t, {})])
        self._publish()

    def _read_brokers(self) -> dict[int, BrokerRegistration]:
        brokers = {}
        for child in self.client.get_children(BROKER_IDS_PATH, watch=self._on_watch):
            try:
                data, _ = self.client.get(broker_id_path(int(child)), watch=self._on_watch)
                brokers[int(child)] = BrokerRegistration.parse(child, data)
            except NoNodeError:
                continue
            except (ValueError, ZkDataError) as exc:
                log.warning("ignoring broker registration %s: %s", child, exc)
        return brokers

    def _read_topic(self, topic: str) -> set[TopicPartition]:
        """Read one topic's assignment; return the partitions whose state must be (re-)read."""
        try:
            data, _ = self.client.get(topic_path(topic), watch=self._on_watch)
            assignment = {p: tuple(r) for p, r in parse_topic_assignment(topic, data).items()}
        except NoNodeError:
            self._drop_topic(topic)
            return set()
        except ZkDataError as exc:
            log.warning("ignoring topic %s: %s", topic, exc)
            self._drop_topic(topic)
            return set()
        old = self._assignments.get(topic, {})
        self._assignments[topic] = assignment
        for partition in set(old) - set(assignment):
            self._states.pop((topic, partition), None)
        return {(topic, p) for p in assignment if p not in old or (topic, p) not in self._states}

    def _read_states(self, partitions: list[TopicPartition]) -> None:
        """Read state znodes, pipelined; a missing one is watched for its creation (and read if it appeared)."""
        while partitions:
            reads = [
                (tp, self.client.get_async(partition_state_path(*tp), watch=self._on_watch))
                for tp in partitions
            ]
            missing = []
            for (topic, partition), read in reads:
                try:
                    data, stat = read.get()
                except NoNodeError:
                    missing.append((topic, partition))
                    continue
                try:
                    state = PartitionState.parse(topic, partition, data, zk_version=stat.version)
                except ZkDataError as exc:
                    log.warning("ignoring partition state: %s", exc)
                    state = None
                self._states[(topic, partition)] = state
            watches = [
                (tp, self.client.exists_async(partition_state_path(*tp), watch=self._on_watch))
                for tp in missing
            ]
            partitions = []
            for tp, exists in watches:
                self._states[tp] = None
                if exists.get() is not None:
                    partitions.append(tp)  # created in between: read it again

    def _drop_topic(self, topic: str) -> None:
        for partition in self._assignments.pop(topic, {}):
            self._states.pop((topic, partition), None)

    def _publish(self) -> None:
        topics = {
            topic: {
                p: PartitionMetadata(replicas, self._states.get((topic, p))) for p, replicas in parts.items()
            }
            for topic, parts in self._assignments.items()
        }
        snapshot = ClusterSnapshot(dict(self._brokers), topics)
        if snapshot == self._snapshot:
            return
        self._snapshot = snapshot
        for listener in list(self._listeners):
            try:
                listener(snapshot)
            except Exception:
                log.exception("metadata listener %r failed", listener)
