"""One consumer's side of a group rebalance: read the group from ZooKeeper, give up, assign, claim, resume.

The steps of one attempt follow 0.7.2's ``ZKRebalancerListener.rebalance``: read the inputs (brokers, every
member's topic count, every subscribed topic's partitions); stop the fetchers and drop queued chunks;
commit; release the owned partitions; compute this consumer's share with the pure range assignment
(``zkafka.assignment.range_assignor``); claim ``/owners/<t>/<b-p>`` for each of them; read their offsets (or apply
``autooffset.reset``); start the fetchers. A failed attempt is retried after ``rebalance.backoff.ms``, at
most ``rebalance.retries.max`` times.

Where zkafka differs from 0.7 (each keeps the group protocol, so 0.7 members can share the group):
- an attempt whose share equals what is already owned, in the same session, changes nothing (0.7.0 did
  this too); its watches are re-armed by the reads;
- a claim that meets a node still held by another member waits (up to ``rebalance.backoff.ms``) for that
  member to release it, instead of failing the whole attempt at once; it gives up early when a newer group
  change arrives, and such an attempt is restarted at once without counting as a failure;
- offsets are read *after* the claim, so the previous owner's final commit (made before its release) is
  always seen; 0.7 read them before and could resume from an older offset.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

import gevent
import gevent.event
from kazoo.exceptions import BadVersionError, NodeExistsError, NoNodeError

from zkafka.assignment.assignor import Assignor
from zkafka.consumer.group_view import GroupView, get_many
from zkafka.consumer.membership import GroupDirs, GroupMembership
from zkafka.consumer.ownership import HeldNodes, OwnedPartitions, PartitionKey, release
from zkafka.consumer.partition_state import BrokerRef, PartitionTopicInfo
from zkafka.errors import InvalidConfigError, KafkaError
from zkafka.topic_count import TopicCount
from zkafka.zk.client import (
    create_ephemeral_expect_conflict,
    first_failure,
    replace_ephemerals_async,
    session_id,
)

if TYPE_CHECKING:
    from kazoo.client import KazooClient
    from kazoo.protocol.states import ZnodeStat

    from zkafka.zk.watched import WatchedZNodes

log = logging.getLogger(__name__)

MAX_RESTARTS = 50  # attempts given up for a newer group change; they do not count as failures

# Reads a group's inputs through the member's watched znodes: group_view07.read_group_view, group_view08's.
ViewReader = Callable[["WatchedZNodes", GroupDirs, TopicCount], GroupView]
# My share: (topic, partition) -> (thread id, its broker); the 0.8 consumer's fetcher finds leaders: None.
Wanted = dict[PartitionKey, tuple[str, BrokerRef | None]]


class ConsumerRebalanceFailedError(KafkaError):
    """The consumer could not take its share of the group within ``rebalance.retries.max`` attempts."""


class _Restart(Exception):
    """A newer group change arrived during the attempt: start again from fresh inputs."""


class _Taken(Exception):
    """An owner node stayed held by another member for ``rebalance.backoff.ms``: the attempt failed."""


class ZKRebalancer:
    """Runs rebalance attempts for one group member (the caller serialises them).

    It reads the group through ``membership`` (with the line's ``read_view``), divides it with ``assignor``
    (range, or 0.8's roundrobin) and stops, claims and installs partitions through ``owned``.
    """

    def __init__(
        self,
        membership: GroupMembership,
        owned: OwnedPartitions,
        *,
        retries: int,
        backoff_ms: int,
        read_view: ViewReader,
        assignor: Assignor,
    ) -> None:
        self.membership = membership
        self.owned = owned
        self.retries = retries
        self.backoff = backoff_ms / 1000.0
        self.read_view = read_view
        self.assignor = assignor
        self.attempts = 0  # attempts made over the connector's life (for tests and tools)
        self.changes = 0  # attempts that changed the owned partitions

    def rebalance(self) -> None:
        """Attempt until success; ConsumerRebalanceFailedError after ``rebalance.retries.max`` failures."""
        consumer_id = self.membership.consumer_id
        failures = restarts = 0
        last_error: BaseException | None = None
        while True:
            self.attempts += 1
            try:
                if self._attempt():
                    return
                last_error = None
            except _Restart:
                restarts += 1
                self._undo()
                if restarts <= MAX_RESTARTS:
                    continue
                last_error = None
            except InvalidConfigError as exc:
                self._undo()
                raise ConsumerRebalanceFailedError(f"{consumer_id}: {exc}") from exc
            except Exception as exc:
                log.warning("%s: rebalance attempt failed: %r", consumer_id, exc)
                last_error = exc
            self._undo()
            failures += 1
            if failures >= self.retries:
                cause = f"; the last attempt failed: {last_error}" if last_error is not None else ""
                raise ConsumerRebalanceFailedError(
                    f"{consumer_id} can't rebalance after {failures} retries{cause}"
                ) from last_error
            gevent.sleep(self.backoff)

    def _attempt(self) -> bool:
        m, owned = self.membership, self.owned
        m.rebalance_requested.clear()
        m.ensure_registered()
        epoch = m.session_epoch
        view = self.read_view(m.nodes, m.dirs, m.topic_count)
        if m.consumer_id not in view.consumers:
            m.registration_lost()
            raise KafkaError(f"{m.dirs.consumer_path(m.consumer_id)} is missing")
        wanted: Wanted = {}
        for (topic, name), thread_id in view.my_share(self.assignor).items():
            partition, broker = view.locate(topic, name)
            wanted[(topic, partition)] = (thread_id, broker)
        if owned.matches(wanted, epoch) and self._still_held(owned.owner_paths()):
            log.debug("%s: share unchanged (%d partitions)", m.consumer_id, len(wanted))
            return True

        log.info(
            "%s: rebalancing; consumers %s; my share %s",
            m.consumer_id,
            view.consumers,
            sorted(f"{t}:{p}" for t, p in wanted),
        )
        released = owned.stop(release_owners=False)
        try:
            claimed = self._release_and_claim(released, wanted)
        except BaseException:  # whichever of the old and the new nodes is ours now: nothing stays owned
            owned.release(list(dict.fromkeys([*released, *self._owner_nodes(wanted)])))
            raise
        if claimed is None:
            return False
        created, offsets = claimed
        try:
            infos = self._infos(wanted, offsets)
            if m.session_epoch != epoch:
                raise KafkaError("the ZooKeeper session changed during the rebalance")
        except BaseException:
            owned.release(created)
            raise
        owned.install(infos, epoch)
        self.changes += 1
        log.info("%s: owns %d partitions", m.consumer_id, len(infos))
        return True

    def _still_held(self, paths: list[str]) -> bool:
        """Whether this session still holds every one of these owner nodes: known without a read while their
        watches stand; those whose watch went with a lost connection are read (and watched) again."""
        held = self.owned.held
        lost = [path for path in paths if held.versions([path]) is None]
        if lost:
            _ReadBack(self.membership.zk, held, lost, []).wait()
        return held.versions(paths) is not None

    def _owner_nodes(self, wanted: Wanted) -> dict[str, str]:
        dirs = self.membership.dirs
        return {
            dirs.owner_path(topic, str(partition)): thread_id
            for (topic, partition), (thread_id, _) in sorted(wanted.items())
        }

    def _release_and_claim(
        self, released: list[str], wanted: Wanted
    ) -> tuple[list[str], dict[PartitionKey, str | None]] | None:
        """Release ``released`` and claim ``wanted``: the created owner nodes and each partition's offset read
        after its claim (None: none stored), or None when a node stays taken (and nothing is claimed).

        When every released node is still held, nothing is read first: one transaction deletes the nodes
        given up (at their versions) and the claim's first transaction deletes the kept ones with the
        creates, so a kept partition needs no offset read (this member committed it last)."""
        m, owned = self.membership, self.owned
        dirs = m.dirs
        offset_of = {dirs.owner_path(t, str(p)): dirs.offset_path(t, str(p)) for t, p in wanted}
        versions = owned.held.versions(released)
        kept: dict[str, int] = {}
        known: dict[str, str] = {}
        release = None
        if versions is None:
            owned.release(released)
        else:
            given_up = {path: v for path, v in versions.items() if path not in offset_of}
            kept = {path: v for path, v in versions.items() if path in offset_of}
            committed_last = {dirs.owner_path(t, str(p)): str(o) for (t, p), o in owned.last_committed.items()}
            known = {path: committed_last[path] for path in kept if path in committed_last}
            owned.held.forget(given_up)
            release = replace_ephemerals_async(m.zk, given_up, {}) if given_up else None
        try:
            claimed = self._claim(self._owner_nodes(wanted), kept, offset_of, known)
        finally:
            if release is not None and first_failure(given_up, release.get()) is not None:
                owned.release(list(given_up))  # one changed meanwhile: delete those still ours
        if claimed is None:
            return None
        created, stored = claimed
        return created, {(t, p): stored[dirs.owner_path(t, str(p))] for t, p in wanted}

    def _claim(
        self, nodes: dict[str, str], kept: dict[str, int], offset_of: dict[str, str], known: dict[str, str]
    ) -> tuple[list[str], dict[str, str | None]] | None:
        """Create every owner node (path -> thread id) in one transaction (its first also deleting ``kept``,
        path -> version), the offsets (``offset_of`` each node; ``known``: needs no read) and the new nodes'
        watches read in the same round trip. A node someone else holds is waited for (until its member
        releases it, ``_ours``) and the rest tried again. The nodes created and each one's offset; None if
        one stays taken."""
        m, owned = self.membership, self.owned
        remaining = dict(nodes)
        created: list[str] = []
        stored: dict[str, str | None] = {}
        deadline = time.monotonic() + self.backoff
        made: set[str] = set()  # parents created
        try:
            while remaining:
                claim = replace_ephemerals_async(m.zk, kept, remaining)
                reads = [offset_of[path] for path in remaining if path not in known]
                read_back = _ReadBack(m.zk, owned.held, list(remaining), reads)
                failed = first_failure([*kept, *remaining], claim.get())
                values = read_back.wait()
                if failed is None:
                    created += remaining
                    stored.update({p: known[p] if p in known else values[offset_of[p]] for p in remaining})
                    break
                owned.held.forget(remaining.keys() - kept.keys())  # not created: none of them is ours
                if kept:  # not deleted: released now, claimed with the rest
                    owned.release(list(kept))
                    kept, known = {}, {}
                path, error = failed
                parent = path.rsplit("/", 1)[0]
                if isinstance(error, NoNodeError) and parent not in made:  # or a kept node gone: no matter
                    m.zk.ensure_path(parent)
                    made.add(parent)
                elif isinstance(error, BadVersionError):  # a kept node changed: released above (if ours)
                    continue
                elif not isinstance(error, NodeExistsError) or path not in remaining:
                    raise error
                elif self._ours(path, remaining[path], read_back, deadline):
                    created.append(path)
                    stored[path] = get_many(m.zk, [offset_of[path]])[offset_of[path]]
                    del remaining[path]
        except BaseException as exc:
            release(m.zk, created)
            if isinstance(exc, _Taken):
                return None
            raise
        return created, stored

    def _ours(self, path: str, value: str, read_back: _ReadBack, deadline: float) -> bool:
        """An owner node found taken (``read_back`` read it, with a watch, right after the failed claim): True
        when it is ours (from an earlier connection or session: taken over); False when it is gone or changed
        since (try again); _Taken when its holder keeps it past the deadline; _Restart on a newer group
        change meanwhile."""
        m = self.membership
        found = read_back.found.get(path)
        if found is None:
            return False
        stored, stat = found
        if stat.ephemeralOwner == session_id(m.zk) or stored == value.encode("utf-8"):
            try:
                create_ephemeral_expect_conflict(m.zk, path, value)
                return True
            except NodeExistsError:
                pass
        changed = read_back.changed[path]
        remaining = deadline - time.monotonic()
        if remaining > 0:
            gevent.wait([changed, m.rebalance_requested], timeout=remaining, count=1)
        if m.rebalance_requested.is_set():
            raise _Restart
        if not changed.is_set():
            log.info("%s: %s is still owned by another consumer", m.consumer_id, path)
            raise _Taken
        return False

    def _infos(
        self, wanted: Wanted, offsets: dict[PartitionKey, str | None]
    ) -> dict[PartitionKey, PartitionTopicInfo]:
        """The new share's states, each from its stored offset (read after the claim, so the previous owner's
        last commit is in it) or, where none is stored, from the fetcher's initial offset."""
        m, owned = self.membership, self.owned
        infos = {}
        for key, (thread_id, broker) in sorted(wanted.items()):
            topic, partition = key
            value = offsets[key]
            if value is not None:
                offset = committed_offset = int(value)
            else:
                offset = owned.fetcher.initial_offset(topic, partition, broker)
                committed_offset = None
            infos[key] = PartitionTopicInfo(
                topic, partition, broker, owned.queue_for(topic, thread_id), thread_id, offset, committed_offset
            )
            log.debug("%s: %s:%s from offset %d", m.consumer_id, topic, partition, offset)
        return infos

    def _undo(self) -> None:
        """After a failed attempt: nothing fetched, nothing queued, nothing owned (0.7 ``resetState``)."""
        self.owned.stop()


class _ReadBack:
    """Reads pipelined behind a claim transaction (answered after it): each owner node claimed, which arms its
    watch (whose firing also sets ``changed[path]``) and makes it held when it is ours, and the offsets."""

    def __init__(self, zk: KazooClient, held: HeldNodes, claimed: list[str], offsets: Iterable[str]) -> None:
        self.zk, self.held = zk, held
        self.changed = {path: gevent.event.Event() for path in claimed}
        self.tokens: dict[str, object] = {}
        self.nodes = {}
        for path in claimed:
            self.tokens[path], fired = held.watch(path, then=self.changed[path].set)
            self.nodes[path] = zk.get_async(path, watch=fired)
        self.offsets = {path: zk.get_async(path) for path in offsets}
        self.found: dict[str, tuple[bytes, ZnodeStat] | None] = {}  # each claimed node as read (None: gone)

    def wait(self) -> dict[str, str | None]:
        """The offsets (None where none is stored); the claimed nodes found ours are held from now on."""
        me = session_id(self.zk)
        for path, result in self.nodes.items():
            try:
                self.found[path] = data, stat = result.get()
            except NoNodeError:
                self.found[path] = None
                continue
            if stat.ephemeralOwner == me:
                self.held.hold(path, stat.version, self.tokens[path])
        values: dict[str, str | None] = {}
        for path, result in self.offsets.items():
            try:
                values[path] = result.get()[0].decode("utf-8")
            except NoNodeError:
                values[path] = None
        return values
