"""Where a producer may send a topic: the live brokers and each topic's (broker, partition) candidates.

:class:`ZKBrokerPartitionInfo` reads ``/brokers/ids`` and ``/brokers/topics`` and keeps them current with
kazoo child watches (0.7's ZKBrokerPartitionInfo); :class:`ConfigBrokerPartitionInfo` serves a fixed
``broker.list``. Candidates are sorted numerically by (broker id, partition id), so a partitioner sees
the same list on every producer.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any, Protocol

import gevent
import gevent.lock
import gevent.queue
from kazoo.client import KazooClient, KazooState
from kazoo.exceptions import KazooException, NoNodeError
from kazoo.protocol.states import EventType, WatchedEvent

from zkafka.errors import InvalidConfigError
from zkafka.zk.client import get_data, gevent_handler, make_zk_client, start_zk_client
from zkafka.zk.paths import BROKER_IDS_PATH, BROKER_TOPICS_PATH, broker_id_path
from zkafka.zk.paths07 import Broker, BrokerPartition, broker_topic_path

log = logging.getLogger(__name__)

BrokerCallback = Callable[[Broker], None]
BrokerGoneCallback = Callable[[int], None]


class BrokerPartitionInfo(Protocol):
    """What the Producer asks about the cluster."""

    def get_broker_partition_info(self, topic: str) -> list[BrokerPartition]: ...

    def get_broker_info(self, broker_id: int) -> Broker | None: ...

    def get_all_brokers_info(self) -> dict[int, Broker]: ...

    def update_info(self) -> None: ...

    def close(self) -> None: ...


def parse_broker_list(text: str) -> dict[int, Broker]:
    """``id1:host1:port1,id2:host2:port2`` as brokers by id."""
    brokers: dict[int, Broker] = {}
    for item in filter(None, (part.strip() for part in text.split(","))):
        fields = item.split(":")
        try:
            if len(fields) < 3:
                raise ValueError
            broker = Broker(int(fields[0]), fields[1], int(fields[2]))
        except ValueError:
            raise InvalidConfigError(f"broker.list: {item!r} is not of the form id:host:port") from None
        brokers[broker.id] = broker
    if not brokers:
        raise InvalidConfigError("broker.list: no broker given")
    return brokers


class ConfigBrokerPartitionInfo:
    """The brokers of ``broker.list``; every topic's candidates are partition 0 of each of them."""

    def __init__(self, config: Mapping[str, Any]) -> None:
        self.brokers = parse_broker_list(config["broker.list"])
        self.candidates = [BrokerPartition(b, 0) for b in sorted(self.brokers)]

    def get_broker_partition_info(self, topic: str) -> list[BrokerPartition]:
        return self.candidates

    def get_broker_info(self, broker_id: int) -> Broker | None:
        return self.brokers.get(broker_id)

    def get_all_brokers_info(self) -> dict[int, Broker]:
        return dict(self.brokers)

    def update_info(self) -> None:
        """Nothing to re-read."""

    def close(self) -> None:
        pass


class ZKBrokerPartitionInfo:
    """Live brokers and topic candidates from ZooKeeper, kept current by watches on the creating thread.

    Watch callbacks only queue work; one greenlet applies it in order. Reacts to a new broker, a broker
    gone (its partitions leave every topic), a new topic, a broker registering for a known topic (the
    candidates only grow, and only by live brokers), and a reconnection or session expiry (everything is
    re-read, as kazoo drops raw watches then). ``on_new_broker``/``on_broker_gone`` are called from that
    greenlet; they must not block for long.
    """

    def __init__(
        self,
        config: Mapping[str, Any],
        on_new_broker: BrokerCallback | None = None,
        on_broker_gone: BrokerGoneCallback | None = None,
        zk_client: KazooClient | None = None,
    ) -> None:
        self.on_new_broker = on_new_broker
        self.on_broker_gone = on_broker_gone
        self._own_client = zk_client is None
        if zk_client is None:
            zk_client = make_zk_client(
                config["zk.connect"],
                config["zk.sessiontimeout.ms"],
                config["zk.connectiontimeout.ms"],
                handler=gevent_handler(),
            )
            start_zk_client(zk_client)
        self.zk = zk_client
        self._brokers: dict[int, Broker] = {}
        # Every (broker, partition) seen registered for a topic (or bootstrapped), live or not ...
        self._registered: dict[str, set[BrokerPartition]] = {}
        # ... and the sorted live subset the producer chooses from.
        self._candidates: dict[str, list[BrokerPartition]] = {}
        self._watched: set[str] = set()  # topics whose /brokers/topics/<topic> child watch is set
        self._lock = gevent.lock.RLock()
        self._work: gevent.queue.Queue = gevent.queue.Queue()
        self._last_state = KazooState.CONNECTED
        self._closed = False
        self.zk.ensure_path(BROKER_IDS_PATH)
        self.zk.ensure_path(BROKER_TOPICS_PATH)
        self._rebuild(notify=False)
        self.zk.add_listener(self._on_state)
        self._worker = gevent.spawn(self._process_work)

    # -- queries -------------------------------------------------------------------------------------------

    def get_broker_partition_info(self, topic: str) -> list[BrokerPartition]:
        """The topic's candidates; a topic no live broker has registered bootstraps to partition 0 of every
        live broker (the first send creates it there, the broker registers it, and the watch widens it)."""
        candidates = self._candidates.get(topic)
        if candidates:
            return candidates
        if not self._brokers:
            return []
        bootstrap = {BrokerPartition(b, 0) for b in self._brokers}
        self._registered.setdefault(topic, set()).update(bootstrap)
        candidates = self._candidates[topic] = sorted(bootstrap)
        log.debug("topic %s is not registered yet; bootstrapping to %s", topic, candidates)
        return candidates

    def get_broker_info(self, broker_id: int) -> Broker | None:
        return self._brokers.get(broker_id)

    def get_all_brokers_info(self) -> dict[int, Broker]:
        return dict(self._brokers)

    def update_info(self) -> None:
        """Re-read everything from ZooKeeper now (the producer's answer to a chosen broker being gone)."""
        self._rebuild(notify=True)

    # -- reading ZooKeeper ---------------------------------------------------------------------------------

    def _rebuild(self, notify: bool) -> None:
        with self._lock:
            self._watched.clear()
            self._update_brokers(notify)
            # Watch and list in one call: a topic created between a plain listing and a later watch would
            # be in neither the listing nor an event, and never read.
            for topic in self.zk.get_children(BROKER_TOPICS_PATH, watch=self._on_topics_event):
                self._read_topic(topic)
            self._refresh_candidates()

    def _update_brokers(self, notify: bool) -> None:
        ids = self.zk.get_children(BROKER_IDS_PATH, watch=self._on_ids_event)
        current: dict[int, Broker] = {}
        for child in ids:
            value = get_data(self.zk, broker_id_path(child))
            if value is None:
                continue  # gone between the listing and the read; its deletion fires the watch again
            try:
                current[int(child)] = Broker.from_zk(child, value)
            except ValueError:
                log.warning("ignoring broker %s with the unreadable registration %r", child, value)
        old = self._brokers
        gone = [b for b in old if b not in current or current[b] != old[b]]
        new = [b for b in current if b not in old or current[b] != old[b]]
        self._brokers = current
        for broker_id in gone:
            for partitions in self._registered.values():
                partitions.difference_update([p for p in partitions if p.broker_id == broker_id])
        self._refresh_candidates()
        for broker_id in gone:
            log.info("broker %d is gone", broker_id)
            if notify and self.on_broker_gone is not None:
                self.on_broker_gone(broker_id)
        for broker_id in new:
            log.info(
                "broker %d registered at %s:%d", broker_id, current[broker_id].host, current[broker_id].port
            )
            if notify and self.on_new_broker is not None:
                self.on_new_broker(current[broker_id])

    def _read_topic(self, topic: str) -> None:
        """Merge the topic's current registrations into what is known (candidates never shrink here)."""
        try:
            children = self.zk.get_children(broker_topic_path(topic), watch=self._on_topic_event)
        except NoNodeError:
            return
        self._watched.add(topic)
        found: set[BrokerPartition] = set()
        for child in children:
            value = get_data(self.zk, broker_topic_path(topic, child))
            try:
                broker_id, count = int(child), int(value or "0")
            except ValueError:
                log.warning(
                    "ignoring %s with the unreadable value %r", broker_topic_path(topic, child), value
                )
                continue
            found.update(BrokerPartition(broker_id, p) for p in range(count))
        self._registered.setdefault(topic, set()).update(found)

    def _refresh_candidates(self) -> None:
        live = self._brokers
        self._candidates = {
            topic: sorted(p for p in partitions if p.broker_id in live)
            for topic, partitions in self._registered.items()
        }

    # -- watches and the work greenlet ---------------------------------------------------------------------

    def _on_ids_event(self, event: WatchedEvent) -> None:
        if event.type != EventType.NONE:
            self._work.put(("ids", None))

    def _on_topics_event(self, event: WatchedEvent) -> None:
        if event.type != EventType.NONE:
            self._work.put(("topics", None))

    def _on_topic_event(self, event: WatchedEvent) -> None:
        if event.type != EventType.NONE and event.path:
            topic = event.path.rsplit("/", 1)[-1]
            self._watched.discard(topic)  # a watch fires once
            self._work.put(("topic", topic))

    def _on_state(self, state: str) -> None:
        # kazoo drops every raw watch when the connection is lost (and the session may be a new one):
        # re-read everything once connected again.
        previous, self._last_state = self._last_state, state
        if state == KazooState.CONNECTED and previous != KazooState.CONNECTED:
            self._work.put(("rebuild", None))
        elif state == KazooState.LOST:
            log.warning("ZooKeeper session lost; the broker cache will be rebuilt on reconnection")

    def _process_work(self) -> None:
        while not self._closed:
            kind, arg = self._work.get()
            pending = {(kind, arg)}
            while not self._work.empty():  # coalesce a burst of events
                pending.add(self._work.get_nowait())
            if ("stop", None) in pending:
                return
            try:
                self._apply(pending)
            except KazooException as exc:
                # The connection dropped mid-read: the reconnection queues a rebuild.
                log.warning("reading the broker registry failed: %s", exc)
            except Exception:
                log.exception("updating the broker registry failed")

    def _apply(self, pending: set[tuple[str, str | None]]) -> None:
        with self._lock:
            if ("rebuild", None) in pending:
                log.info("re-reading the broker registry after a reconnection")
                self._rebuild(notify=True)
                return
            if ("ids", None) in pending:
                self._update_brokers(notify=True)
            if ("topics", None) in pending:
                for topic in self.zk.get_children(BROKER_TOPICS_PATH, watch=self._on_topics_event):
                    if topic not in self._watched:
                        self._read_topic(topic)
            for kind, topic in pending:
                if kind == "topic" and topic:
                    self._read_topic(topic)
            self._refresh_candidates()

    def close(self) -> None:
        """Stop watching; close the ZooKeeper client if this object made it."""
        if self._closed:
            return
        self._closed = True
        self._work.put(("stop", None))
        self.zk.remove_listener(self._on_state)
        self._worker.join(timeout=5)
        if self._own_client:
            try:
                self.zk.stop()
                self.zk.close()
            except Exception:
                log.debug("closing the ZooKeeper client failed", exc_info=True)
