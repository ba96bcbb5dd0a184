"""DescribeAcls, CreateAcls and DeleteAcls v0-v3 (Kafka 0.11's KIP-140): the ACLs of the broker's authorizer,
read from its cache and written to ZooKeeper (``security.zk_acl_store``), where every broker's change
notification listener picks them up.

Describing needs Describe on the cluster, creating and deleting Alter on it (else CLUSTER_AUTHORIZATION_FAILED,
31); a broker without ``authorizer.class.name`` answers SECURITY_DISABLED (54). A creation Kafka would refuse
(an operation the resource type does not have, a cluster not named ``kafka-cluster``, an unknown code) is
INVALID_REQUEST (42) with the reason. A v0 request's patterns and filters are LITERAL.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from zkafka.protocol import acls as wire
from zkafka.protocol import v08
from zkafka.protocol.api_keys import CREATE_ACLS, DELETE_ACLS, DESCRIBE_ACLS
from zkafka.protocol.errors import ErrorCode
from zkafka.protocol.versioned import make
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
    binding_fields,
    filter_of,
)
from zkafka.security.auth_helper import AuthHelper
from zkafka.security.zk_acl_store import update_acls

log = logging.getLogger(__name__)

DISABLED = "No Authorizer is configured on the broker"


def binding_filter(request: Any, version: int) -> AclBindingFilter:
    """A DescribeAcls request's (or DeleteAcls filter's) filter; ValueError for a code Kafka does not have."""
    return filter_of(request, request.pattern_type_filter if version >= 1 else wire.LITERAL)


class AclApis:
    """The ACL requests, over the authorizer's cache and ZooKeeper."""

    def __init__(self, zk_client: Any, auth: AuthHelper) -> None:
        self.zk_client = zk_client
        self.auth = auth

    def handlers(self) -> dict[tuple[int, int], Callable[[v08.Request], Any]]:
        apis = (
            (DESCRIBE_ACLS, self.handle_describe_acls),
            (CREATE_ACLS, self.handle_create_acls),
            (DELETE_ACLS, self.handle_delete_acls),
        )
        return {(key, v): handler for key, handler in apis for v in wire.VERSIONS}

    def _refusal(self, operation: Operation) -> tuple[int, str | None]:
        if not self.auth.enabled:
            return ErrorCode.SECURITY_DISABLED, DISABLED
        if not self.auth.authorize_cluster(operation):
            return (
                ErrorCode.CLUSTER_AUTHORIZATION_FAILED,
                f"{operation.kafka_name} on the cluster is not authorized.",
            )
        return ErrorCode.NONE, None

    # -- DescribeAcls ---------------------------------------------------------------------------------------

    def handle_describe_acls(self, request: v08.Request) -> list:
        error, message = self._refusal(Operation.DESCRIBE)
        resources: list[dict] = []
        if not error:
            try:
                acl_filter = binding_filter(request.body, request.api_version)
            except ValueError as exc:
                error, message = ErrorCode.INVALID_REQUEST, str(exc)
            else:
                resources = self._described(acl_filter)
        answer = {"throttle_time_ms": 0, "error": error, "error_message": message, "resources": resources}
        return _answer(request, answer)

    def _described(self, acl_filter: AclBindingFilter) -> list[dict]:
        by_pattern: dict[ResourcePattern, list[dict]] = {}
        for pattern, entry in self.auth.authorizer.cache.bindings(acl_filter):
            by_pattern.setdefault(pattern, []).append(
                {"principal": entry.principal, "host": entry.host, "operation": entry.operation,
                 "permission_type": entry.permission_type}
            )  # fmt: skip
        return [
            {
                "resource_type": p.resource_type,
                "resource_name": p.name,
                "pattern_type": p.pattern_type,
                "acls": acls,
            }
            for p, acls in sorted(by_pattern.items())
        ]

    # -- CreateAcls -----------------------------------------------------------------------------------------

    def handle_create_acls(self, request: v08.Request) -> list:
        error, message = self._refusal(Operation.ALTER)
        results = []
        for creation in request.body.creations:
            results.append(
                {"error": error, "error_message": message}
                if error
                else self._create(creation, request.api_version)
            )
        return _answer(request, {"throttle_time_ms": 0, "results": results})

    def _create(self, creation: Any, version: int) -> dict[str, Any]:
        try:
            pattern_type = creation.resource_pattern_type if version >= 1 else wire.LITERAL
            pattern = ResourcePattern(
                ResourceType(creation.resource_type), creation.resource_name, PatternType(pattern_type)
            )
            entry = AccessControlEntry(
                creation.principal,
                creation.host,
                Operation(creation.operation),
                PermissionType(creation.permission_type),
            )
        except ValueError as exc:
            return {"error": ErrorCode.INVALID_REQUEST, "error_message": f"Failed to create ACL: {exc}"}
        reason = binding_error(AclBinding(pattern, entry))
        if reason:
            return {"error": ErrorCode.INVALID_REQUEST, "error_message": f"Failed to create ACL: {reason}"}
        try:
            entries = update_acls(self.zk_client, pattern, lambda current: current | {entry})
        except Exception as exc:
            log.warning("creating ACL %s on %s failed: %r", entry, pattern, exc)
            return {"error": ErrorCode.UNKNOWN, "error_message": str(exc)}
        self.auth.authorizer.cache.update(pattern, entries)
        return {"error": ErrorCode.NONE, "error_message": None}

    # -- DeleteAcls -----------------------------------------------------------------------------------------

    def handle_delete_acls(self, request: v08.Request) -> list:
        error, message = self._refusal(Operation.ALTER)
        results = []
        for request_filter in request.body.filters:
            if error:
                results.append({"error": error, "error_message": message, "matching_acls": []})
                continue
            try:
                acl_filter = binding_filter(request_filter, request.api_version)
            except ValueError as exc:
                results.append(
                    {"error": ErrorCode.INVALID_REQUEST, "error_message": str(exc), "matching_acls": []}
                )
                continue
            results.append(self._delete(acl_filter))
        return _answer(request, {"throttle_time_ms": 0, "filter_results": results})

    def _delete(self, acl_filter: AclBindingFilter) -> dict[str, Any]:
        """Remove every binding ``acl_filter`` matches, pattern by pattern (those in the cache, and the one
        the filter names exactly, which another broker may have just written)."""
        cache = self.auth.authorizer.cache
        patterns = set(cache.patterns())
        if acl_filter.matches_at_most_one:
            patterns.add(ResourcePattern(acl_filter.resource_type, acl_filter.name, acl_filter.pattern_type))
        deleted: list[dict] = []
        for pattern in sorted(p for p in patterns if acl_filter.matches_pattern(p)):
            removed: set[AccessControlEntry] = set()

            def change(current, removed=removed):
                removed.update(e for e in current if acl_filter.matches_entry(e))
                return current - removed

            try:
                cache.update(pattern, update_acls(self.zk_client, pattern, change))
            except Exception as exc:
                log.warning("deleting ACLs of %s failed: %r", pattern, exc)
                return {"error": ErrorCode.UNKNOWN, "error_message": str(exc), "matching_acls": []}
            for entry in sorted(removed):
                deleted.append(
                    {"error": 0, "error_message": None, **binding_fields(AclBinding(pattern, entry))}
                )
        return {"error": ErrorCode.NONE, "error_message": None, "matching_acls": deleted}


def _answer(request: v08.Request, values: dict[str, Any]) -> list:
    """The response of the request's version made from ``values``."""
    response = v08.SCHEMAS[(request.api_key, request.api_version)][1]
    return v08.encode_response(request.correlation_id, make(response, **values))
