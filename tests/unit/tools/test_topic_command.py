"""kafka-topics.sh's output lines, from topic descriptions (no ZooKeeper)."""

from zkafka.admin.topics import TopicDescription
from zkafka.tools.topic_command import describe_lines, list_lines
from zkafka.zk.paths08 import PartitionState

ORDERS = TopicDescription(
    "orders",
    {0: [1, 2], 1: [2, 3]},
    {0: PartitionState(1, 4, (1, 2), 1), 1: PartitionState(3, 0, (3,), 1)},
    {"cleanup.policy": "compact", "retention.ms": "5"},
)
FRESH = TopicDescription("fresh", {0: [3]}, {0: None}, {}, marked_for_deletion=True)


def test_describe_prints_kafkas_lines():
    assert describe_lines([ORDERS, FRESH], [1, 2, 3]) == [
        "Topic:orders\tPartitionCount:2\tReplicationFactor:2\tConfigs:cleanup.policy=compact,retention.ms=5",
        "\tTopic: orders\tPartition: 0\tLeader: 1\tReplicas: 1,2\tIsr: 1,2",
        "\tTopic: orders\tPartition: 1\tLeader: 3\tReplicas: 2,3\tIsr: 3",
        "Topic:fresh\tPartitionCount:1\tReplicationFactor:1\tConfigs:",
        "\tTopic: fresh\tPartition: 0\tLeader: none\tReplicas: 3\tIsr: ",
    ]


def test_describe_filters():
    assert describe_lines([ORDERS, FRESH], [1, 2, 3], under_replicated=True) == [
        "\tTopic: orders\tPartition: 1\tLeader: 3\tReplicas: 2,3\tIsr: 3",
        "\tTopic: fresh\tPartition: 0\tLeader: none\tReplicas: 3\tIsr: ",
    ]
    assert describe_lines([ORDERS, FRESH], [1, 2], unavailable=True) == [
        "\tTopic: orders\tPartition: 1\tLeader: 3\tReplicas: 2,3\tIsr: 3",
        "\tTopic: fresh\tPartition: 0\tLeader: none\tReplicas: 3\tIsr: ",
    ]
    assert describe_lines([ORDERS, FRESH], [1, 2, 3], with_overrides=True) == [
        "Topic:orders\tPartitionCount:2\tReplicationFactor:2\tConfigs:cleanup.policy=compact,retention.ms=5"
    ]


def test_list_marks_topics_being_deleted():
    assert list_lines([ORDERS, FRESH]) == ["orders", "fresh - marked for deletion"]
