"""Message format versions as ``log.message.format.version`` and ``message.format.version`` name them.

Kafka's values are its release versions, with ``-IVn`` forms for the protocol steps inside a release
(``0.8.2``, ``0.10.0-IV1``, ``0.11.0``, ``2.2``, ``3.4-IV0``); a longer release number names the same step
(``0.10.2.1`` is ``0.10.2``, ``2.2.1`` is ``2.2``). What the log stores follows from the version: before
``0.10.0`` magic 0, before ``0.11.0`` magic 1 (timestamps), from ``0.11.0`` magic 2 (record batches).
"""

from __future__ import annotations

from zkafka.errors import InvalidConfigError

# Each release with its inner protocol steps (IV0, IV1, ...), in order.
_RELEASES = (
    ("0.8.0", 0), ("0.8.1", 0), ("0.8.2", 0), ("0.9.0", 0),
    ("0.10.0", 2), ("0.10.1", 3), ("0.10.2", 1), ("0.11.0", 3),
    ("1.0", 1), ("1.1", 1), ("2.0", 2), ("2.1", 3), ("2.2", 2), ("2.3", 2), ("2.4", 2), ("2.5", 1),
    ("2.6", 1), ("2.7", 3), ("2.8", 2), ("3.0", 2), ("3.1", 1), ("3.2", 1), ("3.3", 4), ("3.4", 1),
)  # fmt: skip
_MAGIC_1_FROM = "0.10.0"
_MAGIC_2_FROM = "0.11.0"
_ORDER = {name: i for i, (name, _) in enumerate(_RELEASES)}
_STEPS = {name: steps for name, steps in _RELEASES}


def _release(text: str) -> tuple[str, int | None]:
    """``(release, step)`` of a version string (step None: the release's last); ValueError if unknown."""
    version, _, step = text.strip().partition("-")
    parts = version.split(".")
    release = ".".join(parts[:3] if parts[0] == "0" else parts[:2])
    if release not in _STEPS:
        raise ValueError(text)
    if not step:
        return release, None
    if not step.startswith("IV") or not step[2:].isdigit() or int(step[2:]) >= _STEPS[release]:
        raise ValueError(text)
    return release, int(step[2:])


def parse_format_version(key: str, text: str) -> str:
    """``text`` if it is a version Kafka accepts for ``key``; InvalidConfigError naming the key otherwise."""
    try:
        _release(text)
    except ValueError:
        raise InvalidConfigError(
            f"{key}: {text!r} is not a Kafka version (0.8.2, 0.9.0, 0.10.0, 0.10.2, 0.11.0, 1.0, 2.2, 3.4,"
            " ... optionally with -IVn)"
        ) from None
    return text.strip()


def version_order(version: str) -> tuple[int, int]:
    """A sort key of Kafka versions: (release, step), a release without a step counting as its last."""
    release, step = _release(version)
    return _ORDER[release], _STEPS[release] - 1 if step is None else step


def magic_of(version: str) -> int:
    """The message format (magic byte) a log of ``version`` stores: 0, 1 or 2."""
    order = _ORDER[_release(version)[0]]
    if order >= _ORDER[_MAGIC_2_FROM]:
        return 2
    return 1 if order >= _ORDER[_MAGIC_1_FROM] else 0


def default_format_version(inter_broker_protocol_version: str | None) -> str:
    """``log.message.format.version`` when it is absent: ``0.8.2`` (magic 0, as a 0.8.2 broker stores) unless
    ``inter.broker.protocol.version`` names 0.10.0 or later, whose format it then is."""
    if inter_broker_protocol_version is None or magic_of(inter_broker_protocol_version) == 0:
        return "0.8.2"
    return inter_broker_protocol_version
