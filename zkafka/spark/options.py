"""The options of the ``zkafka`` Spark source, parsed and checked once (pure).

Option names are case-insensitive, as everywhere in Spark.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from zkafka.spark.offsets import EARLIEST, LATEST, Offsets, offsets_from_json
from zkafka.topic_count import Whitelist

DEFAULT_FETCH_SIZE = 1024 * 1024

OPTION_NAMES = (
    "zookeeper.connect",
    "subscribe",
    "subscribePattern",
    "startingOffsets",
    "endingOffsets",
    "maxBytesPerTrigger",
    "minPartitions",
    "fetchSize",
    "failOnDataLoss",
    "zookeeper.session.timeout.ms",
    "socket.timeout.ms",
)


@dataclass(frozen=True)
class SourceOptions:
    """What a zkafka read is asked to do.

    ``starting`` and ``ending`` are ``"earliest"``, ``"latest"`` or explicit offsets (values may be -2/-1).
    With explicit starting offsets, subscribed partitions not listed start at earliest; with explicit ending
    offsets, only the partitions listed are read.
    """

    zookeeper_connect: str
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

    def subscribes_to(self, topic: str) -> bool:
        if self.subscribe_pattern is not None:
            return self.subscribe_pattern.is_topic_allowed(topic)
        return topic in self.subscribe

    def describe(self) -> str:
        if self.subscribe_pattern is not None:
            return f"topics matching {self.subscribe_pattern.regex!r}"
        return "topics " + ",".join(self.subscribe)


def parse_options(options: Mapping[str, str], *, streaming: bool) -> SourceOptions:
    """Check the options of a batch (``streaming=False``) or streaming read; ValueError says what is wrong."""
    opts = {str(k).lower(): str(v) for k, v in options.items()}

    def get(name: str) -> str | None:
        value = opts.get(name.lower())
        return value.strip() if value is not None else None

    zk = get("zookeeper.connect")
    if not zk:
        raise ValueError("option 'zookeeper.connect' is required (host:port[,host:port][/chroot])")
    subscribe, pattern = get("subscribe"), get("subscribePattern")
    if (subscribe is None) == (pattern is None):
        raise ValueError("set exactly one of the options 'subscribe' (a comma list) and 'subscribePattern'")
    topics: tuple[str, ...] = ()
    whitelist = None
    if subscribe is not None:
        topics = tuple(dict.fromkeys(t.strip() for t in subscribe.split(",") if t.strip()))
        if not topics:
            raise ValueError("option 'subscribe' names no topic")
    else:
        try:
            whitelist = Whitelist(pattern)
        except ValueError as exc:
            raise ValueError(f"option 'subscribePattern': {exc}") from None

    starting = _offsets_option("startingOffsets", get("startingOffsets") or "earliest")
    ending = _offsets_option("endingOffsets", get("endingOffsets") or "latest")
    if streaming:
        if get("endingOffsets") is not None:
            raise ValueError("option 'endingOffsets' is for batch reads only")
    else:
        if starting == "latest" or (isinstance(starting, dict) and LATEST in starting.values()):
            raise ValueError("startingOffsets 'latest' (-1) makes no sense for a batch read")
        if ending == "earliest" or (isinstance(ending, dict) and EARLIEST in ending.values()):
            raise ValueError("endingOffsets 'earliest' (-2) makes no sense for a batch read")
    for offsets in (starting, ending):
        if isinstance(offsets, dict):
            for tp in offsets:
                if (topics and tp.topic not in topics) or (
                    whitelist and not whitelist.is_topic_allowed(tp.topic)
                ):
                    raise ValueError(f"offsets are given for topic {tp.topic!r}, which is not subscribed")

    return SourceOptions(
        zookeeper_connect=zk,
        subscribe=topics,
        subscribe_pattern=whitelist,
        starting=starting,
        ending=ending,
        max_bytes_per_trigger=_positive_int("maxBytesPerTrigger", get("maxBytesPerTrigger")),
        min_partitions=_positive_int("minPartitions", get("minPartitions")),
        fetch_size=_positive_int("fetchSize", get("fetchSize")) or DEFAULT_FETCH_SIZE,
        fail_on_data_loss=_bool("failOnDataLoss", get("failOnDataLoss"), True),
        zk_session_timeout_ms=_positive_int(
            "zookeeper.session.timeout.ms", get("zookeeper.session.timeout.ms")
        )
        or 6000,
        socket_timeout_ms=_positive_int("socket.timeout.ms", get("socket.timeout.ms")) or 30000,
    )


def _offsets_option(name: str, value: str) -> str | Offsets:
    if value.lower() in ("earliest", "latest"):
        return value.lower()
    try:
        return offsets_from_json(value)
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
