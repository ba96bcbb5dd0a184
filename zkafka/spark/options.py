"""The options of the ``zkafka`` Spark source, parsed and checked once (pure).

Option names are case-insensitive, as everywhere in Spark. They are named as in Spark's Kafka source where
the concept exists. The line decides what offsets are: ``kafka.bootstrap.servers`` means the 0.8 line;
with ``zookeeper.connect`` the caller tells the line it found in ZooKeeper (``zkafka.spark.connect``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple

from zkafka.client08.topic_metadata import parse_broker_list
from zkafka.config import LINE_07, LINE_08
from zkafka.config08 import DEFAULT_FETCH_MESSAGE_MAX_BYTES
from zkafka.spark.offsets import (
    EARLIEST,
    LATEST,
    Offsets,
    TopicPartition,
    TopicPartition08,
    offsets_from_json,
    partitions_from_json,
)
from zkafka.topic_count import Whitelist

DEFAULT_FETCH_SIZE = DEFAULT_FETCH_MESSAGE_MAX_BYTES

DEFAULT_API_TIMEOUT_MS = 60000

Getter = Callable[[str], str | None]  # an option's stripped value by name, None when unset

OPTION_NAMES = (
    "kafka.bootstrap.servers",
    "zookeeper.connect",
    "subscribe",
    "subscribePattern",
    "assign",
    "startingOffsets",
    "endingOffsets",
    "maxOffsetsPerTrigger",
    "maxBytesPerTrigger",
    "minPartitions",
    "fetchSize",
    "failOnDataLoss",
    "includeHeaders",
    "zookeeper.session.timeout.ms",
    "socket.timeout.ms",
    "kafka.default.api.timeout.ms",
)


@dataclass(frozen=True)
class SourceOptions:
    """What a zkafka read is asked to do.

    ``starting`` and ``ending`` are ``"earliest"``, ``"latest"`` or explicit offsets (values may be -2/-1).
    With explicit starting offsets, subscribed partitions not listed start at earliest; with explicit ending
    offsets, only the partitions listed are read. Offsets are keyed by ``key_kind``: ``TopicPartition``
    (broker-partitions, byte offsets) on the 0.7 line, ``TopicPartition08`` (logical offsets) on the 0.8 line.
    ``api_timeout_ms`` bounds how long a read waits for a partition's leader (0.8 line).
    """

    zookeeper_connect: str | None
    subscribe: tuple[str, ...] = ()
    subscribe_pattern: Whitelist | None = None
    starting: str | Offsets = "earliest"
    ending: str | Offsets = "latest"
    max_bytes_per_trigger: int | None = None
    min_partitions: int | None = None
    fetch_size: int = DEFAULT_FETCH_SIZE
    fail_on_data_loss: bool = True
    zk_session_timeout_ms: int = 6000
    socket_timeout_ms: int = 30000
    line: str = LINE_07
    bootstrap_servers: tuple[tuple[str, int], ...] = ()
    assign: tuple[Any, ...] = ()
    max_offsets_per_trigger: int | None = None
    api_timeout_ms: int = DEFAULT_API_TIMEOUT_MS
    include_headers: bool = False

    @property
    def key_kind(self) -> type:
        return TopicPartition08 if self.line == LINE_08 else TopicPartition

    def subscribes_to(self, topic: str) -> bool:
        if self.subscribe_pattern is not None:
            return self.subscribe_pattern.is_topic_allowed(topic)
        if self.assign:
            return any(tp.topic == topic for tp in self.assign)
        return topic in self.subscribe

    def describe(self) -> str:
        if self.subscribe_pattern is not None:
            return f"topics matching {self.subscribe_pattern.regex!r}"
        if self.assign:
            return "partitions " + ",".join(map(str, self.assign))
        return "topics " + ",".join(self.subscribe)


def option_getter(options: Mapping[str, str]) -> Getter:
    """``get(name)``: an option's stripped value (None when unset), names compared case-insensitively."""
    opts = {str(k).lower(): str(v) for k, v in options.items()}

    def get(name: str) -> str | None:
        value = opts.get(name.lower())
        return value.strip() if value is not None else None

    return get


def parse_options(options: Mapping[str, str], *, streaming: bool, line: str | None = None) -> SourceOptions:
    """Check the options of a batch (``streaming=False``) or streaming read; ValueError says what is wrong.

    ``line`` is the line of the cluster behind ``zookeeper.connect`` (default 0.7);
    ``kafka.bootstrap.servers`` always means the 0.8 line.
    """
    get = option_getter(options)
    zk, servers, line = _cluster(get, line)
    kind = TopicPartition08 if line == LINE_08 else TopicPartition
    subscription = _subscription(get, kind)
    starting, ending = _offset_range(get, kind, streaming)
    for offsets in (starting, ending):
        _check_subscribed(offsets, subscription)
    max_bytes, max_offsets = _trigger_limits(get, line)

    return SourceOptions(
        zookeeper_connect=zk,
        subscribe=subscription.topics,
        subscribe_pattern=subscription.whitelist,
        starting=starting,
        ending=ending,
        max_bytes_per_trigger=max_bytes,
        min_partitions=_positive_int("minPartitions", get("minPartitions")),
        fetch_size=_positive_int("fetchSize", get("fetchSize")) or DEFAULT_FETCH_SIZE,
        fail_on_data_loss=_bool("failOnDataLoss", get("failOnDataLoss"), True),
        zk_session_timeout_ms=_positive_int(
            "zookeeper.session.timeout.ms", get("zookeeper.session.timeout.ms")
        )
        or 6000,
        socket_timeout_ms=_positive_int("socket.timeout.ms", get("socket.timeout.ms")) or 30000,
        line=line,
        bootstrap_servers=servers,
        assign=subscription.assigned,
        max_offsets_per_trigger=max_offsets,
        api_timeout_ms=_positive_int("kafka.default.api.timeout.ms", get("kafka.default.api.timeout.ms"))
        or DEFAULT_API_TIMEOUT_MS,
        include_headers=include_headers(options),
    )


def include_headers(options: Mapping[str, str]) -> bool:
    """Whether ``includeHeaders`` asks for the ``headers`` column (0.8 line)."""
    return _bool("includeHeaders", option_getter(options)("includeHeaders"), False)


def _cluster(get: Getter, line: str | None) -> tuple[str | None, tuple[tuple[str, int], ...], str]:
    """``(zookeeper.connect, bootstrap servers, line)``: exactly one way to reach the cluster."""
    zk, bootstrap = get("zookeeper.connect"), get("kafka.bootstrap.servers")
    if zk and bootstrap:
        raise ValueError("set only one of the options 'kafka.bootstrap.servers' and 'zookeeper.connect'")
    if not zk and not bootstrap:
        raise ValueError(
            "option 'zookeeper.connect' is required (host:port[,host:port][/chroot]), or "
            "'kafka.bootstrap.servers' (host:port,... of 0.8 brokers)"
        )
    servers: tuple[tuple[str, int], ...] = ()
    if bootstrap:
        if line == LINE_07:
            raise ValueError("option 'kafka.bootstrap.servers' is for the 0.8 line; use 'zookeeper.connect'")
        line = LINE_08
        try:
            servers = tuple(parse_broker_list(bootstrap))
        except ValueError as exc:
            raise ValueError(f"option 'kafka.bootstrap.servers': {exc}") from None
    return zk, servers, line or LINE_07


class _Subscription(NamedTuple):
    """What to read, set by exactly one of ``subscribe``, ``subscribePattern`` and ``assign``."""

    topics: tuple[str, ...] = ()
    whitelist: Whitelist | None = None
    assigned: tuple[Any, ...] = ()


def _subscription(get: Getter, kind: type) -> _Subscription:
    subscribe, pattern, assign_json = get("subscribe"), get("subscribePattern"), get("assign")
    if [subscribe, pattern, assign_json].count(None) != 2:
        raise ValueError(
            "set exactly one of the options 'subscribe' (a comma list), 'subscribePattern' and 'assign' (JSON)"
        )
    if subscribe is not None:
        topics = tuple(dict.fromkeys(t.strip() for t in subscribe.split(",") if t.strip()))
        if not topics:
            raise ValueError("option 'subscribe' names no topic")
        return _Subscription(topics=topics)
    if pattern is not None:
        try:
            return _Subscription(whitelist=Whitelist(pattern))
        except ValueError as exc:
            raise ValueError(f"option 'subscribePattern': {exc}") from None
    try:
        return _Subscription(assigned=tuple(partitions_from_json(assign_json, kind)))
    except ValueError as exc:
        raise ValueError(f"option 'assign': {exc}") from None


def _offset_range(get: Getter, kind: type, streaming: bool) -> tuple[str | Offsets, str | Offsets]:
    """``(startingOffsets, endingOffsets)``; a batch read must not start at latest or end at earliest."""
    starting = _offsets_option("startingOffsets", get("startingOffsets") or "earliest", kind)
    ending = _offsets_option("endingOffsets", get("endingOffsets") or "latest", kind)
    if streaming:
        if get("endingOffsets") is not None:
            raise ValueError("option 'endingOffsets' is for batch reads only")
    else:
        if starting == "latest" or (isinstance(starting, dict) and LATEST in starting.values()):
            raise ValueError("startingOffsets 'latest' (-1) makes no sense for a batch read")
        if ending == "earliest" or (isinstance(ending, dict) and EARLIEST in ending.values()):
            raise ValueError("endingOffsets 'earliest' (-2) makes no sense for a batch read")
    return starting, ending


def _check_subscribed(offsets: str | Offsets, subscription: _Subscription) -> None:
    """Explicit offsets may only name partitions the read subscribes to (or is assigned)."""
    if not isinstance(offsets, dict):
        return
    topics, whitelist, assigned = subscription
    for tp in offsets:
        if (
            (topics and tp.topic not in topics)
            or (whitelist and not whitelist.is_topic_allowed(tp.topic))
            or (assigned and tp not in assigned)
        ):
            what = (
                f"partition {tp}, which is not assigned"
                if assigned
                else f"topic {tp.topic!r}, which is not subscribed"
            )
            raise ValueError(f"offsets are given for {what}")


def _trigger_limits(get: Getter, line: str) -> tuple[int | None, int | None]:
    """``(maxBytesPerTrigger, maxOffsetsPerTrigger)``: bytes are 0.7's offsets, logical offsets 0.8's."""
    max_bytes = _positive_int("maxBytesPerTrigger", get("maxBytesPerTrigger"))
    max_offsets = _positive_int("maxOffsetsPerTrigger", get("maxOffsetsPerTrigger"))
    if line == LINE_08 and max_bytes:
        raise ValueError("option 'maxBytesPerTrigger' is for the 0.7 line; on 0.8 use 'maxOffsetsPerTrigger'")
    if line == LINE_07 and max_offsets:
        raise ValueError(
            "option 'maxOffsetsPerTrigger' is for the 0.8 line (0.7 offsets are bytes: use 'maxBytesPerTrigger')"
        )
    return max_bytes, max_offsets


def _offsets_option(name: str, value: str, kind: type) -> str | Offsets:
    if value.lower() in ("earliest", "latest"):
        return value.lower()
    try:
        return offsets_from_json(value, kind=kind)
    except ValueError as exc:  # json.JSONDecodeError is a ValueError too
        raise ValueError(f"option {name!r} must be 'earliest', 'latest' or JSON offsets: {exc}") from None


def _positive_int(name: str, value: str | None) -> int | None:
    if value is None or value == "":
        return None
    try:
        number = int(value)
    except ValueError:
        raise ValueError(f"option {name!r} must be a positive integer, got {value!r}") from None
    if number <= 0:
        raise ValueError(f"option {name!r} must be a positive integer, got {value!r}")
    return number


def _bool(name: str, value: str | None, default: bool) -> bool:
    if value is None or value == "":
        return default
    if value.lower() in ("true", "false"):
        return value.lower() == "true"
    raise ValueError(f"option {name!r} must be true or false, got {value!r}")
