"""Which protocol type and protocols a group accepts and which protocol it selects (``GroupMetadata``'s
``supportsProtocols`` and ``selectProtocol``): what ``GroupMetadata`` mixes in. Pure."""

from __future__ import annotations

from typing import Any

from zkafka.coordinator.group_state import GroupState
from zkafka.coordinator.member import Protocols
from zkafka.errors import InvalidRequestError
from zkafka.protocol.group_membership import CONSUMER_PROTOCOL_TYPE, ConsumerProtocolMetadata


class GroupProtocols:
    """A group's protocol checks and vote (mixed into ``GroupMetadata``: it reads the members and state)."""

    def candidate_protocols(self) -> set[str]:
        names = [set(m.protocol_names()) for m in self.members.values()]
        return set.intersection(*names) if names else set()

    def supports_protocols(self, protocols: Protocols) -> bool:
        if not protocols:
            return False
        return not self.members or bool({name for name, _ in protocols} & self.candidate_protocols())

    def _consistent(self, protocol_type: str, protocols: Protocols) -> bool:
        """An Empty group takes any protocol type (its next member's); else the group's, with a protocol
        every member supports."""
        if self.state is GroupState.EMPTY:
            return bool(protocol_type and protocols)
        return protocol_type == self.protocol_type and self.supports_protocols(protocols)

    def select_protocol(self) -> str:
        """Each member votes for its first protocol all support; most votes wins (ties: the smaller name)."""
        candidates = self.candidate_protocols()
        votes: dict[str, int] = {}
        for member in self.members.values():
            choice = member.vote(candidates)
            votes[choice] = votes.get(choice, 0) + 1
        return min(votes, key=lambda name: (-votes[name], name))


def subscribed_topics(group: Any) -> set[str]:
    """The topics a "consumer" group's members subscribe to (from their JoinGroup metadata)."""
    if group.protocol_type != CONSUMER_PROTOCOL_TYPE:
        return set()
    topics: set[str] = set()
    for member in group.members.values():
        for _, data in member.protocols:
            try:
                topics.update(ConsumerProtocolMetadata.decode(data).subscription or [])
            except InvalidRequestError:
                continue
    return topics
