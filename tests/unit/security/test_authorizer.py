"""The ACL authorizer's decisions (pure): super users, allow.everyone.if.no.acl.found, deny beating allow,
literal, wildcard and prefixed patterns, principals and hosts, implied operations; the ACL znode's JSON and the
change notifications as Kafka writes them; the filters of DescribeAcls and DeleteAcls."""

from __future__ import annotations

import json

import pytest

from zkafka.security.acl import (
    AccessControlEntry,
    AclBinding,
    AclBindingFilter,
    Operation,
    PatternType,
    PermissionType,
    ResourcePattern,
    ResourceType,
    binding_error,
    entries_from_json,
    entries_to_json,
)
from zkafka.security.authorizer import AclCache, Authorizer
from zkafka.security.zk_acl_store import decode_change, encode_change, resource_path

TOPIC, GROUP, CLUSTER = ResourceType.TOPIC, ResourceType.GROUP, ResourceType.CLUSTER
ALLOW, DENY = PermissionType.ALLOW, PermissionType.DENY
READ, WRITE, DESCRIBE = Operation.READ, Operation.WRITE, Operation.DESCRIBE
PREFIXED = PatternType.PREFIXED


def acl(principal="User:alice", operation=READ, permission=ALLOW, host="*"):
    return AccessControlEntry(principal, host, operation, permission)


def authorizer(acls, **kwargs):
    cache = AclCache()
    for pattern, entries in acls.items():
        cache.update(pattern, entries)
    return Authorizer(cache, **kwargs)


def test_no_acl_denies_unless_allow_everyone_if_no_acl_found():
    assert not authorizer({}).authorize("User:alice", "1.2.3.4", READ, TOPIC, "t")
    assert authorizer({}, allow_everyone_if_no_acl_found=True).authorize(
        "User:alice", "1.2.3.4", READ, TOPIC, "t"
    )
    # once any ACL names the resource, the flag no longer lets others in
    other = {ResourcePattern(TOPIC, "t"): [acl("User:bob")]}
    assert not authorizer(other, allow_everyone_if_no_acl_found=True).authorize(
        "User:alice", "h", READ, TOPIC, "t"
    )


def test_super_users_pass_every_check():
    denied = {ResourcePattern(TOPIC, "t"): [acl("User:admin", Operation.ALL, DENY)]}
    assert authorizer(denied, super_users=frozenset({"User:admin"})).authorize(
        "User:admin", "h", WRITE, TOPIC, "t"
    )


def test_deny_beats_allow_across_literal_wildcard_and_prefixed_patterns():
    acls = {
        ResourcePattern(TOPIC, "*"): [acl(operation=Operation.ALL)],
        ResourcePattern(TOPIC, "pay", PREFIXED): [acl(operation=WRITE, permission=DENY)],
    }
    auth = authorizer(acls)
    assert auth.authorize("User:alice", "h", WRITE, TOPIC, "orders")
    assert not auth.authorize("User:alice", "h", WRITE, TOPIC, "payments")
    assert auth.authorize("User:alice", "h", READ, TOPIC, "payments")  # the deny names Write only


def test_prefixed_patterns_match_names_that_start_with_them_only():
    auth = authorizer({ResourcePattern(GROUP, "app-", PREFIXED): [acl()]})
    assert auth.authorize("User:alice", "h", READ, GROUP, "app-1")
    assert not auth.authorize("User:alice", "h", READ, GROUP, "ap")
    assert not auth.authorize("User:alice", "h", READ, TOPIC, "app-1")  # another resource type


def test_principal_and_host_must_match_or_be_wildcards():
    auth = authorizer({ResourcePattern(TOPIC, "t"): [acl(host="10.0.0.1"), acl("User:*", WRITE)]})
    assert auth.authorize("User:alice", "10.0.0.1", READ, TOPIC, "t")
    assert not auth.authorize("User:alice", "10.0.0.2", READ, TOPIC, "t")
    assert auth.authorize("User:anyone", "10.0.0.2", WRITE, TOPIC, "t")
    assert not auth.authorize("User:anyone", "10.0.0.2", READ, TOPIC, "t")


@pytest.mark.parametrize("granted", [READ, WRITE, Operation.DELETE, Operation.ALTER])
def test_describe_is_implied_by_read_write_delete_and_alter(granted):
    auth = authorizer({ResourcePattern(TOPIC, "t"): [acl(operation=granted)]})
    assert auth.authorize("User:alice", "h", DESCRIBE, TOPIC, "t")
    assert not auth.authorize("User:alice", "h", Operation.CREATE, TOPIC, "t")


def test_describe_configs_is_implied_by_alter_configs_and_nothing_implies_read():
    auth = authorizer({ResourcePattern(TOPIC, "t"): [acl(operation=Operation.ALTER_CONFIGS)]})
    assert auth.authorize("User:alice", "h", Operation.DESCRIBE_CONFIGS, TOPIC, "t")
    assert not auth.authorize("User:alice", "h", READ, TOPIC, "t")


def test_write_on_some_topic_is_found_by_resource_type():
    auth = authorizer({ResourcePattern(TOPIC, "p-", PREFIXED): [acl(operation=WRITE)]})
    assert auth.authorize_by_resource_type("User:alice", "h", WRITE, TOPIC)
    assert not auth.authorize_by_resource_type("User:bob", "h", WRITE, TOPIC)
    denied = authorizer({ResourcePattern(TOPIC, "*"): [acl(operation=WRITE, permission=DENY)]})
    assert not denied.authorize_by_resource_type("User:alice", "h", WRITE, TOPIC)


def test_znode_json_is_kafkas():
    entries = frozenset({acl(), acl("User:bob", Operation.CLUSTER_ACTION, DENY, "10.0.0.1")})
    data = entries_to_json(entries)
    assert json.loads(data) == {
        "version": 1,
        "acls": [
            {"principal": "User:alice", "permissionType": "Allow", "operation": "Read", "host": "*"},
            {
                "principal": "User:bob",
                "permissionType": "Deny",
                "operation": "ClusterAction",
                "host": "10.0.0.1",
            },
        ],
    }
    assert entries_from_json(data) == entries
    assert entries_from_json(b"") == frozenset()


def test_paths_and_change_notifications_are_kafkas():
    literal, prefixed = ResourcePattern(TOPIC, "t"), ResourcePattern(GROUP, "g-", PREFIXED)
    assert resource_path(literal) == "/kafka-acl/Topic/t"
    assert resource_path(prefixed) == "/kafka-acl-extended/prefixed/Group/g-"
    assert resource_path(ResourcePattern(CLUSTER, "kafka-cluster")) == "/kafka-acl/Cluster/kafka-cluster"
    assert encode_change(literal) == b"Topic:t"
    assert json.loads(encode_change(prefixed)) == {
        "version": 1, "resourceType": "Group", "name": "g-", "patternType": "PREFIXED",
    }  # fmt: skip
    assert decode_change("/kafka-acl-changes", b"Topic:a:b") == ResourcePattern(TOPIC, "a:b")
    assert decode_change("/kafka-acl-extended-changes", encode_change(prefixed)) == prefixed


def test_filters_match_as_kafkas_and_match_finds_prefixes_and_the_wildcard():
    binding = AclBinding(ResourcePattern(TOPIC, "app-", PREFIXED), acl())
    assert AclBindingFilter().matches(binding)
    assert AclBindingFilter(TOPIC, "app-1", PatternType.MATCH).matches(binding)
    assert not AclBindingFilter(TOPIC, "app-1", PatternType.ANY).matches(binding)
    assert AclBindingFilter(TOPIC, "x", PatternType.MATCH).matches_pattern(ResourcePattern(TOPIC, "*"))
    assert not AclBindingFilter(principal="User:bob").matches(binding)
    assert AclBindingFilter(operation=READ, permission_type=ALLOW).matches(binding)


def test_bindings_kafka_refuses():
    cluster_read = AclBinding(ResourcePattern(CLUSTER, "kafka-cluster"), acl(operation=READ))
    assert "Read is not an operation of Cluster" in binding_error(cluster_read)
    assert binding_error(AclBinding(ResourcePattern(CLUSTER, "c"), acl(operation=Operation.CLUSTER_ACTION)))
    assert binding_error(AclBinding(ResourcePattern(TOPIC, "t"), acl("alice")))
    assert binding_error(AclBinding(ResourcePattern(TOPIC, "t"), acl())) is None


def test_names_parse_as_kafka_writes_them():
    assert Operation.parse("ClusterAction") is Operation.parse("cluster_action") is Operation.CLUSTER_ACTION
    assert ResourceType.parse("TransactionalId") is ResourceType.TRANSACTIONAL_ID
    with pytest.raises(ValueError, match="not a known Operation"):
        Operation.parse("Fly")


def test_an_unknown_authorizer_or_a_malformed_super_user_fails_at_start_naming_the_key():
    from zkafka.config08 import BrokerConfig08
    from zkafka.errors import InvalidConfigError

    base = {"broker.id": "0", "zookeeper.connect": "localhost:2181"}
    for key, value in (("authorizer.class.name", "com.example.Open"), ("super.users", "User:a;bob")):
        with pytest.raises(InvalidConfigError, match=f"^{key}: "):
            BrokerConfig08({**base, key: value})
    config = BrokerConfig08({**base, "authorizer.class.name": "kafka.security.auth.SimpleAclAuthorizer"})
    assert config["authorizer.class.name"] == "kafka.security.auth.SimpleAclAuthorizer"
