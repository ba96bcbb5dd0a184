"""ZooKeeper ACLs: a broker with ``zookeeper.set.acl=true`` (digest credentials from its JAAS file's Client
section) creates its znodes creator-all and world-readable, so a session without credentials reads
/brokers/ids/0 but can neither delete it nor write /controller; SCRAM credentials written by ``zkafka configs``
under the same JAAS file are not world-readable, ACLs written by ``zkafka acls`` not writable; /consumers
stays open; ``zkafka zookeeper-security-migration`` unsecures the tree and secures it again."""

from __future__ import annotations

import pytest
from click.testing import CliRunner
from kazoo.exceptions import NoAuthError

from tests.support.server08 import broker08_props
from zkafka.cli.command import main
from zkafka.config08 import BrokerConfig08
from zkafka.server.start import BrokerThread
from zkafka.utils import wait_until

pytestmark = pytest.mark.integration

JAAS = """KafkaServer {
  org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" password="a";
};
Client {
  org.apache.zookeeper.server.auth.DigestLoginModule required
  username="kafka"
  password="kafka-secret";
};
"""


def zkafka(jaas, *args: str):
    result = CliRunner().invoke(main, list(args), env={"KAFKA_OPTS": f"-Djava.security.auth.login.config={jaas}"})
    assert result.exit_code == 0, result.output
    return result.output


def test_set_acl_and_the_migration_tool(tmp_path, zk_connect, zk_client):
    jaas = tmp_path / "jaas.conf"
    jaas.write_text(JAAS)
    props = broker08_props(0, tmp_path / "broker08-0", zk_connect)
    props.update({"zookeeper.set.acl": "true", "java.security.auth.login.config": str(jaas)})
    migrate = ["zookeeper-security-migration", "--zookeeper.connect", zk_connect, "--zookeeper.acl"]
    broker = BrokerThread(BrokerConfig08(props)).start()
    try:
        wait_until(lambda: zk_client.exists("/controller"), 30, message="a controller elected")
        assert b'"port"' in zk_client.get("/brokers/ids/0")[0]  # world-readable
        acl = zk_client.get_acls("/brokers/ids/0")[0]
        assert [(a.id.scheme, a.perms) for a in acl] == [("digest", 31), ("world", 1)]
        assert acl[0].id.id.startswith("kafka:")
        with pytest.raises(NoAuthError):
            zk_client.delete("/brokers/ids/0")
        with pytest.raises(NoAuthError):
            zk_client.set("/controller", b'{"version":1,"brokerid":999,"timestamp":"0"}')
        zkafka(jaas, "configs", "--zookeeper", zk_connect, "--alter", "--add-config",
               "SCRAM-SHA-256=[password=alice-secret]", "--entity-type", "users", "--entity-name", "alice")  # fmt: skip
        with pytest.raises(NoAuthError):
            zk_client.get("/config/users/alice")  # SCRAM credentials: the creator only
        zkafka(jaas, "acls", "--authorizer-properties", f"zookeeper.connect={zk_connect}", "--add",
               "--allow-principal", "User:alice", "--operation", "Read", "--topic", "t")  # fmt: skip
        assert b"User:alice" in zk_client.get("/kafka-acl/Topic/t")[0]
        assert [a.id.scheme for a in zk_client.get_acls("/kafka-acl/Topic/t")[0]] == ["digest", "world"]
        with pytest.raises(NoAuthError):
            zk_client.set("/kafka-acl/Topic/t", b'{"version":1,"acls":[]}')
        zk_client.create("/consumers/g/ids/c1", b"{}", makepath=True)  # consumers' paths stay open
    finally:
        broker.stop()
    try:
        assert "unsecure ACLs" in zkafka(jaas, *migrate, "unsecure")
        assert b"SCRAM-SHA-256" in zk_client.get("/config/users/alice")[0]
        zk_client.create("/brokers/ids/5", b"{}")
        assert "secure ACLs" in zkafka(jaas, *migrate, "secure")
        assert zk_client.get("/brokers/ids/5")[0] == b"{}"
        with pytest.raises(NoAuthError):
            zk_client.delete("/brokers/ids/5")
        with pytest.raises(NoAuthError):
            zk_client.get("/config/users/alice")
        zk_client.set("/consumers/g/ids/c1", b"{}")
    finally:
        zkafka(jaas, *migrate, "unsecure")  # the chroot's teardown deletes without credentials
