"""The request handlers with an ACL authorizer (no sockets, no ZooKeeper): KafkaApis on a LogManager08 in a
temporary directory, asked as the principal of a SASL connection (``client_session``) from an address
(``client_address``). Each refusal is the error Kafka answers, and a refused request changes nothing."""

from __future__ import annotations

import pytest
from gevent.event import AsyncResult

from tests.support.server08 import cluster_snapshot
from tests.support.wire import wire_bytes
from zkafka.log.log_config import LogConfig
from zkafka.log.log_manager08 import LogManager08
from zkafka.network.server import Session, client_address, client_session
from zkafka.protocol import v08
from zkafka.protocol.errors import ErrorCode
from zkafka.protocol.fetch import FetchRequestPartition, FetchRequestTopic, FetchRequestV0
from zkafka.protocol.metadata import METADATA_APIS, MetadataRequestV0
from zkafka.protocol.offset_commit import OffsetCommitRequestV0
from zkafka.protocol.offsets import ListOffsetsRequestPartition, ListOffsetsRequestTopic, ListOffsetsRequestV0
from zkafka.protocol.produce import ProduceRequestPartition, ProduceRequestTopic, ProduceRequestV0
from zkafka.protocol.versioned import make
from zkafka.records import format08
from zkafka.security.acl import AccessControlEntry, Operation, PatternType, PermissionType, ResourcePattern
from zkafka.security.acl import ResourceType as R
from zkafka.security.auth_helper import AuthHelper
from zkafka.security.authorizer import AclCache, Authorizer
from zkafka.server.apis08 import KafkaApis
from zkafka.server.metadata_cache import MetadataCache
from zkafka.server.replica_manager import ReplicaManager

DENIED_TOPIC, DENIED_GROUP = ErrorCode.TOPIC_AUTHORIZATION_FAILED, ErrorCode.GROUP_AUTHORIZATION_FAILED


def allow(principal: str, operation: Operation, host: str = "*") -> AccessControlEntry:
    return AccessControlEntry(principal, host, operation, PermissionType.ALLOW)


class SecuredBroker:
    """KafkaApis with an authorizer over ``cache``, asked as ``principal`` from 10.0.0.5."""

    def __init__(self, log_dir, cache: AclCache) -> None:
        self.log_manager = LogManager08([str(log_dir)], LogConfig())
        replicas = ReplicaManager(0, self.log_manager)
        leaders = {("t", 0): 0, ("open", 0): 0}
        replicas.update_leaders(leaders)
        self.created: list[str] = []
        metadata = MetadataCache(snapshot=cluster_snapshot(leaders), create_topic=self.created.append)
        self.apis = KafkaApis(replicas, metadata, auth=AuthHelper(Authorizer(cache)))

    def call(self, body, principal: str):
        session = client_session.set(Session("SASL_PLAINTEXT", "SASL_PLAINTEXT", principal))
        address = client_address.set(("10.0.0.5", 40000))
        try:
            frame = v08.encode_request(body, 1, "test")
            answer = self.apis.handle(v08.decode_request(memoryview(frame)[4:]))
        finally:
            client_session.reset(session)
            client_address.reset(address)
        if isinstance(answer, AsyncResult):
            answer = answer.get(timeout=10)
        return v08.decode_response(body.API_KEY, body.API_VERSION, wire_bytes(answer)[4:]).body


@pytest.fixture
def broker(tmp_path):
    cache = AclCache()
    cache.update(ResourcePattern(R.TOPIC, "open"), [allow("User:*", Operation.ALL)])
    cache.update(ResourcePattern(R.TOPIC, "t"), [allow("User:alice", Operation.DESCRIBE)])
    cache.update(
        ResourcePattern(R.TOPIC, "new-", PatternType.PREFIXED), [allow("User:alice", Operation.CREATE)]
    )
    b = SecuredBroker(tmp_path / "logs", cache)
    try:
        yield b
    finally:
        b.log_manager.close()


def produce(topic: str):
    message_set = format08.build_message_set([(None, b"v")], 0)
    return ProduceRequestV0(1, 1000, [ProduceRequestTopic(topic, [ProduceRequestPartition(0, message_set)])])


def fetch(topic: str, replica_id: int = -1):
    return FetchRequestV0(
        replica_id, 0, 0, [FetchRequestTopic(topic, [FetchRequestPartition(0, 0, 1 << 20)])]
    )


def test_produce_needs_write_and_a_refused_one_appends_nothing(broker):
    (refused,) = broker.call(produce("t"), "User:alice").topics[0].partitions
    assert refused.error == DENIED_TOPIC
    (written,) = broker.call(produce("open"), "User:alice").topics[0].partitions
    assert (written.error, written.offset) == (0, 0)
    assert (
        broker.log_manager.get_log("t", 0) is None or broker.log_manager.get_log("t", 0).log_end_offset == 0
    )


def test_fetch_needs_read_and_a_followers_fetch_cluster_action(broker):
    broker.call(produce("open"), "User:alice")
    assert broker.call(fetch("t"), "User:alice").topics[0].partitions[0].error == DENIED_TOPIC
    assert broker.call(fetch("open"), "User:alice").topics[0].partitions[0].error == 0
    follower = broker.call(fetch("open", replica_id=1), "User:alice").topics[0].partitions[0]
    assert (follower.error, follower.message_set) == (DENIED_TOPIC, b"")


def test_list_offsets_needs_describe(broker):
    asked = [ListOffsetsRequestTopic("t", [ListOffsetsRequestPartition(0, -1, 1)])]
    (answer,) = broker.call(ListOffsetsRequestV0(-1, asked), "User:bob").topics[0].partitions
    assert (answer.error, answer.offsets) == (DENIED_TOPIC, [])
    (answer,) = broker.call(ListOffsetsRequestV0(-1, asked), "User:alice").topics[0].partitions
    assert answer.error == 0


def test_metadata_hides_what_the_principal_may_not_describe_or_create(broker):
    every = broker.call(MetadataRequestV0([]), "User:bob")
    assert [t.topic for t in every.topics] == ["open"]
    named = broker.call(
        make(METADATA_APIS[4][0], topics=["t", "new-1", "other"], allow_auto_topic_creation=True),
        "User:alice",
    )
    errors = {t.topic: t.error for t in named.topics}
    # t: described; new-1: Describe implied by nothing, so refused before any creation; other: no ACL at all
    assert errors == {"t": 0, "new-1": DENIED_TOPIC, "other": DENIED_TOPIC}
    assert broker.created == []


def test_zookeeper_offset_commit_needs_read_on_the_group_then_the_topic(broker):
    body = OffsetCommitRequestV0(
        "g", [{"topic": "open", "partitions": [{"partition": 0, "offset": 1, "metadata": ""}]}]
    )
    body = make(OffsetCommitRequestV0, group_id="g", topics=body.topics)
    (answer,) = broker.call(body, "User:alice").topics[0].partitions
    assert answer.error == DENIED_GROUP


def test_metadata_answers_the_operations_the_principal_may_do_when_asked(broker):
    asked = make(
        METADATA_APIS[8][0], topics=["t", "open"], allow_auto_topic_creation=False,
        include_cluster_authorized_operations=True, include_topic_authorized_operations=True,
    )  # fmt: skip
    answer = broker.call(asked, "User:alice")
    operations = {t.topic: t.topic_authorized_operations for t in answer.topics}
    describe = 1 << Operation.DESCRIBE
    assert operations == {"t": describe, "open": sum(1 << op for op in (3, 4, 5, 6, 7, 8, 10, 11))}
    assert answer.cluster_authorized_operations == 0  # no ACL names the cluster
