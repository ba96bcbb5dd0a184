"""The 0.8 line's znode layout: paths, and the JSON values written at them (encode and parse).

JSON is written as 0.8.2 writes it: no spaces, timestamps as quoted strings. Parsers accept any key order
(Kafka's maps of more than four keys come out in hash order) and extra keys. The tree::

    /brokers/ids/<id>                                   ephemeral  broker registration (version 1, or 2 with endpoints;
                                                                   "rack" when broker.rack is set, as Kafka 0.10)
    /cluster/id                                         persistent the cluster id (0.10.1), made by the first broker
    /brokers/topics/<t>                                 persistent partition id -> replica ids
    /brokers/topics/<t>/partitions/<p>/state            persistent leader, leader epoch, ISR, controller epoch
    /controller                                         ephemeral  the controller's broker id
    /controller_epoch                                   persistent decimal epoch
    /admin/reassign_partitions                          persistent partitions to move
    /admin/preferred_replica_election                   persistent partitions to hand back to their preferred leader
    /admin/delete_topics/<t>                            persistent topic to delete (no data)
    /config/topics/<t>                                  persistent topic-level config overrides
    /config/changes/config_change_<seq>                 persistent sequential: which topic's config changed
    /consumers/<g>/ids/<consumer id>                    ephemeral  subscription
    /consumers/<g>/owners/<t>/<p>                       ephemeral  owning thread id
    /consumers/<g>/offsets/<t>/<p>                      persistent next offset to consume
    /isr_change_notification/isr_change_<seq>           persistent sequential (0.9): partitions whose ISR changed
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from zkafka.errors import KafkaError
from zkafka.zk.paths import BROKER_IDS_PATH, BROKER_TOPICS_PATH, CONSUMERS_PATH, broker_id_path

CONTROLLER_PATH = "/controller"
CONTROLLER_EPOCH_PATH = "/controller_epoch"
ADMIN_PATH = "/admin"
REASSIGN_PARTITIONS_PATH = "/admin/reassign_partitions"
PREFERRED_REPLICA_ELECTION_PATH = "/admin/preferred_replica_election"
DELETE_TOPICS_PATH = "/admin/delete_topics"
CONFIG_PATH = "/config"
TOPIC_CONFIG_PATH = "/config/topics"
CONFIG_CHANGES_PATH = "/config/changes"
CONFIG_CHANGE_PREFIX = "config_change_"
ISR_CHANGE_NOTIFICATION_PATH = "/isr_change_notification"
ISR_CHANGE_PREFIX = "isr_change_"
CLUSTER_ID_PATH = "/cluster/id"

# The paths a 0.8 broker makes sure of at startup (ZkUtils.setupCommonPaths).
PERSISTENT_PATHS = (
    CONSUMERS_PATH,
    BROKER_IDS_PATH,
    BROKER_TOPICS_PATH,
    CONFIG_CHANGES_PATH,
    TOPIC_CONFIG_PATH,
    DELETE_TOPICS_PATH,
)

NO_LEADER = -1
INITIAL_CONTROLLER_EPOCH = 1


class ZkDataError(KafkaError, ValueError):
    """A znode value that is not what the 0.8 layout says it holds."""


# -- paths -----------------------------------------------------------------------------------------------


def topic_path(topic: str) -> str:
    return f"{BROKER_TOPICS_PATH}/{topic}"


def topic_partitions_path(topic: str) -> str:
    return f"{topic_path(topic)}/partitions"


def partition_path(topic: str, partition: int) -> str:
    return f"{topic_partitions_path(topic)}/{partition}"


def partition_state_path(topic: str, partition: int) -> str:
    return f"{partition_path(topic, partition)}/state"


def delete_topic_path(topic: str) -> str:
    return f"{DELETE_TOPICS_PATH}/{topic}"


def topic_config_path(topic: str) -> str:
    return f"{TOPIC_CONFIG_PATH}/{topic}"


# -- JSON helpers ----------------------------------------------------------------------------------------


def encode_json(value: Any) -> str:
    """Kafka's compact JSON: no spaces."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def _load(what: str, text: str | bytes) -> Any:
    if isinstance(text, bytes):
        text = text.decode("utf-8")
    try:
        return json.loads(text)
    except ValueError:
        raise ZkDataError(f"{what}: {text!r} is not JSON") from None


def _load_object(what: str, text: str | bytes) -> dict[str, Any]:
    value = _load(what, text)
    if not isinstance(value, dict):
        raise ZkDataError(f"{what}: {text!r} is not a JSON object")
    return value


def _field(what: str, obj: Mapping[str, Any], name: str, kind: type | tuple[type, ...]) -> Any:
    value = obj.get(name)
    if not isinstance(value, kind) or isinstance(value, bool) and kind is not bool:
        raise ZkDataError(f"{what}: field {name!r} is missing or not a {getattr(kind, '__name__', kind)}")
    return value


def _int_list(what: str, value: Any, name: str) -> list[int]:
    if not isinstance(value, list) or not all(isinstance(v, int) and not isinstance(v, bool) for v in value):
        raise ZkDataError(f"{what}: field {name!r} is not a list of integers")
    return list(value)


def _timestamp(value: Any) -> str:
    return "" if value is None else str(value)


# -- /brokers/ids/<id> -----------------------------------------------------------------------------------


@dataclass(frozen=True, order=True)
class BrokerRegistration:
    """A live 0.8 broker as registered under ``/brokers/ids``: the host and port clients should use."""

    id: int
    host: str
    port: int
    jmx_port: int = -1
    timestamp: str = ""
    version: int = 1
    endpoints: tuple[str, ...] = ()
    rack: str | None = None
    protocol_map: tuple[tuple[str, str], ...] = ()  # version 4: listener name -> security protocol

    def to_json(self) -> str:
        """The registration JSON; a rack is an extra key (0.8.2 and 0.9 readers skip it), the version kept."""
        value: dict[str, Any] = {"version": self.version, "host": self.host or None, "port": self.port}
        value["jmx_port"] = self.jmx_port
        value["timestamp"] = self.timestamp
        if self.version >= 2:
            value["endpoints"] = list(self.endpoints or (f"PLAINTEXT://{self.host}:{self.port}",))
        if self.rack is not None:
            value["rack"] = self.rack
        if self.version >= 4:
            value["listener_security_protocol_map"] = dict(self.protocol_map)
        return encode_json(value)

    @classmethod
    def parse(cls, broker_id: int | str, text: str | bytes) -> BrokerRegistration:
        """Read version 1 (0.8.2), 2 (0.9: host/port from the PLAINTEXT endpoint when absent) or 3 (0.10),
        with its ``rack`` when there is one."""
        what = f"{broker_id_path(int(broker_id))}"
        obj = _load_object(what, text)
        version = _field(what, obj, "version", int)
        endpoints = tuple(obj.get("endpoints") or ())
        host, port = obj.get("host"), obj.get("port")
        protocols = obj.get("listener_security_protocol_map") or {}
        protocol_map = tuple((str(k), str(v)) for k, v in protocols.items()) if isinstance(protocols, dict) else ()
        if (host is None or port in (None, -1)) and endpoints:
            host, port = _plaintext_endpoint(what, endpoints)
        if not isinstance(host, str) or not isinstance(port, int):
            raise ZkDataError(f"{what}: no host and port in {text!r}")
        jmx = obj.get("jmx_port", -1)
        rack = obj.get("rack")
        rack = rack if isinstance(rack, str) else None
        timestamp = _timestamp(obj.get("timestamp"))
        return cls(int(broker_id), host, port, jmx, timestamp, version, endpoints, rack, protocol_map)


def _plaintext_endpoint(what: str, endpoints: Iterable[str]) -> tuple[str, int]:
    for endpoint in endpoints:
        match = re.fullmatch(r"([A-Z_]+)://\[?([^\]]*)\]?:(-?\d+)", str(endpoint))
        if match and match.group(1) == "PLAINTEXT":
            return match.group(2), int(match.group(3))
    for endpoint in endpoints:  # no PLAINTEXT listener (Kafka registers host null, port -1): the first one
        match = re.fullmatch(r"([A-Z_]+)://\[?([^\]]*)\]?:(-?\d+)", str(endpoint))
        if match:
            return match.group(2), int(match.group(3))
    raise ZkDataError(f"{what}: no PLAINTEXT endpoint in {list(endpoints)}")


# -- /brokers/topics/<t> ---------------------------------------------------------------------------------


def encode_topic_assignment(assignment: Mapping[int, Iterable[int]]) -> str:
    """``{"version":1,"partitions":{"0":[1,2],...}}`` with the partitions in id order."""
    partitions = {str(p): list(assignment[p]) for p in sorted(assignment)}
    return encode_json({"version": 1, "partitions": partitions})


def parse_topic_assignment(topic: str, text: str | bytes) -> dict[int, list[int]]:
    """Partition id → replica ids (first = preferred leader)."""
    what = topic_path(topic)
    obj = _load_object(what, text)
    partitions = _field(what, obj, "partitions", dict)
    out = {}
    for key, replicas in partitions.items():
        if not str(key).isdigit():
            raise ZkDataError(f"{what}: partition id {key!r} is not a number")
        out[int(key)] = _int_list(what, replicas, f"partitions.{key}")
    return dict(sorted(out.items()))


# -- /brokers/topics/<t>/partitions/<p>/state ------------------------------------------------------------


@dataclass(frozen=True)
class PartitionState:
    """``LeaderIsrAndControllerEpoch``: the partition's leader, its epoch, the ISR, and who wrote it.

    ``zk_version`` is the state znode's version when read (-1 when not read from ZooKeeper); writes are
    conditional on it.
    """

    leader: int
    leader_epoch: int
    isr: tuple[int, ...]
    controller_epoch: int
    zk_version: int = -1

    def to_json(self) -> str:
        return encode_json(
            {
                "controller_epoch": self.controller_epoch,
                "leader": self.leader,
                "version": 1,
                "leader_epoch": self.leader_epoch,
                "isr": list(self.isr),
            }
        )

    @classmethod
    def parse(cls, topic: str, partition: int, text: str | bytes, zk_version: int = -1) -> PartitionState:
        what = partition_state_path(topic, partition)
        obj = _load_object(what, text)
        return cls(
            leader=_field(what, obj, "leader", int),
            leader_epoch=_field(what, obj, "leader_epoch", int),
            isr=tuple(_int_list(what, obj.get("isr"), "isr")),
            controller_epoch=_field(what, obj, "controller_epoch", int),
            zk_version=zk_version,
        )


# -- /controller and /controller_epoch -------------------------------------------------------------------


def encode_controller(broker_id: int, timestamp: str) -> str:
    return encode_json({"version": 1, "brokerid": broker_id, "timestamp": timestamp})


def parse_controller(text: str | bytes) -> int:
    """The controller's broker id; a bare number (the pre-0.8.1 form) is accepted too."""
    value = _load(CONTROLLER_PATH, text)
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, dict):
        return _field(CONTROLLER_PATH, value, "brokerid", int)
    raise ZkDataError(f"{CONTROLLER_PATH}: {text!r} names no broker id")


def encode_cluster_id(cluster_id: str) -> str:
    return encode_json({"version": "1", "id": cluster_id})


def parse_cluster_id(text: str | bytes) -> str:
    return _field(CLUSTER_ID_PATH, _load_object(CLUSTER_ID_PATH, text), "id", str)


def encode_controller_epoch(epoch: int) -> str:
    return str(epoch)


def parse_controller_epoch(text: str | bytes) -> int:
    value = text.decode("utf-8") if isinstance(text, bytes) else text
    try:
        return int(value.strip())
    except ValueError:
        raise ZkDataError(f"{CONTROLLER_EPOCH_PATH}: {value!r} is not a number") from None


# -- /admin ----------------------------------------------------------------------------------------------


def encode_reassignment(moves: Mapping[tuple[str, int], Iterable[int]]) -> str:
    partitions = [{"topic": t, "partition": p, "replicas": list(moves[(t, p)])} for t, p in sorted(moves)]
    return encode_json({"version": 1, "partitions": partitions})


def parse_reassignment(text: str | bytes) -> dict[tuple[str, int], list[int]]:
    """(topic, partition) → the new replica list."""
    out = {}
    for entry in _partition_entries(REASSIGN_PARTITIONS_PATH, text):
        out[_topic_partition(REASSIGN_PARTITIONS_PATH, entry)] = _int_list(
            REASSIGN_PARTITIONS_PATH, entry.get("replicas"), "replicas"
        )
    return out


def encode_partition_list(partitions: Iterable[tuple[str, int]]) -> str:
    """``{"version":1,"partitions":[{"topic":"t","partition":0},...]}`` (preferred election, ISR changes)."""
    entries = [{"topic": t, "partition": p} for t, p in sorted(set(partitions))]
    return encode_json({"version": 1, "partitions": entries})


def parse_partition_list(what: str, text: str | bytes) -> set[tuple[str, int]]:
    return {_topic_partition(what, entry) for entry in _partition_entries(what, text)}


def _partition_entries(what: str, text: str | bytes) -> list[dict[str, Any]]:
    entries = _field(what, _load_object(what, text), "partitions", list)
    if not all(isinstance(entry, dict) for entry in entries):
        raise ZkDataError(f"{what}: 'partitions' holds something other than objects")
    return entries


def _topic_partition(what: str, entry: Mapping[str, Any]) -> tuple[str, int]:
    return _field(what, entry, "topic", str), _field(what, entry, "partition", int)


# -- /config ---------------------------------------------------------------------------------------------


def encode_topic_config(config: Mapping[str, str]) -> str:
    return encode_json({"version": 1, "config": {k: str(v) for k, v in config.items()}})


def parse_topic_config(topic: str, text: str | bytes) -> dict[str, str]:
    what = topic_config_path(topic)
    config = _field(what, _load_object(what, text), "config", dict)
    return {str(k): str(v) for k, v in config.items()}


def encode_config_change(topic: str, version: int = 0) -> str:
    """A change notification: 0.8.2's (the topic name as a JSON string) or, ``version=2``, Kafka 1.1's
    ``{"version":2,"entity_path":"topics/<t>"}`` (what the admin requests write)."""
    return encode_entity_change(f"topics/{topic}") if version == 2 else encode_json(topic)


def encode_entity_change(entity_path: str) -> str:
    """Kafka 1.1's change notification of any entity: ``{"version":2,"entity_path":"clients/c1"}``."""
    return encode_json({"version": 2, "entity_path": entity_path})


def parse_entity_change(text: str | bytes) -> tuple[str, str]:
    """The entity type and (sanitized) name of a change notification, in 0.8.2's form (a topic's name), 0.9's
    (``entity_type``, ``entity_name``) or 1.1's entity path: ``("clients", "c1")``, ``("users", "u/clients/c")``."""
    value = _load(CONFIG_CHANGES_PATH, text)
    if isinstance(value, str):
        return "topics", value
    if isinstance(value, dict) and isinstance(value.get("entity_path"), str):
        kind, _, name = value["entity_path"].partition("/")
        if kind and name:
            return kind, name
    elif isinstance(value, dict):
        kind = value.get("entity_type", "topics")
        return str(kind), _field(CONFIG_CHANGES_PATH, value, "entity_name", str)
    raise ZkDataError(f"{CONFIG_CHANGES_PATH}: {text!r} names no entity")


# -- /consumers/<g>/ids/<consumer id> --------------------------------------------------------------------


@dataclass(frozen=True)
class ConsumerRegistration:
    """A 0.8 consumer's subscription: topic (or regex for wildcards) → stream count, and its pattern kind."""

    subscription: Mapping[str, int] = field(default_factory=dict)
    pattern: str = "static"
    timestamp: str = ""
    version: int = 1

    def to_json(self) -> str:
        return encode_json(
            {
                "version": self.version,
                "subscription": dict(self.subscription),
                "pattern": self.pattern,
                "timestamp": self.timestamp,
            }
        )

    @classmethod
    def parse(cls, text: str | bytes) -> ConsumerRegistration:
        what = "consumer registration"
        obj = _load_object(what, text)
        subscription = _field(what, obj, "subscription", dict)
        if not all(isinstance(v, int) for v in subscription.values()):
            raise ZkDataError(f"{what}: stream counts must be integers in {text!r}")
        pattern = _field(what, obj, "pattern", str)
        if pattern not in ("static", "white_list", "black_list"):
            raise ZkDataError(f"{what}: unknown pattern {pattern!r}")
        return cls(subscription, pattern, _timestamp(obj.get("timestamp")), obj.get("version", 1))
