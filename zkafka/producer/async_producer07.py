"""AsyncProducer: the 0.7 async producer of one broker, a ``send_thread.BatchingSender`` whose batches go
through the ``event.handler`` (``DefaultEventHandler``: one MULTIPRODUCE) to the broker's SyncProducer.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from zkafka.producer.encoders import Encoder
from zkafka.producer.event_handler07 import DefaultEventHandler, EventHandler, load_handler
from zkafka.producer.send_thread import BatchingSender, CallbackHandler, QueueItem
from zkafka.producer.sync_producer07 import SyncProducer


class AsyncProducer(BatchingSender):
    """Queues events for one broker and sends them in batches from a greenlet of the creating thread."""

    def __init__(
        self,
        config: Mapping[str, Any],
        sync_producer: SyncProducer,
        encoder: Encoder,
        event_handler: EventHandler | None = None,
        callback_handler: CallbackHandler | None = None,
    ) -> None:
        self.sync_producer = sync_producer
        self.encoder = encoder
        timeout_ms = config["queue.enqueueTimeout.ms"]
        if callback_handler is None:
            callback_handler = load_handler(
                config.get("callback.handler"), config.get("callback.handler.props") or {}, "callback.handler"
            )
        if event_handler is None:
            event_handler = load_handler(
                config.get("event.handler"), config.get("event.handler.props") or {}, "event.handler"
            )
        self.event_handler = event_handler or DefaultEventHandler(config, callback_handler)
        super().__init__(
            config["queue.size"],
            config["batch.size"],
            config["queue.time"] / 1000.0,
            None if timeout_ms < 0 else timeout_ms / 1000.0,
            callback_handler,
        )

    def __repr__(self) -> str:
        return f"AsyncProducer({self.sync_producer.host}:{self.sync_producer.port})"

    def handle(self, batch: list[QueueItem]) -> None:
        self.event_handler.handle(batch, self.sync_producer, self.encoder)

    def after_close(self) -> None:
        for handler in (self.event_handler, self.callback_handler):
            if handler is not None and callable(getattr(handler, "close", None)):
                self._call(handler.close, default=None)
        self.sync_producer.close()
