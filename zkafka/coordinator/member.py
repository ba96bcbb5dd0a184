"""One member of a consumer group as its coordinator knows it (0.9's ``MemberMetadata``, with 2.3's
``group.instance.id`` and rebalance timeout). Pure."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

Protocols = Sequence[tuple[str, bytes]]


@dataclass
class MemberMetadata:
    """One member: who it is, its session timeout, its protocols in preference order, its assignment."""

    member_id: str
    client_id: str
    client_host: str
    session_timeout_ms: int
    protocols: list[tuple[str, bytes]]
    assignment: bytes = b""
    awaiting_join: bool = False
    awaiting_sync: bool = False
    heartbeat_deadline_ms: int = 0
    instance_id: str | None = None
    rebalance_timeout_ms: int = 0  # JoinGroup v5's; 0: the session timeout

    def protocol_names(self) -> list[str]:
        return [name for name, _ in self.protocols]

    def metadata(self, protocol: str) -> bytes:
        for name, data in self.protocols:
            if name == protocol:
                return data
        raise KeyError(f"member {self.member_id} does not support protocol {protocol}")

    def matches(self, protocols: Protocols) -> bool:
        return [tuple(p) for p in protocols] == [tuple(p) for p in self.protocols]

    def vote(self, candidates: set[str]) -> str:
        """The first of this member's protocols every member supports."""
        return next(name for name in self.protocol_names() if name in candidates)
