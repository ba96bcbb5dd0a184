"""ACLs as Kafka's clients and ZooKeeper know them (pure): resource types, operations, permission and pattern
types with their wire codes and names, resource patterns, access control entries and the filters that match
them (``AclBindingFilter``), and the JSON of an ACL znode (``{"version":1,"acls":[...]}``).

Codes are those of ``org.apache.kafka.common.acl``/``resource``; names are ``SecurityUtils``' (CamelCase:
``Topic``, ``ClusterAction``, ``Allow``), parsed case-insensitively with or without underscores.
"""

from __future__ import annotations

import json
from enum import IntEnum
from typing import Any, NamedTuple

CLUSTER_NAME = "kafka-cluster"  # the one Cluster resource's name
WILDCARD = "*"  # a resource name, principal ("User:*") or host matching any
WILDCARD_PRINCIPAL = "User:*"


class _Named(IntEnum):
    """An enum whose members have Kafka's CamelCase names (``CLUSTER_ACTION`` → ``ClusterAction``)."""

    @property
    def kafka_name(self) -> str:
        return "".join(part.capitalize() for part in self.name.split("_"))

    @classmethod
    def parse(cls, text: str):
        """The member named ``text`` (any case, underscores optional); ValueError naming the choices if none."""
        wanted = text.replace("_", "").replace("-", "").lower()
        for member in cls:
            if member.name.replace("_", "").lower() == wanted:
                return member
        choices = ", ".join(m.kafka_name for m in cls if m > 1)
        raise ValueError(f"{text!r} is not a known {cls.__name__} (one of {choices})")


class ResourceType(_Named):
    UNKNOWN = 0
    ANY = 1
    TOPIC = 2
    GROUP = 3
    CLUSTER = 4
    TRANSACTIONAL_ID = 5
    DELEGATION_TOKEN = 6
    USER = 7


class Operation(_Named):
    UNKNOWN = 0
    ANY = 1
    ALL = 2
    READ = 3
    WRITE = 4
    CREATE = 5
    DELETE = 6
    ALTER = 7
    DESCRIBE = 8
    CLUSTER_ACTION = 9
    DESCRIBE_CONFIGS = 10
    ALTER_CONFIGS = 11
    IDEMPOTENT_WRITE = 12
    CREATE_TOKENS = 13
    DESCRIBE_TOKENS = 14


class PermissionType(_Named):
    UNKNOWN = 0
    ANY = 1
    DENY = 2
    ALLOW = 3


class PatternType(_Named):
    UNKNOWN = 0
    ANY = 1
    MATCH = 2
    LITERAL = 3
    PREFIXED = 4


# The operations an ACL may name per resource type (AclEntry.supportedOperations), ALL aside.
SUPPORTED_OPERATIONS = {
    ResourceType.TOPIC: {
        Operation.READ,
        Operation.WRITE,
        Operation.CREATE,
        Operation.DESCRIBE,
        Operation.DELETE,
        Operation.ALTER,
        Operation.DESCRIBE_CONFIGS,
        Operation.ALTER_CONFIGS,
    },
    ResourceType.GROUP: {Operation.READ, Operation.DESCRIBE, Operation.DELETE},
    ResourceType.CLUSTER: {
        Operation.CREATE,
        Operation.CLUSTER_ACTION,
        Operation.DESCRIBE_CONFIGS,
        Operation.ALTER_CONFIGS,
        Operation.IDEMPOTENT_WRITE,
        Operation.ALTER,
        Operation.DESCRIBE,
    },
    ResourceType.TRANSACTIONAL_ID: {Operation.DESCRIBE, Operation.WRITE},
    ResourceType.DELEGATION_TOKEN: {Operation.DESCRIBE},
    ResourceType.USER: {Operation.CREATE_TOKENS, Operation.DESCRIBE_TOKENS},
}


class ResourcePattern(NamedTuple):
    """A resource type, a name (``*``: every one) and whether the name is LITERAL or a PREFIXED match."""

    resource_type: ResourceType
    name: str
    pattern_type: PatternType = PatternType.LITERAL

    def __str__(self) -> str:
        return f"ResourcePattern(resourceType={self.resource_type.name}, name={self.name}, patternType={self.pattern_type.name})"


class AccessControlEntry(NamedTuple):
    """Who (a principal, ``User:*`` for anyone), from where (a host, ``*`` for any), what, allowed or denied."""

    principal: str
    host: str
    operation: Operation
    permission_type: PermissionType

    def __str__(self) -> str:
        return (
            f"(principal={self.principal}, host={self.host}, operation={self.operation.name}, "
            f"permissionType={self.permission_type.name})"
        )


class AclBinding(NamedTuple):
    pattern: ResourcePattern
    entry: AccessControlEntry


class AclBindingFilter(NamedTuple):
    """What DescribeAcls and DeleteAcls match: None (or ANY) matches anything; pattern MATCH matches the
    literal name, the wildcard and every prefix of the name, as Kafka's ``ResourcePatternFilter``."""

    resource_type: ResourceType = ResourceType.ANY
    name: str | None = None
    pattern_type: PatternType = PatternType.ANY
    principal: str | None = None
    host: str | None = None
    operation: Operation = Operation.ANY
    permission_type: PermissionType = PermissionType.ANY

    def matches_pattern(self, pattern: ResourcePattern) -> bool:
        if self.resource_type not in (ResourceType.ANY, pattern.resource_type):
            return False
        if self.pattern_type not in (PatternType.ANY, PatternType.MATCH, pattern.pattern_type):
            return False
        if self.name is None:
            return True
        if self.pattern_type != PatternType.MATCH or self.name == pattern.name:
            return self.name == pattern.name
        if pattern.pattern_type == PatternType.LITERAL:
            return pattern.name == WILDCARD
        return self.name.startswith(pattern.name)

    def matches_entry(self, entry: AccessControlEntry) -> bool:
        return (
            self.principal in (None, entry.principal)
            and self.host in (None, entry.host)
            and self.operation in (Operation.ANY, entry.operation)
            and self.permission_type in (PermissionType.ANY, entry.permission_type)
        )

    def matches(self, binding: AclBinding) -> bool:
        return self.matches_pattern(binding.pattern) and self.matches_entry(binding.entry)

    @property
    def matches_at_most_one(self) -> bool:
        """Whether the filter names exactly one pattern (every field but the entry's fixed)."""
        return (
            self.resource_type not in (ResourceType.ANY, ResourceType.UNKNOWN)
            and self.name is not None
            and self.pattern_type in (PatternType.LITERAL, PatternType.PREFIXED)
        )


def binding_error(binding: AclBinding) -> str | None:
    """Why an ACL cannot be stored (Kafka's ``validateAclBinding``), or None."""
    pattern, entry = binding
    if pattern.resource_type not in SUPPORTED_OPERATIONS:
        return f"{pattern.resource_type.kafka_name} is not a concrete resource type"
    if pattern.pattern_type not in (PatternType.LITERAL, PatternType.PREFIXED):
        return f"{pattern.pattern_type.name} is not a concrete pattern type"
    if pattern.resource_type == ResourceType.CLUSTER and pattern.name != CLUSTER_NAME:
        return f"the cluster resource is named {CLUSTER_NAME}, not {pattern.name!r}"
    if not pattern.name:
        return "the resource name is empty"
    if entry.permission_type not in (PermissionType.ALLOW, PermissionType.DENY):
        return f"{entry.permission_type.name} is not a concrete permission type"
    supported = SUPPORTED_OPERATIONS[pattern.resource_type] | {Operation.ALL}
    if entry.operation not in supported:
        return f"{entry.operation.kafka_name} is not an operation of {pattern.resource_type.kafka_name}"
    if ":" not in entry.principal:
        return f"principal {entry.principal!r} is not of the form <type>:<name>"
    return None


def entries_from_json(data: bytes | None) -> frozenset[AccessControlEntry]:
    """The entries of an ACL znode's JSON (empty for no data)."""
    if not data:
        return frozenset()
    value = json.loads(data)
    if value.get("version") != 1:
        raise ValueError(f"unknown ACL znode version {value.get('version')!r}")
    return frozenset(
        AccessControlEntry(
            acl["principal"],
            acl["host"],
            Operation.parse(acl["operation"]),
            PermissionType.parse(acl["permissionType"]),
        )
        for acl in value["acls"]
    )


def entries_to_json(entries: frozenset[AccessControlEntry] | set[AccessControlEntry]) -> bytes:
    """An ACL znode's JSON, entries in a stable order."""
    acls = [
        {
            "principal": e.principal,
            "permissionType": e.permission_type.kafka_name,
            "operation": e.operation.kafka_name,
            "host": e.host,
        }
        for e in sorted(entries)
    ]
    return json.dumps({"version": 1, "acls": acls}, separators=(",", ":")).encode()


def binding_fields(binding: AclBinding) -> dict[str, Any]:
    """A binding as the ACL requests' and responses' fields name it (CreateAcls, DescribeAcls, DeleteAcls)."""
    pattern, entry = binding
    return {
        "resource_type": pattern.resource_type,
        "resource_name": pattern.name,
        "pattern_type": pattern.pattern_type,
        "principal": entry.principal,
        "host": entry.host,
        "operation": entry.operation,
        "permission_type": entry.permission_type,
    }


def binding_of(acl: Any, resource: Any = None) -> AclBinding:
    """The binding of an ACL in an answer: its resource's fields are ``resource``'s (DescribeAcls) or its own
    (DeleteAcls); ValueError for a code Kafka does not have."""
    r = resource or acl
    pattern = ResourcePattern(ResourceType(r.resource_type), r.resource_name, PatternType(r.pattern_type))
    entry = AccessControlEntry(
        acl.principal, acl.host, Operation(acl.operation), PermissionType(acl.permission_type)
    )
    return AclBinding(pattern, entry)


def filter_fields(acl_filter: AclBindingFilter) -> dict[str, Any]:
    """A filter as DescribeAcls and DeleteAcls name its fields."""
    return {
        "resource_type_filter": acl_filter.resource_type,
        "resource_name_filter": acl_filter.name,
        "pattern_type_filter": acl_filter.pattern_type,
        "principal_filter": acl_filter.principal,
        "host_filter": acl_filter.host,
        "operation": acl_filter.operation,
        "permission_type": acl_filter.permission_type,
    }


def filter_of(fields: Any, pattern_type: int) -> AclBindingFilter:
    """The filter of a DescribeAcls request or DeleteAcls filter (``pattern_type``: v0 has none, LITERAL);
    ValueError for a code Kafka does not have."""
    return AclBindingFilter(
        ResourceType(fields.resource_type_filter),
        fields.resource_name_filter,
        PatternType(pattern_type),
        fields.principal_filter,
        fields.host_filter,
        Operation(fields.operation),
        PermissionType(fields.permission_type),
    )
