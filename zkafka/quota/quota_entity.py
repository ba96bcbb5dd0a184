"""Client quota entities as Kafka names them: ``(user, client id)`` with None for a part not named and
``<default>`` for a default, their paths under ``/config`` (names sanitized as Kafka's ``Sanitizer``
URL-encodes them), the way kafka-configs.sh prints them, and the quota configs they hold. Pure.
"""

from __future__ import annotations

from collections.abc import Mapping
from urllib.parse import quote, unquote

from zkafka.errors import InvalidConfigError
from zkafka.zk.paths08 import CONFIG_PATH

DEFAULT = "<default>"  # Kafka's ConfigEntityName.Default
PRODUCER_BYTE_RATE = "producer_byte_rate"
CONSUMER_BYTE_RATE = "consumer_byte_rate"
REQUEST_PERCENTAGE = "request_percentage"
QUOTA_CONFIGS = (PRODUCER_BYTE_RATE, CONSUMER_BYTE_RATE, REQUEST_PERCENTAGE)

QuotaEntity = tuple[str | None, str | None]  # (user, client id), None where not named, DEFAULT for <default>


def sanitize(name: str) -> str:
    """A user or client id as it appears in a znode path (``<default>`` stays as it is)."""
    return name if name == DEFAULT else quote(name, safe="").replace("~", "%7E")


def desanitize(name: str) -> str:
    return unquote(name)


def entity_path(user: str | None, client_id: str | None) -> str:
    """The entity's path under ``/config``: ``clients/c1``, ``users/alice``, ``users/alice/clients/c1``."""
    if user is None:
        return f"clients/{sanitize(client_id or '')}"
    if client_id is None:
        return f"users/{sanitize(user)}"
    return f"users/{sanitize(user)}/clients/{sanitize(client_id)}"


def parse_entity_path(path: str) -> QuotaEntity:
    """The entity of ``clients/<c>``, ``users/<u>`` or ``users/<u>/clients/<c>`` (names desanitized)."""
    parts = path.split("/")
    if len(parts) == 2 and parts[0] == "clients":
        return None, desanitize(parts[1])
    if len(parts) == 2 and parts[0] == "users":
        return desanitize(parts[1]), None
    if len(parts) == 4 and parts[0] == "users" and parts[2] == "clients":
        return desanitize(parts[1]), desanitize(parts[3])
    raise InvalidConfigError(f"{CONFIG_PATH}/{path}: not a client quota entity")


def describe_entity(user: str | None, client_id: str | None) -> str:
    """The entity as kafka-configs.sh prints it: ``user-principal 'alice', default client-id``."""
    parts = []
    for kind, name in (("user-principal", user), ("client-id", client_id)):
        if name is not None:
            parts.append(f"default {kind}" if name == DEFAULT else f"{kind} '{name}'")
    return ", ".join(parts)


def quota_values(config: Mapping[str, str], what: str) -> dict[str, float]:
    """The quota configs of an entity as numbers; a bad one fails naming it."""
    values = {}
    for key in QUOTA_CONFIGS:
        if key in config:
            try:
                values[key] = float(config[key]) if key == REQUEST_PERCENTAGE else int(config[key])
            except ValueError:
                raise InvalidConfigError(f"{what}: {key}={config[key]!r} is not a number") from None
            if values[key] <= 0:
                raise InvalidConfigError(f"{what}: {key} must be positive")
    return values
