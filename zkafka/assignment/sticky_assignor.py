"""Sticky assignment (the group client's ``sticky`` assignor): balanced like roundrobin, but every member keeps
what it owned unless balance requires a move; and its cooperative form (``cooperative-sticky``, KIP-429), which
hands a partition taken from one member to its new owner only in the next rebalance. Pure.
"""

from collections.abc import Iterable, Mapping

TopicPartition = tuple[str, int]


def sticky_assign(
    partitions: Iterable[TopicPartition],
    topics_of: Mapping[str, set[str]],
    previous: Mapping[str, tuple[Iterable[TopicPartition], int]],
) -> dict[str, list[TopicPartition]]:
    """Member → the partitions it gets, from every partition to hand out (each of a topic some member
    subscribes to), each member's topics and what each member owned before and in which generation (-1:
    unknown).

    Steps: (1) each member keeps the partitions it owned that still exist and that it still subscribes to
    (a partition claimed twice goes to the later generation; equal generations: the smaller member id);
    (2) the other partitions go one by one, in order, to the eligible member with the fewest; (3) while some
    member has at least two more partitions than another member subscribed to one of them, one such
    partition moves from the fullest to the emptiest. With equal subscriptions every member ends with
    ``P // M`` or ``P // M + 1`` partitions; a member leaving moves only its partitions, a member joining
    takes only what balance requires.
    """
    members = sorted(topics_of)
    valid = set(partitions)
    owned: dict[str, list[TopicPartition]] = {m: [] for m in members}
    claim: dict[TopicPartition, tuple[int, str]] = {}  # partition -> (generation, member) keeping it
    for member in members:
        before, generation = previous.get(member, ((), -1))
        for tp in before:
            if tp not in valid or tp[0] not in topics_of[member]:
                continue
            holder = claim.get(tp)
            if holder is None or generation > holder[0]:
                claim[tp] = (generation, member)
    for tp, (_, member) in sorted(claim.items()):
        owned[member].append(tp)
    eligible = {tp: [m for m in members if tp[0] in topics_of[m]] for tp in valid}
    for tp in sorted(valid - claim.keys()):
        target = min(eligible[tp], key=lambda m: (len(owned[m]), m))
        owned[target].append(tp)
    _balance(owned, eligible)
    return owned


def _balance(owned: dict[str, list[TopicPartition]], eligible: Mapping[TopicPartition, list[str]]) -> None:
    """Move partitions from the fullest member to an emptier eligible one while that narrows the gap by 2+.

    Each move lowers the sum of squared counts, so the loop ends. Deterministic: members by (count, id),
    a donor's partitions in order.
    """
    while True:
        moved = False
        for donor in sorted(owned, key=lambda m: (-len(owned[m]), m)):
            best = None
            for tp in sorted(owned[donor]):
                for receiver in eligible[tp]:
                    if len(owned[donor]) - len(owned[receiver]) > 1 and (
                        best is None or (len(owned[receiver]), receiver) < (len(owned[best[1]]), best[1])
                    ):
                        best = (tp, receiver)
            if best is not None:
                tp, receiver = best
                owned[donor].remove(tp)
                owned[receiver].append(tp)
                moved = True
                break
        if not moved:
            return


def cooperative_assign(
    partitions: Iterable[TopicPartition],
    topics_of: Mapping[str, set[str]],
    previous: Mapping[str, tuple[Iterable[TopicPartition], int]],
) -> dict[str, list[TopicPartition]]:
    """The sticky assignment minus every partition that would change owner in this rebalance (KIP-429).

    A partition that other members still own (and this one does not) is left out of its new owner's share: the owner is told to
    give it up (its assignment no longer holds it), revokes it, and joins again at once; the next rebalance
    finds it owned by nobody and hands it over. So no partition is ever owned by two members at a time.
    """
    previous = {m: (list(tps), generation) for m, (tps, generation) in previous.items()}
    target = sticky_assign(partitions, topics_of, previous)
    claimed_by: dict[TopicPartition, set[str]] = {}
    for member, (tps, _) in previous.items():
        for tp in tps:
            claimed_by.setdefault(tp, set()).add(member)
    return {
        member: [tp for tp in tps if member in claimed_by.get(tp, {member})]
        for member, tps in target.items()
    }
