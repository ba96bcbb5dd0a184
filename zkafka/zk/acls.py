"""ZooKeeper ACLs as Kafka sets them (ZkData.defaultAcls, JaasUtils): with ``zookeeper.set.acl=true`` every
znode zkafka creates is ``creator-all`` (the session's digest identity) and world-readable, the sensitive ones
(``/config/users`` and ``/config/brokers``: SCRAM credentials, ``/delegation_token/tokens``) readable by
the creator only, and ``/consumers`` stays open (consumers of every kind write there).

The credentials are those of the ``Client`` section of the JAAS file named by
``java.security.auth.login.config`` (a broker property, or ``-Djava.security.auth.login.config=…`` in
``KAFKA_OPTS`` as Kafka's scripts pass it): its ``username`` and ``password`` log the session in with
ZooKeeper's ``digest`` scheme (ZooKeeper's SASL is not spoken: the ACL identity is ``digest:<username>:…``).
"""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Callable

from kazoo.client import KazooClient
from kazoo.exceptions import NoNodeError
from kazoo.security import CREATOR_ALL_ACL, OPEN_ACL_UNSAFE, READ_ACL_UNSAFE

from zkafka.config import bool_key, str_key
from zkafka.errors import InvalidConfigError

LOGIN_CONFIG = "java.security.auth.login.config"
ZK_ACL_KEYS = (bool_key("zookeeper.set.acl", False), str_key(LOGIN_CONFIG))
OPEN_ROOT_PATHS = ("/consumers",)
SENSITIVE_ROOT_PATHS = ("/config/users", "/config/brokers", "/delegation_token/tokens")
# Kafka's ZkData.SecureRootPaths: what zookeeper-security-migration walks.
SECURE_ROOT_PATHS = (
    "/admin",
    "/brokers",
    "/cluster",
    "/config",
    "/controller",
    "/controller_epoch",
    "/isr_change_notification",
    "/latest_producer_id_block",
    "/log_dir_event_notification",
    "/delegation_token",
    "/kafka-acl",
    "/kafka-acl-changes",
    "/kafka-acl-extended",
    "/kafka-acl-extended-changes",
)

_SECTION = re.compile(r"([\w.-]+)\s*\{(.*?)\}\s*;", re.S)
_OPTION = re.compile(r'([\w.-]+)\s*=\s*("(?:[^"\\]|\\.)*"|[^\s";]+)')


def _under(path: str, roots: tuple[str, ...]) -> bool:
    return any(path == root or path.startswith(root + "/") for root in roots)


def default_acls(path: str, secure: bool) -> list:
    """The ACL a znode is created with (ZkData.defaultAcls; every ``/consumers`` path kept open)."""
    if not secure or _under(path, OPEN_ROOT_PATHS):
        return list(OPEN_ACL_UNSAFE)
    if _under(path, SENSITIVE_ROOT_PATHS):
        return list(CREATOR_ALL_ACL)
    return list(CREATOR_ALL_ACL) + list(READ_ACL_UNSAFE)


def login_config_path(configured: str | None = None) -> str | None:
    """The JAAS file: ``configured`` (a broker property), else the one ``KAFKA_OPTS`` names."""
    if configured:
        return configured
    for word in shlex.split(os.environ.get("KAFKA_OPTS", "")):
        if word.startswith(f"-D{LOGIN_CONFIG}="):
            return word.split("=", 1)[1]
    return None


def client_credentials(path: str, key: str = LOGIN_CONFIG) -> str | None:
    """``username:password`` of the JAAS file's ``Client`` section (None when it has no such section);
    InvalidConfigError naming ``key`` when the file cannot be read or the section names no user."""
    try:
        with open(path, encoding="utf-8") as source:
            text = source.read()
    except OSError as exc:
        raise InvalidConfigError(f"{key}: cannot read {path}: {exc.strerror or exc}") from None
    sections = {match.group(1): match.group(2) for match in _SECTION.finditer(text)}
    if "Client" not in sections:
        return None
    options = {m.group(1): m.group(2).strip('"') for m in _OPTION.finditer(sections["Client"])}
    if not options.get("username") or "password" not in options:
        raise InvalidConfigError(f"{key}: the Client section of {path} names no username and password")
    return f"{options['username']}:{options['password']}"


def zk_security(config) -> dict:
    """``make_zk_client``'s security arguments for a broker: credentials and secure ACLs with
    ``zookeeper.set.acl=true`` (InvalidConfigError naming the key when there are no credentials)."""
    path = login_config_path(config[LOGIN_CONFIG])
    credentials = client_credentials(path) if path else None
    if config["zookeeper.set.acl"] and credentials is None:
        raise InvalidConfigError(
            "zookeeper.set.acl: true, but no JAAS file with a Client section "
            f"({LOGIN_CONFIG} as a property or -D{LOGIN_CONFIG}=<file> in KAFKA_OPTS)"
        )
    return {"credentials": credentials, "secure_acls": bool(config["zookeeper.set.acl"])}


def tool_security() -> dict:
    """A tool's ZooKeeper security, as Kafka's tools decide it (JaasUtils.isZkSecurityEnabled): a JAAS file
    in ``KAFKA_OPTS`` with a Client section logs the session in and makes the znodes it creates secure."""
    path = login_config_path()
    credentials = client_credentials(path) if path else None
    return {"credentials": credentials, "secure_acls": credentials is not None}


class AclKazooClient(KazooClient):
    """A KazooClient that creates each znode with ``acls(path)`` unless the caller gives an ACL (the
    parents ``ensure_path`` and ``makepath`` create get their own)."""

    def __init__(self, *args, acls: Callable[[str], list], **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.acls = acls

    def create_async(self, path, value=b"", acl=None, *args, **kwargs):
        return super().create_async(path, value, acl or _PathAcl(self.acls(path)), *args, **kwargs)

    def ensure_path_async(self, path, acl=None):
        return super().ensure_path_async(path, None if isinstance(acl, _PathAcl) else acl)


class _PathAcl(list):
    """An ACL chosen for one path: not passed on to its parents."""


def set_acls_recursively(client: KazooClient, path: str, secure: bool) -> int:
    """Give ``path`` and everything under it its default ACL (the migration tool's walk; a node gone meanwhile
    is skipped); the number of nodes set."""
    try:
        client.set_acls(path, default_acls(path, secure))
        children = client.get_children(path)
    except NoNodeError:
        return 0
    return 1 + sum(set_acls_recursively(client, f"{path.rstrip('/')}/{c}", secure) for c in children)


def migrate(client: KazooClient, secure: bool) -> int:
    """zookeeper-security-migration: ``/`` alone, then every secure root path (made if missing) and all
    below it; the number of nodes set."""
    client.set_acls("/", default_acls("/", secure))
    changed = 1
    for path in SECURE_ROOT_PATHS:
        client.ensure_path(path)
        changed += set_acls_recursively(client, path, secure)
    return changed
