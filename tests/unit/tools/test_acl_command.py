"""AclCommand's pure parts: the ACLs ``--add`` makes from kafka-acls.sh's options (principals × hosts ×
operations, ``--producer``/``--consumer``), the refusals it prints, the resource filters of ``--list`` and
``--remove`` and Kafka's output lines."""

from __future__ import annotations

import pytest

from zkafka.security.acl import (
    AccessControlEntry,
    AclBinding,
    Operation,
    PatternType,
    PermissionType,
    ResourcePattern,
)
from zkafka.security.acl import ResourceType as R
from zkafka.tools.acl_command import AclCommandError, AclOptions, acl_lines, entries, remove, resource_filters


def test_add_makes_each_principal_host_and_operation():
    options = AclOptions(
        topics=("t",), allow_principals=("User:a", "User:b"), allow_hosts=("10.0.0.1",),
        deny_principals=("User:c",), operations=("Read", "Describe"),
    )  # fmt: skip
    made = entries(options, R.TOPIC)
    assert len(made) == 6
    assert AccessControlEntry("User:b", "10.0.0.1", Operation.DESCRIBE, PermissionType.ALLOW) in made
    assert AccessControlEntry("User:c", "*", Operation.READ, PermissionType.DENY) in made


def test_producer_and_consumer_name_the_operations_they_need():
    options = AclOptions(
        topics=("t",),
        groups=("g",),
        allow_principals=("User:a",),
        producer=True,
        consumer=True,
        idempotent=True,
    )
    ops = {r: {e.operation.kafka_name for e in entries(options, r)} for r in (R.TOPIC, R.GROUP, R.CLUSTER)}
    assert ops == {
        R.TOPIC: {"Write", "Describe", "Create", "Read"},
        R.GROUP: {"Read"},
        R.CLUSTER: {"IdempotentWrite"},
    }
    assert [f.resource_type for f in resource_filters(options)] == [R.TOPIC, R.GROUP, R.CLUSTER]
    with pytest.raises(AclCommandError, match="--consumer you must specify a --topic and a --group"):
        resource_filters(AclOptions(topics=("t",), consumer=True))


def test_refusals_kafka_acls_prints():
    with pytest.raises(AclCommandError, match="only supports operations"):
        entries(AclOptions(allow_principals=("User:a",), operations=("Write",)), R.GROUP)
    with pytest.raises(AclCommandError, match="<type>:<name>"):
        entries(AclOptions(allow_principals=("alice",)), R.TOPIC)
    with pytest.raises(AclCommandError, match="at least one resource"):
        resource_filters(AclOptions())


def test_list_without_a_resource_is_every_resource_and_remove_asks_first():
    (every,) = resource_filters(AclOptions(), listing=True)
    assert (every.resource_type, every.name, every.pattern_type) == (R.ANY, None, PatternType.ANY)
    filters, questions = remove(None, AclOptions(groups=("app-",), pattern_type="prefixed"))
    assert [(f.name, f.pattern_type, f.principal) for f in filters] == [("app-", PatternType.PREFIXED, None)]
    assert questions == [
        "Are you sure you want to delete all ACLs for resource filter "
        "`ResourcePatternFilter(resourceType=GROUP, name=app-, patternType=PREFIXED)`? (y/n)"
    ]


def test_output_lines_are_kafkas():
    pattern = ResourcePattern(R.TOPIC, "t")
    entry = AccessControlEntry("User:a", "*", Operation.READ, PermissionType.ALLOW)
    assert acl_lines([AclBinding(pattern, entry)]) == [
        "Current ACLs for resource `ResourcePattern(resourceType=TOPIC, name=t, patternType=LITERAL)`: ",
        " \t(principal=User:a, host=*, operation=READ, permissionType=ALLOW) ",
        "",
    ]
