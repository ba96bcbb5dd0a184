"""A ZooKeeper-managed consumer group as the assignment sees it: its members' threads per topic, the
partitions of those topics and who owns them now. Read from ZooKeeper for either line's layout; used by
``zkafka explain rebalance --group`` and by the web view's rebalance timeline.
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from zkafka.config import LINE_08
from zkafka.consumer.group_view import get_many
from zkafka.tools.offset_checker07 import registered_partitions
from zkafka.tools.offset_checker08 import topic_partitions
from zkafka.topic_count07 import parse_topic_count
from zkafka.topic_count08 import parse_topic_count08
from zkafka.zk.client import get_children
from zkafka.zk.line import cluster_line

if TYPE_CHECKING:
    from kazoo.client import KazooClient


@dataclass
class ZkGroup:
    """One group's assignment inputs and current owners."""

    name: str
    line: str
    members: dict[str, dict[str, list[str]]]  # consumer id -> topic -> thread ids
    partitions: dict[str, list[Hashable]] = field(default_factory=dict)  # "b-p" names (0.7) or ids (0.8)
    owners: dict[tuple[str, Hashable], str] = field(default_factory=dict)  # -> owning thread id
    sessions: dict[str, int] = field(default_factory=dict)  # consumer id -> ephemeral owner session
    unreadable: list[str] = field(default_factory=list)  # members whose registration could not be read

    def topics(self) -> list[str]:
        return sorted({t for per in self.members.values() for t in per} | set(self.partitions))


def zk_group_names(zk: KazooClient) -> list[str]:
    """Every group under ``/consumers``."""
    return sorted(get_children(zk, "/consumers"))


def read_zk_group(zk: KazooClient, group: str, line: str | None = None) -> ZkGroup:
    """Read ``group``: members from ``/consumers/<g>/ids``, partitions from ``/brokers/topics``, owners from
    ``/consumers/<g>/owners``. ``line`` is ``"0.7"`` or ``"0.8"``; None tells it from what ZooKeeper holds."""
    line = line or cluster_line(zk, group)
    base = f"/consumers/{group}"
    all_topics = get_children(zk, "/brokers/topics")
    ids = sorted(get_children(zk, f"{base}/ids"))
    pending = {member: zk.get_async(f"{base}/ids/{member}") for member in ids}
    result = ZkGroup(group, line, {})
    parse = parse_topic_count08 if line == LINE_08 else parse_topic_count
    for member, answer in pending.items():
        try:
            data, stat = answer.get()
            result.members[member] = parse(member, data.decode()).threads_per_topic(all_topics)
            result.sessions[member] = stat.ephemeralOwner
        except ValueError:
            result.unreadable.append(member)
        except Exception:  # left between the listing and the read
            continue
    owned_topics = get_children(zk, f"{base}/owners")
    for topic in sorted({t for per in result.members.values() for t in per} | set(owned_topics)):
        if line == LINE_08:
            result.partitions[topic] = topic_partitions(zk, topic)
        else:
            result.partitions[topic] = registered_partitions(zk, topic)
        names = get_children(zk, f"{base}/owners/{topic}")
        values = get_many(zk, [f"{base}/owners/{topic}/{n}" for n in names])
        for name in names:
            owner = values[f"{base}/owners/{topic}/{name}"]
            if owner is not None:
                key = int(name) if line == LINE_08 and name.isdigit() else name
                result.owners[(topic, key)] = owner
    return result
