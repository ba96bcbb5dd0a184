"""The zkafka part of the ZooKeeper tree, with values and the session owning each ephemeral node.

A teaching aid: it shows the layout of ``zkafka.zk.paths07`` as it really is on a running cluster.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

from kazoo.client import KazooClient
from kazoo.exceptions import NoNodeError

from zkafka.errors import KafkaError

DEFAULT_ROOTS = ("/brokers", "/consumers")


class NoSuchZNodeError(KafkaError):
    """A path asked for that does not exist."""


@dataclass
class ZNode:
    """A znode read from ZooKeeper: its value and, when ephemeral, the owning session id."""

    path: str
    value: str
    ephemeral_owner: int = 0  # 0 for persistent nodes, as ZooKeeper reports it
    children: list[ZNode] = field(default_factory=list)

    @property
    def name(self) -> str:
        return self.path.rsplit("/", 1)[-1] or "/"

    @property
    def ephemeral(self) -> bool:
        return self.ephemeral_owner != 0

    def to_json(self) -> dict:
        return {
            "path": self.path,
            "value": self.value,
            "ephemeral_owner": f"0x{self.ephemeral_owner:x}" if self.ephemeral else None,
            "children": [c.to_json() for c in self.children],
        }


# -- pure formatting ---------------------------------------------------------------------------------------

_ROLES: list[tuple[re.Pattern[str], str]] = [
    (re.compile(r"^/brokers$"), "brokers and the topics they host"),
    (re.compile(r"^/brokers/ids$"), "live brokers"),
    (re.compile(r"^/brokers/ids/(?P<a>[^/]+)$"), "broker {a}: <creator>:<host>:<port>"),
    (re.compile(r"^/brokers/topics$"), "topics (stay after their brokers leave)"),
    (re.compile(r"^/brokers/topics/(?P<a>[^/]+)$"), "topic {a}: one child per live broker hosting it"),
    (re.compile(r"^/brokers/topics/(?P<a>[^/]+)/(?P<b>[^/]+)$"), "number of partitions of {a} on broker {b}"),
    (re.compile(r"^/consumers$"), "consumer groups"),
    (re.compile(r"^/consumers/(?P<a>[^/]+)$"), "group {a}"),
    (re.compile(r"^/consumers/(?P<a>[^/]+)/ids$"), "live consumers of {a}"),
    (re.compile(r"^/consumers/(?P<a>[^/]+)/ids/(?P<b>[^/]+)$"), "consumer {b}: its topic count"),
    (re.compile(r"^/consumers/(?P<a>[^/]+)/owners$"), "which thread of {a} owns each partition"),
    (re.compile(r"^/consumers/(?P<a>[^/]+)/owners/(?P<b>[^/]+)$"), "owners of the partitions of {b}"),
    (re.compile(r"^/consumers/[^/]+/owners/(?P<a>[^/]+)/(?P<b>[^/]+)$"), "thread consuming {a} {b}"),
    (re.compile(r"^/consumers/(?P<a>[^/]+)/offsets$"), "offsets committed by {a}"),
    (re.compile(r"^/consumers/(?P<a>[^/]+)/offsets/(?P<b>[^/]+)$"), "committed offsets of {b}"),
    (
        re.compile(r"^/consumers/[^/]+/offsets/(?P<a>[^/]+)/(?P<b>[^/]+)$"),
        "next offset to consume from {a} {b}",
    ),
]


def describe(path: str) -> str | None:
    """What a znode of the 0.7 layout is for, or None outside it."""
    for pattern, text in _ROLES:
        match = pattern.match(path)
        if match:
            return text.format(**match.groupdict())
    return None


def format_node_line(node: ZNode, depth: int, explain: bool = False) -> str:
    """``<indent><name>[ = "<value>"][  [ephemeral, session 0x..]][  # role]``."""
    text = "  " * depth + (node.path if depth == 0 else node.name)
    if node.value:
        text += " = " + json.dumps(node.value, ensure_ascii=False)
    if node.ephemeral:
        text += f"  [ephemeral, session 0x{node.ephemeral_owner:x}]"
    if explain and (role := describe(node.path)):
        text += f"  # {role}"
    return text


def format_tree(node: ZNode, explain: bool = False) -> list[str]:
    """An indented listing of the node and everything under it, children in name order."""
    lines: list[str] = []
    stack = [(node, 0)]
    while stack:
        current, depth = stack.pop()
        lines.append(format_node_line(current, depth, explain))
        stack.extend((child, depth + 1) for child in reversed(current.children))
    return lines


def format_json(nodes: list[ZNode]) -> str:
    return json.dumps([n.to_json() for n in nodes], indent=2, ensure_ascii=False)


# -- ZooKeeper ---------------------------------------------------------------------------------------------


def normalize_path(path: str) -> str:
    path = "/" + path.strip().strip("/")
    return re.sub(r"/+", "/", path)


def read_tree(client: KazooClient, path: str) -> ZNode | None:
    """The znode at ``path`` and its descendants (nodes vanishing meanwhile are left out); None if absent."""
    try:
        data, stat = client.get(path)
        names = client.get_children(path)
    except NoNodeError:
        return None
    node = ZNode(path, data.decode("utf-8", "backslashreplace") if data else "", stat.ephemeralOwner)
    base = "" if path == "/" else path
    for name in sorted(names):
        child = read_tree(client, f"{base}/{name}")
        if child is not None:
            node.children.append(child)
    return node


def read_trees(client: KazooClient, paths: list[str] | None = None) -> tuple[list[ZNode], list[str]]:
    """The trees under the given paths (default ``/brokers`` and ``/consumers``) and the paths absent.

    A path given explicitly that does not exist raises NoSuchZNodeError; a default one is only reported.
    """
    explicit = bool(paths)
    nodes, absent = [], []
    for path in [normalize_path(p) for p in paths] if explicit else list(DEFAULT_ROOTS):
        node = read_tree(client, path)
        if node is None:
            if explicit:
                raise NoSuchZNodeError(f"no znode {path}")
            absent.append(path)
        else:
            nodes.append(node)
    return nodes, absent
