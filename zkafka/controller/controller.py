"""KafkaController: the 0.8 controller: the partition states it writes and the requests it sends.

Elected as election.py says, it acts on every change the ControllerContext sees (brokers coming and
going, new topics and partitions): it asks leader_selector.py what each partition's state should be and
writes the state znodes, each write conditional on the version it read. With ``delete.topic.enable`` it also
carries out ``/admin/delete_topics``: the ``on_delete_topic`` hook first, StopReplica(delete=1) to the
replicas, then the topic's znodes. ``/admin/preferred_replica_election`` (and, with
``auto.leader.rebalance.enable``, a check every ``leader.imbalance.check.interval.seconds``) hands partitions
back to their preferred replicas.

With a ControllerChannelManager (a broker's controller) it tells the brokers over the wire, as 0.8.2 does:
after each pass, request_planner.py plans the LeaderAndIsr, UpdateMetadata and StopReplica requests that
bring every live broker up to date with the states read and written, and the channels send them. A broker's
ControlledShutdown request (``shutdown_broker``) marks it shutting down: the next pass moves its leaderships
to other ISR members and takes it out of the ISRs it is in, and the answer lists what it still leads.
State-change listeners get every write.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable
from dataclasses import replace

from kazoo.client import KazooClient
from kazoo.exceptions import BadVersionError, KazooException, NodeExistsError, NoNodeError

from zkafka.config import parse_bool
from zkafka.config08 import BrokerConfig08
from zkafka.controller.admin_tasks import AdminTasks
from zkafka.controller.channel_manager import ControllerChannelManager
from zkafka.controller.context import RETRY_AFTER_ERROR_S, ClusterSnapshot, ControllerContext
from zkafka.controller.election import ControllerElection, ControllerMovedError
from zkafka.controller.leader_selector import (
    StateChange,
    partition_state_changes,
)
from zkafka.controller.request_planner import ClusterView, RequestPlanner
from zkafka.errors import BrokerNotAvailableError, InvalidConfigError
from zkafka.protocol.errors import ErrorCode, error_name
from zkafka.protocol.inter_broker import StopReplicaRequestV0
from zkafka.protocol.inter_broker import TopicPartition as admin_partition
from zkafka.zk.client import delete_if_owned, get_data
from zkafka.zk.paths08 import (
    CONTROLLER_PATH,
    DELETE_TOPICS_PATH,
    PartitionState,
    ZkDataError,
    parse_topic_config,
    partition_path,
    partition_state_path,
    topic_config_path,
    topic_partitions_path,
)

log = logging.getLogger(__name__)

TopicPartition = tuple[str, int]


class KafkaController(AdminTasks, ControllerElection):
    """Runs for controller on a shared session; while elected, keeps every partition's leader and ISR written."""

    def __init__(
        self,
        config: BrokerConfig08,
        client: KazooClient,
        cache: ControllerContext,
        *,
        on_delete_topic: Callable[[str], None] | None = None,
        channels: ControllerChannelManager | None = None,
    ) -> None:
        super().__init__(config["broker.id"], client)
        self.unclean_default: bool = config["unclean.leader.election.enable"]
        self.delete_topic_enable: bool = config["delete.topic.enable"]
        self.auto_rebalance: bool = config["auto.leader.rebalance.enable"]
        self.imbalance_percentage: int = config["leader.imbalance.per.broker.percentage"]
        self.imbalance_check_s: float = config["leader.imbalance.check.interval.seconds"]
        self._preferred: set[TopicPartition] = set()  # partitions to hand back to their preferred replica
        self.cache = cache
        self.on_delete_topic = on_delete_topic
        self._wake = client.handler.event_object()
        self._listeners: list[Callable[[list[StateChange]], None]] = []
        self._retry_soon = False
        self._worker = None
        self.channels = channels
        self._planner: RequestPlanner | None = None
        self._written: dict[TopicPartition, PartitionState] = {}
        self._replicas_deleted: dict[str, set[int]] = {}  # topic being deleted -> brokers that answered
        self._written_replicas: dict[TopicPartition, tuple[int, ...]] = {}
        self.shutting_down: set[int] = set()
        self._shutdown_waiters: list[tuple[int, object]] = []

    def startup(self) -> None:
        """Follow the session and the cache, and run for election."""
        self.client.ensure_path(DELETE_TOPICS_PATH)
        self.client.add_listener(self._on_session)
        self.cache.add_listener(self._on_metadata)
        self._worker = self.client.handler.spawn(self._run)
        self.elect()

    def add_state_change_listener(self, listener: Callable[[list[StateChange]], None]) -> None:
        """Call ``listener(changes)`` on the controller's worker after it wrote partition states."""
        self._listeners.append(listener)

    def on_elected(self) -> None:
        listener = self.channels.security.listener if self.channels is not None else "PLAINTEXT"
        self._planner = RequestPlanner(self.broker_id, self.epoch, listener)
        self._written = {}
        self._written_replicas = {}
        self.shutting_down = set()
        self._preferred = set()
        if self.auto_rebalance:
            self.client.handler.spawn(self._check_imbalance, self.epoch)
        self._wake.set()

    def on_resigned(self) -> None:
        self._planner = None
        if self.channels is not None:
            self.channels.shutdown()
        self._answer_shutdowns(None)

    # -- while in office -------------------------------------------------------------------------------

    def _on_metadata(self, snapshot: ClusterSnapshot) -> None:
        if self.active:
            self._wake.set()

    def _run(self) -> None:
        while not self._closed:
            self._wake.wait()
            self._wake.clear()
            if self._closed or not self.active:
                continue
            self._retry_soon = False
            try:
                self.act(self.cache.snapshot())
            except KazooException as exc:
                if self._closed:
                    break
                log.warning(
                    "controller %d: ZooKeeper failed while acting (%r); retrying", self.broker_id, exc
                )
                self._retry_soon = True
            except Exception:
                log.exception("controller %d: acting on a change failed; retrying", self.broker_id)
                self._retry_soon = True
            if self._retry_soon:
                self.client.handler.sleep_func(RETRY_AFTER_ERROR_S)
                self._wake.set()

    def act(self, snapshot: ClusterSnapshot) -> list[StateChange]:
        """Carry out pending deletions, write every partition state the cluster calls for (then preferred
        replica elections and reassignments), then tell the brokers."""
        self.shutting_down &= set(snapshot.brokers)
        deleting = self._delete_topics(snapshot) if self.delete_topic_enable else set()
        assignments = self._current_assignments(snapshot)
        states = self._current_states(snapshot)
        changes = partition_state_changes(
            assignments,
            states,
            snapshot.brokers,
            self.epoch,
            unclean=functools.cache(self._unclean_for),
            skip_topics=deleting,
            shutting_down=self.shutting_down,
        )
        written = self._apply(changes, states)
        electable = set(snapshot.brokers) - self.shutting_down
        busy = {(c.topic, c.partition) for c in written}
        written += self._elect_preferred(assignments, states, electable, busy, deleting)
        busy |= {(c.topic, c.partition) for c in written}
        written += self._reassign(assignments, states, electable, busy)
        if written:
            for listener in list(self._listeners):
                try:
                    listener(written)
                except Exception:
                    log.exception("state-change listener %r failed", listener)
        view = ClusterView(
            {tp: state for tp, state in states.items() if state is not None},
            {(t, p): replicas for t, parts in assignments.items() for p, replicas in parts.items()},
            snapshot.brokers,
            frozenset(self.shutting_down),
            frozenset(deleting),
        )
        self._send_requests(view)
        self._answer_shutdowns(view)
        return written

    def _apply(self, changes: list[StateChange], states: dict) -> list[StateChange]:
        """Write ``changes`` (if still in office) and put what was written into ``states``."""
        written = self._write(changes) if self.active and changes else []
        for change in written:
            states[(change.topic, change.partition)] = self._written[(change.topic, change.partition)]
        return written

    def _current_states(self, snapshot: ClusterSnapshot) -> dict[TopicPartition, PartitionState | None]:
        """The snapshot's states, with this controller's own writes where the snapshot has not seen them yet."""
        states = snapshot.states()
        for tp, mine in list(self._written.items()):
            if tp not in states:
                del self._written[tp]
                continue
            seen = states[tp]
            if seen is not None and seen.zk_version >= mine.zk_version:
                del self._written[tp]
            else:
                states[tp] = mine
        return states

    def _send_requests(self, view: ClusterView) -> None:
        if self.channels is None or self._planner is None or not self.active:
            return
        self.channels.update_brokers(dict(view.brokers))
        for broker_id, request in self._planner.plan(view):
            callback = functools.partial(_check_response, broker_id)
            if isinstance(request, StopReplicaRequestV0) and request.delete_partitions:
                callback = functools.partial(self._replica_deleted, broker_id, request, callback)
            self.channels.send(broker_id, request, callback)

    def _replica_deleted(
        self, broker_id: int, request: StopReplicaRequestV0, check: Callable, response
    ) -> None:
        """A StopReplica(delete=1) answered: the deletion of the topics it deleted without error may go on;
        a partition the broker refused is sent again on a later pass (0.8.2's TopicDeletionManager)."""
        check(response)
        refused = {(p.topic, p.partition) for p in getattr(response, "partitions", ()) if p.error}
        if getattr(response, "error", 0):
            refused = {(p.topic, p.partition) for p in request.partitions}
        for topic in {p.topic for p in request.partitions} - {topic for topic, _ in refused}:
            self._replicas_deleted.setdefault(topic, set()).add(broker_id)
        if refused and self._planner is not None:
            self._planner.stop_failed(broker_id, refused)
            self.client.handler.spawn(self._wake_after, RETRY_AFTER_ERROR_S)
        else:
            self._wake.set()

    def _wake_after(self, seconds: float) -> None:
        self.client.handler.sleep_func(seconds)
        self._wake.set()

    # -- controlled shutdown ---------------------------------------------------------------------------

    def shutdown_broker(self, broker_id: int, timeout_s: float = 30.0) -> list[TopicPartition]:
        """A broker's ControlledShutdown: move its leaderships away; the partitions (with more than one
        replica) it still leads. ControllerMovedError when not the controller, BrokerNotAvailableError for a
        broker that is not live."""
        if not self.active:
            raise ControllerMovedError(f"broker {self.broker_id} is not the controller")
        if broker_id not in self.cache.snapshot().brokers:
            raise BrokerNotAvailableError(f"broker {broker_id} is not a live broker")
        log.info("controller %d: broker %d asks for a controlled shutdown", self.broker_id, broker_id)
        if broker_id not in self.shutting_down:
            self._stop_following(broker_id, timeout_s)
        self.shutting_down.add(broker_id)
        result = self.client.handler.async_result()
        self._shutdown_waiters.append((broker_id, result))
        self._wake.set()
        return result.get(timeout=timeout_s)

    def _stop_following(self, broker_id: int, timeout_s: float) -> None:
        """Before its ISRs shrink, the broker stops fetching what it follows (StopReplica, answered), so that no
        fetch of its own brings it back into an ISR it was just taken out of."""
        if self.channels is None or self._planner is None:
            return
        snapshot = self.cache.snapshot()
        states = self._current_states(snapshot)
        followed = sorted(
            (t, p)
            for t, parts in snapshot.topics.items()
            for p, meta in parts.items()
            if broker_id in meta.replicas
            and (state := states.get((t, p))) is not None
            and state.leader != broker_id
        )
        if not followed:
            return
        request = StopReplicaRequestV0(
            self.broker_id, self.epoch, 0, [admin_partition(t, p) for t, p in followed]
        )
        done = self.client.handler.event_object()
        if self.channels.send(broker_id, request, lambda response: done.set()):
            self._planner.stopped(broker_id, followed)
            done.wait(timeout_s)

    def _answer_shutdowns(self, view: ClusterView | None) -> None:
        waiters, self._shutdown_waiters = self._shutdown_waiters, []
        for broker_id, result in waiters:
            if view is None:
                result.set_exception(ControllerMovedError(f"broker {self.broker_id} resigned as controller"))
                continue
            remaining = sorted(
                tp
                for tp, state in view.states.items()
                if state.leader == broker_id and len(view.assignments.get(tp, ())) > 1
            )
            log.info(
                "controller %d: broker %d shutting down still leads %d partition(s)",
                self.broker_id,
                broker_id,
                len(remaining),
            )
            result.set(remaining)

    def _write(self, changes: list[StateChange]) -> list[StateChange]:
        """Write the state znodes (pipelined), each conditional on what was read; return those written."""
        self._make_partition_paths([change for change in changes if change.old is None])
        writes = []
        for change in changes:
            path = partition_state_path(change.topic, change.partition)
            data = change.new.to_json().encode()
            if change.old is None:
                writes.append((change, self.client.create_async(path, data)))
            else:
                writes.append((change, self.client.set_async(path, data, version=change.old.zk_version)))
        written = []
        for change, result in writes:
            try:
                stat = result.get()
            except (NodeExistsError, BadVersionError, NoNodeError):
                log.info("%s-%d changed since it was read; deciding again", change.topic, change.partition)
                continue
            version = 0 if change.old is None else stat.version
            self._written[(change.topic, change.partition)] = replace(change.new, zk_version=version)
            written.append(change)
            log.info(
                "%s-%d: leader %d, ISR %s, leader epoch %d (was %s)",
                change.topic,
                change.partition,
                change.new.leader,
                list(change.new.isr),
                change.new.leader_epoch,
                "new" if change.old is None else f"leader {change.old.leader}, ISR {list(change.old.isr)}",
            )
        return written

    def _make_partition_paths(self, new: list[StateChange]) -> None:
        """Create the ``partitions/<p>`` parents of new state znodes, pipelined."""
        for topic in sorted({change.topic for change in new}):
            try:  # not ensure_path: a topic deleted meanwhile must not come back as an empty znode
                self.client.create(topic_partitions_path(topic), b"")
            except (NodeExistsError, NoNodeError):
                pass
        parents = [self.client.create_async(partition_path(c.topic, c.partition), b"") for c in new]
        for parent in parents:
            try:
                parent.get()
            except (NodeExistsError, NoNodeError):
                pass

    def _unclean_for(self, topic: str) -> bool:
        data = get_data(self.client, topic_config_path(topic))
        if data is None:
            return self.unclean_default
        try:
            override = parse_topic_config(topic, data).get("unclean.leader.election.enable")
            return (
                self.unclean_default
                if override is None
                else parse_bool("unclean.leader.election.enable", override)
            )
        except (ZkDataError, InvalidConfigError) as exc:
            log.warning("topic %s: %s; using the broker's unclean.leader.election.enable", topic, exc)
            return self.unclean_default

    def shutdown(self) -> None:
        """Stop acting and give up ``/controller`` at once so another broker takes over."""
        self._closed = True
        self.client.remove_listener(self._on_session)
        self._wake.set()
        if self.active:
            self.resign()
            delete_if_owned(self.client, CONTROLLER_PATH)


def _check_response(broker_id: int, response: object) -> None:
    """Log what a broker refused (a stale epoch after a controller change is expected; any other partition
    error, e.g. KAFKA_STORAGE_ERROR for a log it cannot create, is a warning naming the partition)."""
    refused = [p for p in getattr(response, "partitions", ()) if p.error]
    for p in refused:
        if p.error not in (ErrorCode.STALE_LEADER_EPOCH, ErrorCode.STALE_CONTROLLER_EPOCH):
            log.warning(
                "controller: broker %d refused %s-%d: %s",
                broker_id,
                p.topic,
                p.partition,
                error_name(p.error),
            )
    if getattr(response, "error", 0) or refused:
        log.info("controller: broker %d answered %s", broker_id, response)
