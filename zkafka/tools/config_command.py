"""ConfigCommand: kafka-configs.sh for topics, users and client ids (and, described, brokers): ``--describe``,
``--alter --add-config k=v,k2=[a,b] --delete-config k``, through the admin requests (``--bootstrap-server``) or
ZooKeeper alone (``--zookeeper``, as before Kafka 2.2; users and client ids only so, as in Kafka 2.x). The
output lines are Kafka's; each action returns them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from kazoo.client import KazooClient

from zkafka.admin.client_quotas import alter_quota_entity, describe_quota_entity
from zkafka.admin.topics import change_topic_config, fetch_topic_config, topic_assignment
from zkafka.admin.users import alter_user_scram
from zkafka.config08 import parse_topic_overrides
from zkafka.errors import InvalidConfigError, KafkaError
from zkafka.network.sasl_mechanisms import SCRAM_HASHES
from zkafka.protocol import configs as c
from zkafka.tools.admin_client import AdminClient, ConfigEntry

ENTITY_TYPES = {"topics": c.TOPIC, "brokers": c.BROKER}
SOURCES = {
    c.UNKNOWN: "UNKNOWN",
    c.DYNAMIC_TOPIC_CONFIG: "DYNAMIC_TOPIC_CONFIG",
    c.DYNAMIC_BROKER_CONFIG: "DYNAMIC_BROKER_CONFIG",
    c.DYNAMIC_DEFAULT_BROKER_CONFIG: "DYNAMIC_DEFAULT_BROKER_CONFIG",
    c.STATIC_BROKER_CONFIG: "STATIC_BROKER_CONFIG",
    c.DEFAULT_CONFIG: "DEFAULT_CONFIG",
}
_TOP_LEVEL_COMMA = re.compile(r",(?![^\[]*\])")


class ConfigCommandError(KafkaError):
    """Options or an entity the config command cannot act on."""


def parse_add_config(text: str) -> dict[str, str]:
    """``k1=v1,k2=[v1,v2]`` as kafka-configs.sh reads it: square brackets hold a list value with commas."""
    configs = {}
    for item in filter(None, (part.strip() for part in _TOP_LEVEL_COMMA.split(text))):
        name, sep, value = item.partition("=")
        if not sep or not name.strip():
            raise ConfigCommandError(f"--add-config: {item!r} is not KEY=VALUE")
        value = value.strip()
        configs[name.strip()] = value[1:-1] if value.startswith("[") and value.endswith("]") else value
    return configs


def merged(current: Mapping[str, str], add: Mapping[str, str], delete: Iterable[str]) -> dict[str, str]:
    """The overrides after ``--add-config`` and ``--delete-config``; deleting one not set is refused."""
    delete = list(delete)
    missing = [name for name in delete if name not in current and name not in add]
    if missing:
        raise InvalidConfigError(f"Invalid config(s): {','.join(missing)}")
    parse_topic_overrides(add)  # an unknown key or bad value fails here, named
    out = {**current, **add}
    for name in delete:
        out.pop(name, None)
    return out


def entry_line(entry: ConfigEntry) -> str:
    synonyms = ", ".join(
        f"{SOURCES.get(source, source)}:{name}={value}" for name, value, source in entry.synonyms
    )
    return f"  {entry.name}={entry.value} sensitive={str(entry.sensitive).lower()} synonyms={{{synonyms}}}"


# -- through the admin requests ----------------------------------------------------------------------------


def describe(admin: AdminClient, entity_type: str, name: str, all_configs: bool = False) -> list[str]:
    kind = entity_type.rstrip("s")
    entries = admin.describe_configs(ENTITY_TYPES[entity_type], name)
    shown = [
        e for e in entries if all_configs or e.source in (c.DYNAMIC_TOPIC_CONFIG, c.DYNAMIC_BROKER_CONFIG)
    ]
    header = f"{'All' if all_configs else 'Dynamic'} configs for {kind} {name} are:"
    return [header, *map(entry_line, shown)]


def alter(
    admin: AdminClient, entity_type: str, name: str, add: Mapping[str, str], delete: Iterable[str]
) -> list[str]:
    resource_type = ENTITY_TYPES[entity_type]
    if resource_type == c.TOPIC:
        entries = admin.describe_configs(resource_type, name)
        current = {
            e.name: e.value for e in entries if e.source == c.DYNAMIC_TOPIC_CONFIG and e.value is not None
        }
        configs = merged(current, add, delete)
    else:
        configs = dict(add)
    admin.alter_configs(resource_type, name, configs)
    return [f"Completed updating config for {entity_type.rstrip('s')} {name}."]


# -- through ZooKeeper ---------------------------------------------------------------------------------------


def describe_zookeeper(client: KazooClient, name: str) -> list[str]:
    _check_topic(client, name)
    configs = ",".join(f"{k}={v}" for k, v in fetch_topic_config(client, name).items())
    return [f"Configs for topic '{name}' are {configs}"]


def alter_zookeeper(
    client: KazooClient, name: str, add: Mapping[str, str], delete: Iterable[str]
) -> list[str]:
    _check_topic(client, name)
    change_topic_config(
        client, name, merged(fetch_topic_config(client, name), add, delete), notification_version=2
    )
    return [f"Completed updating config for topic {name}."]


def quota_entity(
    client: KazooClient,
    user: str | None,
    client_id: str | None,
    add: Mapping[str, str],
    delete: Iterable[str],
    alter: bool,
) -> list[str]:
    """A user's, a client id's or a user's client's configs (``<default>``: the default): quotas, and for a
    user alone SCRAM credentials too."""
    if not alter:
        return describe_quota_entity(client, user, client_id)
    scram = [k for k in [*add, *delete] if k in SCRAM_HASHES]
    if scram and (user is None or client_id is not None):
        raise ConfigCommandError(f"{','.join(scram)}: SCRAM credentials belong to a user alone")
    lines = []
    if scram:
        lines = alter_user_scram(
            client, user, {k: v for k, v in add.items() if k in scram}, [k for k in delete if k in scram]
        )
    quotas = {k: v for k, v in add.items() if k not in scram}, [k for k in delete if k not in scram]
    if quotas[0] or quotas[1] or not scram:
        lines = alter_quota_entity(client, user, client_id, *quotas)
    return lines


def _check_topic(client: KazooClient, name: str) -> None:
    if topic_assignment(client, name) is None:
        raise ConfigCommandError(f"topic {name} does not exist")
