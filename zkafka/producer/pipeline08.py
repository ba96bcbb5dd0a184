"""Pipelined produce requests: ``max.in.flight.requests.per.connection`` answers awaited per leader at once.

0.8.2's Scala producer waits for each Produce answer before it sends the next request (one in flight per
broker: with acks 1 or -1 a request costs a round trip). 0.8.2's new producer (KafkaProducer) keeps up to
``max.in.flight.requests.per.connection`` requests unanswered on each connection and pairs every answer
with its request by correlation id. ``PipelinedSender08`` does the same for Producer08 when that property is
above 1 and acks is not 0 (acks 0 has no answer, so requests already stream): ``submit`` writes a leader's
request once fewer than the limit of that connection's requests wait for an answer, reading the oldest
answer first when they do not. Answers come back in request order (a broker serves one request of a
connection at a time), each checked against its request's correlation id by the channel.

A message counts as acknowledged only once its request's answer says so. What an answer refuses (a partition
error, an answer missing a partition) and everything in flight on a connection that failed (its answers
are lost; the broker may have appended some, as after a timeout of the one-at-a-time producer) is sent
again after ``retry.backoff.ms`` and a metadata refresh, ``message.send.max.retries`` times; what is still
refused then is reported to ``on_failure`` as FailedToSendMessageError with its count. As Kafka documents for
more than one request in flight: a retried request can land after a later one, so messages of one
partition may be stored out of send order when a retry happens.
"""

from __future__ import annotations

import logging
import time
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from typing import NamedTuple

import gevent

from zkafka.client08.api_versions import version_for
from zkafka.errors import KafkaError
from zkafka.network.client import BlockingChannel
from zkafka.producer.errors import FailedToSendMessageError
from zkafka.producer.event_handler08 import (
    DefaultEventHandler08,
    Outgoing,
    failed_partitions,
    message_count,
)
from zkafka.protocol.api_keys import PRODUCE

log = logging.getLogger(__name__)


class _InFlight(NamedTuple):
    """A request written and not yet answered: its channel, its messages by partition, retries left."""

    channel: BlockingChannel
    groups: Mapping[tuple[str, int], list[Outgoing]]
    retries: int


class PipelinedSender08:
    """Up to ``max_in_flight`` unanswered Produce requests per leader (see the module docstring).

    ``on_failure(error)`` is told of each lot of messages given up on (``error.undelivered`` of them)."""

    def __init__(
        self,
        handler: DefaultEventHandler08,
        max_in_flight: int,
        on_failure: Callable[[FailedToSendMessageError], None],
    ) -> None:
        self.handler = handler
        self.max_in_flight = max_in_flight
        self.on_failure = on_failure
        self._in_flight: dict[int, deque[_InFlight]] = {}  # broker id -> requests, oldest first
        self._retry: list[tuple[list[Outgoing], int]] = []  # (messages, retries left) to send again
        self._retry_at = 0.0  # monotonic time the retries may go (after retry.backoff.ms)

    @property
    def in_flight(self) -> int:
        """Requests written and not yet answered."""
        return sum(map(len, self._in_flight.values()))

    def submit(self, messages: Sequence[Outgoing]) -> None:
        """Write the requests of ``messages`` (one per leader) once each leader's connection has room; messages
        with no leader now wait for the retry."""
        if self._retry:
            self._send_retries(wait=False)
        self.handler.refresh_if_due(messages)
        self._dispatch(messages, self.handler.max_retries)

    def flush(self) -> None:
        """Read every outstanding answer and send again what they refused, until each message is acknowledged
        or given up on."""
        while self._in_flight or self._retry:
            for broker_id in list(self._in_flight):
                while broker_id in self._in_flight:
                    self._complete_oldest(broker_id)
            if self._retry:
                self._send_retries(wait=True)

    # -- internals -----------------------------------------------------------------------------------------

    def _dispatch(self, messages: Sequence[Outgoing], retries: int) -> None:
        handler = self.handler
        collated, unplaced = handler.collate(messages)
        if unplaced:
            self._failed(unplaced, retries)
        for broker_id, groups in collated.items():
            waiting = self._in_flight.get(broker_id)
            while waiting is not None and len(waiting) >= self.max_in_flight:
                self._complete_oldest(broker_id)
                waiting = self._in_flight.get(broker_id)
            try:
                channel = handler.pool.get(broker_id)
                if waiting and waiting[0].channel is not channel:
                    self._fail_connection(broker_id)  # the broker moved: its old channel was closed
                channel.send(handler.produce_request(groups, version_for(channel, PRODUCE)))
            except (KafkaError, OSError) as exc:
                # The channel dropped the connection: the answers to its earlier requests are lost too.
                log.warning("producing to broker %d failed: %s", broker_id, exc)
                self._fail_connection(broker_id)
                self._failed([m for group in groups.values() for m in group], retries)
                continue
            self._in_flight.setdefault(broker_id, deque()).append(_InFlight(channel, groups, retries))

    def _complete_oldest(self, broker_id: int) -> None:
        """Read the answer to the oldest request to ``broker_id``; what it refuses goes to the retry."""
        waiting = self._in_flight[broker_id]
        request = waiting[0]
        try:
            response = request.channel.receive()
        except (KafkaError, OSError, RuntimeError) as exc:
            log.warning("the answer from broker %d failed: %s", broker_id, exc)
            self._fail_connection(broker_id)
            return
        waiting.popleft()
        if not waiting:
            del self._in_flight[broker_id]
        failed = failed_partitions(list(request.groups), response)
        if failed:
            self._failed([m for key in failed for m in request.groups[key]], request.retries)

    def _fail_connection(self, broker_id: int) -> None:
        """Every request in flight to ``broker_id`` failed (its connection was dropped)."""
        for request in self._in_flight.pop(broker_id, ()):
            self._failed([m for group in request.groups.values() for m in group], request.retries)

    def _failed(self, messages: list[Outgoing], retries: int) -> None:
        if retries > 0:
            if not self._retry:
                self._retry_at = time.monotonic() + self.handler.retry_backoff
            self._retry.append((messages, retries - 1))
            return
        if self.handler.idempotence is not None:
            self.handler.idempotence.reset()
        undelivered = message_count(messages)
        topics = sorted({m.topic for m in messages})
        self.on_failure(
            FailedToSendMessageError(
                f"{undelivered} messages to {', '.join(topics)} not delivered after "
                f"{self.handler.max_retries} retries",
                undelivered=undelivered,
            )
        )

    def _send_retries(self, wait: bool) -> None:
        """Send the refused messages again once ``retry.backoff.ms`` has passed (``wait``: sleep until then)."""
        delay = self._retry_at - time.monotonic()
        if delay > 0:
            if not wait:
                return
            gevent.sleep(delay)
        retry, self._retry = self._retry, []
        count = sum(message_count(messages) for messages, _ in retry)
        log.info("sending %d messages again", count)
        self.handler.refresh({m.topic for messages, _ in retry for m in messages})
        for messages, retries in retry:
            self._dispatch(messages, retries)
