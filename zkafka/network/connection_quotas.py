"""Connections per client address, as Kafka's ConnectionQuotas: ``max.connections.per.ip`` for every address,
``max.connections.per.ip.overrides`` (``host:count,host:count``) for named ones, counted across all listeners;
a connection beyond its address's limit is closed at accept, and a count is released when its connection closes.
"""

from __future__ import annotations

import ipaddress
import logging
import socket
from collections import Counter

from zkafka.errors import InvalidConfigError

log = logging.getLogger(__name__)

OVERRIDES_KEY = "max.connections.per.ip.overrides"


def parse_overrides(key: str, text: str) -> dict[str, int]:
    """``host:count,host:count`` as a dict; a malformed entry or a negative count names the key."""
    overrides = {}
    for entry in filter(None, (e.strip() for e in text.split(","))):
        host, sep, count = entry.rpartition(":")
        if not sep or not host or not count.strip().isdigit():
            raise InvalidConfigError(f"{key}: {entry!r} is not host:count")
        overrides[host.strip()] = int(count)
    return overrides


def _address(key: str, host: str) -> str:
    """``host`` as the IP address connections from it come from (a name resolved once, at start)."""
    try:
        return str(ipaddress.ip_address(host))
    except ValueError:
        pass
    try:
        return socket.gethostbyname(host)
    except OSError as exc:
        raise InvalidConfigError(f"{key}: cannot resolve {host!r}: {exc}") from None


class ConnectionQuotas:
    """The open connections per client IP and the limit each IP has."""

    def __init__(self, default_max: int, overrides: dict[str, int] | None = None) -> None:
        self.default_max = default_max
        self.overrides = {_address(OVERRIDES_KEY, h): n for h, n in (overrides or {}).items()}
        self._counts: Counter[str] = Counter()
        self._rejected_once: set[str] = set()

    @classmethod
    def from_config(cls, config) -> ConnectionQuotas:
        return cls(config["max.connections.per.ip"], config[OVERRIDES_KEY])

    def limit(self, ip: str) -> int:
        return self.overrides.get(ip, self.default_max)

    def inc(self, ip: str) -> bool:
        """Count a connection from ``ip``; False (nothing counted) when ``ip`` already has its maximum."""
        limit = self.limit(ip)
        if self._counts[ip] >= limit:
            level = logging.DEBUG if ip in self._rejected_once else logging.INFO
            self._rejected_once.add(ip)
            log.log(
                level,
                "Rejected connection from /%s, address already has the configured maximum of %d connections.",
                ip,
                limit,
            )
            return False
        self._counts[ip] += 1
        return True

    def dec(self, ip: str) -> None:
        """Release a connection of ``ip`` counted by ``inc``."""
        self._counts[ip] -= 1
        if self._counts[ip] <= 0:
            del self._counts[ip]

    def count(self, ip: str) -> int:
        return self._counts[ip]
