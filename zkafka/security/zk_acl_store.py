"""ACLs in ZooKeeper as Kafka's ZooKeeper-mode authorizer keeps them, and the change notifications that tell
every broker to read a resource's ACLs again.

Literal patterns live at ``/kafka-acl/<ResourceType>/<name>``, prefixed ones at
``/kafka-acl-extended/prefixed/<ResourceType>/<name>``, each holding ``{"version":1,"acls":[{"principal":
"User:alice","permissionType":"Allow","operation":"Read","host":"*"}]}``. A change to a literal pattern adds
``/kafka-acl-changes/acl_changes_<seq>`` holding ``<ResourceType>:<name>``; to a prefixed one
``/kafka-acl-extended-changes/acl_changes_<seq>`` holding ``{"version":1,"resourceType":"Topic","name":…,
"patternType":"PREFIXED"}``. Writes are conditional on the znode's version (retried on a conflict), and a
pattern left without entries loses its znode, as Kafka's ``updateResourceAcls``.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterable
from typing import Any

from kazoo.exceptions import BadVersionError, NodeExistsError, NoNodeError

from zkafka.security.acl import (
    AccessControlEntry,
    PatternType,
    ResourcePattern,
    ResourceType,
    entries_from_json,
    entries_to_json,
)
from zkafka.security.authorizer import AclCache
from zkafka.utils import now_ms
from zkafka.zk.client import get_children

log = logging.getLogger(__name__)

LITERAL_ACL_PATH = "/kafka-acl"
EXTENDED_ACL_PATH = "/kafka-acl-extended"
LITERAL_CHANGES_PATH = "/kafka-acl-changes"
EXTENDED_CHANGES_PATH = "/kafka-acl-extended-changes"
CHANGE_PREFIX = "acl_changes_"
CHANGE_EXPIRATION_MS = 15 * 60 * 1000  # ZkNodeChangeNotificationListener's
MAX_UPDATE_RETRIES = 10


def store_path(pattern_type: PatternType) -> str:
    """The root of a pattern type's ACL znodes."""
    if pattern_type == PatternType.LITERAL:
        return LITERAL_ACL_PATH
    return f"{EXTENDED_ACL_PATH}/{pattern_type.name.lower()}"


def resource_path(pattern: ResourcePattern) -> str:
    return f"{store_path(pattern.pattern_type)}/{pattern.resource_type.kafka_name}/{pattern.name}"


def change_path(pattern_type: PatternType) -> str:
    return LITERAL_CHANGES_PATH if pattern_type == PatternType.LITERAL else EXTENDED_CHANGES_PATH


def encode_change(pattern: ResourcePattern) -> bytes:
    """A change notification's value for ``pattern``."""
    if pattern.pattern_type == PatternType.LITERAL:
        return f"{pattern.resource_type.kafka_name}:{pattern.name}".encode()
    event = {
        "version": 1,
        "resourceType": pattern.resource_type.kafka_name,
        "name": pattern.name,
        "patternType": pattern.pattern_type.name,
    }
    return json.dumps(event, separators=(",", ":")).encode()


def decode_change(path: str, data: bytes) -> ResourcePattern:
    """The pattern a notification under ``path`` names (ValueError when it is not one)."""
    text = data.decode()
    if path == LITERAL_CHANGES_PATH:
        resource_type, sep, name = text.partition(":")
        if not sep:
            raise ValueError(f"expected <ResourceType>:<name>, got {text!r}")
        return ResourcePattern(ResourceType.parse(resource_type), name)
    event = json.loads(text)
    if event.get("version") != 1:
        raise ValueError(f"unknown ACL change event version {event.get('version')!r}")
    return ResourcePattern(
        ResourceType.parse(event["resourceType"]), event["name"], PatternType.parse(event["patternType"])
    )


def read_acls(zk: Any, pattern: ResourcePattern) -> tuple[frozenset[AccessControlEntry], int]:
    """The pattern's entries and its znode's version (-1: no znode)."""
    try:
        data, stat = zk.get(resource_path(pattern))
    except NoNodeError:
        return frozenset(), -1
    return entries_from_json(data), stat.version


def load_all(zk: Any) -> dict[ResourcePattern, frozenset[AccessControlEntry]]:
    """Every pattern's entries in ZooKeeper; a znode that is not Kafka's JSON is logged and skipped."""
    acls = {}
    for pattern_type in (PatternType.LITERAL, PatternType.PREFIXED):
        root = store_path(pattern_type)
        for type_name in get_children(zk, root):
            try:
                resource_type = ResourceType.parse(type_name)
            except ValueError:
                log.warning("%s/%s: not a resource type; skipped", root, type_name)
                continue
            for name in get_children(zk, f"{root}/{type_name}"):
                pattern = ResourcePattern(resource_type, name, pattern_type)
                try:
                    acls[pattern] = read_acls(zk, pattern)[0]
                except (ValueError, KeyError) as exc:
                    log.warning("%s: unreadable ACLs (%s); skipped", resource_path(pattern), exc)
    return acls


def update_acls(
    zk: Any,
    pattern: ResourcePattern,
    change: Callable[[frozenset[AccessControlEntry]], Iterable[AccessControlEntry]],
) -> frozenset[AccessControlEntry]:
    """Replace the pattern's entries with ``change(current)``, conditionally on the znode's version (read
    again and retried on a conflict); a change notification when they changed. Returns the new entries."""
    path = resource_path(pattern)
    for _ in range(MAX_UPDATE_RETRIES):
        current, version = read_acls(zk, pattern)
        wanted = frozenset(change(current))
        if wanted == current:
            return current
        try:
            if not wanted:
                zk.delete(path, version=version)
            elif version < 0:
                zk.create(path, entries_to_json(wanted), makepath=True)
            else:
                zk.set(path, entries_to_json(wanted), version=version)
        except (BadVersionError, NodeExistsError, NoNodeError):
            continue
        zk.create(
            f"{change_path(pattern.pattern_type)}/{CHANGE_PREFIX}",
            encode_change(pattern),
            sequence=True,
            makepath=True,
        )
        log.info("ACLs of %s updated: %s", pattern, ", ".join(map(str, sorted(wanted))) or "none")
        return wanted
    raise RuntimeError(f"{path}: ACLs not updated after {MAX_UPDATE_RETRIES} conflicting writes")


class ZkAclWatcher:
    """Keeps an ``AclCache`` as ZooKeeper has it: loaded whole at start, then a pattern read again for each
    notification (in sequence order; those already there at start too, as Kafka's listener does, so none
    made while loading is missed); notifications older than 15 minutes are purged."""

    def __init__(self, zk: Any, cache: AclCache) -> None:
        self.zk = zk
        self.cache = cache
        self._last = {LITERAL_CHANGES_PATH: -1, EXTENDED_CHANGES_PATH: -1}

    def start(self) -> None:
        for path in self._last:
            self.zk.ensure_path(path)
        for pattern, entries in load_all(self.zk).items():
            self.cache.update(pattern, entries)
        for path in self._last:
            self.zk.ChildrenWatch(path, lambda children, path=path: self._on_changes(path, children))

    def _on_changes(self, path: str, children: list[str]) -> None:
        names = sorted(c for c in children if c.startswith(CHANGE_PREFIX))
        for name in names:
            sequence = int(name[len(CHANGE_PREFIX) :])
            if sequence > self._last[path]:
                self._process(path, name)
                self._last[path] = sequence
        self._purge(path, names)

    def _process(self, path: str, name: str) -> None:
        try:
            data, _ = self.zk.get(f"{path}/{name}")
            pattern = decode_change(path, data)
            entries = read_acls(self.zk, pattern)[0]
        except NoNodeError:
            return
        except (ValueError, KeyError) as exc:
            log.warning("%s/%s: %s; skipped", path, name, exc)
            return
        self.cache.update(pattern, entries)
        log.info("ACL change %s/%s: %s now has %d entries", path, name, pattern, len(entries))

    def _purge(self, path: str, names: list[str]) -> None:
        oldest = now_ms() - CHANGE_EXPIRATION_MS
        for name in names:
            stat = self.zk.exists(f"{path}/{name}")
            if stat is not None and stat.ctime < oldest:
                try:
                    self.zk.delete(f"{path}/{name}")
                except NoNodeError:
                    pass
