"""Java's integer arithmetic and hash codes, for the places where zkafka must agree with a JVM.

A partition choice (DefaultPartitioner), the offsets partition of a group, a fetcher's share of partitions and
roundrobin's dealing order are all computed from Java ``hashCode`` values in ``int`` arithmetic; the helpers
here reproduce them bit for bit (overflow wraps, ``Math.abs(Integer.MIN_VALUE)`` stays negative, ``%`` keeps
the dividend's sign).
"""

INT32_MIN = -(2**31)  # Integer.MIN_VALUE
INT32_MAX = 2**31 - 1  # Integer.MAX_VALUE
INT64_MIN = -(2**63)  # Long.MIN_VALUE
INT64_MAX = 2**63 - 1  # Long.MAX_VALUE


def to_int32(value: int) -> int:
    """Wrap an int to a signed 32-bit value, as a Java ``int`` overflows."""
    return (value + 2**31) % 2**32 - 2**31


def java_string_hash(s: str) -> int:
    """Java ``String.hashCode``: ``h = 31*h + c`` over UTF-16 code units, in int32.

    A character outside the BMP counts as its two surrogate code units; lone surrogates are kept as is.
    """
    data = s.encode("utf-16-be", "surrogatepass")
    h = 0
    for i in range(0, len(data), 2):
        h = (31 * h + (data[i] << 8 | data[i + 1])) & 0xFFFFFFFF
    return to_int32(h)


def java_int_hash(value: int) -> int:
    """Java hashCode of an integer key: an ``Integer`` is itself, a ``Long`` is ``(int)(v ^ (v >>> 32))``.

    Values in int32 range are taken as ``Integer``, the rest of the int64 range as ``Long``.
    """
    if INT32_MIN <= value <= INT32_MAX:
        return value
    if not INT64_MIN <= value <= INT64_MAX:
        raise ValueError(f"integer key {value} does not fit a Java long")
    bits = value & 0xFFFFFFFFFFFFFFFF
    return to_int32(bits ^ (bits >> 32))


def java_abs(value: int) -> int:
    """Java ``Math.abs`` on an int: ``abs(Integer.MIN_VALUE)`` overflows and stays ``MIN_VALUE``."""
    value = to_int32(value)
    return value if value == INT32_MIN else abs(value)


def kafka_abs(value: int) -> int:
    """0.8.2's ``Utils.abs`` on an int hash: ``Math.abs``, except that ``Integer.MIN_VALUE`` maps to 0."""
    return 0 if value == INT32_MIN else abs(value)


def java_mod(a: int, b: int) -> int:
    """Java ``%``: the remainder has the sign of the dividend (division truncates toward zero)."""
    r = abs(a) % abs(b)
    return -r if a < 0 else r
