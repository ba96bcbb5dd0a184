"""Choosing a partition from a message key, with the JVM arithmetic of 0.7's DefaultPartitioner.

The producer calls ``partition(key, n)`` with the number of candidate (broker, partition) pairs and rejects a
result outside ``[0, n)``; the partitioner itself may return a negative index, exactly as in 0.7.
"""

import importlib
import zlib
from typing import Any, Protocol

from zkafka.utils.java import java_abs, java_int_hash, java_mod, java_string_hash, kafka_abs, to_int32

JAVA_DEFAULT_PARTITIONER = "kafka.producer.DefaultPartitioner"


class Partitioner(Protocol):
    """Anything with ``partition(key, num_partitions) -> int`` (0.7's ``Partitioner`` trait)."""

    def partition(self, key: Any, num_partitions: int) -> int: ...


def key_hash(key: Any) -> int:
    """The int32 hash DefaultPartitioner uses for a key.

    ``str``, ``int`` and ``bool`` hash as on the JVM. For ``bytes``-like keys 0.7 used the array's identity
    hash, which differs on every run; here it is ``zlib.crc32`` of the bytes read as a signed int32, so the
    same key lands on the same partition from every process. Other key types are a TypeError.
    """
    if isinstance(key, str):
        return java_string_hash(key)
    if isinstance(key, bool):
        return 1231 if key else 1237
    if isinstance(key, int):
        return java_int_hash(key)
    if isinstance(key, bytes | bytearray | memoryview):
        return to_int32(zlib.crc32(key))
    raise TypeError(f"cannot hash a partition key of type {type(key).__name__}")


class DefaultPartitioner:
    """``abs(key.hashCode) % num_partitions`` with Java int semantics (may be negative for hash -2**31)."""

    def partition(self, key: Any, num_partitions: int) -> int:
        return java_mod(java_abs(key_hash(key)), num_partitions)


class DefaultPartitioner08:
    """0.8.2's DefaultPartitioner: ``Utils.abs(key.hashCode) % num_partitions``, where 0.8.2's ``Utils.abs``
    maps ``Integer.MIN_VALUE`` to 0 (so, unlike 0.7's, the result is never negative)."""

    def partition(self, key: Any, num_partitions: int) -> int:
        return kafka_abs(key_hash(key)) % num_partitions


def load_partitioner(class_path: str, default: type = DefaultPartitioner) -> Partitioner:
    """Instantiate ``package.module.ClassName`` or ``module:ClassName`` (the ``partitioner.class`` config).

    The Java name ``kafka.producer.DefaultPartitioner`` means ``default`` (the line's own: 0.7's
    :class:`DefaultPartitioner` or :class:`DefaultPartitioner08`). A path that cannot
    be imported is an ImportError; a malformed path is a ValueError.
    """
    if class_path == JAVA_DEFAULT_PARTITIONER:
        return default()
    module_name, sep, class_name = class_path.rpartition(":" if ":" in class_path else ".")
    if not sep or not module_name or not class_name:
        raise ValueError(
            f"partitioner.class must be module.ClassName or module:ClassName, not {class_path!r}"
        )
    module = importlib.import_module(module_name)
    try:
        cls = getattr(module, class_name)
    except AttributeError as e:
        raise ImportError(f"cannot import {class_name!r} from {module_name!r}") from e
    partitioner = cls()
    if not callable(getattr(partitioner, "partition", None)):
        raise TypeError(f"{class_path} has no partition(key, num_partitions) method")
    return partitioner
