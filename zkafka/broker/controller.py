"""KafkaController: the 0.8 controller's election and its ZooKeeper side, for the one-replica line.

Brokers race to create the ephemeral ``/controller``; the losers watch it and race again when it goes.
The winner raises ``/controller_epoch`` by one (a version-checked write; ``1`` when absent) and from then on
acts on every change the MetadataCache sees (brokers coming and going, new topics and partitions): it asks
leader_election.py what each partition's state should be and writes the state znodes, each write
conditional on the version it read. With ``delete.topic.enable`` it also carries out ``/admin/delete_topics``:
the ``on_delete_topic`` hook first (where brokers delete the logs), then the topic's znodes. A lost session
ends its reign; the next session runs for election again.

Telling brokers over the wire (LeaderAndIsr, UpdateMetadata) is not done here: state-change listeners get
every write, and brokers can follow the state znodes through the MetadataCache.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable

from kazoo.client import KazooClient, KazooState
from kazoo.exceptions import BadVersionError, KazooException, NodeExistsError, NoNodeError
from kazoo.protocol.states import WatchedEvent

from zkafka.broker.leader_election import StateChange, partition_state_changes
from zkafka.broker.metadata_cache import ClusterSnapshot, MetadataCache
from zkafka.config import parse_bool
from zkafka.config08 import BrokerConfig08
from zkafka.errors import InvalidConfigError, KafkaError
from zkafka.utils import now_ms
from zkafka.zk.client import delete_if_owned, get_data, session_id
from zkafka.zk.paths08 import (
    CONTROLLER_EPOCH_PATH,
    CONTROLLER_PATH,
    DELETE_TOPICS_PATH,
    INITIAL_CONTROLLER_EPOCH,
    ZkDataError,
    delete_topic_path,
    encode_controller,
    encode_controller_epoch,
    parse_controller,
    parse_controller_epoch,
    parse_topic_config,
    partition_path,
    partition_state_path,
    topic_config_path,
    topic_partitions_path,
    topic_path,
)

log = logging.getLogger(__name__)

RETRY_AFTER_ERROR_S = 1.0


class ControllerMovedError(KafkaError):
    """Another broker became controller while this one was taking office."""


class KafkaController:
    """Runs for controller on a shared session; while elected, keeps every partition's leader and ISR written."""

    def __init__(
        self,
        config: BrokerConfig08,
        client: KazooClient,
        cache: MetadataCache,
        *,
        on_delete_topic: Callable[[str], None] | None = None,
    ) -> None:
        self.broker_id: int = config["broker.id"]
        self.unclean_default: bool = config["unclean.leader.election.enable"]
        self.delete_topic_enable: bool = config["delete.topic.enable"]
        self.client = client
        self.cache = cache
        self.on_delete_topic = on_delete_topic
        self.epoch = 0
        self.active = False
        self._closed = False
        self._session_lost = False
        self._wake = client.handler.event_object()
        self._listeners: list[Callable[[list[StateChange]], None]] = []
        self._retry_soon = False
        self._worker = None

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

    def controller_id(self) -> int | None:
        """The broker id in ``/controller`` now (None when there is no controller)."""
        data = get_data(self.client, CONTROLLER_PATH)
        return None if data is None else parse_controller(data)

    # -- election --------------------------------------------------------------------------------------

    def elect(self) -> None:
        """Try to become controller; otherwise watch ``/controller`` to try again when it goes."""
        while not (self.active or self._closed):
            value = encode_controller(self.broker_id, str(now_ms())).encode()
            try:
                self.client.create(CONTROLLER_PATH, value, ephemeral=True)
            except NodeExistsError:
                try:
                    data, stat = self.client.get(CONTROLLER_PATH, watch=self._on_controller_change)
                except NoNodeError:
                    continue  # it just went: race again
                if stat.ephemeralOwner != session_id(self.client):
                    log.info(
                        "broker %d: the controller is %s", self.broker_id, data.decode("utf-8", "replace")
                    )
                    return
            self._take_office()
            return

    def _take_office(self) -> None:
        try:
            self.epoch = self._increment_epoch()
        except ControllerMovedError as exc:
            log.info("broker %d: %s", self.broker_id, exc)
            return
        self.active = True
        log.info("broker %d is the controller (epoch %d)", self.broker_id, self.epoch)
        self._wake.set()

    def _increment_epoch(self) -> int:
        while True:
            try:
                data, stat = self.client.get(CONTROLLER_EPOCH_PATH)
            except NoNodeError:
                try:
                    self.client.create(
                        CONTROLLER_EPOCH_PATH, encode_controller_epoch(INITIAL_CONTROLLER_EPOCH).encode()
                    )
                    return INITIAL_CONTROLLER_EPOCH
                except NodeExistsError:
                    continue
            epoch = parse_controller_epoch(data) + 1
            try:
                self.client.set(
                    CONTROLLER_EPOCH_PATH, encode_controller_epoch(epoch).encode(), version=stat.version
                )
                return epoch
            except BadVersionError:
                raise ControllerMovedError("the controller epoch moved while taking office") from None

    def resign(self) -> None:
        if self.active:
            log.info("broker %d resigns as controller (epoch %d)", self.broker_id, self.epoch)
        self.active = False

    def _on_controller_change(self, event: WatchedEvent) -> None:
        if not self._closed:
            self.client.handler.spawn(self._elect_in_background)

    def _elect_in_background(self) -> None:
        try:
            if self.client.exists(CONTROLLER_PATH, watch=self._on_controller_change) is None:
                self.elect()
        except KazooException as exc:
            # a lost connection: the session listener runs the election again once connected
            log.info("broker %d: controller election interrupted: %r", self.broker_id, exc)

    def _on_session(self, state: str) -> None:
        if state == KazooState.LOST:
            self._session_lost = True
            self.resign()
        elif state == KazooState.CONNECTED and self._session_lost:
            self._session_lost = False
            self.client.handler.spawn(self._elect_in_background)

    # -- while in office -------------------------------------------------------------------------------

    def _on_metadata(self, snapshot: ClusterSnapshot) -> None:
        if self.active:
            self._wake.set()

    def _on_delete_topics(self, event: WatchedEvent) -> None:
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
        """Carry out pending deletions, then write every partition state the snapshot calls for."""
        deleting = self._delete_topics(snapshot) if self.delete_topic_enable else set()
        changes = partition_state_changes(
            snapshot.assignments(),
            snapshot.states(),
            snapshot.brokers,
            self.epoch,
            unclean=functools.cache(self._unclean_for),
            skip_topics=deleting,
        )
        written = self._write(changes) if self.active else []
        if written:
            for listener in list(self._listeners):
                try:
                    listener(written)
                except Exception:
                    log.exception("state-change listener %r failed", listener)
        return written

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
                result.get()
            except (NodeExistsError, BadVersionError, NoNodeError):
                log.info("%s-%d changed since it was read; deciding again", change.topic, change.partition)
                continue
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

    def _delete_topics(self, snapshot: ClusterSnapshot) -> set[str]:
        """Delete every topic marked under ``/admin/delete_topics``; return those still being deleted."""
        marked = set(self.client.get_children(DELETE_TOPICS_PATH, watch=self._on_delete_topics))
        for topic in sorted(marked):
            try:
                if topic in snapshot.topics and self.on_delete_topic is not None:
                    self.on_delete_topic(topic)
                self._delete_znodes(topic)
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

    def shutdown(self) -> None:
        """Stop acting and give up ``/controller`` at once so another broker takes over."""
        self._closed = True
        self.client.remove_listener(self._on_session)
        self._wake.set()
        if self.active:
            self.active = False
            delete_if_owned(self.client, CONTROLLER_PATH)
