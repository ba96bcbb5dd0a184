"""A consumer's membership of its group: its ZooKeeper session, its registration and the "group changed" flag.

The connector owns one ``GroupMembership`` and feeds it the session's state changes; the rebalancer reads
through it (the client, the group's znode layout, the consumer id and topic count, and ``nodes``: the znodes
read so far, kept until their watches fire, which call ``on_watch``).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Protocol

import gevent.event
from kazoo.exceptions import NodeExistsError

from zkafka.errors import KafkaError
from zkafka.topic_count import TopicCount
from zkafka.zk.client import create_ephemeral_expect_conflict
from zkafka.zk.watched import WatchedZNodes

if TYPE_CHECKING:
    from kazoo.client import KazooClient

log = logging.getLogger(__name__)


class ConsumerIdConflictError(KafkaError):
    """Another live consumer is registered under this consumer's id (``consumerid`` reused)."""


class GroupDirs(Protocol):
    """Where a group's members, owners and offsets live (``zk.paths.ZKGroupDirs``)."""

    @property
    def consumer_registry_dir(self) -> str: ...

    def consumer_path(self, consumer_id: str) -> str: ...

    def owner_path(self, topic: str, partition: str) -> str: ...

    def offset_path(self, topic: str, partition: str) -> str: ...


class GroupMembership:
    """One consumer's registration in its group, in the ZooKeeper session it currently has."""

    def __init__(self, zk: KazooClient, dirs: GroupDirs, consumer_id: str) -> None:
        self.zk = zk
        self.dirs = dirs
        self.consumer_id = consumer_id
        self.topic_count: TopicCount | None = None
        self.connected = gevent.event.Event()  # the ZooKeeper connection is up
        self.rebalance_requested = gevent.event.Event()
        self.session_epoch = 0  # bumped when a session is lost: owner nodes of older epochs are gone
        self.session_lost = False
        self.registered = False
        self.nodes = WatchedZNodes(zk, self.on_watch)  # the group's inputs read so far (group_view.py)

    def register(self) -> None:
        """Write ``/consumers/<g>/ids/<consumer id>`` (ephemeral) with the topic count."""
        path = self.dirs.consumer_path(self.consumer_id)
        value = self.topic_count.db_string()
        try:
            create_ephemeral_expect_conflict(self.zk, path, value)
        except NodeExistsError:
            raise ConsumerIdConflictError(f"{path} is registered by another live consumer") from None
        self.session_lost = False
        self.registered = True
        log.info("registered consumer %s: %s", self.consumer_id, value)

    def ensure_registered(self) -> None:
        """Register again if the session that held the registration is gone."""
        if self.session_lost or not self.registered:
            self.register()

    def registration_lost(self) -> None:
        """Our registration vanished: write it again on the next attempt."""
        self.session_lost = True

    def on_watch(self) -> None:
        """A watched input of the group changed: only flags it (this runs on kazoo's event greenlet)."""
        log.debug("%s: a watch fired", self.consumer_id)
        self.rebalance_requested.set()

    def session_expired(self) -> None:
        """The session is gone, with our registration and owner nodes."""
        self.connected.clear()
        self.session_epoch += 1
        self.session_lost = True
        self.nodes.clear()
