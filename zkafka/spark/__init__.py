"""zkafka on Spark: the ``zkafka`` data source (batch and Structured Streaming) and the batch loader.

    from zkafka.spark import spark_session
    spark = spark_session("local[2]")          # PYSPARK_PYTHON set, source registered
    df = (spark.read.format("zkafka")
          .option("zookeeper.connect", "localhost:2181")
          .option("subscribe", "events")
          .load())

On a 0.8 cluster, ``.option("kafka.bootstrap.servers", "host:9092")`` (or ``zookeeper.connect``) gives the
rows and options of Spark's Kafka source. Needs the ``spark`` extra (pyspark 4, pyarrow). The pure modules (``offsets``, ``options``, ``rows``) import
neither; the names below are imported on first use.
"""

from __future__ import annotations

from zkafka.utils import lazy_exports

_EXPORTS = {
    "BrokerGoneError": "errors",
    "DataLossError": "errors",
    "LoadResult": "loader",
    "OffsetRange": "offsets",
    "OffsetRange08": "offsets",
    "SOURCE_NAME": "source",
    "TopicPartition": "offsets",
    "TopicPartition08": "offsets",
    "ZKafkaDataSource": "source",
    "load": "loader",
    "package_zip": "session",
    "register": "session",
    "ship_zkafka": "session",
    "spark_session": "session",
}
__all__ = sorted(_EXPORTS)

__getattr__ = lazy_exports(__name__, _EXPORTS)
