"""Users' configs in ZooKeeper as Kafka keeps them: ``/config/users/<name>`` holds
``{"version":1,"config":{"SCRAM-SHA-256":"salt=…,stored_key=…,server_key=…,iterations=4096"}}``.

``alter_user_scram`` is kafka-configs.sh's ``--entity-type users --add-config 'SCRAM-SHA-256=[password=…]'``;
``scram_credential`` is what a broker checks a SCRAM client against (read at each authentication, so a new
password holds for the next connection).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping

from kazoo.client import KazooClient

from zkafka.errors import InvalidConfigError
from zkafka.network.sasl_mechanisms import (
    SCRAM_HASHES,
    SCRAM_MIN_ITERATIONS,
    ScramCredential,
    scram_credential,
)
from zkafka.zk.client import get_data, update_persistent

USERS_CONFIG_PATH = "/config/users"


def user_config_path(user: str) -> str:
    return f"{USERS_CONFIG_PATH}/{user}"


def fetch_user_config(client: KazooClient, user: str) -> dict[str, str]:
    """The user's configs (``{}`` when none, or when the znode is not Kafka's JSON)."""
    data = get_data(client, user_config_path(user))
    try:
        config = json.loads(data)["config"] if data else {}
    except (ValueError, KeyError, TypeError):
        return {}
    return {str(k): str(v) for k, v in config.items()} if isinstance(config, dict) else {}


def scram_credential_of(client: KazooClient, mechanism: str, user: str) -> ScramCredential | None:
    """The stored credential of ``user`` for ``mechanism`` (None: none, or unreadable)."""
    text = fetch_user_config(client, user).get(mechanism)
    try:
        return ScramCredential.from_config(text) if text else None
    except ValueError:
        return None


def alter_user_scram(
    client: KazooClient, user: str, add: Mapping[str, str], delete: Iterable[str]
) -> list[str]:
    """Set (``SCRAM-SHA-256`` → ``password=…[,iterations=…]``) or remove a user's SCRAM credentials."""
    config = fetch_user_config(client, user)
    for mechanism, value in add.items():
        if mechanism not in SCRAM_HASHES:
            raise InvalidConfigError(
                f"--add-config: {mechanism} is not a user config (SCRAM-SHA-256, SCRAM-SHA-512)"
            )
        fields = dict(item.split("=", 1) for item in value.split(",") if "=" in item)
        if not fields.get("password"):
            raise InvalidConfigError(f"--add-config: {mechanism} needs [password=...]")
        iterations = int(fields.get("iterations", SCRAM_MIN_ITERATIONS))
        if iterations < SCRAM_MIN_ITERATIONS:
            raise InvalidConfigError(f"--add-config: iterations of {mechanism} below {SCRAM_MIN_ITERATIONS}")
        config[mechanism] = scram_credential(mechanism, fields["password"], iterations).to_config()
    for mechanism in delete:
        if config.pop(mechanism, None) is None:
            raise InvalidConfigError(f"Invalid config(s): {mechanism}")
    update_persistent(client, user_config_path(user), json.dumps({"version": 1, "config": config}))
    return [f"Completed updating config for user {user}."]
