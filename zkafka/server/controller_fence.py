"""ControllerFence: the 0.8 broker obeys LeaderAndIsr, StopReplica and UpdateMetadata only from the controller
that ZooKeeper names (a concept of the 0.8 line only).

0.8.2 compared a request's controller epoch with the highest it had seen, so anyone who could reach the port
could send a made-up higher epoch: obeyed (a StopReplica deleting a partition's log), and from then on every
request of the real controller was "stale". Here a request is obeyed when its (controller id, controller
epoch) is the pair last read from ``/controller`` and ``/controller_epoch``; an older epoch is refused at once;
any other pair (a controller elected since: its requests can arrive before this broker hears of it) makes the
fence read both znodes again, after a sync, and obey only what ZooKeeper says.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from zkafka.zk.client import get_data
from zkafka.zk.paths08 import CONTROLLER_EPOCH_PATH, CONTROLLER_PATH, parse_controller, parse_controller_epoch

log = logging.getLogger(__name__)

NO_CONTROLLER = (-1, -1)


class ControllerFence:
    """The controller (id, epoch) this broker obeys, checked against ZooKeeper through ``read_controller``."""

    def __init__(self, read_controller: Callable[[], tuple[int, int]]) -> None:
        self.read_controller = read_controller
        self.controller_id, self.epoch = NO_CONTROLLER

    def admits(self, controller_id: int, epoch: int) -> bool:
        """Whether a request from ``controller_id`` with ``epoch`` comes from the controller ZooKeeper names."""
        if epoch < self.epoch:
            return False
        if (controller_id, epoch) != (self.controller_id, self.epoch):
            current_id, current_epoch = self.read_controller()
            if current_epoch >= self.epoch:
                self.controller_id, self.epoch = current_id, current_epoch
        return (controller_id, epoch) == (self.controller_id, self.epoch)


def zookeeper_controller(client: Any) -> Callable[[], tuple[int, int]]:
    """``read_controller`` for a fence: ``/controller``'s broker id and ``/controller_epoch`` as ZooKeeper has
    them now (-1 for a znode that does not exist)."""

    def read() -> tuple[int, int]:
        client.sync(CONTROLLER_EPOCH_PATH)  # the ensemble's latest, not a lagging server's
        epoch = get_data(client, CONTROLLER_EPOCH_PATH)
        controller = get_data(client, CONTROLLER_PATH)
        return (
            -1 if controller is None else parse_controller(controller),
            -1 if epoch is None else parse_controller_epoch(epoch),
        )

    return read
