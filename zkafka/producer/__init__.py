"""The producers: 0.7's ``Producer`` (sync or async, ZooKeeper or broker.list), 0.8's ``Producer08`` (sync or
async, partition leaders from Metadata requests, acks) and the pieces they are built from.

Quick start::

    from zkafka.producer import Producer

    with Producer({"zk.connect": "localhost:2181", "serializer.class": "kafka.serializer.StringEncoder"}) as p:
        p.send("events", ["hello", "world"], key="user-42")

A Producer belongs to the thread that created it and runs its background work on that thread's gevent hub;
see ``zkafka.producer.producer07`` for how it behaves in plain scripts, gevent programs and threads.
"""

from __future__ import annotations

from zkafka.utils import lazy_exports

# Exported names and their modules, imported on first use so that the pure modules (partitioner,
# encoders) do not pull in gevent and kazoo.
_EXPORTS = {
    "AsyncProducer": "async_producer07",
    "CallbackHandler": "send_thread",
    "DefaultEncoder": "encoders",
    "DefaultEventHandler": "event_handler07",
    "DefaultPartitioner": "partitioner",
    "EventHandler": "event_handler07",
    "FailedToSendMessageError": "errors",
    "KeyedMessage": "producer08",
    "NoBrokersForPartitionError": "errors",
    "Producer": "producer07",
    "Producer08": "producer08",
    "ProducerClosedError": "errors",
    "ProducerConnectionError": "errors",
    "ProducerData": "producer07",
    "ProducerSendError": "errors",
    "QueueFullError": "errors",
    "QueueItem": "send_thread",
    "StringEncoder": "encoders",
    "SyncProducer": "sync_producer07",
}
__all__ = sorted(_EXPORTS)

__getattr__ = lazy_exports(__name__, _EXPORTS)
