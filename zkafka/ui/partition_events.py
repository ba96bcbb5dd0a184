"""The timeline's 0.8 partition events: a leader election and an ISR change, each opened into its steps, each
with the measure that fits it (an election: how long after the old leader's znode vanished the new leader
was seen; an ISR change: which replicas left or rejoined). Pure: fed the partition states the view reads.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from zkafka.cluster.partition import Partition
from zkafka.controller.context import ControllerContext
from zkafka.controller.controller import KafkaController
from zkafka.controller.leader_selector import next_partition_state
from zkafka.explain import Step, where
from zkafka.server.isr_changes import zk_isr_writer


class PartitionEvents:
    """The leader and ISR of every partition seen, and the entries their changes open."""

    def __init__(self, open_entry: Callable[[float, str, str, str], Any]) -> None:
        self.open = open_entry  # Timeline.open: (now, kind, subject, title) -> its new Entry
        self.last: dict[tuple[str, int], tuple[int, tuple[int, ...]]] = {}

    def observe(
        self, now: float, topics: list[Mapping[str, Any]], alive: set[int], gone_at: Mapping[int, float]
    ) -> None:
        for topic in topics:
            for p in topic["partitions"]:
                key = (topic["name"], p["partition"])
                after = (p["leader"], tuple(p["isr"]))
                before = self.last.get(key)
                self.last[key] = after
                if before is None:
                    continue
                if before[0] != after[0]:
                    self._leader_moved(now, key, before, after, p, alive, gone_at)
                elif before[1] != after[1]:
                    self._isr_changed(now, key, before[1], after[1], p, alive)

    def _leader_moved(self, now, key, before, after, partition, alive: set[int], gone_at) -> None:
        (old, old_isr), (new, new_isr) = before, after
        name = f"{key[0]}-{key[1]}"
        entry = self.open(now, "leader", name, f"leader of {name}: broker {old} -> {_broker(new)}")
        gone = old not in alive
        entry.measure = _election_measure(now, old, gone_at.get(old), partition.get("leader_epoch"))
        entry.steps = [
            Step(
                f"broker {old} {'is gone: its session ended and /brokers/ids/' + str(old) + ' vanished' if gone else 'no longer leads'}",
                where(ControllerContext._on_watch),
                ["the controller watches /brokers/ids and sees the change"],
            ),
            Step(
                "the controller picks the next leader: the first live replica of the ISR "
                "(any live replica only with unclean.leader.election.enable)",
                where(next_partition_state),
                [
                    f"replicas {partition['replicas']}, ISR before {list(old_isr)}, live brokers {sorted(alive)}"
                ],
            ),
            Step(
                "it writes the partition state znode, a conditional write on its version",
                where(KafkaController._write),
                [
                    f"/brokers/topics/{key[0]}/partitions/{key[1]}/state: leader {_broker(new)}, "
                    f"ISR {list(new_isr)}, leader epoch {partition.get('leader_epoch')}"
                ],
            ),
            Step(
                "every broker's metadata cache reads it; the new leader serves, clients retry NOT_LEADER",
                where(ControllerContext._run),
                [],
            ),
        ]
        entry.settle(now)

    def _isr_changed(self, now, key, old_isr, new_isr, partition, alive: set[int]) -> None:
        name = f"{key[0]}-{key[1]}"
        left = [r for r in old_isr if r not in new_isr]
        joined = [r for r in new_isr if r not in old_isr]
        entry = self.open(now, "isr", name, f"ISR of {name}: {list(old_isr)} -> {list(new_isr)}")
        parts = [f"{left} out of sync" if left else "", f"{joined} back in sync" if joined else ""]
        entry.measure = (
            f"{'; '.join(p for p in parts if p)}: {len(new_isr)} of {len(partition['replicas'])} in sync"
        )
        reason = (
            "a follower that has not fetched up to the leader's log end within replica.lag.time.max.ms "
            "(or is dead: " + ", ".join(str(r) for r in left if r not in alive) + ") leaves the ISR"
            if left
            else "a follower whose log end offset reached the high watermark rejoins the ISR"
        )
        entry.steps = [
            Step(
                reason,
                where(Partition.isr_to_shrink if left else Partition.isr_to_expand),
                [f"replicas {partition['replicas']}, leader {partition['leader']}"],
            ),
            Step(
                "the leader writes the new ISR to the partition state znode (conditional on its version); "
                "the high watermark is now the smallest log end offset of this ISR",
                where(zk_isr_writer),
                [f"/brokers/topics/{key[0]}/partitions/{key[1]}/state: ISR {list(new_isr)}"],
            ),
        ]
        entry.settle(now)


def _election_measure(now: float, old: int, gone_at: float | None, epoch: Any) -> str:
    """How long the partition waited for its new leader, as far as the view can tell."""
    if gone_at is None:
        return f"leader epoch {epoch}: the old leader is alive (a preferred or controlled move)"
    delay = round((now - gone_at) * 1000)
    if delay == 0:
        return f"leader epoch {epoch}, already elected when broker {old}'s end was seen"
    return f"leader epoch {epoch}, elected {delay} ms after broker {old}'s end was seen"


def _broker(broker_id: int) -> str:
    return "none" if broker_id < 0 else str(broker_id)
