"""DescribeConfigs v0-v4 and AlterConfigs v0-v2 (Kafka 0.11's KIP-133) for topics and, read only, this broker.

Any broker answers them, as a ZooKeeper-mode Kafka broker does. A topic's configs are every topic-level key
with its effective value and where it comes from: ``DYNAMIC_TOPIC_CONFIG`` (1, an override in
``/config/topics/<t>``), ``STATIC_BROKER_CONFIG`` (4, its ``log.*`` key set in ``server.properties``) or
``DEFAULT_CONFIG`` (5); v0 says ``is_default`` instead; ``include_synonyms`` (v1+) lists the override, the
broker key and its default in that order. A broker's configs (resource name = its id) are its keys, all read
only (zkafka has no dynamic broker configs; altering one is INVALID_CONFIG naming the keys), password-like
keys sensitive with a null value. AlterConfigs replaces a topic's whole set of overrides (what is not named
goes back to the broker's value), checked first (an unknown key or bad value: INVALID_CONFIG, 40, naming
it), then writes ``/config/topics/<t>`` and a ``/config/changes`` notification that every broker applies to
its logs (``server.topic_config_manager``); ``validate_only`` writes nothing.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from typing import Any

from zkafka.admin import topics as admin
from zkafka.config08 import TOPIC_KEY_DEFAULTS, BrokerConfig08, parse_topic_overrides, topic_config
from zkafka.errors import (
    AdminOperationError,
    ClusterAuthorizationFailedError,
    InvalidConfigError,
    KafkaError,
    TopicAuthorizationFailedError,
    UnknownTopicOrPartitionError,
)
from zkafka.protocol import configs as wire
from zkafka.protocol import v08
from zkafka.protocol.api_keys import ALTER_CONFIGS, DESCRIBE_CONFIGS
from zkafka.protocol.versioned import make
from zkafka.security.acl import Operation
from zkafka.security.auth_helper import ALLOW_ALL, TOPIC, AuthHelper
from zkafka.server.metadata_cache import MetadataCache
from zkafka.server.replica_manager import error_code
from zkafka.topic import validate_topic_08

log = logging.getLogger(__name__)

SENSITIVE_MARKERS = ("password", "secret")


def config_text(value: Any) -> str | None:
    """A typed value as Kafka's ``ConfigDef.convertToString`` writes it (lists comma-separated)."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, list | tuple):
        return ",".join(map(str, value))
    return str(value)


def config_type(value: Any) -> int:
    """The ConfigType of a typed value (v3+), judged from the value: INT or LONG by magnitude."""
    if isinstance(value, bool):
        return wire.BOOLEAN
    if isinstance(value, int):
        return wire.INT if -(2**31) <= value < 2**31 else wire.LONG
    if isinstance(value, float):
        return wire.DOUBLE
    return wire.LIST if isinstance(value, list | tuple) else wire.STRING


# The broker keys behind a topic key, in Kafka's order (LogConfig.TopicConfigSynonyms): the first set wins.
BROKER_SYNONYMS = {
    "retention.ms": ("log.retention.ms", "log.retention.minutes", "log.retention.hours"),
    "segment.ms": ("log.roll.ms", "log.roll.hours"),
    "segment.jitter.ms": ("log.roll.jitter.ms", "log.roll.jitter.hours"),
    "flush.ms": ("log.flush.interval.ms", "log.flush.scheduler.interval.ms"),
}


def topic_config_entries(broker: BrokerConfig08, overrides: dict[str, str]) -> list[dict[str, Any]]:
    """Every topic-level key of a topic with ``overrides``: name, value, source, synonyms, type (one dict each)."""
    values = topic_config(broker, overrides)
    entries = []
    for name, broker_key in TOPIC_KEY_DEFAULTS.items():
        text = config_text(values[name])
        synonyms = [_synonym(name, text, wire.DYNAMIC_TOPIC_CONFIG)] if name in overrides else []
        synonyms += _broker_synonyms(broker, BROKER_SYNONYMS.get(name, (broker_key,)))
        entries.append(_entry(name, text, False, synonyms, config_type(values[name])))
    return entries


def broker_config_entries(broker: BrokerConfig08) -> list[dict[str, Any]]:
    """Every key of this broker's configuration, read only; password-like ones sensitive (value null)."""
    entries = []
    for name in sorted(broker.keys):
        sensitive = any(marker in name for marker in SENSITIVE_MARKERS)
        text = None if sensitive else config_text(broker[name])
        synonyms = _broker_synonyms(broker, (name,), sensitive)
        entries.append(_entry(name, text, True, synonyms, config_type(broker[name]), sensitive))
    return entries


def _broker_synonyms(broker: BrokerConfig08, names: tuple[str, ...], sensitive: bool = False) -> list[dict]:
    """The keys set in ``server.properties`` (STATIC_BROKER_CONFIG), then those with a default of their own
    (DEFAULT_CONFIG; a default derived from another key is none, as Kafka's null)."""
    static = [
        _synonym(n, config_text(broker[n]), wire.STATIC_BROKER_CONFIG) for n in names if n in broker.raw
    ]
    defaults = [(n, broker.keys[n].default) for n in names]
    default = [
        _synonym(n, config_text(d), wire.DEFAULT_CONFIG)
        for n, d in defaults
        if d is not None and not callable(d)
    ]
    if sensitive:
        return [{**s, "value": None} for s in static + default]
    return static + default


def _synonym(name: str, value: str | None, source: int) -> dict[str, Any]:
    return {"name": name, "value": value, "source": source}


def _entry(
    name: str, text: str | None, read_only: bool, synonyms: list, kind: int, sensitive: bool = False
) -> dict[str, Any]:
    source = synonyms[0]["source"] if synonyms else wire.DEFAULT_CONFIG
    return {
        "name": name,
        "value": text,
        "read_only": read_only,
        "is_default": source == wire.DEFAULT_CONFIG,
        "config_source": source,
        "is_sensitive": sensitive,
        "synonyms": synonyms,
        "config_type": kind,
        "documentation": None,
    }


class ConfigApis:
    """DescribeConfigs and AlterConfigs over ``/config/topics`` and this broker's own configuration."""

    def __init__(
        self, zk_client: Any, config: BrokerConfig08, metadata: MetadataCache, auth: AuthHelper = ALLOW_ALL
    ) -> None:
        self.zk_client = zk_client
        self.config = config
        self.metadata = metadata
        self.auth = auth

    def _check_authorized(self, operation: Operation, resource_type: int, name: str) -> None:
        """``operation`` (DescribeConfigs, AlterConfigs) on the topic, or on the cluster for a broker."""
        if resource_type == wire.TOPIC and not self.auth.authorize(operation, TOPIC, name):
            raise TopicAuthorizationFailedError(f"{operation.kafka_name} on topic {name} is not authorized.")
        if resource_type == wire.BROKER and not self.auth.authorize_cluster(operation):
            raise ClusterAuthorizationFailedError(f"{operation.kafka_name} on the cluster is not authorized.")

    def handlers(self) -> dict[tuple[int, int], Callable[[v08.Request], Any]]:
        return {
            **{
                (DESCRIBE_CONFIGS, v): self.handle_describe_configs
                for v in range(len(wire.DESCRIBE_CONFIGS_APIS))
            },
            **{(ALTER_CONFIGS, v): self.handle_alter_configs for v in range(len(wire.ALTER_CONFIGS_APIS))},
        }

    # -- DescribeConfigs ------------------------------------------------------------------------------------

    def handle_describe_configs(self, request: v08.Request) -> Any:
        body, version = request.body, request.api_version
        synonyms = getattr(body, "include_synonyms", False)
        results = [self._describe(r, synonyms) for r in body.resources]
        response = make(wire.DESCRIBE_CONFIGS_APIS[version][1], throttle_time_ms=0, results=results)
        return v08.encode_response(request.correlation_id, response)

    def _describe(self, resource: Any, synonyms: bool) -> dict[str, Any]:
        result = {"resource_type": resource.resource_type, "resource_name": resource.resource_name}
        try:
            entries = self._entries(resource.resource_type, resource.resource_name)
        except KafkaError as exc:
            return {**result, "error": error_code(exc), "error_message": str(exc), "configs": []}
        keys = resource.configuration_keys
        if keys:
            entries = [e for e in entries if e["name"] in keys]
        if not synonyms:
            entries = [{**e, "synonyms": []} for e in entries]
        return {**result, "error": 0, "error_message": None, "configs": entries}

    def _entries(self, resource_type: int, name: str) -> list[dict[str, Any]]:
        self._check_authorized(Operation.DESCRIBE_CONFIGS, resource_type, name)
        if resource_type == wire.TOPIC:
            validate_topic_08(name)
            if not self.metadata.snapshot().topics.get(name):
                raise UnknownTopicOrPartitionError(f"Topic '{name}' does not exist.")
            return topic_config_entries(self.config, admin.fetch_topic_config(self.zk_client, name))
        if resource_type == wire.BROKER:
            self._check_broker(name)
            return broker_config_entries(self.config) if name else []
        raise AdminOperationError(f"Unsupported resource type: {resource_type}")

    def _check_broker(self, name: str) -> None:
        if name and name != str(self.config["broker.id"]):
            raise AdminOperationError(
                f"Unexpected broker id, expected {self.config['broker.id']} or empty string, but received {name}"
            )

    # -- AlterConfigs ---------------------------------------------------------------------------------------

    def handle_alter_configs(self, request: v08.Request) -> Any:
        body, version = request.body, request.api_version
        responses = [self._alter(r, body.validate_only) for r in body.resources]
        response = make(wire.ALTER_CONFIGS_APIS[version][1], throttle_time_ms=0, responses=responses)
        return v08.encode_response(request.correlation_id, response)

    def _alter(self, resource: Any, validate_only: bool) -> dict[str, Any]:
        result = {"resource_type": resource.resource_type, "resource_name": resource.resource_name}
        try:
            self._alter_resource(resource, validate_only)
        except KafkaError as exc:
            return {**result, "error": error_code(exc), "error_message": str(exc)}
        return {**result, "error": 0, "error_message": None}

    def _alter_resource(self, resource: Any, validate_only: bool) -> None:
        name, configs = resource.resource_name, config_values(resource.configs)
        self._check_authorized(Operation.ALTER_CONFIGS, resource.resource_type, name)
        if resource.resource_type == wire.BROKER:
            self._check_broker(name)
            raise InvalidConfigError(f"Cannot update these configs dynamically: {', '.join(sorted(configs))}")
        if resource.resource_type != wire.TOPIC:
            raise AdminOperationError(f"Unsupported resource type: {resource.resource_type}")
        validate_topic_08(name)
        if not self.metadata.snapshot().topics.get(name):
            raise UnknownTopicOrPartitionError(f"Topic '{name}' does not exist.")
        parse_topic_overrides(configs)  # names the unknown key or bad value
        if not validate_only:
            admin.change_topic_config(self.zk_client, name, configs, notification_version=2)
            log.info("topic %s: configs set to %s", name, configs)


def config_values(entries: Iterable[Any]) -> dict[str, str]:
    """A request's config entries by name; a null value is INVALID_REQUEST naming its key."""
    configs = {}
    for entry in entries:
        if entry.value is None:
            raise AdminOperationError(f"Null value not supported for topic configs: {entry.name}")
        configs[entry.name] = entry.value
    return configs
