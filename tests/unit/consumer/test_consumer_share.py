"""A member's share and the owned-partition bookkeeping, with plain data: no ZooKeeper, no broker."""

from __future__ import annotations

import pytest
from gevent.queue import Queue
from hypothesis import given
from hypothesis import strategies as st

from zkafka.assignment.assignor import member_share
from zkafka.assignment.range_assignor import assign
from zkafka.consumer.fetcher07 import Fetcher
from zkafka.consumer.group_view import GroupView, group_threads
from zkafka.consumer.group_view07 import GroupView07
from zkafka.consumer.membership import GroupMembership
from zkafka.consumer.ownership import OwnedPartitions
from zkafka.consumer.partition_state import PartitionTopicInfo
from zkafka.errors import KafkaError
from zkafka.topic_count07 import parse_topic_count
from zkafka.zk.paths import ZKGroupDirs
from zkafka.zk.paths07 import Broker, BrokerPartition

B0, B1 = Broker(0, "h0", 9092), Broker(1, "h1", 9093)


def test_member_share_is_the_members_threads_part_of_the_assignment():
    threads = {"t": ["g_b-0", "g_a-0", "g_a-1"], "u": ["g_a-0", "g_b-0"]}
    parts = {"t": ["1-0", "0-0", "0-1", "1-1", "1-2"], "u": ["0-0"]}
    assert member_share(threads, parts, ["g_b-0"]) == {("t", "1-2"): "g_b-0"}  # "u" has one partition
    assert member_share(threads, parts, ["g_a-0", "g_a-1"]) == {
        ("t", "0-0"): "g_a-0",
        ("t", "0-1"): "g_a-0",
        ("t", "1-0"): "g_a-1",
        ("t", "1-1"): "g_a-1",
        ("u", "0-0"): "g_a-0",
    }
    assert member_share(threads, parts, ["g_z-0"]) == {}


def test_member_share_takes_another_assignor():
    def everything_to_the_last_thread(threads_per_topic, partitions_per_topic):
        return {
            (topic, name): sorted(threads_per_topic[topic])[-1]
            for topic in threads_per_topic
            for name in partitions_per_topic.get(topic, [])
        }

    threads = {"t": ["g_a-0", "g_b-0"]}
    parts = {"t": ["0-0", "0-1"]}
    view = GroupView({}, [], threads, parts, {"t": ["g_b-0"]})
    assert view.my_share(everything_to_the_last_thread) == {("t", "0-0"): "g_b-0", ("t", "0-1"): "g_b-0"}
    assert view.my_share() == {("t", "0-1"): "g_b-0"}  # range by default


@given(
    members=st.lists(st.integers(1, 3), min_size=1, max_size=6),
    counts=st.dictionaries(st.integers(0, 12), st.integers(1, 4), min_size=1, max_size=4),
)
def test_the_members_shares_split_the_assignment_exactly(members, counts):
    threads = {"t": [f"g_c{i}-{n}" for i, k in enumerate(members) for n in range(k)]}
    parts = {"t": [f"{b}-{p}" for b, n in counts.items() for p in range(n)]}
    shares = [member_share(threads, parts, [f"g_c{i}-{n}" for n in range(k)]) for i, k in enumerate(members)]
    merged = {key: tid for share in shares for key, tid in share.items()}
    assert sum(len(s) for s in shares) == len(merged)  # disjoint
    assert merged == assign(threads, parts)  # and together the whole assignment


def test_group_threads_reads_every_members_topic_count():
    counts = {
        "g_a": '{ "t": 2,"u": 1 }',
        "g_b": "*1*t|v",
        "g_gone": None,  # left between the listing and the read
        "g_bad": "{not json",
    }
    with_topics = group_threads(counts, ["t", "u", "v", "w"], ["t", "u"], parse_topic_count)
    assert with_topics == {"t": ["g_a-0", "g_a-1", "g_b-0"], "u": ["g_a-0"]}
    assert group_threads({}, ["t"], ["t"], parse_topic_count) == {"t": []}


def test_locate_names_the_partition_and_its_broker():
    view = GroupView07({0: B0, 1: B1}, [], {}, {}, {})
    assert view.locate("t", "1-3") == (BrokerPartition(1, 3), B1)
    with pytest.raises(KafkaError, match="broker 7 of t:7-0 is not registered"):
        view.locate("t", "7-0")


def owned_partitions() -> OwnedPartitions:
    fetcher = Fetcher(
        fetch_size=1000,
        backoff_ms=10,
        socket_timeout_ms=1000,
        socket_buffersize=1024,
        autooffset_reset="smallest",
    )
    return OwnedPartitions(GroupMembership(None, ZKGroupDirs("g"), "g_c"), fetcher)


def info(partition: BrokerPartition, broker: Broker, thread_id: str = "g_c-0") -> PartitionTopicInfo:
    return PartitionTopicInfo("t", partition, broker, Queue(), thread_id, 0)


def test_owned_matches_exactly_the_same_share_in_the_same_session():
    owned = owned_partitions()
    p0, p1 = BrokerPartition(0, 0), BrokerPartition(1, 0)
    owned.infos = {("t", p0): info(p0, B0), ("t", p1): info(p1, B1)}
    owned.epoch = 3
    wanted = {("t", p0): ("g_c-0", B0), ("t", p1): ("g_c-0", B1)}
    assert owned.matches(wanted, 3)
    assert owned.owner_paths() == ["/consumers/g/owners/t/0-0", "/consumers/g/owners/t/1-0"]
    assert not owned.matches(wanted, 4)  # another session: its owner nodes are gone
    assert not owned.matches({("t", p0): ("g_c-0", B0)}, 3)
    assert not owned.matches({**wanted, ("t", p1): ("g_c-1", B1)}, 3)  # another thread
    assert not owned.matches({**wanted, ("t", p1): ("g_c-0", Broker(1, "moved", 1))}, 3)
    owned.infos[("t", p1)].revoke()
    assert not owned.matches(wanted, 3)


def test_owned_pause_resume_and_revoke_all():
    owned = owned_partitions()
    p0, p1 = BrokerPartition(0, 0), BrokerPartition(0, 1)
    a, b = info(p0, B0), info(p1, B0)
    owned.infos = {("t", p0): a, ("t", p1): b}
    owned.pause()
    assert not a.active and not b.active and not a.revoked
    b.revoke()
    owned.resume()
    assert a.active and not b.active  # a revoked partition stays revoked
    owned.revoke_all()
    assert a.revoked and owned.infos == {}


def test_queues_by_topic_and_thread_or_by_thread_for_every_topic():
    from zkafka.consumer.stream import KafkaStream

    owned = owned_partitions()
    by_topic, by_thread = KafkaStream(Queue()), KafkaStream(Queue())
    owned.add_stream(("t", "g_c-0"), by_topic)
    owned.add_stream("g_c-1", by_thread)
    assert owned.queue_for("t", "g_c-0") is by_topic.queue
    assert owned.queue_for("any", "g_c-1") is by_thread.queue
    assert owned.streams == [by_topic, by_thread]
