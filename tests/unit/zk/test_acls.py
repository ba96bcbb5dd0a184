"""Kafka's default ZooKeeper ACLs by path, the JAAS file's Client credentials, and set.acl's config errors."""

from __future__ import annotations

import pytest

from zkafka.config08 import BrokerConfig08
from zkafka.errors import InvalidConfigError
from zkafka.zk.acls import client_credentials, default_acls, login_config_path, zk_security


def kinds(acl):
    return [(a.id.scheme, a.perms) for a in acl]


def test_default_acls_by_path():
    assert kinds(default_acls("/brokers/ids/1", False)) == [("world", 31)]
    assert kinds(default_acls("/brokers/ids/1", True)) == [("auth", 31), ("world", 1)]
    assert kinds(default_acls("/kafka-acl/Topic/t", True)) == [("auth", 31), ("world", 1)]
    assert kinds(default_acls("/config/users/alice", True)) == [("auth", 31)]
    assert kinds(default_acls("/config/brokers", True)) == [("auth", 31)]
    assert kinds(default_acls("/config/usersx", True)) == [("auth", 31), ("world", 1)]
    assert kinds(default_acls("/consumers/g/offsets/t/0", True)) == [("world", 31)]


def test_the_client_section_of_a_jaas_file(tmp_path, monkeypatch):
    jaas = tmp_path / "jaas.conf"
    jaas.write_text(
        'KafkaServer { x.PlainLoginModule required username="a" password="b"; };\n'
        'Client {\n  org.apache.zookeeper.server.auth.DigestLoginModule required\n'
        '  username="kafka" password="k-secret";\n};\n'
    )
    assert client_credentials(str(jaas)) == "kafka:k-secret"
    monkeypatch.setenv("KAFKA_OPTS", f"-Xmx1g -Djava.security.auth.login.config={jaas}")
    assert login_config_path() == str(jaas) and login_config_path("/given") == "/given"
    jaas.write_text('KafkaServer { x required username="a" password="b"; };')
    assert client_credentials(str(jaas)) is None
    with pytest.raises(InvalidConfigError, match="^java.security.auth.login.config: cannot read"):
        client_credentials(str(tmp_path / "missing"))


def test_set_acl_without_credentials_names_the_key(monkeypatch):
    monkeypatch.delenv("KAFKA_OPTS", raising=False)
    config = BrokerConfig08({"broker.id": "0", "zookeeper.connect": "z", "zookeeper.set.acl": "true"})
    with pytest.raises(InvalidConfigError, match="^zookeeper.set.acl: "):
        zk_security(config)
    open_config = BrokerConfig08({"broker.id": "0", "zookeeper.connect": "z"})
    assert zk_security(open_config) == {"credentials": None, "secure_acls": False}
