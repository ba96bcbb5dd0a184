"""ownership.HeldNodes: an owner node counts as held until the watch armed with its claim fires."""

from zkafka.consumer.ownership import HeldNodes


def test_a_hold_ends_only_by_its_own_watch():
    held = HeldNodes()
    told = []
    old_token, old_fired = held.watch("/o/t/0")
    held.hold("/o/t/0", 0, old_token)
    assert held.versions(["/o/t/0"]) == {"/o/t/0": 0}
    new_token, new_fired = held.watch("/o/t/0", then=lambda: told.append("changed"))
    held.hold("/o/t/0", 3, new_token)  # released and claimed again in one transaction
    old_fired(None)  # the old node's deletion, told late: the new hold stands
    assert held.versions(["/o/t/0"]) == {"/o/t/0": 3}
    assert held.versions(["/o/t/0", "/o/t/1"]) is None  # one not held: no versions at all
    new_fired(None)
    assert held.versions(["/o/t/0"]) is None and told == ["changed"]
    held.hold("/o/t/1", 0, held.watch("/o/t/1")[0])
    held.forget(["/o/t/1"])
    assert held.versions(["/o/t/1"]) is None
