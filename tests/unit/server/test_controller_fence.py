"""ControllerFence: a controller request is obeyed only when ZooKeeper names its controller and epoch."""

from __future__ import annotations

from zkafka.server.controller_fence import ControllerFence


class ZooKeeperSays:
    """What ``/controller`` and ``/controller_epoch`` hold, and how often the fence read them."""

    def __init__(self, controller_id: int, epoch: int) -> None:
        self.now = (controller_id, epoch)
        self.reads = 0

    def __call__(self) -> tuple[int, int]:
        self.reads += 1
        return self.now


def test_the_controller_zookeeper_names_is_obeyed_and_read_once_per_reign():
    zk = ZooKeeperSays(1, 3)
    fence = ControllerFence(zk)
    assert fence.admits(1, 3) and fence.admits(1, 3) and zk.reads == 1
    zk.now = (2, 4)  # a new controller's first request comes before any watch could tell the broker
    assert fence.admits(2, 4) and zk.reads == 2
    assert not fence.admits(1, 3) and zk.reads == 2  # the old controller's epoch: refused without a read


def test_pairs_zookeeper_does_not_back_are_refused_and_move_nothing():
    zk = ZooKeeperSays(1, 3)
    fence = ControllerFence(zk)
    for controller_id, epoch in ((999, 1000), (999, 3), (1, 4), (1, 2)):
        assert not fence.admits(controller_id, epoch)
    assert (fence.controller_id, fence.epoch) == (1, 3) and fence.admits(1, 3)


def test_a_read_that_lags_what_the_fence_knows_never_lowers_its_epoch():
    zk = ZooKeeperSays(2, 4)
    fence = ControllerFence(zk)
    assert fence.admits(2, 4)
    zk.now = (1, 3)
    assert not fence.admits(1, 5) and (fence.controller_id, fence.epoch) == (2, 4)
