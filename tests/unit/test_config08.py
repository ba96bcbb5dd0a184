"""The 0.8.2 config keys, defaults and precedence, and telling the two lines' server.properties apart."""

import logging
from pathlib import Path

import pytest

from zkafka.config import parse_properties
from zkafka.config07 import BrokerConfig
from zkafka.config08 import (
    BrokerConfig08,
    ConsumerConfig08,
    ConsumerConfig09,
    ProducerConfig08,
    parse_topic_overrides,
    topic_config,
)
from zkafka.errors import InvalidConfigError
from zkafka.log.log_config import LogConfig
from zkafka.server.start import load_broker_config

REPO = Path(__file__).resolve().parents[2]
BASE = {"broker.id": "1", "zookeeper.connect": "zk:2181/kafka"}


def test_stock_0_8_2_server_properties_loads_as_the_0_8_line(caplog):
    with caplog.at_level(logging.WARNING):
        config = load_broker_config(REPO / "config" / "server-0.8.properties")
    assert isinstance(config, BrokerConfig08)
    assert caplog.text == ""  # every stock key is known
    assert config["broker.id"] == 0 and config["port"] == 9092
    assert config["log.dirs"] == ["/tmp/kafka-logs"]
    assert config["num.network.threads"] == 3 and config["num.io.threads"] == 8
    assert config["log.retention.ms"] == 168 * 3600 * 1000
    assert config["log.cleaner.enable"] is False
    assert config["zookeeper.connect"] == "localhost:2181"
    assert config["zookeeper.connection.timeout.ms"] == 6000


def test_the_0_7_sample_still_loads_as_the_0_7_line():
    assert type(load_broker_config(REPO / "config" / "server.properties")) is BrokerConfig


def test_broker_defaults_are_0_8_2s():
    config = BrokerConfig08(BASE)
    assert config["message.max.bytes"] == 1000012
    assert config["socket.request.max.bytes"] == 104857600
    assert config["zookeeper.session.timeout.ms"] == 6000 == config["zookeeper.connection.timeout.ms"]
    assert config["log.dirs"] == ["/tmp/kafka-logs"]
    assert config["log.roll.ms"] == 168 * 3600 * 1000 and config["log.roll.jitter.ms"] == 0
    assert config["log.retention.bytes"] == -1 and config["log.segment.bytes"] == 2**30
    assert config["log.flush.interval.messages"] == 2**63 - 1 == config["log.flush.interval.ms"]
    assert config["advertised.host.name"] is None and config["advertised.port"] == 9092
    assert config["default.replication.factor"] == 1 and config["num.partitions"] == 1
    assert config["unclean.leader.election.enable"] is True and config["delete.topic.enable"] is False
    assert config["controlled.shutdown.enable"] is True and config["auto.create.topics.enable"] is True
    assert config["offsets.topic.num.partitions"] == 50 and config["offsets.commit.required.acks"] == -1
    assert config["replica.lag.max.messages"] == 4000 and config["replica.fetch.max.bytes"] == 1048576


@pytest.mark.parametrize(
    "props, key, expected",
    [
        ({"log.roll.hours": "2"}, "log.roll.ms", 2 * 3600 * 1000),
        ({"log.roll.hours": "2", "log.roll.ms": "1234"}, "log.roll.ms", 1234),
        ({"log.retention.hours": "1"}, "log.retention.ms", 3600 * 1000),
        ({"log.retention.hours": "1", "log.retention.minutes": "3"}, "log.retention.ms", 180000),
        ({"log.retention.minutes": "3", "log.retention.ms": "99"}, "log.retention.ms", 99),
        ({"log.dir": "/a"}, "log.dirs", ["/a"]),
        ({"log.dirs": "/a, /b,"}, "log.dirs", ["/a", "/b"]),
        ({"host.name": "h", "port": "1"}, "advertised.host.name", "h"),
        ({"port": "19092"}, "advertised.port", 19092),
        ({"advertised.port": "7", "port": "1"}, "advertised.port", 7),
        ({"log.flush.scheduler.interval.ms": "500"}, "log.flush.interval.ms", 500),
        ({"zookeeper.session.timeout.ms": "4000"}, "zookeeper.connection.timeout.ms", 4000),
    ],
)
def test_precedence(props, key, expected):
    assert BrokerConfig08({**BASE, **props})[key] == expected


@pytest.mark.parametrize(
    "key, value",
    [
        ("port", "x"),
        ("log.segment.bytes", "13"),
        ("log.retention.ms", "0"),
        ("log.cleanup.policy", "shred"),
        ("log.cleaner.min.cleanable.ratio", "1.5"),
        ("delete.topic.enable", "yes"),
        ("offsets.topic.compression.codec", "zstd"),
        ("max.incremental.fetch.session.cache.slots", "-1"),
        ("max.connections.per.ip", "0"),
        ("max.connections.per.ip.overrides", "127.0.0.1"),
        ("max.connections.per.ip.overrides", "127.0.0.1:-3"),
    ],
)
def test_bad_broker_values_name_the_key(key, value):
    with pytest.raises(InvalidConfigError, match=key.replace(".", r"\.")):
        BrokerConfig08({**BASE, key: value})


def test_max_connections_per_ip_overrides_parse_as_kafkas_host_count_list():
    config = BrokerConfig08({**BASE, "max.connections.per.ip.overrides": "127.0.0.1:5, localhost:7"})
    assert config["max.connections.per.ip.overrides"] == {"127.0.0.1": 5, "localhost": 7}
    assert BrokerConfig08(BASE)["max.connections.per.ip"] == 2**31 - 1


def test_required_and_cross_key_checks():
    with pytest.raises(InvalidConfigError, match=r"broker\.id"):
        BrokerConfig08({"zookeeper.connect": "z"})
    with pytest.raises(InvalidConfigError, match=r"zookeeper\.connect"):
        BrokerConfig08({"broker.id": "0"})
    with pytest.raises(InvalidConfigError, match=r"replica\.fetch\.max\.bytes"):
        BrokerConfig08({**BASE, "message.max.bytes": "2000000"})


def test_unknown_key_warns(caplog):
    with caplog.at_level(logging.WARNING):
        BrokerConfig08({**BASE, "brokerid.typo": "1"})
    assert "unknown broker key brokerid.typo" in caplog.text


def test_topic_overrides():
    broker = BrokerConfig08({**BASE, "log.retention.hours": "1", "log.cleanup.policy": "compact"})
    config = topic_config(broker, {"retention.ms": "5000", "max.message.bytes": "100"})
    assert config["retention.ms"] == 5000 and config["max.message.bytes"] == 100
    assert config["cleanup.policy"] == "compact" and config["segment.ms"] == 168 * 3600 * 1000
    assert parse_topic_overrides({"min.cleanable.dirty.ratio": "0.25"}) == {"min.cleanable.dirty.ratio": 0.25}
    with pytest.raises(InvalidConfigError, match=r"segmnt\.bytes: unknown topic configuration"):
        parse_topic_overrides({"segmnt.bytes": "1"})
    with pytest.raises(InvalidConfigError, match=r"cleanup\.policy"):
        parse_topic_overrides({"cleanup.policy": "never"})


def test_unclean_leader_election_reaches_the_log_config_from_the_broker_and_the_topic():
    broker = BrokerConfig08({**BASE, "unclean.leader.election.enable": "false"})
    assert LogConfig.from_broker_config(broker).unclean_leader_election_enable is False
    overridden = topic_config(broker, {"unclean.leader.election.enable": "true"})
    assert LogConfig.from_topic_config(overridden).unclean_leader_election_enable is True
    assert LogConfig.from_topic_config(topic_config(broker, {})).unclean_leader_election_enable is False


def test_producer_0_8_keys():
    config = ProducerConfig08({"metadata.broker.list": "h1:9092, h2:9092", "compression.codec": "lz4"})
    assert config["metadata.broker.list"] == ["h1:9092", "h2:9092"]
    assert config["compression.codec"] == 3 and config["request.required.acks"] == 0
    assert config["request.timeout.ms"] == 10000 and config["message.send.max.retries"] == 3
    assert config["queue.buffering.max.messages"] == 10000 and config["batch.num.messages"] == 200
    assert config["key.serializer.class"] == config["serializer.class"] == "kafka.serializer.DefaultEncoder"
    assert (
        ProducerConfig08({"metadata.broker.list": "h:1", "compression.codec": "1"})["compression.codec"] == 1
    )
    with pytest.raises(InvalidConfigError, match=r"metadata\.broker\.list"):
        ProducerConfig08({})
    with pytest.raises(InvalidConfigError, match=r"client\.id"):
        ProducerConfig08({"metadata.broker.list": "h:1", "client.id": "a b"})
    # The new producer's pipelining: off (one request at a time, as 0.8.2's Scala producer) unless asked for.
    assert config["max.in.flight.requests.per.connection"] == 1
    with pytest.raises(InvalidConfigError, match=r"max\.in\.flight\.requests\.per\.connection"):
        ProducerConfig08({"metadata.broker.list": "h:1", "max.in.flight.requests.per.connection": "0"})


def test_consumer_0_8_keys():
    config = ConsumerConfig08({"group.id": "g", "zookeeper.connect": "z", "zookeeper.sync.time.ms": "300"})
    assert config["rebalance.backoff.ms"] == 300 and config["client.id"] == "g"
    assert config["auto.offset.reset"] == "largest" and config["fetch.wait.max.ms"] == 100
    assert config["offsets.storage"] == "zookeeper" and config["dual.commit.enabled"] is False
    assert config["auto.commit.interval.ms"] == 60000 and config["queued.max.message.chunks"] == 2
    kafka = ConsumerConfig08({"group.id": "g", "zookeeper.connect": "z", "offsets.storage": "kafka"})
    assert kafka["dual.commit.enabled"] is True
    with pytest.raises(InvalidConfigError, match=r"auto\.offset\.reset"):
        ConsumerConfig08({"group.id": "g", "zookeeper.connect": "z", "auto.offset.reset": "earliest"})
    with pytest.raises(InvalidConfigError, match=r"socket\.timeout\.ms"):
        ConsumerConfig08({"group.id": "g", "zookeeper.connect": "z", "socket.timeout.ms": "50"})


def test_consumer_0_9_keys():
    config = ConsumerConfig09({"bootstrap.servers": "h:9092", "group.id": "g"})
    assert config["session.timeout.ms"] == 30000 and config["heartbeat.interval.ms"] == 3000
    assert config["auto.offset.reset"] == "latest" and config["fetch.max.wait.ms"] == 500
    assert config["partition.assignment.strategy"] == ["org.apache.kafka.clients.consumer.RangeAssignor"]
    with pytest.raises(InvalidConfigError, match=r"heartbeat\.interval\.ms"):
        ConsumerConfig09({"bootstrap.servers": "h:9092", "heartbeat.interval.ms": "40000"})


def test_loading_a_mixed_file_is_refused(tmp_path):
    path = tmp_path / "server.properties"
    path.write_text("broker.id=0\nbrokerid=0\nzookeeper.connect=z\n")
    with pytest.raises(InvalidConfigError, match="brokerid"):
        load_broker_config(path)
    assert parse_properties(path.read_text())["broker.id"] == "0"
