"""ControllerElection: running for controller through ``/controller`` (0.8.2's ZookeeperLeaderElector).

Brokers race to create the ephemeral ``/controller``; the losers watch it and race again when it goes. The
winner raises ``/controller_epoch`` by one (a version-checked write; ``1`` when absent), which fences off the
requests of an older controller, and takes office (``on_elected``). A lost session ends the reign
(``on_resigned``); once connected again the broker runs again.
"""

from __future__ import annotations

import logging

from kazoo.client import KazooClient, KazooState
from kazoo.exceptions import BadVersionError, KazooException, NodeExistsError, NoNodeError
from kazoo.protocol.states import WatchedEvent

from zkafka.errors import KafkaError
from zkafka.utils import now_ms
from zkafka.zk.client import get_data, session_id
from zkafka.zk.paths08 import (
    CONTROLLER_EPOCH_PATH,
    CONTROLLER_PATH,
    INITIAL_CONTROLLER_EPOCH,
    encode_controller,
    encode_controller_epoch,
    parse_controller,
    parse_controller_epoch,
)

log = logging.getLogger(__name__)


class ControllerMovedError(KafkaError):
    """Another broker became controller while this one was taking office (or it is not the controller)."""


class ControllerElection:
    """The election half of the controller; subclasses act in office (``on_elected``, ``on_resigned``)."""

    def __init__(self, broker_id: int, client: KazooClient) -> None:
        self.broker_id = broker_id
        self.client = client
        self.epoch = 0
        self.active = False
        self._closed = False
        self._session_lost = False

    def on_elected(self) -> None:
        """Called once this broker holds ``/controller`` with a new epoch."""

    def on_resigned(self) -> None:
        """Called when this broker stops being the controller."""

    def controller_id(self) -> int | None:
        """The broker id in ``/controller`` now (None when there is no controller)."""
        data = get_data(self.client, CONTROLLER_PATH)
        return None if data is None else parse_controller(data)

    # -- election --------------------------------------------------------------------------------------

    def elect(self) -> None:
        """Try to become controller; otherwise watch ``/controller`` to try again when it goes."""
        while not (self.active or self._closed):
            value = encode_controller(self.broker_id, str(now_ms())).encode()
            try:
                self.client.create(CONTROLLER_PATH, value, ephemeral=True)
            except NodeExistsError:
                try:
                    data, stat = self.client.get(CONTROLLER_PATH, watch=self._on_controller_change)
                except NoNodeError:
                    continue  # it just went: race again
                if stat.ephemeralOwner != session_id(self.client):
                    log.info(
                        "broker %d: the controller is %s", self.broker_id, data.decode("utf-8", "replace")
                    )
                    return
            self._take_office()
            return

    def _take_office(self) -> None:
        try:
            self.epoch = self._increment_epoch()
        except ControllerMovedError as exc:
            log.info("broker %d: %s", self.broker_id, exc)
            return
        self.active = True
        log.info("broker %d is the controller (epoch %d)", self.broker_id, self.epoch)
        self.on_elected()

    def _increment_epoch(self) -> int:
        while True:
            try:
                data, stat = self.client.get(CONTROLLER_EPOCH_PATH)
            except NoNodeError:
                try:
                    self.client.create(
                        CONTROLLER_EPOCH_PATH, encode_controller_epoch(INITIAL_CONTROLLER_EPOCH).encode()
                    )
                    return INITIAL_CONTROLLER_EPOCH
                except NodeExistsError:
                    continue
            epoch = parse_controller_epoch(data) + 1
            try:
                self.client.set(
                    CONTROLLER_EPOCH_PATH, encode_controller_epoch(epoch).encode(), version=stat.version
                )
                return epoch
            except BadVersionError:
                raise ControllerMovedError("the controller epoch moved while taking office") from None

    def resign(self) -> None:
        if self.active:
            log.info("broker %d resigns as controller (epoch %d)", self.broker_id, self.epoch)
        self.active = False
        self.on_resigned()

    def _on_controller_change(self, event: WatchedEvent) -> None:
        if not self._closed:
            self.client.handler.spawn(self._elect_in_background)

    def _elect_in_background(self) -> None:
        try:
            if self.client.exists(CONTROLLER_PATH, watch=self._on_controller_change) is None:
                self.elect()
        except KazooException as exc:
            # a lost connection: the session listener runs the election again once connected
            log.info("broker %d: controller election interrupted: %r", self.broker_id, exc)

    def _on_session(self, state: str) -> None:
        if state == KazooState.LOST:
            self._session_lost = True
            self.resign()
        elif state == KazooState.CONNECTED and self._session_lost:
            self._session_lost = False
            self.client.handler.spawn(self._elect_in_background)
