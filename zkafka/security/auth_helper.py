"""What request handlers ask before they act (Kafka's ``AuthHelper``): may the principal of the connection this
request came in on, from its address, do an operation on a resource?

The principal and address are those the listener set for the connection being served
(``network.server.client_session``, ``client_address``). A call outside any connection is the broker's own
and is allowed; so is everything when no authorizer is configured (``ALLOW_ALL``).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import Any

from zkafka.network.server import client_address, client_session
from zkafka.security.acl import CLUSTER_NAME, SUPPORTED_OPERATIONS, Operation, ResourceType
from zkafka.security.authorizer import AclCache, Authorizer
from zkafka.security.zk_acl_store import ZkAclWatcher

log = logging.getLogger(__name__)

TOPIC, GROUP, CLUSTER = ResourceType.TOPIC, ResourceType.GROUP, ResourceType.CLUSTER


class AuthHelper:
    """Asks the broker's authorizer (None: allow everything) on behalf of the current connection."""

    def __init__(self, authorizer: Authorizer | None = None) -> None:
        self.authorizer = authorizer

    @property
    def enabled(self) -> bool:
        return self.authorizer is not None

    def authorize(
        self,
        operation: Operation,
        resource_type: ResourceType,
        name: str = CLUSTER_NAME,
        log_denied: bool = True,
    ) -> bool:
        """Whether the current request's principal may do ``operation`` on the resource (logged when denied)."""
        session = client_session.get()
        if self.authorizer is None or session is None:
            return True
        address = client_address.get()
        host = address[0] if address else ""
        allowed = self.authorizer.authorize(session.principal, host, operation, resource_type, name)
        if not allowed and log_denied:
            log.info(
                "Principal = %s is Denied Operation = %s from host = %s on resource = %s:LITERAL:%s",
                session.principal,
                operation.kafka_name,
                host,
                resource_type.kafka_name,
                name,
            )
        return allowed

    def authorize_cluster(self, operation: Operation, log_denied: bool = True) -> bool:
        return self.authorize(operation, CLUSTER, CLUSTER_NAME, log_denied)

    def authorize_by_resource_type(self, operation: Operation, resource_type: ResourceType) -> bool:
        """Whether the principal may do ``operation`` on some resource of ``resource_type``."""
        session = client_session.get()
        if self.authorizer is None or session is None:
            return True
        address = client_address.get()
        host = address[0] if address else ""
        return self.authorizer.authorize_by_resource_type(session.principal, host, operation, resource_type)

    def authorized_operations(self, resource_type: ResourceType, name: str = CLUSTER_NAME) -> int:
        """KIP-430's bit field of the operations the principal may do on the resource (each supported one
        asked, without logging refusals); every supported operation without an authorizer."""
        return sum(
            1 << op
            for op in SUPPORTED_OPERATIONS[resource_type]
            if self.authorize(op, resource_type, name, log_denied=False)
        )

    def filter_authorized(
        self, operation: Operation, resource_type: ResourceType, names: Iterable[str]
    ) -> set[str]:
        """The names among ``names`` the principal may do ``operation`` on (each asked once)."""
        return {name for name in set(names) if self.authorize(operation, resource_type, name)}


ALLOW_ALL = AuthHelper()


def broker_auth_helper(config: Any, zk_client: Any) -> AuthHelper:
    """The broker's AuthHelper: with ``authorizer.class.name`` set, an ACL authorizer whose cache follows
    ZooKeeper (loaded now, then kept by the change notifications); else ALLOW_ALL."""
    if not config["authorizer.class.name"]:
        return ALLOW_ALL
    cache = AclCache()
    ZkAclWatcher(zk_client, cache).start()
    log.info(
        "%s: ACLs of %d resource patterns loaded", config["authorizer.class.name"], len(cache.patterns())
    )
    return AuthHelper(Authorizer.from_config(config, cache))
