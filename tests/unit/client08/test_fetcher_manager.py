"""Which fetcher takes a partition (zkafka.client08.fetcher_manager), for replica and consumer fetchers alike."""

from hypothesis import given
from hypothesis import strategies as st

from zkafka.client08.fetcher_manager import fetcher_id
from zkafka.utils.java import java_string_hash


def test_fetcher_id_is_the_masked_hash_mod_n():
    assert java_string_hash("topic") == 110546223
    assert [fetcher_id("topic", p, 3) for p in range(4)] == [1, 2, 0, 1]  # 31 * 110546223 overflows an int
    # 31 * Integer.MIN_VALUE wraps to MIN_VALUE, which the mask turns into 0: partition p goes to p % n.
    assert java_string_hash("polygenelubricants") == -(2**31)
    assert [fetcher_id("polygenelubricants", p, 3) for p in range(4)] == [0, 1, 2, 0]


@given(st.text(), st.integers(0, 10_000), st.integers(1, 16))
def test_fetcher_id_is_in_range(topic, partition, n):
    assert 0 <= fetcher_id(topic, partition, n) < n
