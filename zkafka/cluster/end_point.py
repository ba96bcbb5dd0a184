"""Listeners as Kafka 1.0+ names them: ``listeners``, ``advertised.listeners``, ``listener.security.protocol.map``
and ``inter.broker.listener.name`` (or ``security.inter.broker.protocol``); ``host.name``/``port`` (and the
``advertised.*`` pair) are one PLAINTEXT listener when ``listeners`` is unset.

An ``EndPoint`` is ``NAME://host:port`` with its listener's security protocol. Errors name the key.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from zkafka.config import Key, str_key
from zkafka.errors import InvalidConfigError

# SecurityProtocol ids, as UpdateMetadata's end points carry them.
SECURITY_PROTOCOLS = {"PLAINTEXT": 0, "SSL": 1, "SASL_PLAINTEXT": 2, "SASL_SSL": 3}
PROTOCOL_NAMES = {number: name for name, number in SECURITY_PROTOCOLS.items()}
_URI = re.compile(r"([^:/\s]+)://\[?([0-9a-zA-Z\-%._:]*?)\]?:(-?[0-9]+)")


@dataclass(frozen=True)
class EndPoint:
    """One listener's address: ``listener_name://host:port`` spoken in ``security_protocol``."""

    host: str
    port: int
    listener_name: str
    security_protocol: str

    @property
    def connection_string(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{self.listener_name}://{host}:{self.port}"

    @property
    def protocol_id(self) -> int:
        return SECURITY_PROTOCOLS[self.security_protocol]


def parse_protocol_map(key: str, text: str) -> dict[str, str]:
    """``NAME:PROTOCOL,...`` (names upper-cased, as Kafka's ListenerName normalises them)."""
    mapping: dict[str, str] = {}
    for item in (part.strip() for part in text.split(",")):
        if not item:
            continue
        name, sep, protocol = item.partition(":")
        protocol = protocol.strip().upper()
        if not sep or not name.strip() or protocol not in SECURITY_PROTOCOLS:
            raise InvalidConfigError(
                f"{key}: {item!r} is not NAME:PROTOCOL with one of {sorted(SECURITY_PROTOCOLS)}"
            )
        mapping[name.strip().upper()] = protocol
    return mapping


def parse_end_points(key: str, text: str, protocol_map: Mapping[str, str]) -> list[EndPoint]:
    """``NAME://host:port,...``; each name once, each in ``protocol_map``."""
    end_points: list[EndPoint] = []
    for item in (part.strip() for part in text.split(",")):
        if not item:
            continue
        match = _URI.fullmatch(item)
        if match is None:
            raise InvalidConfigError(f"{key}: {item!r} is not LISTENER_NAME://host:port")
        name, host, port = match.group(1).upper(), match.group(2), int(match.group(3))
        if name not in protocol_map:
            raise InvalidConfigError(f"{key}: listener {name} is not in listener.security.protocol.map")
        if not 0 <= port <= 65535:
            raise InvalidConfigError(f"{key}: port {port} of {name} is not in [0, 65535]")
        if any(e.listener_name == name for e in end_points):
            raise InvalidConfigError(f"{key}: listener {name} appears more than once")
        end_points.append(EndPoint(host, port, name, protocol_map[name]))
    return end_points


LISTENER_KEYS = (
    str_key("listeners"),
    str_key("advertised.listeners"),
    Key(
        "listener.security.protocol.map",
        parse_protocol_map,
        {name: name for name in SECURITY_PROTOCOLS},
    ),
    str_key("inter.broker.listener.name"),
    str_key("security.inter.broker.protocol", "PLAINTEXT"),
)


@dataclass(frozen=True)
class BrokerListeners:
    """What a broker binds, what it registers, and which listener brokers talk to each other on."""

    bound: tuple[EndPoint, ...]
    advertised: tuple[EndPoint, ...]
    inter_broker: str

    @classmethod
    def from_config(cls, config: Any) -> BrokerListeners:
        protocols = config["listener.security.protocol.map"]
        if config["listeners"]:
            bound = parse_end_points("listeners", config["listeners"], protocols)
            advertised_text = config["advertised.listeners"] or config["listeners"]
            advertised = parse_end_points("advertised.listeners", advertised_text, protocols)
        else:
            bound = [EndPoint(config["host.name"] or "", config["port"], "PLAINTEXT", "PLAINTEXT")]
            host = config["advertised.host.name"] or config["host.name"] or ""
            advertised = [EndPoint(host, config["advertised.port"], "PLAINTEXT", "PLAINTEXT")]
            if config["advertised.listeners"]:
                advertised = parse_end_points(
                    "advertised.listeners", config["advertised.listeners"], protocols
                )
        if not bound:
            raise InvalidConfigError("listeners: names no listener")
        inter_broker = _inter_broker_listener(config, protocols)
        names = {e.listener_name for e in bound}
        for end_point in advertised:
            if end_point.listener_name not in names:
                raise InvalidConfigError(
                    f"advertised.listeners: {end_point.listener_name} is not in listeners"
                )
        if inter_broker not in {e.listener_name for e in advertised}:
            key = (
                "inter.broker.listener.name"
                if config["inter.broker.listener.name"]
                else "security.inter.broker.protocol"
            )
            raise InvalidConfigError(f"{key}: {inter_broker} is not an advertised listener")
        return cls(tuple(bound), tuple(advertised), inter_broker)

    def registered(self, bound_ports: Mapping[str, int], local_host: str) -> tuple[EndPoint, ...]:
        """The advertised end points with the real port of a listener bound to port 0, ``local_host`` for a
        blank host."""
        out = []
        for end_point in self.advertised:
            port = end_point.port or bound_ports.get(end_point.listener_name, 0)
            out.append(replace(end_point, host=end_point.host or local_host, port=port))
        return tuple(out)


def _inter_broker_listener(config: Any, protocols: Mapping[str, str]) -> str:
    name = (config["inter.broker.listener.name"] or "").upper()
    if name and "security.inter.broker.protocol" in config.raw:
        raise InvalidConfigError(
            "inter.broker.listener.name: set only one of it and security.inter.broker.protocol"
        )
    if name:
        return name
    protocol = config["security.inter.broker.protocol"].upper()
    if protocol not in SECURITY_PROTOCOLS:
        raise InvalidConfigError(
            f"security.inter.broker.protocol: {protocol} is not one of {sorted(SECURITY_PROTOCOLS)}"
        )
    return protocol


def end_point_of(uri: str, protocols: Mapping[str, str]) -> EndPoint | None:
    """A registration's ``NAME://host:port`` (None when malformed or its name has no protocol)."""
    match = _URI.fullmatch(uri)
    if match is None:
        return None
    name = match.group(1).upper()
    protocol = protocols.get(name, name if name in SECURITY_PROTOCOLS else None)
    if protocol is None:
        return None
    return EndPoint(match.group(2), int(match.group(3)), name, protocol)


def registered_end_points(registration: Any) -> list[EndPoint]:
    """A ``BrokerRegistration``'s end points (one PLAINTEXT end point from host/port when it lists none)."""
    if not registration.endpoints:
        return [EndPoint(registration.host, registration.port, "PLAINTEXT", "PLAINTEXT")]
    found = (end_point_of(uri, dict(registration.protocol_map)) for uri in registration.endpoints)
    return [e for e in found if e is not None]


def registered_end_point(registration: Any, listener: str) -> EndPoint | None:
    """The end point of ``listener`` in a registration (a listener name, or a security protocol so named)."""
    return next((e for e in registered_end_points(registration) if e.listener_name == listener), None)
