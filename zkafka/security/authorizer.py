"""The ACL authorizer's decisions (Kafka's ``AclAuthorizer.authorize``), pure: an ``AclCache`` of each resource
pattern's entries and the rule that reads it.

A principal may do an operation on a resource when it is a super user (``super.users``), or when no ACL
matches the resource and ``allow.everyone.if.no.acl.found`` is true, or when no matching Deny entry exists
and a matching Allow entry does: deny beats allow. The entries that match a resource are those of its
literal name, of the wildcard ``*`` and of every PREFIXED pattern the name starts with; an entry matches a
request when its principal is the request's (or ``User:*``), its host the client's (or ``*``) and its
operation the one asked (or ``All``). Describe is allowed by an Allow of Read, Write, Delete or Alter too,
DescribeConfigs by one of AlterConfigs.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from zkafka.config import Key, bool_key
from zkafka.errors import InvalidConfigError
from zkafka.security.acl import (
    WILDCARD,
    WILDCARD_PRINCIPAL,
    AccessControlEntry,
    AclBinding,
    AclBindingFilter,
    Operation,
    PatternType,
    PermissionType,
    ResourcePattern,
    ResourceType,
)

ACL_AUTHORIZERS = ("kafka.security.auth.SimpleAclAuthorizer", "kafka.security.authorizer.AclAuthorizer")


def _parse_authorizer(key: str, text: str) -> str:
    name = text.strip()
    if name and name not in ACL_AUTHORIZERS:
        raise InvalidConfigError(
            f"{key}: {name!r} is not an authorizer zkafka has (one of {', '.join(ACL_AUTHORIZERS)})"
        )
    return name


def super_users(text: str) -> frozenset[str]:
    """The principals of a ``super.users`` value (``User:a;User:b``)."""
    return frozenset(user.strip() for user in text.split(";") if user.strip())


def _parse_super_users(key: str, text: str) -> str:
    for user in super_users(text):
        if ":" not in user:
            raise InvalidConfigError(f"{key}: {user!r} is not a principal of the form User:<name>")
    return text.strip()


AUTHORIZER_KEYS = (
    Key("authorizer.class.name", _parse_authorizer, ""),
    Key("super.users", _parse_super_users, ""),
    bool_key("allow.everyone.if.no.acl.found", False),
)

ANY_BINDING = AclBindingFilter()
# An Allow of any of these also allows the key (AclOperation's implied operations).
IMPLIED_BY = {
    Operation.DESCRIBE: (
        Operation.DESCRIBE,
        Operation.READ,
        Operation.WRITE,
        Operation.DELETE,
        Operation.ALTER,
    ),
    Operation.DESCRIBE_CONFIGS: (Operation.DESCRIBE_CONFIGS, Operation.ALTER_CONFIGS),
}


class AclCache:
    """Every resource pattern's entries, replaced a pattern at a time (as ZooKeeper's notifications say)."""

    def __init__(self) -> None:
        self._acls: dict[ResourcePattern, frozenset[AccessControlEntry]] = {}

    def update(self, pattern: ResourcePattern, entries: Iterable[AccessControlEntry]) -> None:
        """Set ``pattern``'s entries (none: forget it)."""
        entries = frozenset(entries)
        if entries:
            self._acls[pattern] = entries
        else:
            self._acls.pop(pattern, None)

    def get(self, pattern: ResourcePattern) -> frozenset[AccessControlEntry]:
        return self._acls.get(pattern, frozenset())

    def patterns(self) -> list[ResourcePattern]:
        return list(self._acls)

    def bindings(self, acl_filter: AclBindingFilter = ANY_BINDING) -> Iterator[AclBinding]:
        """Every binding ``acl_filter`` matches."""
        for pattern, entries in list(self._acls.items()):
            if acl_filter.matches_pattern(pattern):
                for entry in sorted(entries):
                    if acl_filter.matches_entry(entry):
                        yield AclBinding(pattern, entry)

    def matching(self, resource_type: ResourceType, name: str) -> list[AccessControlEntry]:
        """The entries that apply to resource ``name``: its literal pattern, the wildcard, its prefixes."""
        acls = self._acls
        found = list(acls.get(ResourcePattern(resource_type, name), ()))
        found += acls.get(ResourcePattern(resource_type, WILDCARD), ())
        for end in range(1, len(name) + 1):
            found += acls.get(ResourcePattern(resource_type, name[:end], PatternType.PREFIXED), ())
        return found


class Authorizer:
    """Decides requests from an ``AclCache`` with the broker's ``super.users`` and
    ``allow.everyone.if.no.acl.found``."""

    def __init__(
        self,
        cache: AclCache,
        super_users: frozenset[str] = frozenset(),
        allow_everyone_if_no_acl_found: bool = False,
    ) -> None:
        self.cache = cache
        self.super_users = super_users
        self.allow_everyone_if_no_acl_found = allow_everyone_if_no_acl_found

    @classmethod
    def from_config(cls, config, cache: AclCache) -> Authorizer:
        return cls(cache, super_users(config["super.users"]), config["allow.everyone.if.no.acl.found"])

    def authorize(
        self, principal: str, host: str, operation: Operation, resource_type: ResourceType, name: str
    ) -> bool:
        """Whether ``principal`` connected from ``host`` may do ``operation`` on the resource."""
        if principal in self.super_users:
            return True
        acls = self.cache.matching(resource_type, name)
        if not acls:
            return self.allow_everyone_if_no_acl_found
        if _matching_exists(acls, principal, host, (operation,), PermissionType.DENY):
            return False
        allowed_by = IMPLIED_BY.get(operation, (operation,))
        return _matching_exists(acls, principal, host, allowed_by, PermissionType.ALLOW)

    def authorize_by_resource_type(
        self, principal: str, host: str, operation: Operation, resource_type: ResourceType
    ) -> bool:
        """Whether ``principal`` may do ``operation`` on some resource of the type (Kafka's
        ``authorizeByResourceType``, as InitProducerId asks for Write on any topic): an Allow of it on some
        pattern whose name no Deny of the same pattern names, unless a Deny covers the wildcard ``*``."""
        if principal in self.super_users:
            return True
        patterns = [p for p in self.cache.patterns() if p.resource_type == resource_type]
        if not patterns:
            return self.allow_everyone_if_no_acl_found

        def entries(pattern: ResourcePattern, permission: PermissionType) -> bool:
            return _matching_exists(list(self.cache.get(pattern)), principal, host, (operation,), permission)

        if entries(ResourcePattern(resource_type, WILDCARD), PermissionType.DENY):
            return False
        return any(entries(p, PermissionType.ALLOW) and not entries(p, PermissionType.DENY) for p in patterns)


def _matching_exists(
    acls: list[AccessControlEntry],
    principal: str,
    host: str,
    operations: tuple[Operation, ...],
    permission: PermissionType,
) -> bool:
    return any(
        acl.permission_type == permission
        and acl.principal in (principal, WILDCARD_PRINCIPAL)
        and (acl.operation in operations or acl.operation == Operation.ALL)
        and acl.host in (host, WILDCARD)
        for acl in acls
    )
