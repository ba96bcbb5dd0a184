"""Coordinator-managed groups (0.9 group APIs) asked of the brokers, for the web view and ConsumerGroupCommand.

ListGroups on every broker, GroupCoordinator (FindCoordinator) per group, DescribeGroups at its coordinator
for the state, protocol, members, their subscriptions and assignments. DescribeGroups v0 carries neither the
generation nor the leader, so those come from the group's latest metadata record in ``__consumer_offsets``
(what the coordinator stores after each SyncGroup), read incrementally from the partition's leader.
A cluster whose brokers do not serve the group APIs (0.7, or 0.8 without a coordinator) has no such groups:
``read`` returns None and the view hides the panel.
"""

from __future__ import annotations

import logging
from typing import Any

from zkafka.client08.channel import broker_channel
from zkafka.consumer.group.assignors import decode_assignment
from zkafka.consumer.simple08 import SimpleConsumer08
from zkafka.coordinator.offsets_schema import GroupKey, partition_for, read_group_value, read_key
from zkafka.errors import KafkaError
from zkafka.protocol.group_membership import (
    ConsumerProtocolMetadata,
    DescribeGroupsRequestV0,
    ListGroupsRequestV0,
)
from zkafka.protocol.metadata import MetadataRequestV0
from zkafka.topic import OFFSETS_TOPIC

log = logging.getLogger(__name__)

CLIENT_ID = "zkafka-ui"


def parse_server(text: str) -> tuple[str, int]:
    host, _, port = text.strip().rpartition(":")
    if not host or not port.isdigit():
        raise ValueError(f"{text!r} is not HOST:PORT")
    return host, int(port)


class CoordinatorGroups:
    """Reads the coordinator groups of the cluster that ``bootstrap`` (``host:port``) belongs to."""

    def __init__(
        self, bootstrap: str, timeout_ms: int = 1500, client_id: str = CLIENT_ID, secure: Any = None
    ) -> None:
        self.bootstrap = parse_server(bootstrap)
        self.timeout_ms = timeout_ms
        self.client_id = client_id
        self.secure = secure  # TLS and SASL for each connection (``command_config.client_secure``)
        self._positions: dict[int, int] = {}  # offsets partition -> next offset read
        self._records: dict[str, Any] = {}  # group -> its latest GroupValueV0 (None after a tombstone)

    def call(self, host: str, port: int, request: Any) -> Any:
        channel = broker_channel(host, port, self.client_id, socket_timeout_ms=self.timeout_ms, secure=self.secure)
        try:
            return channel.request(request)
        finally:
            channel.close()

    def cluster(self) -> tuple[dict[int, tuple[str, int]], dict[str, int], dict[tuple[str, int], int]]:
        """Metadata of every topic from the bootstrap broker: broker id -> (host, port), topic -> partition
        count (topics without error), (topic, partition) -> leader id."""
        metadata = self.call(*self.bootstrap, MetadataRequestV0([]))
        brokers = {b.node_id: (b.host, b.port) for b in metadata.brokers}
        counts = {t.topic: len(t.partitions) for t in metadata.topics if t.error == 0}
        leaders = {(t.topic, p.partition): p.leader for t in metadata.topics for p in t.partitions}
        return brokers, counts, leaders

    def group_names(self, brokers: dict[int, tuple[str, int]]) -> set[str]:
        """The consumer groups every broker lists (ListGroups); OSError/KafkaError when one cannot answer."""
        names: set[str] = set()
        for host, port in brokers.values():
            listed = self.call(host, port, ListGroupsRequestV0())
            names.update(g.group_id for g in listed.groups if g.protocol_type == "consumer")
        return names

    def read(self) -> list[dict[str, Any]] | None:
        """Every coordinator group, or None when the brokers do not serve the group APIs."""
        try:
            brokers, counts, leaders = self.cluster()
        except (OSError, KafkaError) as exc:
            log.debug("metadata from %s: %s", self.bootstrap, exc)
            return None
        try:
            names = self.group_names(brokers)
        except (OSError, KafkaError):
            return None  # no group APIs (the broker closes the connection)
        groups = []
        partitions = counts.get(OFFSETS_TOPIC)
        for name in sorted(names):
            group = self._describe(name, brokers, leaders, partitions)
            if group is not None:
                group["partition_counts"] = {t: n for t, n in counts.items() if t != OFFSETS_TOPIC}
                groups.append(group)
        return groups

    def coordinator(self, name: str, brokers: dict, leaders: dict, counts: dict) -> int | None:
        """The id of the group's coordinator: the leader of its ``__consumer_offsets`` partition."""
        partitions = counts.get(OFFSETS_TOPIC)
        return leaders.get((OFFSETS_TOPIC, partition_for(name, partitions))) if partitions else None

    def describe(self, name: str, brokers: dict, leaders: dict, counts: dict) -> dict[str, Any] | None:
        """One group as ``read`` lists it (without partition counts), or None when its coordinator is
        unknown or does not know it."""
        return self._describe(name, brokers, leaders, counts.get(OFFSETS_TOPIC))

    def _describe(
        self, name: str, brokers: dict, leaders: dict, partitions: int | None
    ) -> dict[str, Any] | None:
        coordinator = self.coordinator(
            name, brokers, leaders, {OFFSETS_TOPIC: partitions} if partitions else {}
        )
        if coordinator not in brokers:
            return None
        try:
            (described,) = self.call(*brokers[coordinator], DescribeGroupsRequestV0([name])).groups
        except (OSError, KafkaError, ValueError) as exc:
            log.debug("describe %s: %s", name, exc)
            return None
        if described.error:
            return None
        record = self._latest_record(name, brokers[coordinator], partition_for(name, partitions))
        members = []
        for m in described.members:
            try:
                subscription = list(ConsumerProtocolMetadata.decode(m.member_metadata).subscription)
            except Exception:
                subscription = []
            try:
                assignment = decode_assignment(m.member_assignment)
            except Exception:
                assignment = {}
            members.append(
                {
                    "id": m.member_id,
                    "client_id": m.client_id,
                    "client_host": m.client_host,
                    "subscription": subscription,
                    "assignment": assignment,
                }
            )
        return {
            "name": name,
            "state": described.state,
            "protocol": described.protocol,
            "coordinator": coordinator,
            "offsets_partition": partition_for(name, partitions),
            "generation": record.generation if record is not None else None,
            "leader": record.leader if record is not None else None,
            "members": sorted(members, key=lambda m: m["id"]),
        }

    def _latest_record(self, name: str, address: tuple[str, int], partition: int) -> Any:
        """The group's newest metadata record, reading the offsets partition from where the last read ended."""
        try:
            with SimpleConsumer08(
                *address, self.timeout_ms, client_id=self.client_id, secure=self.secure
            ) as consumer:
                offset = self._positions.get(partition, 0)
                while True:
                    fetched = consumer.fetch(OFFSETS_TOPIC, partition, offset, 1 << 20)
                    messages = fetched.messages()
                    if not messages:
                        break
                    for message in messages:
                        self._remember(message)
                        offset = message.next_offset
                self._positions[partition] = offset
        except (OSError, KafkaError) as exc:
            log.debug("group records of %s: %s", name, exc)
        return self._records.get(name)

    def _remember(self, message: Any) -> None:
        if message.key is None:
            return
        try:
            key = read_key(message.key)
            if isinstance(key, GroupKey):
                self._records[key.group] = read_group_value(message.value) if message.value else None
        except Exception:  # an offset record, or one this reader does not know
            return
