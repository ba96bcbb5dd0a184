"""KafkaHealthcheck: a 0.8 broker's ``/brokers/ids/<id>`` registration, kept across session expiry and crashes.

The znode is ephemeral JSON (paths08.BrokerRegistration) naming the host and port clients should use: the
advertised ones, else ``host.name``, else the local host's canonical name, and ``broker.rack`` when set. The
session machinery and the crash-restart wait are registry.py's ``ZkRegistry``. ``cluster_id`` reads the
cluster id at ``/cluster/id``, creating it when this broker is the cluster's first (Kafka 0.10.1).
"""

from __future__ import annotations

import base64
import logging
import socket
import uuid
from collections.abc import Callable, Mapping
from typing import Any

from kazoo.client import KazooClient
from kazoo.exceptions import NodeExistsError

from zkafka.cluster.end_point import BrokerListeners
from zkafka.config08 import BrokerConfig08
from zkafka.server.registry import ZkRegistry
from zkafka.utils import now_ms
from zkafka.zk.paths import broker_id_path
from zkafka.zk.paths08 import (
    CLUSTER_ID_PATH,
    PERSISTENT_PATHS,
    BrokerRegistration,
    encode_cluster_id,
    parse_cluster_id,
)

log = logging.getLogger(__name__)


def advertised_address(config: BrokerConfig08, bound_port: int) -> tuple[str, int]:
    """(host, port) a 0.8 broker registers: ``advertised.*`` when set, else host.name / the bound port."""
    host = (config["advertised.host.name"] or "").strip() or socket.getfqdn()
    port = config["advertised.port"] if "advertised.port" in config.raw else bound_port
    return host, port


def listener_registration(config: BrokerConfig08, bound_ports: Mapping[str, int]) -> dict[str, Any]:
    """The version 4 registration's fields (Kafka 1.0+) when ``listeners`` is set: every advertised end point,
    the listeners' protocols, host and port those of the PLAINTEXT listener (null and -1 without one); empty
    when it is not set (a 0.8.2 registration, version 1)."""
    if not config["listeners"]:
        return {}
    end_points = BrokerListeners.from_config(config).registered(bound_ports, socket.getfqdn())
    plaintext = next((e for e in end_points if e.security_protocol == "PLAINTEXT"), None)
    return {
        "host": plaintext.host if plaintext else "",
        "port": plaintext.port if plaintext else -1,
        "version": 4,
        "endpoints": tuple(e.connection_string for e in end_points),
        "protocol_map": tuple((e.listener_name, e.security_protocol) for e in end_points),
    }


def cluster_id(client: KazooClient) -> str:
    """The cluster id at ``/cluster/id``; the first broker makes one (22 characters: a random UUID in URL-safe
    base64 without padding, as Kafka's ``CoreUtils.generateUuidAsBase64``)."""
    new_id = base64.urlsafe_b64encode(uuid.uuid4().bytes).rstrip(b"=").decode("ascii")
    try:
        client.create(CLUSTER_ID_PATH, encode_cluster_id(new_id).encode(), makepath=True)
        log.info("created cluster id %s", new_id)
        return new_id
    except NodeExistsError:
        data, _ = client.get(CLUSTER_ID_PATH)
        return parse_cluster_id(data)


class KafkaHealthcheck(ZkRegistry):
    """Registers a 0.8 broker under ``/brokers/ids`` and registers it again after a session expiry."""

    def __init__(
        self,
        broker_id: int,
        host: str,
        port: int,
        session_timeout_ms: int,
        *,
        client: KazooClient | None = None,
        connect: str | None = None,
        connection_timeout_ms: int | None = None,
        use_gevent: bool = True,
        jmx_port: int = -1,
        rack: str | None = None,
        listeners: Mapping[str, Any] | None = None,
    ) -> None:
        super().__init__(
            broker_id,
            session_timeout_ms,
            client=client,
            connect=connect,
            connection_timeout_ms=connection_timeout_ms,
            use_gevent=use_gevent,
        )
        self.host = host
        self.port = port
        self.jmx_port = jmx_port
        self.rack = rack
        self.listeners = dict(listeners or {})

    @classmethod
    def from_config(
        cls,
        config: BrokerConfig08,
        bound_port: int,
        *,
        bound_ports: Mapping[str, int] | None = None,
        client: KazooClient | None = None,
        use_gevent: bool = True,
    ) -> KafkaHealthcheck:
        host, port = advertised_address(config, bound_port)
        return cls(
            config["broker.id"],
            host,
            port,
            config["zookeeper.session.timeout.ms"],
            client=client,
            connect=config["zookeeper.connect"],
            connection_timeout_ms=config["zookeeper.connection.timeout.ms"],
            use_gevent=use_gevent,
            rack=config["broker.rack"] or None,
            listeners=listener_registration(config, bound_ports or {"PLAINTEXT": bound_port}),
        )

    def startup(self) -> None:
        """Connect, make sure of the 0.8 layout's persistent paths, and register (refusing a live duplicate)."""
        self.start(PERSISTENT_PATHS)

    def registration(self) -> BrokerRegistration:
        fields = {"host": self.host, "port": self.port, **self.listeners}
        return BrokerRegistration(
            self.broker_id, jmx_port=self.jmx_port, timestamp=str(now_ms()), rack=self.rack, **fields
        )

    def register_all(self) -> None:
        value = self.registration().to_json()
        self.register_broker_id(broker_id_path(self.broker_id), value, _address08(self.broker_id))


def _address08(broker_id: int) -> Callable[[bytes], str]:
    def address(value: bytes) -> str:
        broker = BrokerRegistration.parse(broker_id, value)
        return f"{broker.host}:{broker.port}"

    return address
