"""Configuration of both lines: the ``.properties`` loader, typed key definitions, and which line a broker's
properties are.

Each line's keys and defaults are its own module's (``config07``, ``config08``). Unknown keys are warned
about; a value of the wrong type or out of range raises InvalidConfigError naming the key, so a bad file stops
the start.

Which line a ``server.properties`` belongs to is decided by the keys only one line knows: ``brokerid`` and
``zk.connect`` are 0.7's, ``broker.id``, ``zookeeper.connect`` and ``log.dirs`` are 0.8's. ``log.dir`` alone
decides nothing (0.8 accepts it too). A file naming keys of both lines is refused, and so is ``log.dir``
together with ``log.dirs`` (0.8 would silently ignore one). A file with none of them is read as 0.7.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from zkafka.errors import InvalidConfigError

HOUR_MS = 60 * 60 * 1000  # the *.hours keys in milliseconds

log = logging.getLogger(__name__)

INT_MAX = 2**31 - 1
LONG_MAX = 2**63 - 1

LINE_07 = "0.7"
LINE_08 = "0.8"

_KEYS_07 = ("brokerid", "zk.connect")
_KEYS_08 = ("broker.id", "zookeeper.connect", "log.dirs")


def detect_broker_line(props: Mapping[str, str]) -> str:
    """``LINE_07`` or ``LINE_08`` for a broker's properties; InvalidConfigError if they mix the two lines."""
    old = [key for key in _KEYS_07 if key in props]
    new = [key for key in _KEYS_08 if key in props]
    if "log.dir" in props and "log.dirs" in props:
        old.append("log.dir")
    if old and new:
        raise InvalidConfigError(
            f"the properties mix 0.7 keys ({', '.join(old)}) with 0.8 keys ({', '.join(new)}); use one line's names"
        )
    return LINE_08 if new else LINE_07


# -- the .properties file format ---------------------------------------------------------------------------

_ESCAPES = {"t": "\t", "n": "\n", "r": "\r", "f": "\f"}


def parse_properties(text: str) -> dict[str, str]:
    """Parse Java ``.properties`` text: ``#``/``!`` comments, ``=``/``:``/space separators, ``\\`` continuations."""
    props: dict[str, str] = {}
    logical: list[str] = []
    for raw in text.splitlines():
        line = raw.lstrip() if not logical else raw.lstrip()
        if not logical and (not line or line[0] in "#!"):
            continue
        if _ends_with_continuation(line):
            logical.append(line[:-1])
            continue
        logical.append(line)
        key, value = _split_property("".join(logical))
        logical = []
        props[key] = value
    if logical:
        key, value = _split_property("".join(logical))
        props[key] = value
    return props


def _ends_with_continuation(line: str) -> bool:
    backslashes = len(line) - len(line.rstrip("\\"))
    return backslashes % 2 == 1


def _split_property(line: str) -> tuple[str, str]:
    key_chars: list[str] = []
    i = 0
    while i < len(line):
        ch = line[i]
        if ch == "\\" and i + 1 < len(line):
            key_chars.append(_ESCAPES.get(line[i + 1], line[i + 1]))
            i += 2
            continue
        if ch in "=: \t\f":
            break
        key_chars.append(ch)
        i += 1
    rest = line[i:].lstrip(" \t\f")
    if rest[:1] in ("=", ":"):
        rest = rest[1:].lstrip(" \t\f")
    return "".join(key_chars), _unescape(rest)


def _unescape(text: str) -> str:
    if "\\" not in text:
        return text
    out: list[str] = []
    i = 0
    while i < len(text):
        ch = text[i]
        if ch == "\\" and i + 1 < len(text):
            nxt = text[i + 1]
            if nxt == "u" and i + 6 <= len(text):
                out.append(chr(int(text[i + 2 : i + 6], 16)))
                i += 6
                continue
            out.append(_ESCAPES.get(nxt, nxt))
            i += 2
            continue
        out.append(ch)
        i += 1
    return "".join(out)


def load_properties(path: str | os.PathLike[str]) -> dict[str, str]:
    """Read a ``.properties`` file."""
    with open(path, encoding="utf-8") as handle:
        return parse_properties(handle.read())


def parse_overrides(items: Iterable[str]) -> dict[str, str]:
    """``key=value`` strings (from ``--override``) as a dict."""
    out = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise InvalidConfigError(f"override {item!r} is not of the form key=value")
        out[key.strip()] = value.strip()
    return out


# -- value types -------------------------------------------------------------------------------------------


def parse_int(key: str, text: str, low: int = -(2**31), high: int = INT_MAX) -> int:
    try:
        value = int(text.strip())
    except ValueError:
        raise InvalidConfigError(f"{key}: {text!r} is not an integer") from None
    if not low <= value <= high:
        raise InvalidConfigError(f"{key}: {value} is not in the range [{low}, {high}]")
    return value


def parse_bool(key: str, text: str) -> bool:
    value = text.strip()
    if value not in ("true", "false"):
        raise InvalidConfigError(f"{key}: {text!r} is not true or false")
    return value == "true"


def parse_topic_map(key: str, text: str) -> dict[str, int]:
    """The per-topic CSV form ``topic1:val1,topic2:val2``; values must be > 0, malformed items are skipped."""
    out: dict[str, int] = {}
    for item in filter(None, (part.strip() for part in text.split(","))):
        topic, sep, value = item.rpartition(":")
        try:
            number = int(value)
        except ValueError:
            number = 0
        if not sep or not topic or number <= 0:
            log.warning("%s: skipping malformed item %r (expected topic:positive-number)", key, item)
            continue
        out[topic] = number
    return out


def parse_props_list(text: str) -> dict[str, str]:
    """The ``k1=v1,k2=v2`` form of ``event.handler.props`` and ``callback.handler.props``."""
    return parse_overrides(part for part in text.split(",") if part.strip())


@dataclass(frozen=True)
class Key:
    """One configuration key: its property name, a parser, and a default (a value, or a function of the config)."""

    name: str
    parse: Callable[[str, str], Any]
    default: Any = None
    required: bool = False


def int_key(name: str, default: Any, low: int = -(2**31), high: int = INT_MAX, required: bool = False) -> Key:
    return Key(name, lambda k, v: parse_int(k, v, low, high), default, required)


def long_key(name: str, default: Any, low: int = -(2**63), required: bool = False) -> Key:
    return Key(name, lambda k, v: parse_int(k, v, low, LONG_MAX), default, required)


def str_key(name: str, default: Any = None, required: bool = False) -> Key:
    return Key(name, lambda k, v: v.strip(), default, required)


def bool_key(name: str, default: bool) -> Key:
    return Key(name, parse_bool, default)


def map_key(name: str) -> Key:
    return Key(name, parse_topic_map, {})


def parse_float(key: str, text: str, low: float = float("-inf"), high: float = float("inf")) -> float:
    try:
        value = float(text.strip())
    except ValueError:
        raise InvalidConfigError(f"{key}: {text!r} is not a number") from None
    if not low <= value <= high:
        raise InvalidConfigError(f"{key}: {value} is not in the range [{low}, {high}]")
    return value


def float_key(name: str, default: Any, low: float = float("-inf"), high: float = float("inf")) -> Key:
    return Key(name, lambda k, v: parse_float(k, v, low, high), default)


def choice_key(name: str, default: str, choices: tuple[str, ...]) -> Key:
    """A string key whose value must be one of ``choices``."""

    def parse(key: str, text: str) -> str:
        value = text.strip()
        if value not in choices:
            raise InvalidConfigError(f"{key}: {text!r} is not one of {', '.join(choices)}")
        return value

    return Key(name, parse, default)


def csv_key(name: str, default: Any = (), required: bool = False) -> Key:
    """A comma-separated list (blank items dropped), as Kafka's ``parseCsvList``."""
    return Key(name, lambda k, v: [item.strip() for item in v.split(",") if item.strip()], default, required)


class Config(Mapping[str, Any]):
    """Typed values of one kind of configuration, read by their property names: ``config["log.dir"]``.

    Attribute access with dots as underscores also works: ``config.log_dir``.
    """

    keys: dict[str, Key] = {}
    kind = "config"

    def __init__(self, props: Mapping[str, str] | None = None, **overrides: Any) -> None:
        raw = {k: str(v) for k, v in (props or {}).items()}
        raw.update({k.replace("_", "."): str(v) for k, v in overrides.items()})
        self.raw = raw
        self._values: dict[str, Any] = {}
        for name in raw:
            if name not in self.keys and not name.startswith("listener.name."):  # per-listener keys: read raw
                log.warning("unknown %s key %s (ignored)", self.kind, name)
        for key in self.keys.values():
            if key.name in raw:
                self._values[key.name] = key.parse(key.name, raw[key.name])
            elif key.required:
                raise InvalidConfigError(f"{key.name}: required {self.kind} key is missing")
        for key in self.keys.values():
            if key.name not in self._values:
                self._values[key.name] = key.default(self) if callable(key.default) else key.default
        self.validate()

    @classmethod
    def from_file(cls, path: str | os.PathLike[str], overrides: Mapping[str, str] | None = None) -> Config:
        props = load_properties(path)
        props.update(overrides or {})
        return cls(props)

    def validate(self) -> None:
        """Checks across keys; subclasses raise InvalidConfigError naming the key."""

    def with_overrides(self, **overrides: Any) -> Config:
        """A copy with some keys replaced (underscores stand for dots in the names)."""
        return type(self)(self.raw, **overrides)

    def __getitem__(self, name: str) -> Any:
        return self._values[name]

    def __iter__(self):
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)

    def __getattr__(self, attr: str) -> Any:
        name = attr.replace("_", ".")
        values = self.__dict__.get("_values", {})
        if name in values:
            return values[name]
        raise AttributeError(attr)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.raw!r})"


def key_table(*keys: Key) -> dict[str, Key]:
    return {key.name: key for key in keys}


# zkafka's own key on both lines, for brokers and ZooKeeper consumers: serve Prometheus metrics on this port
# (0: any free port; unset: no metrics).
METRICS_PORT = int_key("metrics.port", None, 0, 65535)
