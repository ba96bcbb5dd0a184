"""The admin requests kafka-topics.sh, kafka-configs.sh and kafka-acls.sh make with ``--bootstrap-server`` (Kafka's
AdminClient, as far as these tools need it): Metadata v1 from the bootstrap broker (brokers, controller,
topics); CreateTopics v4, CreatePartitions v1 and DeleteTopics v3 to the controller; DescribeConfigs v1,
AlterConfigs v1 and DescribeAcls, CreateAcls and DeleteAcls v1 to the bootstrap broker. Every failure is an ``AdminClientError``: one line naming the broker,
topic or key and Kafka's error name.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from zkafka.client08.channel import broker_channel
from zkafka.consumer.group.coordinator_groups import parse_server
from zkafka.errors import KafkaError
from zkafka.protocol import acls as a
from zkafka.protocol import configs as c
from zkafka.protocol import metadata as m
from zkafka.protocol import topic_admin as t
from zkafka.protocol.errors import ErrorCode
from zkafka.protocol.versioned import make
from zkafka.security.acl import AclBinding, AclBindingFilter, binding_fields, binding_of, filter_fields

CLIENT_ID = "adminclient-1"


class AdminClientError(KafkaError):
    """An admin request failed or was refused (one line: what, where, and Kafka's error name)."""


def _name(code: int) -> str:
    try:
        return ErrorCode(code).name
    except ValueError:
        return f"error {code}"


@dataclass(frozen=True)
class ConfigEntry:
    """One config of a DescribeConfigs answer."""

    name: str
    value: str | None
    source: int
    sensitive: bool
    read_only: bool
    synonyms: tuple[tuple[str, str | None, int], ...]


class AdminClient:
    """The cluster that ``bootstrap`` (``host:port``) belongs to, asked through the admin requests."""

    def __init__(self, bootstrap: str, timeout_ms: int = 30000, secure: Any = None) -> None:
        try:
            self.bootstrap = parse_server(bootstrap)
        except ValueError as exc:
            raise AdminClientError(f"--bootstrap-server: {exc}") from None
        self.timeout_ms = timeout_ms
        self.secure = secure  # TLS and SASL for each connection (``command_config.client_secure``)

    def call(self, address: tuple[str, int], request: Any) -> Any:
        channel = broker_channel(*address, CLIENT_ID, socket_timeout_ms=self.timeout_ms, secure=self.secure)
        try:
            return channel.request(request)
        except (OSError, KafkaError) as exc:
            raise AdminClientError(
                f"{type(request).__name__} to {address[0]}:{address[1]} failed: {exc}"
            ) from None
        finally:
            channel.close()

    def metadata(self, topics: list[str] | None = None) -> Any:
        """Metadata v1 from the bootstrap broker (every topic unless ``topics``)."""
        return self.call(self.bootstrap, m.METADATA_APIS[1][0](topics))

    def controller(self) -> tuple[str, int]:
        answer = self.metadata([])
        brokers = {b.node_id: (b.host, b.port) for b in answer.brokers}
        if answer.controller_id not in brokers:
            raise AdminClientError(
                f"the cluster of {self.bootstrap[0]}:{self.bootstrap[1]} has no controller"
            )
        return brokers[answer.controller_id]

    # -- topics ---------------------------------------------------------------------------------------------

    def create_topic(
        self,
        topic: str,
        partitions: int,
        replication_factor: int,
        configs: dict[str, str],
        assignment: dict[int, list[int]] | None = None,
    ) -> None:
        """CreateTopics v4 (-1: the broker's default count or factor), waiting for the leaders."""
        assignments = [t.ReplicaAssignment(p, list(b)) for p, b in sorted((assignment or {}).items())]
        entries = [t.TopicConfig(k, v) for k, v in configs.items()]
        request = t.CREATE_TOPICS_APIS[4][0](
            [t.CreatableTopic(topic, partitions, replication_factor, assignments, entries)],
            self.timeout_ms,
            False,
        )
        (result,) = self.call(self.controller(), request).topics
        _check(result.error, f"topic {topic}", result.error_message)

    def create_partitions(self, topic: str, count: int, assignment: list[list[int]] | None = None) -> None:
        assignments = None if assignment is None else [t.PartitionsAssignment(b) for b in assignment]
        request = t.CREATE_PARTITIONS_APIS[1][0](
            [t.PartitionsTopic(topic, count, assignments)], self.timeout_ms, False
        )
        (result,) = self.call(self.controller(), request).results
        _check(result.error, f"topic {topic}", result.error_message)

    def delete_topics(self, topics: list[str]) -> None:
        answer = self.call(self.controller(), t.DELETE_TOPICS_APIS[3][0](topics, self.timeout_ms))
        for result in answer.topics:
            _check(result.error, f"topic {result.topic}")

    # -- configs --------------------------------------------------------------------------------------------

    def describe_configs(self, resource_type: int, name: str) -> list[ConfigEntry]:
        """DescribeConfigs v1 with synonyms, every key of the resource."""
        resources = [{"resource_type": resource_type, "resource_name": name, "configuration_keys": None}]
        request = make(c.DESCRIBE_CONFIGS_APIS[1][0], resources=resources, include_synonyms=True)
        (result,) = self.call(self.bootstrap, request).results
        _check(result.error, f"{_KINDS[resource_type]} {name}", result.error_message)
        return [
            ConfigEntry(
                e.name,
                e.value,
                e.config_source,
                e.is_sensitive,
                e.read_only,
                tuple((s.name, s.value, s.source) for s in e.synonyms),
            )
            for e in result.configs
        ]

    def alter_configs(self, resource_type: int, name: str, configs: dict[str, str]) -> None:
        """AlterConfigs v1: ``configs`` become the resource's whole set of overrides."""
        entries = [{"name": k, "value": v} for k, v in configs.items()]
        resources = [{"resource_type": resource_type, "resource_name": name, "configs": entries}]
        request = make(c.ALTER_CONFIGS_APIS[1][0], resources=resources, validate_only=False)
        (result,) = self.call(self.bootstrap, request).responses
        _check(result.error, f"{_KINDS[resource_type]} {name}", result.error_message)

    # -- ACLs -----------------------------------------------------------------------------------------------

    def describe_acls(self, acl_filter: AclBindingFilter) -> list[AclBinding]:
        """DescribeAcls v1 from the bootstrap broker: the bindings ``acl_filter`` matches."""
        answer = self.call(self.bootstrap, make(a.DESCRIBE_ACLS_APIS[1][0], **filter_fields(acl_filter)))
        _check(answer.error, "DescribeAcls", answer.error_message)
        return [binding_of(acl, resource) for resource in answer.resources for acl in resource.acls]

    def create_acls(self, bindings: list[AclBinding]) -> None:
        """CreateAcls v1 to the bootstrap broker."""
        creations = [{**binding_fields(b), "resource_pattern_type": b.pattern.pattern_type} for b in bindings]
        answer = self.call(self.bootstrap, make(a.CREATE_ACLS_APIS[1][0], creations=creations))
        for binding, result in zip(bindings, answer.results, strict=True):
            _check(result.error, f"ACL {binding.entry} on {binding.pattern}", result.error_message)

    def delete_acls(self, filters: list[AclBindingFilter]) -> list[AclBinding]:
        """DeleteAcls v1 to the bootstrap broker: the bindings it deleted."""
        request = make(a.DELETE_ACLS_APIS[1][0], filters=[filter_fields(f) for f in filters])
        deleted = []
        for result in self.call(self.bootstrap, request).filter_results:
            _check(result.error, "DeleteAcls", result.error_message)
            deleted += [binding_of(acl) for acl in result.matching_acls]
        return deleted


_KINDS = {c.TOPIC: "topic", c.BROKER: "broker"}


def _check(code: int, what: str, message: str | None = None) -> None:
    if code:
        raise AdminClientError(f"{what}: {_name(code)}" + (f" ({message})" if message else ""))
