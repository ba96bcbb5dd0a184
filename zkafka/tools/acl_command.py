"""AclCommand (``zkafka acls``, kafka-acls.sh): add, remove and list ACLs, in ZooKeeper directly
(``--authorizer-properties zookeeper.connect=…``, as the ZooKeeper-mode tool does through the authorizer) or
through a broker (``--bootstrap-server``: CreateAcls, DeleteAcls, DescribeAcls).

``--add`` makes one ACL per resource × principal × host × operation (Allow for ``--allow-principal`` from
``--allow-host``, Deny for ``--deny-principal`` from ``--deny-host``; hosts default to ``*``, operations to
All; ``--producer`` and ``--consumer`` name the operations a producer or a consumer needs). ``--remove``
without principals or operations removes every ACL of the resource. The output lines are Kafka's
(``Current ACLs for resource `ResourcePattern(...)`:``).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from itertools import product
from typing import Any

from zkafka.errors import KafkaError
from zkafka.security.acl import (
    CLUSTER_NAME,
    SUPPORTED_OPERATIONS,
    AccessControlEntry,
    AclBinding,
    AclBindingFilter,
    Operation,
    PatternType,
    PermissionType,
    ResourcePattern,
    ResourceType,
)
from zkafka.security.zk_acl_store import load_all, update_acls


class AclCommandError(KafkaError):
    """A command line kafka-acls.sh would refuse (one line saying why)."""


@dataclass(frozen=True)
class AclOptions:
    """What the command line asks for (already split into lists)."""

    topics: tuple[str, ...] = ()
    groups: tuple[str, ...] = ()
    cluster: bool = False
    pattern_type: str = "literal"
    allow_principals: tuple[str, ...] = ()
    deny_principals: tuple[str, ...] = ()
    allow_hosts: tuple[str, ...] = ()
    deny_hosts: tuple[str, ...] = ()
    operations: tuple[str, ...] = ()
    principals: tuple[str, ...] = ()  # --list's --principal
    producer: bool = False  # Write, Describe, Create on the topics (+ IdempotentWrite on the cluster)
    consumer: bool = False  # Read, Describe on the topics, Read on the groups
    idempotent: bool = False


def resource_filters(options: AclOptions, listing: bool = False) -> list[AclBindingFilter]:
    """One pattern filter per resource named (``--list`` with none: every resource)."""
    pattern_type = PatternType.parse(options.pattern_type)
    if options.consumer and not (options.topics and options.groups):
        raise AclCommandError("With --consumer you must specify a --topic and a --group.")
    if options.producer and not options.topics:
        raise AclCommandError("With --producer you must specify a --topic.")
    named = [AclBindingFilter(ResourceType.TOPIC, t, pattern_type) for t in options.topics]
    named += [AclBindingFilter(ResourceType.GROUP, g, pattern_type) for g in options.groups]
    if options.cluster or (options.producer and options.idempotent):
        named.append(AclBindingFilter(ResourceType.CLUSTER, CLUSTER_NAME, PatternType.LITERAL))
    if not named:
        if not listing:
            raise AclCommandError(
                "You must provide at least one resource: --topic <topic> or --cluster or --group <group>"
            )
        return [
            AclBindingFilter(
                pattern_type=pattern_type if options.pattern_type != "literal" else PatternType.ANY
            )
        ]
    return named


def entries(options: AclOptions, resource_type: ResourceType) -> list[AccessControlEntry]:
    """The entries ``--add`` makes (or ``--remove`` removes) on a resource of ``resource_type``."""
    operations = convenience_operations(options, resource_type)
    if operations is None:
        operations = [Operation.parse(op) for op in options.operations] or [Operation.ALL]
    unsupported = [
        op for op in operations if op != Operation.ALL and op not in SUPPORTED_OPERATIONS[resource_type]
    ]
    if unsupported:
        supported = ",".join(sorted(op.kafka_name for op in SUPPORTED_OPERATIONS[resource_type]))
        raise AclCommandError(f"ResourceType {resource_type.kafka_name} only supports operations {supported}")
    made = []
    for principals, hosts, permission in (
        (options.allow_principals, options.allow_hosts, PermissionType.ALLOW),
        (options.deny_principals, options.deny_hosts, PermissionType.DENY),
    ):
        for principal, host, op in product(principals, hosts or ("*",), operations):
            if ":" not in principal:
                raise AclCommandError(
                    f"Principal {principal!r} is not of the form <type>:<name> (User:alice)"
                )
            made.append(AccessControlEntry(principal, host, op, permission))
    return made


def convenience_operations(options: AclOptions, resource_type: ResourceType) -> list[Operation] | None:
    """What ``--producer`` and ``--consumer`` grant on a resource of ``resource_type`` (None: neither given)."""
    if not (options.producer or options.consumer):
        return None
    operations = []
    if options.producer and resource_type == ResourceType.TOPIC:
        operations += [Operation.WRITE, Operation.DESCRIBE, Operation.CREATE]
    if options.producer and options.idempotent and resource_type == ResourceType.CLUSTER:
        operations.append(Operation.IDEMPOTENT_WRITE)
    if options.consumer and resource_type == ResourceType.TOPIC:
        operations += [Operation.READ, Operation.DESCRIBE]
    if options.consumer and resource_type == ResourceType.GROUP:
        operations.append(Operation.READ)
    return list(dict.fromkeys(operations))


def acl_lines(bindings: Iterable[AclBinding], heading: str = "Current ACLs for resource") -> list[str]:
    """Bindings grouped by pattern as kafka-acls.sh prints them."""
    by_pattern: dict[ResourcePattern, list[AccessControlEntry]] = {}
    for pattern, entry in bindings:
        by_pattern.setdefault(pattern, []).append(entry)
    lines = []
    for pattern in sorted(by_pattern):
        lines.append(f"{heading} `{pattern}`: ")
        lines += [f" \t{entry} " for entry in sorted(by_pattern[pattern])]
        lines.append("")
    return lines


class ZkAcls:
    """The ACLs as ``--authorizer-properties zookeeper.connect=…`` reaches them: ZooKeeper directly."""

    def __init__(self, zk: Any) -> None:
        self.zk = zk

    def list(self, acl_filter: AclBindingFilter) -> list[AclBinding]:
        found = load_all(self.zk)
        return [
            AclBinding(pattern, entry)
            for pattern, stored in found.items()
            if acl_filter.matches_pattern(pattern)
            for entry in stored
            if acl_filter.matches_entry(entry)
        ]

    def add(self, bindings: list[AclBinding]) -> None:
        by_pattern: dict[ResourcePattern, set[AccessControlEntry]] = {}
        for pattern, entry in bindings:
            by_pattern.setdefault(pattern, set()).add(entry)
        for pattern, added in by_pattern.items():
            update_acls(self.zk, pattern, lambda current, added=added: current | added)

    def remove(self, filters: list[AclBindingFilter]) -> None:
        for acl_filter in filters:
            for pattern in {b.pattern for b in self.list(acl_filter)}:
                update_acls(
                    self.zk,
                    pattern,
                    lambda current, f=acl_filter: {e for e in current if not f.matches_entry(e)},
                )


class AdminAcls:
    """The ACLs through a broker's CreateAcls, DeleteAcls and DescribeAcls (``--bootstrap-server``)."""

    def __init__(self, admin: Any) -> None:
        self.admin = admin

    def list(self, acl_filter: AclBindingFilter) -> list[AclBinding]:
        return self.admin.describe_acls(acl_filter)

    def add(self, bindings: list[AclBinding]) -> None:
        self.admin.create_acls(bindings)

    def remove(self, filters: list[AclBindingFilter]) -> None:
        self.admin.delete_acls(filters)


def add(store: Any, options: AclOptions) -> list[str]:
    """``--add``: the ACLs made, then each resource's ACLs now."""
    if options.pattern_type not in ("literal", "prefixed"):
        raise AclCommandError(
            "A '--resource-pattern-type' value of 'literal' or 'prefixed' is required with --add"
        )
    if not (options.allow_principals or options.deny_principals):
        raise AclCommandError(
            "You must specify one of: --allow-principal, --deny-principal when trying to add ACLs."
        )
    lines, bindings = [], []
    for resource in resource_filters(options):
        pattern = ResourcePattern(resource.resource_type, resource.name, resource.pattern_type)
        made = [AclBinding(pattern, e) for e in entries(options, pattern.resource_type)]
        lines += acl_lines(made, "Adding ACLs for resource")
        bindings += made
    store.add(bindings)
    for resource in resource_filters(options):
        lines += acl_lines(store.list(resource))
    return lines


def remove(store: Any, options: AclOptions) -> tuple[list[AclBindingFilter], list[str]]:
    """``--remove``: the entry filters to delete (every ACL of each resource when no principal is named) and
    the question kafka-acls.sh asks before (without ``--force``)."""
    filters, questions = [], []
    for resource in resource_filters(options):
        removed = entries(options, resource.resource_type)
        if not removed:
            filters.append(resource)
            questions.append(
                f"Are you sure you want to delete all ACLs for resource filter `{_text(resource)}`? (y/n)"
            )
            continue
        filters += [
            resource._replace(
                principal=e.principal, host=e.host, operation=e.operation, permission_type=e.permission_type
            )
            for e in removed
        ]
        listed = ", ".join(map(str, removed))
        questions.append(
            f"Are you sure you want to remove ACLs: \n \t{listed} \n from resource filter `{_text(resource)}`? (y/n)"
        )
    return filters, questions


def list_acls(store: Any, options: AclOptions) -> list[str]:
    """``--list``: each resource's ACLs (those of ``--principal`` only, when given)."""
    lines = []
    for resource in resource_filters(options, listing=True):
        found = store.list(resource)
        if options.principals:
            found = [b for b in found if b.entry.principal in options.principals]
        lines += acl_lines(found)
    return lines


def _text(resource: AclBindingFilter) -> str:
    return (
        f"ResourcePatternFilter(resourceType={resource.resource_type.name}, name={resource.name}, "
        f"patternType={resource.pattern_type.name})"
    )
