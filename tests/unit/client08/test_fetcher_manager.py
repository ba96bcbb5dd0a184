"""Which fetcher takes a partition (zkafka.client08.fetcher_manager), for replica and consumer fetchers alike."""

from hypothesis import given
from hypothesis import strategies as st

from zkafka.client08.fetcher_manager import fetcher_id
from zkafka.utils.java import java_string_hash


def test_fetcher_id_is_0_8_2s_abs_of_the_hash_mod_n():
    assert java_string_hash("topic") == 110546223
    # 31 * 110546223 overflows to -868034383: Math.abs, not a mask (a mask would give [1, 2, 0, 1])
    assert [fetcher_id("topic", p, 3) for p in range(4)] == [1, 0, 2, 1]
    # 31 * Integer.MIN_VALUE wraps to MIN_VALUE, which Utils.abs maps to 0; MIN_VALUE + p to 2**31 - p
    assert java_string_hash("polygenelubricants") == -(2**31)
    assert [fetcher_id("polygenelubricants", p, 3) for p in range(4)] == [0, 1, 0, 2]


@given(st.text(), st.integers(0, 10_000), st.integers(1, 16))
def test_fetcher_id_is_in_range(topic, partition, n):
    assert 0 <= fetcher_id(topic, partition, n) < n
