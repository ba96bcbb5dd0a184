"""The 0.7 config keys, defaults and validation."""

import logging

import pytest

from tests.unit.test_config import SAMPLE
from zkafka.config import parse_properties
from zkafka.config07 import BrokerConfig, ConsumerConfig, ProducerConfig
from zkafka.errors import InvalidConfigError


def test_broker_defaults_and_maps(caplog):
    with caplog.at_level(logging.WARNING):
        config = BrokerConfig(parse_properties(SAMPLE))
    assert config["port"] == 9092 and config.num_partitions == 4
    assert config["log.file.size"] == 1073741824
    assert config["log.flush.interval"] == 500
    assert (
        config["log.default.flush.interval.ms"] == config["log.default.flush.scheduler.interval.ms"] == 3000
    )
    assert config["zk.connectiontimeout.ms"] == 6000
    assert config["topic.partition.count.map"] == {"t1": 8, "t2": 16}
    assert config.partitions_for("t2") == 16 and config.partitions_for("other") == 4
    assert "unknown broker key long.value" in caplog.text
    assert "bad" in caplog.text


@pytest.mark.parametrize(
    "key, value",
    [("port", "ninety"), ("log.file.size", "4"), ("enable.zookeeper", "yes"), ("log.retention.hours", "0")],
)
def test_bad_values_name_the_key(key, value):
    props = {"brokerid": "1", "log.dir": "/tmp/x", "zk.connect": "h:1", key: value}
    with pytest.raises(InvalidConfigError, match=key.replace(".", r"\.")):
        BrokerConfig(props)


def test_required_keys():
    with pytest.raises(InvalidConfigError, match="brokerid"):
        BrokerConfig({"log.dir": "/x", "zk.connect": "h:1"})
    with pytest.raises(InvalidConfigError, match="zk.connect"):
        BrokerConfig({"brokerid": "1", "log.dir": "/x"})
    assert BrokerConfig({"brokerid": "1", "log.dir": "/x", "enable.zookeeper": "false"})["zk.connect"] is None


def test_producer_config_rules():
    with pytest.raises(InvalidConfigError, match="zk.connect, broker.list"):
        ProducerConfig({})
    with pytest.raises(InvalidConfigError, match="zk.connect, broker.list"):
        ProducerConfig({"zk.connect": "h:1", "broker.list": "0:h:1"})
    with pytest.raises(InvalidConfigError, match="partitioner.class"):
        ProducerConfig({"broker.list": "0:h:1", "partitioner.class": "x.Y"})
    with pytest.raises(InvalidConfigError, match="producer.type"):
        ProducerConfig({"broker.list": "0:h:1", "producer.type": "fast"})
    config = ProducerConfig({"zk.connect": "h:1", "compression.codec": "snappy", "compressed.topics": "a, b"})
    assert config["compression.codec"] == 2 and config["compressed.topics"] == ["a", "b"]
    assert config["queue.enqueueTimeout.ms"] == 0 and config["batch.size"] == 200


def test_consumer_config_defaults():
    config = ConsumerConfig({"groupid": "g", "zk.connect": "h:1", "zk.synctime.ms": "500"})
    assert config["rebalance.backoff.ms"] == 500
    assert config["fetch.size"] == 1048576 and config["queuedchunks.max"] == 10
    assert config.with_overrides(autooffset_reset="largest")["autooffset.reset"] == "largest"
