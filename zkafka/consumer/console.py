"""The console consumer (``ConsoleConsumer`` of 0.7 and 0.8.2): print the messages of a topic or a topic filter.

The line is the cluster's (told from its znodes, ``zk.line``) unless given. Both lines: ``--topic`` is used
as a whitelist regex (one stream); without a group the group is ``console-consumer-<random 0..99999>`` and
is deleted on exit; a consumer timeout ends the run normally; "Consumed N messages" goes to standard error
at the end. ``--from-beginning`` sets the reset to ``smallest`` (else ``largest``) and, in 0.7, deletes
``/consumers/<group>`` first; 0.8.2 instead refuses a group that has offsets unless
``--delete-consumer-offsets`` (which deletes it). 0.8 prints ``key<key.separator>value`` with the formatter
property ``print.key=true`` (``null`` for a null key or value). The consumer's ZooKeeper timeouts hold from
the session that tells the line on (``zk_timeouts``).
"""

from __future__ import annotations

import logging
import random
import sys
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, BinaryIO, TextIO

import gevent

from zkafka.config import LINE_07, LINE_08, Config, key_table
from zkafka.config07 import ZK_KEYS
from zkafka.config08 import ZK_KEYS_08
from zkafka.consumer.connector import BaseConsumerConnector
from zkafka.consumer.connector07 import ZookeeperConsumerConnector
from zkafka.consumer.connector08 import ZookeeperConsumerConnector08
from zkafka.consumer.stream import ConsumerTimeoutError
from zkafka.consumer.stream07 import MessageAndMetadata
from zkafka.consumer.stream08 import MessageAndMetadata08
from zkafka.errors import KafkaError
from zkafka.topic_count import Blacklist, TopicFilter, Whitelist
from zkafka.utils.process import STOP_SIGNALS
from zkafka.zk.client import gevent_handler, make_zk_client, start_zk_client
from zkafka.zk.line import cluster_line
from zkafka.zk.paths import ZKGroupDirs

if TYPE_CHECKING:
    from kazoo.client import KazooClient

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
    line: str | None = None  # "0.7" or "0.8"; None: the cluster's
    formatter_properties: dict[str, str] = field(default_factory=dict)  # 0.8: print.key, key.separator, ...
    delete_consumer_offsets: bool = False

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

    def consumer_config08(self, group: str) -> dict[str, str]:
        props = {
            "zookeeper.connect": self.zookeeper,
            "group.id": group,
            "socket.receive.buffer.bytes": str(self.socket_buffer_size),
            "fetch.message.max.bytes": str(self.fetch_size),
            "auto.commit.interval.ms": str(self.autocommit_interval_ms),
            "consumer.timeout.ms": str(self.consumer_timeout_ms),
            "auto.offset.reset": "smallest" if self.from_beginning else "largest",
        }
        props.update(self.properties)
        return props


def format_message(item: MessageAndMetadata, print_offsets: bool) -> bytes:
    """The payload and a newline; with offsets, ``topic<TAB>b-p<TAB>offset<TAB>`` before it."""
    if print_offsets:
        return f"{item.topic}\t{item.partition}\t{item.offset}\t".encode() + item.message.payload + b"\n"
    return item.message.payload + b"\n"


_TIMESTAMP_TYPES = {0: "CreateTime", 1: "LogAppendTime"}


class MessageFormatter08:
    """0.8.2's ``DefaultMessageFormatter``: ``[key<key.separator>]value<line.separator>``, ``null`` for a null
    key or value; keys only with ``print.key=true``. As later Kafka's formatter: ``print.timestamp=true``
    puts ``CreateTime:<ms>`` (``LogAppendTime:``, ``NO_TIMESTAMP``) first, ``print.headers=true``
    ``k1:v1<headers.separator>k2:v2`` (``NO_HEADERS``) before the key, each followed by ``key.separator``."""

    def __init__(self, properties: dict[str, str], print_offsets: bool = False) -> None:
        def flag(name: str) -> bool:
            return properties.get(name, "false").strip().lower() == "true"

        self.print_key = flag("print.key")
        self.print_timestamp = flag("print.timestamp")
        self.print_headers = flag("print.headers")
        self.headers_separator = properties.get("headers.separator", ",").encode()
        self.key_separator = properties.get("key.separator", "\t").encode()
        self.line_separator = properties.get("line.separator", "\n").encode()
        self.print_offsets = print_offsets

    def __call__(self, item: MessageAndMetadata08) -> bytes:
        parts = [f"{item.topic}\t{item.partition}\t{item.offset}\t".encode()] if self.print_offsets else []
        if self.print_timestamp:
            kind = _TIMESTAMP_TYPES.get(getattr(item, "timestamp_type", -1))
            parts += [f"{kind}:{item.timestamp}".encode() if kind else b"NO_TIMESTAMP", self.key_separator]
        if self.print_headers:
            headers = getattr(item, "headers", ())
            shown = [k.encode() + b":" + (b"null" if v is None else v) for k, v in headers]
            parts += [self.headers_separator.join(shown) if shown else b"NO_HEADERS", self.key_separator]
        if self.print_key:
            parts += [b"null" if item.key is None else item.key, self.key_separator]
        parts += [b"null" if item.message is None else item.message, self.line_separator]
        return b"".join(parts)


# The ZooKeeper session and connection timeout keys of each line's consumer config.
_ZK_TIMEOUT_KEYS = {
    LINE_08: ("zookeeper.session.timeout.ms", "zookeeper.connection.timeout.ms"),
    LINE_07: ("zk.sessiontimeout.ms", "zk.connectiontimeout.ms"),
}


class _ZooKeeperTimeouts(Config):
    """The ZooKeeper keys of both lines' consumer configs, with their defaults."""

    kind = "consumer"
    keys = key_table(*ZK_KEYS, *ZK_KEYS_08)


def zk_timeouts(properties: Mapping[str, str], line: str | None = None) -> tuple[int, int]:
    """The ZooKeeper session and connection timeouts (ms) of a consumer's ``properties``, ``line``'s keys (None:
    not known yet, 0.8's unless only 0.7's are given): 6 s, the connection timeout the session's by default; a
    bad value fails naming the key."""
    if line is None:
        given = [name for name, keys in _ZK_TIMEOUT_KEYS.items() if any(key in properties for key in keys)]
        line = given[0] if given else LINE_08
    keys = _ZK_TIMEOUT_KEYS[line]
    config = _ZooKeeperTimeouts({key: properties[key] for key in keys if key in properties})
    return config[keys[0]], config[keys[1]]


@contextmanager
def zk_session(
    zookeeper: str, properties: Mapping[str, str] | None = None, line: str | None = None
) -> Iterator[KazooClient]:
    """A ZooKeeper session with the timeouts of the consumer's ``properties`` (``zk_timeouts``)."""
    session_ms, connection_ms = zk_timeouts(properties or {}, line)
    zk = make_zk_client(zookeeper, session_ms, connection_ms, handler=gevent_handler())
    start_zk_client(zk)
    try:
        yield zk
    finally:
        zk.stop()
        zk.close()


def delete_group(zookeeper: str, group: str, properties: Mapping[str, str] | None = None) -> None:
    """Remove ``/consumers/<group>`` and everything under it."""
    with zk_session(zookeeper, properties) as zk:
        zk.delete(ZKGroupDirs(group).consumer_dir, recursive=True)


def _prepare(options: ConsoleOptions, group: str) -> tuple[BaseConsumerConnector, Callable[[Any], bytes]]:
    """Pick the line, apply the line's --from-beginning rule, and make the connector and the formatter."""
    with zk_session(options.zookeeper, options.properties, options.line) as zk:
        line = options.line or cluster_line(zk, group)
        has_offsets = zk.exists(ZKGroupDirs(group).consumer_dir + "/offsets") is not None
        if line == LINE_08 and options.from_beginning and has_offsets and not options.delete_consumer_offsets:
            raise KafkaError(
                f"found previous offset information for group {group}; "
                "use --delete-consumer-offsets to delete previous offsets metadata"
            )
        if options.delete_consumer_offsets or (line == LINE_07 and options.from_beginning):
            zk.delete(ZKGroupDirs(group).consumer_dir, recursive=True)
    if line == LINE_08:
        formatter = MessageFormatter08(options.formatter_properties, options.print_offsets)
        return ZookeeperConsumerConnector08(options.consumer_config08(group)), formatter
    connector = ZookeeperConsumerConnector(options.consumer_config(group))
    return connector, lambda item: format_message(item, options.print_offsets)


def run(
    options: ConsoleOptions,
    out: BinaryIO | None = None,
    err: TextIO | None = None,
    on_start: Callable[[BaseConsumerConnector], None] | None = None,
) -> int:
    """Consume and print until ``max_messages``, a consumer timeout, SIGINT/SIGTERM/SIGHUP or a broken pipe.

    Returns the number of messages printed.
    """
    out = out if out is not None else sys.stdout.buffer
    err = err if err is not None else sys.stderr
    topic_filter = options.topic_filter()
    group = (
        options.group or options.properties.get("group.id") or f"console-consumer-{random.randint(0, 99999)}"
    )
    connector, formatter = _prepare(options, group)
    handlers = [gevent.signal_handler(s, gevent.spawn, connector.shutdown) for s in STOP_SIGNALS]
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
            out.write(formatter(item))
            out.flush()
            count += 1
    except BrokenPipeError:
        pass
    finally:
        for handler in handlers:
            handler.cancel()
        connector.shutdown()
        if options.group is None and "group.id" not in options.properties:
            try:
                delete_group(options.zookeeper, group, options.properties)
            except Exception as exc:
                log.warning("could not delete the consumer group %s: %r", group, exc)
        print(f"Consumed {count} messages", file=err)
    return count
