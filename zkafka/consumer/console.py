"""The console consumer (0.7's ``ConsoleConsumer``): print the messages of a topic or a topic filter.

0.7 rules kept: ``--topic`` is used as a whitelist regex (one stream); ``--from-beginning`` sets
``autooffset.reset=smallest`` *and* deletes ``/consumers/<group>`` before starting (else ``largest``);
without ``--group`` the group is ``console-consumer-<random 0..99999>`` and is deleted on exit. A consumer
timeout ends the run normally; "Consumed N messages" goes to standard error at the end.
"""

from __future__ import annotations

import logging
import random
import signal
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import BinaryIO, TextIO

import gevent

from zkafka.consumer.connector import ZookeeperConsumerConnector
from zkafka.consumer.stream import ConsumerTimeoutError, MessageAndMetadata
from zkafka.errors import KafkaError
from zkafka.topic_count import Blacklist, TopicFilter, Whitelist
from zkafka.zk.client import gevent_handler, make_zk_client, start_zk_client
from zkafka.zk.paths07 import ZKGroupDirs

log = logging.getLogger(__name__)


@dataclass
class ConsoleOptions:
    """The console consumer's command-line options."""

    zookeeper: str
    topic: str | None = None
    whitelist: str | None = None
    blacklist: str | None = None
    group: str | None = None
    from_beginning: bool = False
    max_messages: int | None = None
    consumer_timeout_ms: int = -1
    print_offsets: bool = False
    fetch_size: int = 1024 * 1024
    socket_buffer_size: int = 2 * 1024 * 1024
    autocommit_interval_ms: int = 10000
    skip_message_on_error: bool = False
    properties: dict[str, str] = field(default_factory=dict)

    def topic_filter(self) -> TopicFilter:
        given = [x for x in (self.topic, self.whitelist, self.blacklist) if x is not None]
        if len(given) != 1:
            raise ValueError("exactly one of --topic, --whitelist and --blacklist is required")
        if self.blacklist is not None:
            return Blacklist(self.blacklist)
        return Whitelist(self.topic if self.topic is not None else self.whitelist)

    def consumer_config(self, group: str) -> dict[str, str]:
        props = {
            "zk.connect": self.zookeeper,
            "groupid": group,
            "socket.buffersize": str(self.socket_buffer_size),
            "fetch.size": str(self.fetch_size),
            "autocommit.interval.ms": str(self.autocommit_interval_ms),
            "consumer.timeout.ms": str(self.consumer_timeout_ms),
            "autooffset.reset": "smallest" if self.from_beginning else "largest",
        }
        props.update(self.properties)
        return props


def format_message(item: MessageAndMetadata, print_offsets: bool) -> bytes:
    """The payload and a newline; with offsets, ``topic<TAB>b-p<TAB>offset<TAB>`` before it."""
    if print_offsets:
        return f"{item.topic}\t{item.partition}\t{item.offset}\t".encode() + item.message.payload + b"\n"
    return item.message.payload + b"\n"


def delete_group(zookeeper: str, group: str) -> None:
    """Remove ``/consumers/<group>`` and everything under it."""
    zk = make_zk_client(zookeeper, handler=gevent_handler())
    start_zk_client(zk)
    try:
        zk.delete(ZKGroupDirs(group).consumer_dir, recursive=True)
    finally:
        zk.stop()
        zk.close()


def run(
    options: ConsoleOptions,
    out: BinaryIO | None = None,
    err: TextIO | None = None,
    on_start: Callable[[ZookeeperConsumerConnector], None] | None = None,
) -> int:
    """Consume and print until ``max_messages``, a consumer timeout, SIGINT/SIGTERM or a broken pipe.

    Returns the number of messages printed.
    """
    out = out if out is not None else sys.stdout.buffer
    err = err if err is not None else sys.stderr
    topic_filter = options.topic_filter()
    group = options.group or f"console-consumer-{random.randint(0, 99999)}"
    if options.from_beginning:
        delete_group(options.zookeeper, group)
    connector = ZookeeperConsumerConnector(options.consumer_config(group))
    handlers = [
        gevent.signal_handler(s, gevent.spawn, connector.shutdown) for s in (signal.SIGINT, signal.SIGTERM)
    ]
    count = 0
    try:
        stream = connector.create_message_streams_by_filter(topic_filter, 1)[0]
        if on_start is not None:
            on_start(connector)
        limit = options.max_messages
        while limit is None or count < limit:
            try:
                item = next(stream)
            except (StopIteration, ConsumerTimeoutError):
                break
            except KafkaError as exc:
                if not options.skip_message_on_error:
                    raise
                log.error("skipping a message: %s", exc)
                continue
            out.write(format_message(item, options.print_offsets))
            out.flush()
            count += 1
    except BrokenPipeError:
        pass
    finally:
        for handler in handlers:
            handler.cancel()
        connector.shutdown()
        if options.group is None:
            try:
                delete_group(options.zookeeper, group)
            except Exception as exc:
                log.warning("could not delete the consumer group %s: %r", group, exc)
        print(f"Consumed {count} messages", file=err)
    return count
