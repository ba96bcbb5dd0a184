"""The 0.8 znode layout: paths and the exact JSON the facts sheet shows, parsed in any key order."""

import json

import pytest

from zkafka.zk.paths import ZKGroupDirs, broker_id_path
from zkafka.zk.paths08 import (
    BrokerRegistration,
    ConsumerRegistration,
    PartitionState,
    ZkDataError,
    delete_topic_path,
    encode_cluster_id,
    encode_config_change,
    encode_controller,
    encode_controller_epoch,
    encode_entity_change,
    encode_partition_list,
    encode_reassignment,
    encode_topic_assignment,
    encode_topic_config,
    parse_cluster_id,
    parse_controller,
    parse_controller_epoch,
    parse_entity_change,
    parse_partition_list,
    parse_reassignment,
    parse_topic_assignment,
    parse_topic_config,
    partition_state_path,
    topic_config_path,
    topic_path,
)

BROKER_V1 = '{"version":1,"host":"h1","port":9092,"jmx_port":-1,"timestamp":"1428512949385"}'
STATE = '{"controller_epoch":1,"leader":1,"version":1,"leader_epoch":0,"isr":[1,2]}'


def test_paths():
    assert broker_id_path(3) == "/brokers/ids/3"
    assert topic_path("t") == "/brokers/topics/t"
    assert partition_state_path("t", 2) == "/brokers/topics/t/partitions/2/state"
    assert delete_topic_path("t") == "/admin/delete_topics/t"
    assert topic_config_path("t") == "/config/topics/t"
    dirs = ZKGroupDirs("g")
    assert dirs.consumer_path("c1") == "/consumers/g/ids/c1"
    assert dirs.owner_path("t", 0) == "/consumers/g/owners/t/0"
    assert dirs.offset_path("t", 11) == "/consumers/g/offsets/t/11"


def test_broker_registration_version_1():
    broker = BrokerRegistration(1, "h1", 9092, timestamp="1428512949385")
    assert broker.to_json() == BROKER_V1
    assert BrokerRegistration.parse(1, BROKER_V1) == broker
    # 0.8.2's own writer emits the five keys in hash order
    hashed = '{"jmx_port":-1,"timestamp":"1428512949385","host":"h1","version":1,"port":9092}'
    assert BrokerRegistration.parse("1", hashed.encode()) == broker


def test_broker_registration_version_2_with_endpoints():
    text = (
        '{"jmx_port":-1,"timestamp":"1428512949385","endpoints":["PLAINTEXT://h1:9092"],'
        '"host":"h1","version":2,"port":9092}'
    )
    broker = BrokerRegistration.parse(1, text)
    assert (broker.host, broker.port, broker.version, broker.endpoints) == (
        "h1",
        9092,
        2,
        ("PLAINTEXT://h1:9092",),
    )
    no_host = '{"version":2,"host":null,"port":-1,"endpoints":["SSL://h2:9093","PLAINTEXT://h2:9094"]}'
    assert (BrokerRegistration.parse(2, no_host).host, BrokerRegistration.parse(2, no_host).port) == (
        "h2",
        9094,
    )
    assert '"endpoints":["PLAINTEXT://h1:9092"]' in BrokerRegistration(1, "h1", 9092, version=2).to_json()


@pytest.mark.parametrize("bad", ["", "not json", "[1]", '{"version":1,"host":"h"}', '{"host":"h","port":1}'])
def test_bad_broker_registration(bad):
    with pytest.raises(ZkDataError, match=r"/brokers/ids/4"):
        BrokerRegistration.parse(4, bad)


def test_topic_assignment():
    text = '{"version":1,"partitions":{"0":[1,2],"1":[2,3]}}'
    assert encode_topic_assignment({1: [2, 3], 0: [1, 2]}) == text
    assert parse_topic_assignment("t", text) == {0: [1, 2], 1: [2, 3]}
    assert parse_topic_assignment("t", '{"partitions":{"1":[2,3],"0":[1,2]},"version":1}') == {
        0: [1, 2],
        1: [2, 3],
    }
    with pytest.raises(ZkDataError, match=r"/brokers/topics/t"):
        parse_topic_assignment("t", '{"version":1,"partitions":{"x":[1]}}')
    with pytest.raises(ZkDataError, match="partitions.0"):
        parse_topic_assignment("t", '{"version":1,"partitions":{"0":["1"]}}')


def test_partition_state():
    state = PartitionState(leader=1, leader_epoch=0, isr=(1, 2), controller_epoch=1)
    assert state.to_json() == STATE
    assert PartitionState.parse("t", 0, STATE, zk_version=4) == PartitionState(1, 0, (1, 2), 1, 4)
    reordered = '{"isr":[1,2],"leader_epoch":0,"version":1,"leader":1,"controller_epoch":1}'
    assert PartitionState.parse("t", 0, reordered) == state
    with pytest.raises(ZkDataError, match=r"partitions/0/state.*isr"):
        PartitionState.parse("t", 0, '{"controller_epoch":1,"leader":1,"leader_epoch":0}')


def test_controller_and_epoch():
    text = '{"version":1,"brokerid":1,"timestamp":"1428512949385"}'
    assert encode_controller(1, "1428512949385") == text
    assert parse_controller(text) == 1
    assert parse_controller(b"3") == 3  # the pre-JSON form
    assert encode_controller_epoch(7) == "7" and parse_controller_epoch(b"7") == 7
    with pytest.raises(ZkDataError, match="/controller"):
        parse_controller('{"version":1}')
    with pytest.raises(ZkDataError, match="/controller_epoch"):
        parse_controller_epoch("x")


def test_admin_values():
    reassign = '{"version":1,"partitions":[{"topic":"t","partition":0,"replicas":[1,2]}]}'
    assert encode_reassignment({("t", 0): [1, 2]}) == reassign
    assert parse_reassignment(reassign) == {("t", 0): [1, 2]}
    election = '{"version":1,"partitions":[{"topic":"t","partition":0}]}'
    assert encode_partition_list([("t", 0)]) == election
    assert parse_partition_list("/admin/preferred_replica_election", election) == {("t", 0)}
    with pytest.raises(ZkDataError, match="preferred"):
        parse_partition_list(
            "/admin/preferred_replica_election", '{"version":1,"partitions":[{"topic":"t"}]}'
        )


def test_config_values():
    text = '{"version":1,"config":{"cleanup.policy":"compact"}}'
    assert encode_topic_config({"cleanup.policy": "compact"}) == text
    assert parse_topic_config("t", text) == {"cleanup.policy": "compact"}
    assert encode_config_change("t") == '"t"'
    assert parse_entity_change('"t"') == ("topics", "t")
    assert parse_entity_change('{"version":1,"entity_type":"topics","entity_name":"t"}') == ("topics", "t")
    assert parse_entity_change('{"version":1,"entity_type":"clients","entity_name":"c"}') == ("clients", "c")
    assert parse_entity_change(encode_entity_change("users/u/clients/c")) == ("users", "u/clients/c")
    with pytest.raises(ZkDataError):
        parse_entity_change('{"version":2,"entity_path":"clients"}')


def test_consumer_registration():
    text = '{"version":1,"subscription":{"t":2},"pattern":"static","timestamp":"1428512949385"}'
    registration = ConsumerRegistration({"t": 2}, "static", "1428512949385")
    assert registration.to_json() == text
    assert ConsumerRegistration.parse(text) == registration
    wildcard = ConsumerRegistration.parse('{"pattern":"white_list","subscription":{"a.*":1},"version":1}')
    assert wildcard.pattern == "white_list" and dict(wildcard.subscription) == {"a.*": 1}
    with pytest.raises(ZkDataError, match="pattern"):
        ConsumerRegistration.parse('{"version":1,"subscription":{},"pattern":"some"}')


def test_a_rack_is_an_extra_key_of_the_registration_version_it_keeps():
    registration = BrokerRegistration(1, "h", 9092, -1, "5", rack="r1")
    text = registration.to_json()
    assert json.loads(text) == {
        "version": 1,
        "host": "h",
        "port": 9092,
        "jmx_port": -1,
        "timestamp": "5",
        "rack": "r1",
    }
    assert BrokerRegistration.parse(1, text) == registration
    assert BrokerRegistration.parse(1, text.replace('"r1"', "null")).rack is None
    kafka_010 = '{"version":3,"host":"h","port":9092,"jmx_port":-1,"timestamp":"5","endpoints":["PLAINTEXT://h:9092"],"rack":"a"}'
    assert BrokerRegistration.parse(1, kafka_010).rack == "a"


def test_cluster_id_json_as_kafka_0_10_1_writes_it():
    assert json.loads(encode_cluster_id("abc")) == {"version": "1", "id": "abc"}
    assert parse_cluster_id('{"version":"1","id":"Xg3NKB8nRq2ZVFsKtYy0aw"}') == "Xg3NKB8nRq2ZVFsKtYy0aw"
