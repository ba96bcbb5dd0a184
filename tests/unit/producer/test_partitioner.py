"""DefaultPartitioner and the Java integer arithmetic behind it (zkafka.producer.partitioner)."""

import math
import subprocess
import sys
from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from zkafka.producer.partitioner import (
    INT32_MIN,
    DefaultPartitioner,
    java_abs,
    java_int_hash,
    java_mod,
    java_string_hash,
    key_hash,
    load_partitioner,
)


def test_java_string_hash_reference_values():
    assert java_string_hash("") == 0
    assert java_string_hash("key") == 106079  # 107*31**2 + 101*31 + 121
    assert java_string_hash("hello") == 99162322
    assert java_string_hash("polygenelubricants") == -(2**31)


def test_java_string_hash_uses_surrogate_pairs():
    # U+1F600 is the UTF-16 pair: 0x1F600 - 0x10000 = 0xF600; high = 0xD800 + (0xF600 >> 10) = 0xD83D,
    # low = 0xDC00 + (0xF600 & 0x3FF) = 0xDE00. h = 31*0xD83D + 0xDE00 = 31*55357 + 56832 = 1772899
    # (hashing the code point 0x1F600 = 128512 instead would be wrong).
    assert java_string_hash("\U0001f600") == 1772899
    # "a" + U+1F600: ((97*31 + 55357)*31 + 56832) = 1772899 + 97*961 = 1866116
    assert java_string_hash("a\U0001f600") == 1866116
    # A lone surrogate is a code unit like any other.
    assert java_string_hash("\ud83d") == 0xD83D


def test_java_int_arithmetic():
    assert java_abs(INT32_MIN) == INT32_MIN
    assert java_abs(-5) == 5
    assert java_mod(-7, 3) == -1
    assert java_mod(7, -3) == 1
    assert java_mod(INT32_MIN, 3) == -2
    assert java_mod(INT32_MIN, 4) == 0


def test_int_keys_hash_as_java_integer_or_long():
    assert java_int_hash(42) == 42
    assert java_int_hash(-1) == -1
    assert java_int_hash(2**31) == INT32_MIN  # Long: (int)(v ^ (v >>> 32)) = (int)0x80000000
    assert java_int_hash(2**32 + 5) == 4  # 0x1_00000005 ^ 0x1 = 0x1_00000004 -> 4
    with pytest.raises(ValueError):
        java_int_hash(2**63)
    assert key_hash(True) == 1231 and key_hash(False) == 1237


def test_default_partitioner():
    p = DefaultPartitioner()
    assert p.partition("key", 4) == 106079 % 4
    assert p.partition("hello", 7) == 99162322 % 7
    assert p.partition("polygenelubricants", 4) == 0
    assert p.partition("polygenelubricants", 3) == -2  # the producer rejects it, not the partitioner
    assert p.partition(-10, 3) == 1
    with pytest.raises(TypeError):
        p.partition(1.5, 3)


def test_bytes_keys_are_stable_across_processes():
    # CRC-32 check value: crc32(b"123456789") = 0xCBF43926 = 3421780262, as int32 3421780262 - 2**32 = -873187034.
    assert key_hash(b"123456789") == -873187034
    assert DefaultPartitioner().partition(b"123456789", 10) == 4
    assert key_hash(bytearray(b"key")) == key_hash(memoryview(b"key")) == key_hash(b"key")
    code = "from zkafka.producer.partitioner import DefaultPartitioner as P; print(P().partition(b'abc', 7))"
    runs = {
        subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
        for _ in "ab"
    }
    assert runs == {f"{DefaultPartitioner().partition(b'abc', 7)}\n"}


@given(st.text(), st.integers(1, 1000))
def test_result_range(key, n):
    r = DefaultPartitioner().partition(key, n)
    if java_string_hash(key) == INT32_MIN:
        assert -n < r <= 0
    else:
        assert 0 <= r < n


@given(st.text())
def test_string_hash_matches_definition(s):
    units = s.encode("utf-16-be", "surrogatepass")
    h = 0
    for i in range(0, len(units), 2):
        h = h * 31 + int.from_bytes(units[i : i + 2], "big")
    h %= 2**32
    assert java_string_hash(s) == (h - 2**32 if h >= 2**31 else h)


@given(st.integers(-(2**40), 2**40), st.integers(-(2**20), 2**20).filter(bool))
def test_java_mod_truncates_toward_zero(a, b):
    assert java_mod(a, b) == a - b * math.trunc(Fraction(a, b))


def test_load_partitioner():
    assert isinstance(load_partitioner("kafka.producer.DefaultPartitioner"), DefaultPartitioner)
    assert isinstance(load_partitioner("zkafka.producer.partitioner.DefaultPartitioner"), DefaultPartitioner)
    assert isinstance(load_partitioner("zkafka.producer.partitioner:DefaultPartitioner"), DefaultPartitioner)
    with pytest.raises(ImportError):
        load_partitioner("zkafka.producer.partitioner.NoSuchPartitioner")
    with pytest.raises(ImportError):
        load_partitioner("no_such_module_zz.Partitioner")
    with pytest.raises(ValueError):
        load_partitioner("DefaultPartitioner")
    with pytest.raises(TypeError):
        load_partitioner("collections.OrderedDict")
