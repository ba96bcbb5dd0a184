"""The parts of an explanation: numbered steps naming the function that does each, the resulting owners,
and what-ifs (the partitions that change hands). Pure."""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

Owners = Mapping[tuple[str, Hashable], str]  # (topic, partition) -> owner (thread id or member id)


def where(func: Callable) -> str:
    """``module.qualname`` of the function doing a step, so the text follows the code when it moves."""
    return f"{func.__module__}.{func.__qualname__}"


@dataclass
class Step:
    """One step of an explanation: what happens, the function that does it, and its facts as lines."""

    title: str
    where: str
    lines: list[str] = field(default_factory=list)


@dataclass
class Move:
    """A partition changing hands in a what-if: from one owner to another (None: nobody)."""

    topic: str
    partition: str
    before: str | None
    after: str | None


@dataclass
class Explanation:
    """A titled list of steps, the resulting owner of every partition and the what-if scenarios."""

    title: str
    steps: list[Step]
    owners: dict[str, str]  # "topic:partition" -> owner
    what_if: dict[str, list[Move]] = field(default_factory=dict)

    def render(self) -> str:
        """The explanation as numbered plain-text steps."""
        out = [self.title, ""]
        for number, step in enumerate(self.steps, 1):
            out.append(f"{number}. {step.title}   [{step.where}]")
            out.extend(f"     {line}" for line in step.lines)
        for scenario, moves in self.what_if.items():
            out.append("")
            out.append(f"if {scenario}: {describe_moves(moves)}")
            out.extend(
                f"     {m.topic}:{m.partition}  {m.before or '(nobody)'} -> {m.after or '(nobody)'}"
                for m in moves
            )
        return "\n".join(out)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def describe_moves(moves: list[Move]) -> str:
    if not moves:
        return "nothing moves"
    return f"{len(moves)} partition{'s' if len(moves) != 1 else ''} move"


def diff_owners(before: Owners, after: Owners, owner_of: Callable[[str], str] = str) -> list[Move]:
    """Partitions whose owner differs between two assignments (owners mapped through ``owner_of``)."""
    moves = []
    for key in sorted(set(before) | set(after), key=lambda k: (k[0], str(k[1]))):
        was = owner_of(before[key]) if key in before else None
        now = owner_of(after[key]) if key in after else None
        if was != now:
            moves.append(Move(key[0], str(key[1]), was, now))
    return moves


def share_text(partitions: int, takers: int, what: str) -> str:
    """``P partitions / C threads = n each, the first e get one more`` (range's arithmetic, in words)."""
    if takers == 0:
        return f"{partitions} partitions, no {what}"
    per, extra = divmod(partitions, takers)
    text = f"{partitions} partitions / {takers} {what} = {per} each"
    return text + (f", the first {extra} get one more" if extra else "")


def parse_counted(text: str, default: int = 1) -> tuple[str, int]:
    """``name`` or ``name:N`` (N >= 0) into ``(name, N)``."""
    name, sep, count = text.partition(":")
    if not name or (sep and not count.isdigit()):
        raise ValueError(f"{text!r} is not NAME or NAME:COUNT")
    return name, int(count) if sep else default
