"""What 0.8.2's ``AbstractFetcherManager`` gives both of its fetcher managers, the broker's replica fetchers and
the 0.8 consumer's fetchers: which of a leader's fetchers takes a partition."""

from zkafka.utils.java import java_string_hash, kafka_abs, to_int32


def fetcher_id(topic: str, partition: int, num_fetchers: int) -> int:
    """``getFetcherId``: ``Utils.abs(31 * topic.hashCode + partition) % numFetchers`` (0.8.2's ``Utils.abs``:
    ``Math.abs``, with ``Integer.MIN_VALUE`` mapped to 0)."""
    return kafka_abs(to_int32(31 * java_string_hash(topic) + partition)) % num_fetchers
