"""Java's int arithmetic and String.hashCode, bit for bit (zkafka.utils.java)."""

import math
from fractions import Fraction

from hypothesis import given
from hypothesis import strategies as st

from zkafka.utils.java import INT32_MIN, java_abs, java_mod, java_string_hash


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
