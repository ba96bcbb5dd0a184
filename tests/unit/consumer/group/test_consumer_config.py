"""The group consumer's configuration: the 2.x client's keys (max.poll.interval.ms, max.poll.records,
partition.assignment.strategy by Kafka's class names or short names) validated at start, a bad value naming
its key; the rebalance protocol follows the configured assignors."""

from __future__ import annotations

import pytest

from zkafka.consumer.group import GroupConsumer
from zkafka.errors import InvalidConfigError

BASE = {"bootstrap.servers": "127.0.0.1:1", "group.id": "g"}  # nothing is contacted before subscribe/poll


def consumer(**config: str) -> GroupConsumer:
    return GroupConsumer({**BASE, **{k.replace("_", "."): v for k, v in config.items()}})


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("max.poll.records", "0"),
        ("max.poll.interval.ms", "soon"),
        ("partition.assignment.strategy", "org.apache.kafka.clients.consumer.NoSuchAssignor"),
    ],
)
def test_a_bad_value_fails_at_start_naming_its_key(key, value):
    with pytest.raises(InvalidConfigError, match=f"^{key}: "):
        GroupConsumer({**BASE, key: value})


def test_defaults_and_the_rebalance_protocol_of_each_strategy():
    c = consumer()
    try:
        assert (c.config["max.poll.records"], c.config["max.poll.interval.ms"]) == (500, 300000)
        assert c.config["session.timeout.ms"] == 30000 and c.coordinator.rebalance_protocol == "eager"
    finally:
        c.close()
    for strategy, protocol in [
        ("cooperative-sticky", "cooperative"),
        ("org.apache.kafka.clients.consumer.CooperativeStickyAssignor", "cooperative"),
        ("cooperative-sticky,range", "eager"),  # any eager assignor makes the member eager, as in Kafka
        ("org.apache.kafka.clients.consumer.StickyAssignor", "eager"),
    ]:
        c = consumer(partition_assignment_strategy=strategy)
        try:
            assert c.coordinator.rebalance_protocol == protocol, strategy
        finally:
            c.close()
