"""Client and user quota configs in ZooKeeper as Kafka 2.x keeps them: ``/config/clients/<client-id>``,
``/config/users/<user>`` and ``/config/users/<user>/clients/<client-id>``, each
``{"version":1,"config":{"producer_byte_rate":"1048576"}}``, names sanitized (URL-encoded, Kafka's
``Sanitizer``) and ``<default>`` for the default entity. A change writes the znode and a ``/config/changes``
notification naming its entity path (``{"version":2,"entity_path":"users/alice/clients/c1"}``), as
kafka-configs.sh ``--zookeeper`` does; each broker then reads the entity again.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping

from kazoo.client import KazooClient
from kazoo.exceptions import NoNodeError

from zkafka.errors import InvalidConfigError
from zkafka.quota.quota_entity import (
    QUOTA_CONFIGS,
    describe_entity,
    entity_path,
    parse_entity_path,
    quota_values,
)
from zkafka.zk.client import get_data, update_persistent
from zkafka.zk.paths08 import CONFIG_CHANGE_PREFIX, CONFIG_CHANGES_PATH, CONFIG_PATH, encode_entity_change


def fetch_entity_config(client: KazooClient, path: str) -> dict[str, str]:
    """The entity's configs (``{}`` when none, or when the znode is not Kafka's JSON)."""
    data = get_data(client, f"{CONFIG_PATH}/{path}")
    try:
        config = json.loads(data)["config"] if data else {}
    except (ValueError, KeyError, TypeError):
        return {}
    return {str(k): str(v) for k, v in config.items()} if isinstance(config, dict) else {}


def alter_quota_entity(
    client: KazooClient,
    user: str | None,
    client_id: str | None,
    add: Mapping[str, str],
    delete: Iterable[str],
) -> list[str]:
    """kafka-configs.sh ``--alter`` of a quota entity: merge, write, notify; other keys (SCRAM) kept."""
    path = entity_path(user, client_id)
    unknown = [k for k in add if k not in QUOTA_CONFIGS]
    if unknown:
        raise InvalidConfigError(
            f"--add-config: {','.join(unknown)} not a quota config ({', '.join(QUOTA_CONFIGS)})"
        )
    quota_values(add, "--add-config")
    config = fetch_entity_config(client, path)
    missing = [k for k in delete if k not in config]
    if missing:
        raise InvalidConfigError(f"Invalid config(s): {','.join(missing)}")
    config.update(add)
    for key in delete:
        config.pop(key)
    update_persistent(client, f"{CONFIG_PATH}/{path}", json.dumps({"version": 1, "config": config}))
    client.create(
        f"{CONFIG_CHANGES_PATH}/{CONFIG_CHANGE_PREFIX}",
        encode_entity_change(path).encode(),
        sequence=True,
        makepath=True,
    )
    return [f"Completed Updating config for entity: {describe_entity(user, client_id)}."]


def describe_quota_entity(client: KazooClient, user: str | None, client_id: str | None) -> list[str]:
    """kafka-configs.sh ``--describe`` of one entity."""
    config = fetch_entity_config(client, entity_path(user, client_id))
    return [
        f"Configs for {describe_entity(user, client_id)} are {','.join(f'{k}={v}' for k, v in config.items())}"
    ]


def describe_quota_entities(client: KazooClient, kind: str) -> list[str]:
    """kafka-configs.sh ``--describe --entity-type clients`` (or ``users``) without a name: every such entity
    (users whose znode holds only their clients' quotas left out, as Kafka does)."""
    lines = []
    for path in all_quota_entities(client):
        parts = path.split("/")
        if parts[0] == kind and len(parts) == 2 and (kind == "clients" or fetch_entity_config(client, path)):
            lines += describe_quota_entity(client, *parse_entity_path(path))
    return lines


def all_quota_entities(client: KazooClient) -> Iterator[str]:
    """The path of every client, user and user-and-client entity in ZooKeeper."""
    for kind in ("clients", "users"):
        for name in _children(client, f"{CONFIG_PATH}/{kind}"):
            yield f"{kind}/{name}"
            if kind == "users":
                for child in _children(client, f"{CONFIG_PATH}/users/{name}/clients"):
                    yield f"users/{name}/clients/{child}"


def _children(client: KazooClient, path: str) -> list[str]:
    try:
        return sorted(client.get_children(path))
    except NoNodeError:
        return []
