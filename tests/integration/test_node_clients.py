"""Real npm clients nobody here wrote, pinned (kafkajs 2.2.4, kafka-node 5.0.0, installed by
``scripts/install.sh test`` into a cache outside the checkout), against real zkafka brokers and a real
ZooKeeper: kafkajs's admin client, its producer and group consumer, kafka-node's ConsumerGroup."""

from __future__ import annotations

import pytest

from tests.support.node import run_node

pytestmark = pytest.mark.integration


def bootstrap(*brokers) -> list[str]:
    return [f"127.0.0.1:{b.port}" for b in brokers]


def test_kafkajs_admin(start_broker08, zk_client):
    """createTopics (with a config entry), createPartitions, fetchTopicMetadata, describeConfigs,
    alterConfigs (an unknown key refused naming it) and deleteTopics: kafkajs finds the controller through
    Metadata v1+ and sends each to it."""
    brokers = [start_broker08(0, **{"delete.topic.enable": "true"})]
    args = {"brokers": bootstrap(*brokers), "topic": "js-admin", "replicationFactor": 1}
    steps = run_node("kafkajs_admin.js", "kafkajs", args)
    assert steps["createTopics"] == {"ok": True, "value": True}
    assert steps["createTopicsAgain"] == {"ok": True, "value": False}  # kafkajs: false when it exists
    assert steps["createPartitions"]["ok"] and steps["fetchTopicMetadata"]["value"] == [0, 1, 2]
    described, altered = steps["describeConfigs"]["value"], steps["describeAltered"]["value"]
    assert described["retention.ms"] == ["3600000", False] and described["segment.bytes"][1] is True
    assert steps["alterConfigs"]["ok"] and altered["retention.ms"] == ["7200000", False]
    assert steps["alterUnknown"]["type"] == "INVALID_CONFIG"  # kafkajs drops the message naming the key
    assert steps["deleteTopics"]["ok"] and steps["listTopics"]["value"] == []
    assert zk_client.exists("/brokers/topics/js-admin") is None


@pytest.mark.parametrize("message_format", ["0.8.2", "2.4"])
def test_kafkajs_producer_and_group_consumer(start_broker08, message_format):
    """A gzip batch is stored and read back by a kafkajs group that commits on leaving; the group resumes
    after its commits; its admin client deletes records below an offset. Records with headers need message format v2: refused with
    UNSUPPORTED_FOR_MESSAGE_FORMAT (43) while the log stores v0 (0.8.2's format), read back with their headers
    from a log that stores v2 (``log.message.format.version=2.4``)."""
    brokers = [start_broker08(0, **{"num.partitions": "2", "log.message.format.version": message_format})]
    args = {"brokers": bootstrap(*brokers), "topic": "js-t", "group": "js-g"}
    result = run_node("kafkajs_clients.js", "kafkajs", args)
    assert "fatal" not in result, result
    assert result["produced"] == (
        [[0, 0, "1"], [1, 0, "1"]] if result["headers"]["ok"] else [[0, 0, "0"], [1, 0, "0"]]
    )
    first = {m["value"]: (m["partition"], m["headers"]) for m in result["first"]}
    expected = {f"v{i}": (i % 2, {}) for i in range(6)}
    assert result["headers"]["ok"] == (message_format == "2.4")
    if result["headers"]["ok"]:
        expected |= {f"v{i}": (i % 2, {"n": str(i)}) for i in (100, 101)}
    else:
        assert result["headers"]["type"] == "UNSUPPORTED_FOR_MESSAGE_FORMAT"
    assert first == expected
    assert sorted(m["value"] for m in result["resumed"]) == ["v6", "v7"]
    # deleteTopicRecords (DeleteRecords) moves partition 0's start; fetchTopicOffsets (ListOffsets) sees it
    low_high = {p: (low, high) for p, low, high in result["offsets"]}
    assert low_high[0][0] == "2" and low_high[1][0] == "0"


def test_kafka_node_consumer_group(start_broker08):
    """Two kafka-node ConsumerGroup members split a 4-partition topic (roundrobin), commit and leave; a new
    member resumes after the commits and sees only what came later."""
    brokers = [start_broker08(0, **{"num.partitions": "4"})]
    args = {"brokers": bootstrap(*brokers), "topic": "kn-t", "group": "kn-g", "first": 8, "more": 4}
    result = run_node("kafka_node_group.js", "kafka-node", args)
    assert "fatal" not in result, result
    owned = result["partitions"]
    assert sorted(owned["a"] + owned["b"]) == [0, 1, 2, 3] and len(owned["a"]) == 2
    assert {(m["partition"], m["value"]) for m in result["first"]} == {(i % 4, f"m{i}") for i in range(8)}
    assert sorted((m["partition"], m["offset"], m["value"]) for m in result["resumed"]) == [
        (i % 4, 2, f"m{i}") for i in range(8, 12)
    ]
