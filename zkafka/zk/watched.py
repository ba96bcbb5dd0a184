"""Znodes read with watches and kept until ZooKeeper says they changed: ``WatchedZNodes``.

A group member reads the same inputs at every rebalance (the member list, each member's registration, each
topic's partitions, the brokers). ``WatchedZNodes.read`` asks ZooKeeper only for what it has not read yet, or
what changed since (its watch fired), pipelined: all of one call's requests go out together and are waited for
together, one round trip. A watch whose node is one the caller rebalances on also calls ``on_change``.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, NamedTuple

from kazoo.exceptions import NoNodeError

if TYPE_CHECKING:
    from kazoo.client import KazooClient

log = logging.getLogger(__name__)


class Reads(NamedTuple):
    """What one ``WatchedZNodes.read`` found: children per path ([] for a missing node) and values (None)."""

    children: dict[str, list[str]]
    values: dict[str, str | None]


class WatchedZNodes:
    """Children and values of znodes, each read once with a watch and dropped when the watch fires.

    ``read`` takes ``path -> notify``: a notifying path's change (or its creation, for a missing one) also
    calls ``on_change``; a quiet one's only drops it. A missing node is not kept: it is asked again each time.
    """

    def __init__(self, zk: KazooClient, on_change: Callable[[], None]) -> None:
        self.zk = zk
        self.on_change = on_change
        self._children: dict[str, tuple[list[str], bool]] = {}
        self._values: dict[str, tuple[str, bool]] = {}
        self._events: Counter[str] = Counter()  # watch events per path: a read overtaken by one is not kept

    def read(self, children: Mapping[str, bool] | None = None, values: Mapping[str, bool] | None = None) -> Reads:
        """The children and values of these paths (``path -> notify``): the known ones as kept, the others
        read with pipelined requests (one round trip) that arm their watches."""
        children, values = children or {}, values or {}
        found = Reads(
            {p: list(self._children[p][0]) for p, notify in children.items() if self._kept(self._children, p, notify)},
            {p: self._values[p][0] for p, notify in values.items() if self._kept(self._values, p, notify)},
        )
        asked = [
            (path, notify, self._events[path], self.zk.get_children_async(path, watch=self._watch(notify)))
            for path, notify in children.items()
            if path not in found.children
        ]
        asked_values = [
            (path, notify, self._events[path], self.zk.get_async(path, watch=self._watch(notify)))
            for path, notify in values.items()
            if path not in found.values
        ]
        for path, notify, seen, result in asked:
            try:
                found.children[path] = sorted(result.get())
                self._keep(self._children, path, (found.children[path], notify), seen)
            except NoNodeError:
                found.children[path] = []
                self._missing(path, notify)
        for path, notify, seen, result in asked_values:
            try:
                found.values[path] = result.get()[0].decode("utf-8")
                self._keep(self._values, path, (found.values[path], notify), seen)
            except NoNodeError:
                found.values[path] = None
                self._missing(path, notify)
        return found

    def clear(self) -> None:
        """Forget everything (the session is gone, and the watches with it)."""
        self._children.clear()
        self._values.clear()

    @staticmethod
    def _kept(kept: dict, path: str, notify: bool) -> bool:
        """Whether ``path`` is kept, read with the same kind of watch (a quiet one does not notify)."""
        entry = kept.get(path)
        return entry is not None and entry[1] is notify

    def _keep(self, kept: dict, path: str, entry: tuple, seen: int) -> None:
        if self._events[path] == seen:  # else a watch fired meanwhile: what came back may be stale already
            kept[path] = entry

    def _missing(self, path: str, notify: bool) -> None:
        """A node that does not exist: with ``notify``, watch for its creation (created since: a change)."""
        self._children.pop(path, None)
        self._values.pop(path, None)
        if notify and self.zk.exists(path, watch=self._notify) is not None:
            self._events[path] += 1
            self.on_change()

    def _watch(self, notify: bool) -> Callable:
        return self._notify if notify else self._forget

    def _forget(self, event) -> None:
        """A watch fired: drop what it covered (everything, for a lost connection: kazoo drops its watches)."""
        if event.path is None:
            self._events.update(self._children.keys() | self._values.keys())
            self.clear()
            return
        self._events[event.path] += 1
        self._children.pop(event.path, None)
        self._values.pop(event.path, None)

    def _notify(self, event) -> None:
        log.debug("watch fired: %s", event)
        self._forget(event)
        self.on_change()
