"""DefaultPartitioner and the key hashes it partitions by (zkafka.producer.partitioner)."""

import subprocess
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

from zkafka.producer.partitioner import DefaultPartitioner, key_hash, load_partitioner
from zkafka.utils.java import INT32_MIN, java_int_hash, java_string_hash


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
