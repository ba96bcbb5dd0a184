"""``zkafka explain replication``: one partition's high watermark and what happens to its produces, given
each replica's log end offset (LEO), the ISR, a produce's ``acks`` and ``min.insync.replicas``.

The leader learns a follower's LEO from the offset of its follower fetch; the high watermark (HW) is the
smallest LEO of the ISR (replicas outside it do not hold it back) and never moves back; a follower whose LEO
reaches the HW rejoins the ISR. An acks=-1 produce whose append ends at offset ``o`` is parked in the produce
purgatory as a ``DelayedProduce`` until the HW reaches ``o``; with an ISR smaller than min.insync.replicas a
new acks=-1 produce fails at once with NOT_ENOUGH_REPLICAS (nothing appended), and one already appended is
answered NOT_ENOUGH_REPLICAS_AFTER_APPEND. acks=1 is answered after the leader's append, acks=0 not at all,
acks=N once N replicas of the ISR hold the offsets. Pure.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from zkafka.explain.steps import Explanation, Step

FOLLOWER_FETCH = "zkafka.server.replica_manager.ReplicaManager.record_follower_fetch"
HIGH_WATERMARK = "zkafka.cluster.partition.Partition.maybe_increment_high_watermark"
EXPAND = "zkafka.cluster.partition.Partition.isr_to_expand"
REACHED = "zkafka.cluster.partition.Partition.replicas_reached"
APPEND = "zkafka.server.replica_manager.ReplicaManager._append_as_leader"


def explain_replication(
    leos: Mapping[int, int],
    isr: Sequence[int],
    leader: int,
    acks: int = -1,
    min_insync_replicas: int = 1,
    produces: Sequence[int] = (),
    high_watermark: int = 0,
) -> Explanation:
    """The HW and the fate of parked produces (each given by the offset its append ended at) and of a new one."""
    if leader not in leos:
        raise ValueError(f"the leader {leader} has no log end offset given")
    unknown = [r for r in isr if r not in leos]
    if unknown:
        raise ValueError(f"ISR member {unknown[0]} has no log end offset given")
    title = f"replicas {dict(sorted(leos.items()))} (leader {leader}), ISR {list(isr)}, acks {acks}"
    in_sync = [r for r in isr if r in leos]
    hw = max(high_watermark, min(leos[r] for r in in_sync) if in_sync else leos[leader])
    followers = [f"replica {r}: LEO {leo}" for r, leo in sorted(leos.items()) if r != leader]
    steps = [
        Step(
            "each follower's fetch offset tells the leader that follower's log end offset (LEO)",
            FOLLOWER_FETCH,
            [f"leader {leader}: LEO {leos[leader]}", *followers],
        ),
        Step(
            f"high watermark = the smallest LEO of the ISR = {hw}: consumers read below it, and it never moves back",
            HIGH_WATERMARK,
            [
                f"ISR {in_sync}: LEOs {[leos[r] for r in in_sync]}",
                *[
                    f"replica {r} is out of the ISR: its LEO {leos[r]} does not hold the HW back"
                    for r in leos
                    if r not in isr
                ],
            ],
        ),
    ]
    rejoin = [r for r in leos if r not in isr and leos[r] >= hw]
    if rejoin:
        steps.append(Step(f"replicas {rejoin} caught up to the HW: the leader adds them to the ISR", EXPAND))
    steps += [_parked(offset, acks, leos, in_sync, hw, min_insync_replicas) for offset in produces]
    steps.append(_new_produce(acks, in_sync, min_insync_replicas))
    return Explanation(title, steps, {})


def _parked(offset: int, acks: int, leos: Mapping[int, int], isr: list[int], hw: int, min_isr: int) -> Step:
    name = f"a produce appended up to offset {offset}"
    if acks == 0:
        return Step(f"{name}, acks=0: no answer is sent", APPEND)
    if acks == 1:
        return Step(f"{name}, acks=1: answered after the leader's append", APPEND)
    if acks > 0:
        holding = [r for r in isr if leos[r] >= offset]
        done = len(holding) >= acks
        state = "completes" if done else "stays parked in the produce purgatory"
        return Step(
            f"{name}, acks={acks}: {len(holding)} ISR replicas hold it: {state}",
            REACHED,
            [f"holding: {holding}"],
        )
    if hw < offset:
        return Step(
            f"{name}, acks=-1: HW {hw} < {offset}: stays parked in the produce purgatory (DelayedProduce) until "
            "follower fetches raise the HW, or timeout_ms answers REQUEST_TIMED_OUT",
            REACHED,
        )
    if len(isr) < min_isr:
        return Step(
            f"{name}, acks=-1: HW {hw} >= {offset} but the ISR ({len(isr)}) is below min.insync.replicas "
            f"{min_isr}: answered NOT_ENOUGH_REPLICAS_AFTER_APPEND (the messages stay in the log)",
            REACHED,
        )
    return Step(f"{name}, acks=-1: HW {hw} >= {offset}: the parked produce completes with no error", REACHED)


def _new_produce(acks: int, isr: list[int], min_isr: int) -> Step:
    if acks < 0 and len(isr) < min_isr:
        return Step(
            f"a new acks=-1 produce: ISR {len(isr)} < min.insync.replicas {min_isr}: it fails at once with "
            "NOT_ENOUGH_REPLICAS, nothing appended",
            APPEND,
        )
    what = "parked until the HW reaches its end" if acks < 0 else "answered as above"
    return Step(f"a new acks={acks} produce: appended at the leader's LEO, {what}", APPEND)
