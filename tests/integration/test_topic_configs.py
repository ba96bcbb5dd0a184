"""DescribeConfigs and AlterConfigs against two real brokers and a real ZooKeeper: a topic's overrides with
their sources and synonyms, validation naming the key, ``validate_only``, the change notification every
broker applies to its live logs, and this broker's own (read-only) configuration."""

from __future__ import annotations

import json
import time

import pytest

from tests.integration.test_metadata_versions import wait_for
from tests.support.server08 import Client08, wait_for_leaders
from zkafka.admin.topics import create_topic
from zkafka.protocol import configs as w
from zkafka.protocol.errors import ErrorCode
from zkafka.protocol.versioned import make

pytestmark = pytest.mark.integration


def describe(client, version, name, resource_type=w.TOPIC, keys=None, synonyms=False):
    resources = [{"resource_type": resource_type, "resource_name": name, "configuration_keys": keys}]
    request = make(
        w.DESCRIBE_CONFIGS_APIS[version][0],
        resources=resources,
        include_synonyms=synonyms,
        include_documentation=False,
    )
    (result,) = client.call(request).results
    return result


def alter(client, version, name, configs, resource_type=w.TOPIC, validate_only=False):
    entries = [{"name": k, "value": v} for k, v in configs.items()]
    resources = [{"resource_type": resource_type, "resource_name": name, "configs": entries}]
    request = make(w.ALTER_CONFIGS_APIS[version][0], resources=resources, validate_only=validate_only)
    (result,) = client.call(request).responses
    return result


@pytest.fixture
def brokers(start_broker08, zk_client):
    """Two brokers; topic "t" (2 partitions, both replicas) with retention.ms overridden."""
    started = [start_broker08(i, **{"log.retention.hours": "24"}) for i in (0, 1)]
    wait_for(lambda: len(zk_client.get_children("/brokers/ids")) == 2)
    create_topic(zk_client, "t", 2, 2, {"retention.ms": "3600000"})
    with Client08(started[0].port) as client:
        wait_for_leaders(client, ["t"])
    clients = [Client08(b.port) for b in started]
    yield started, clients
    for client in clients:
        client.close()


def test_describe_topic_configs_with_sources_and_synonyms(brokers):
    _, (client, _) = brokers
    v0 = {c.name: (c.value, c.is_default) for c in describe(client, 0, "t").configs}
    assert v0["retention.ms"] == ("3600000", False) and v0["segment.bytes"] == ("1073741824", True)
    result = describe(client, 1, "t", keys=["retention.ms", "segment.bytes"], synonyms=True)
    configs = {c.name: c for c in result.configs}
    assert sorted(configs) == ["retention.ms", "segment.bytes"]
    retention = configs["retention.ms"]
    assert (retention.value, retention.config_source, retention.read_only) == (
        "3600000",
        w.DYNAMIC_TOPIC_CONFIG,
        False,
    )
    assert [(s.name, s.value, s.source) for s in retention.synonyms] == [
        ("retention.ms", "3600000", w.DYNAMIC_TOPIC_CONFIG),
        ("log.retention.hours", "24", w.STATIC_BROKER_CONFIG),
        ("log.retention.hours", "168", w.DEFAULT_CONFIG),  # log.retention.ms/minutes: no default of their own
    ]
    v4 = describe(client, 4, "t", keys=["cleanup.policy"])
    assert [(c.name, c.value, c.config_source, c.config_type) for c in v4.configs] == [
        ("cleanup.policy", "delete", w.DEFAULT_CONFIG, w.STRING)
    ]
    missing = describe(client, 2, "nope")
    assert (missing.error, missing.configs) == (ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, [])


def test_alter_configs_validates_and_reaches_every_broker_log(brokers, zk_client):
    started, (client, other) = brokers
    bad = alter(client, 0, "t", {"retention.ms": "1", "no.such.key": "1"})
    assert bad.error == ErrorCode.INVALID_CONFIG and "no.such.key" in bad.error_message
    assert alter(client, 1, "t", {"max.message.bytes": "x"}).error == ErrorCode.INVALID_CONFIG
    assert alter(client, 2, "t", {"max.message.bytes": "300"}, validate_only=True).error == 0
    stored = json.loads(zk_client.get("/config/topics/t")[0])
    assert stored == {"version": 1, "config": {"retention.ms": "3600000"}}
    assert alter(other, 2, "t", {"max.message.bytes": "300", "cleanup.policy": "compact"}).error == 0
    stored = json.loads(zk_client.get("/config/topics/t")[0])
    assert stored == {"version": 1, "config": {"max.message.bytes": "300", "cleanup.policy": "compact"}}
    changes = sorted(zk_client.get_children("/config/changes"))
    assert json.loads(zk_client.get(f"/config/changes/{changes[-1]}")[0]) == {
        "version": 2,
        "entity_path": "topics/t",
    }

    def applied():
        logs = [b.server.log_manager.get_log("t", p) for b in started for p in (0, 1)]
        return all(log.config.max_message_size == 300 and log.config.compact for log in logs)

    wait_for(applied)
    assert all(
        log.config.retention_ms == 86400000
        for log in started[0].server.log_manager.all_logs()
        if log.topic == "t"
    )  # the override removed: the broker's value again
    configs = {c.name: c.config_source for c in describe(other, 3, "t").configs}
    assert (
        configs["retention.ms"] == w.STATIC_BROKER_CONFIG
        and configs["max.message.bytes"] == w.DYNAMIC_TOPIC_CONFIG
    )


def test_broker_configs_are_read_only(brokers):
    _, (client, _) = brokers
    result = describe(client, 1, "0", resource_type=w.BROKER, keys=["broker.id", "num.partitions"])
    assert [(c.name, c.value, c.read_only, c.config_source) for c in result.configs] == [
        ("broker.id", "0", True, w.STATIC_BROKER_CONFIG),
        ("num.partitions", "1", True, w.STATIC_BROKER_CONFIG),
    ]
    assert describe(client, 1, "7", resource_type=w.BROKER).error == ErrorCode.INVALID_REQUEST
    refused = alter(client, 0, "0", {"num.partitions": "3"}, resource_type=w.BROKER)
    assert refused.error == ErrorCode.INVALID_CONFIG and "num.partitions" in refused.error_message


def test_old_change_notifications_are_purged(brokers, zk_client, monkeypatch):
    from zkafka.server import topic_config_manager

    _, (client, _) = brokers
    assert alter(client, 1, "t", {"retention.ms": "1000"}).error == 0
    first = sorted(zk_client.get_children("/config/changes"))
    monkeypatch.setattr(topic_config_manager, "CHANGE_EXPIRATION_MS", 0)  # every processed one is old now
    # already purged (a broker's purge may run first now), or older than now
    wait_for(lambda: (node := zk_client.exists(f"/config/changes/{first[-1]}")) is None or node.ctime < time.time() * 1000)
    assert alter(client, 1, "t", {"retention.ms": "2000"}).error == 0
    wait_for(lambda: not set(first) & set(zk_client.get_children("/config/changes")))
