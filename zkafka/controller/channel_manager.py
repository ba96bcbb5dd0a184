"""ControllerChannelManager: the controller's connections to the brokers, one queue and sender greenlet each.

As 0.8.2's ControllerChannelManager: requests to a broker go out one at a time, in the order queued, on a
blocking channel with the controller's client id (``id_<id>-host_<host>-port_<port>``); a request that fails
(the broker is unreachable, the connection dropped) is sent again on a new connection until it is answered or
the broker is removed. Responses go to the caller's callback, if any. Each broker is dialled on its end point
of the inter-broker listener, secured as that listener is (``InterBrokerSecurity``). At shutdown the senders'
greenlets end, a request under way with them (its connection closed), as Kafka's shutdown closes the
controller's connections: one waiting on a frozen broker kept its socket after the broker stopped.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import gevent
from gevent.queue import Queue

from zkafka.client08.channel import broker_channel
from zkafka.network.channel_builders import PLAINTEXT_INTER_BROKER, InterBrokerSecurity
from zkafka.utils.hub import end_greenlets
from zkafka.zk.paths08 import BrokerRegistration

log = logging.getLogger(__name__)

RETRY_BACKOFF_S = 0.3  # 0.8.2's RequestSendThread waits 300 ms before sending again
SHUTDOWN_TIMEOUT_S = 5.0  # for the senders' greenlets to end at shutdown
Callback = Callable[[Any], None]


class _BrokerSender:
    """The queue and the sender greenlet of one broker registration."""

    def __init__(
        self,
        registration: BrokerRegistration,
        client_id: str,
        socket_timeout_ms: int,
        security: InterBrokerSecurity,
    ) -> None:
        self.registration = registration
        self.queue: Queue = Queue()
        self.host, self.port = security.address(registration)
        secure = None if security.plaintext else security.secure
        self.channel = broker_channel(
            self.host, self.port, client_id, socket_timeout_ms=socket_timeout_ms, secure=secure
        )
        self.stopped = False
        self.greenlet = gevent.spawn(self._run)

    def _run(self) -> None:
        while not self.stopped:
            request, callback = self.queue.get()
            if request is None:
                break
            response = self._send(request)
            if response is not None and callback is not None:
                try:
                    callback(response)
                except Exception:
                    log.exception("controller: callback for %s failed", type(request).__name__)

    def _send(self, request: Any) -> Any:
        broker = self.registration
        while not self.stopped:
            try:
                return self.channel.request(request, retries=0)
            except (OSError, EOFError) as exc:
                self.channel.disconnect()
                log.warning(
                    "controller: %s to broker %d at %s:%d failed (%s); sending again",
                    type(request).__name__,
                    broker.id,
                    self.host,
                    self.port,
                    exc,
                )
                gevent.sleep(RETRY_BACKOFF_S)
            except Exception:
                log.exception(
                    "controller: %s to broker %d failed; dropped", type(request).__name__, broker.id
                )
                return None
        return None

    def stop(self) -> None:
        self.stopped = True
        self.queue.put((None, None))
        self.channel.close()


class ControllerChannelManager:
    """Sender greenlets per live broker; ``send`` queues a request (in order per broker) and returns at once."""

    def __init__(
        self,
        client_id: str,
        socket_timeout_ms: int = 30000,
        security: InterBrokerSecurity = PLAINTEXT_INTER_BROKER,
    ) -> None:
        self.client_id = client_id
        self.socket_timeout_ms = socket_timeout_ms
        self.security = security
        self._senders: dict[int, _BrokerSender] = {}
        self._retired: list[gevent.Greenlet] = []  # stopped senders' greenlets, maybe ending a request

    def update_brokers(self, brokers: dict[int, BrokerRegistration]) -> None:
        """Follow the live brokers: a sender for each new registration, the others stopped."""
        for broker_id in list(self._senders):
            sender = self._senders[broker_id]
            if brokers.get(broker_id) != sender.registration:
                sender.stop()
                del self._senders[broker_id]
                self._retired = [g for g in self._retired if not g.dead] + [sender.greenlet]
        for broker_id, registration in brokers.items():
            if broker_id not in self._senders:
                self._senders[broker_id] = _BrokerSender(
                    registration, self.client_id, self.socket_timeout_ms, self.security
                )

    def send(self, broker_id: int, request: Any, callback: Callback | None = None) -> bool:
        """Queue ``request`` for the broker; False if it is not a live broker."""
        sender = self._senders.get(broker_id)
        if sender is None:
            return False
        sender.queue.put((request, callback))
        return True

    def pending(self) -> int:
        """Requests queued and not yet sent (the one being sent excluded)."""
        return sum(sender.queue.qsize() for sender in self._senders.values())

    def shutdown(self) -> None:
        """Stop every sender and end its greenlet, and those of senders stopped before."""
        senders = list(self._senders.values())
        for sender in senders:
            sender.stop()
        self._senders.clear()
        greenlets, self._retired = [sender.greenlet for sender in senders] + self._retired, []
        end_greenlets(greenlets, SHUTDOWN_TIMEOUT_S)
