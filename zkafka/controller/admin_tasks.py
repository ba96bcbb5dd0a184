"""AdminTasks: what the controller does for ``/admin``: topic deletion, preferred replica elections (and the
automatic leader rebalance), partition reassignment. A mixin of KafkaController: it uses the controller's
session, cache, epoch and writes; the decisions are leader_selector.py's and reassignment.py's (pure).
"""

from __future__ import annotations

import logging
from typing import Any

from kazoo.exceptions import NoNodeError
from kazoo.protocol.states import WatchedEvent

from zkafka.admin.reassignment import pending_reassignments, remove_reassignments, write_partition_replicas
from zkafka.cluster.snapshot import ClusterSnapshot
from zkafka.controller.leader_selector import StateChange, imbalanced_partitions, preferred_replica_changes
from zkafka.controller.reassignment import reassignment_step
from zkafka.zk.paths08 import (
    DELETE_TOPICS_PATH,
    PREFERRED_REPLICA_ELECTION_PATH,
    ZkDataError,
    delete_topic_path,
    parse_partition_list,
    topic_config_path,
    topic_path,
)

log = logging.getLogger(__name__)

TopicPartition = tuple[str, int]
Assignments = dict[str, dict[int, tuple[int, ...]]]


class AdminTasks:
    """The controller's ``/admin`` work (mixed into KafkaController)."""

    client: Any
    cache: Any
    broker_id: int
    epoch: int
    active: bool
    _closed: bool
    _wake: Any
    _preferred: set[TopicPartition]
    _written_replicas: dict[TopicPartition, tuple[int, ...]]
    shutting_down: set[int]
    on_delete_topic: Any
    _retry_soon: bool
    channels: Any
    _replicas_deleted: dict[str, set[int]]

    def _on_admin(self, event: WatchedEvent) -> None:
        if self.active:
            self._wake.set()

    def _current_assignments(self, snapshot: ClusterSnapshot) -> Assignments:
        """The snapshot's assignments, with the replica lists this controller wrote and the snapshot has not
        seen yet."""
        assignments = snapshot.assignments()
        for (topic, partition), mine in list(self._written_replicas.items()):
            seen = assignments.get(topic, {}).get(partition)
            if seen is None or seen == mine:
                del self._written_replicas[(topic, partition)]
            else:
                assignments[topic][partition] = mine
        return assignments

    # -- preferred replicas (§8.6) ----------------------------------------------------------------------

    def _elect_preferred(
        self, assignments: Assignments, states: dict, electable: set[int], busy: set, deleting: set[str]
    ) -> list[StateChange]:
        """Hand the partitions asked for (the admin znode, the imbalance check) to their preferred replica;
        the znode goes once all were tried."""
        asked = self._read_preferred_election()
        moved = []
        if self._preferred and self.active:
            now = {tp for tp in self._preferred if tp not in busy and tp[0] not in deleting}
            moved = self._apply(
                preferred_replica_changes(assignments, states, now, electable, self.epoch), states
            )
            self._preferred -= now
        if asked and not self._preferred:
            self._delete_if_present(PREFERRED_REPLICA_ELECTION_PATH)
        return moved

    def _read_preferred_election(self) -> bool:
        """Take the partitions listed in ``/admin/preferred_replica_election`` (watched); True if it exists."""
        try:
            data, _ = self.client.get(PREFERRED_REPLICA_ELECTION_PATH, watch=self._on_admin)
        except NoNodeError:
            self.client.exists(PREFERRED_REPLICA_ELECTION_PATH, watch=self._on_admin)
            return False
        try:
            self._preferred |= parse_partition_list(PREFERRED_REPLICA_ELECTION_PATH, data)
        except ZkDataError as exc:
            log.warning("controller %d: ignoring %s", self.broker_id, exc)
        return True

    def _check_imbalance(self, epoch: int) -> None:
        """``auto.leader.rebalance.enable``: every ``leader.imbalance.check.interval.seconds`` (the first
        after 5 s), hand back the partitions of brokers leading too few of those preferring them."""
        delay = min(5.0, self.imbalance_check_s)
        while True:
            self.client.handler.sleep_func(delay)
            delay = self.imbalance_check_s
            if self._closed or not self.active or self.epoch != epoch:
                return
            snapshot = self.cache.snapshot()
            if self._preferred or self.shutting_down:
                continue
            imbalanced = imbalanced_partitions(
                snapshot.assignments(),
                self._current_states(snapshot),
                snapshot.brokers,
                self.imbalance_percentage,
            )
            if imbalanced:
                log.info(
                    "controller %d: leader imbalance: electing preferred replicas of %d partition(s)",
                    self.broker_id,
                    len(imbalanced),
                )
                self._preferred |= imbalanced
                self._wake.set()

    def _delete_if_present(self, path: str) -> None:
        try:
            self.client.delete(path)
        except NoNodeError:
            pass

    # -- reassignment (§8.7) ----------------------------------------------------------------------------

    def _reassign(
        self, assignments: Assignments, states: dict, electable: set[int], busy: set
    ) -> list[StateChange]:
        """Take each partition listed in ``/admin/reassign_partitions`` one step further (reassignment.py)."""
        moves = pending_reassignments(self.client, watch=self._on_admin)
        if not moves or not self.active:
            return []
        finished, changes, replicas = [], [], {}
        for (topic, partition), target in sorted(moves.items()):
            current = assignments.get(topic, {}).get(partition)
            if current is None:
                log.warning(
                    "controller %d: cannot reassign %s-%d: no such partition",
                    self.broker_id,
                    topic,
                    partition,
                )
                finished.append((topic, partition))
                continue
            if (topic, partition) in busy:
                continue
            state = states.get((topic, partition))
            step = reassignment_step(target, current, state, electable, self.epoch)
            if step.action in ("done", "abort"):
                if step.action == "abort":
                    log.warning(
                        "controller %d: reassignment of %s-%d to %s abandoned: a new replica is not alive",
                        self.broker_id,
                        topic,
                        partition,
                        target,
                    )
                finished.append((topic, partition))
            elif step.action in ("expand", "finish"):
                replicas[(topic, partition)] = step.replicas
                changes.append(StateChange(topic, partition, state, step.state))
        for topic in sorted({t for t, _ in replicas}):
            write_partition_replicas(
                self.client, topic, {p: r for (t, p), r in replicas.items() if t == topic}
            )
        for (topic, partition), new in replicas.items():
            self._written_replicas[(topic, partition)] = new
            assignments[topic][partition] = new
            log.info("controller %d: %s-%d reassigned to %s", self.broker_id, topic, partition, list(new))
        if finished:
            remove_reassignments(self.client, finished)
        return self._apply(changes, states)

    # -- topic deletion (§8.8) -------------------------------------------------------------------------

    def _delete_topics(self, snapshot: ClusterSnapshot) -> set[str]:
        """Delete every topic marked under ``/admin/delete_topics``; return those still being deleted.

        As 0.8.2's TopicDeletionManager, a topic with a replica on a broker that is down stays marked (its
        live replicas are stopped and deleted meanwhile) until that broker returns and is told to delete its
        replica too, and (a controller with channels) until every replica's broker answered its StopReplica;
        only then go the topic's znodes, so the topic cannot be created again over an old log."""
        marked = set(self.client.get_children(DELETE_TOPICS_PATH, watch=self._on_admin))
        for topic in set(self._replicas_deleted) - marked:  # a replica reassigned away: no deletion's answer
            del self._replicas_deleted[topic]
        for topic in sorted(marked):
            replicas = {b for meta in snapshot.topics.get(topic, {}).values() for b in meta.replicas}
            waiting = sorted(replicas - set(snapshot.brokers))
            if not waiting and self.channels is not None:
                waiting = sorted(
                    replicas - self._replicas_deleted.get(topic, set())
                )  # StopReplica unanswered
            if waiting:
                log.debug(
                    "controller %d: deleting topic %s waits for brokers %s", self.broker_id, topic, waiting
                )
                continue
            try:
                if topic in snapshot.topics and self.on_delete_topic is not None:
                    self.on_delete_topic(topic)
                self._delete_znodes(topic)
                self._replicas_deleted.pop(topic, None)
                log.info("controller %d deleted topic %s", self.broker_id, topic)
            except Exception:
                log.exception("deleting topic %s failed; will retry", topic)
                self._retry_soon = True
        return marked

    def _delete_znodes(self, topic: str) -> None:
        for path in (topic_path(topic), topic_config_path(topic), delete_topic_path(topic)):
            try:
                self.client.delete(path, recursive=True)
            except NoNodeError:
                pass
