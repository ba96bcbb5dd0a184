"""Fixtures of the Spark tests: one local[2] SparkSession for the whole test session.

Without the spark extra (pyspark, pyarrow) only the pure tests here are collected.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

try:
    import pyarrow  # noqa: F401
    import pyspark  # noqa: F401

    HAVE_SPARK = True
except ImportError:
    HAVE_SPARK = False

NEED_SPARK = [
    "test_data_loss.py",
    "test_loader.py",
    "test_planner.py",
    "test_source_batch.py",
    "test_source_streaming.py",
]
collect_ignore = [] if HAVE_SPARK else NEED_SPARK

TEST_SPARK_CONF = {
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.sql.shuffle.partitions": "2",
    "spark.default.parallelism": "2",
    "spark.driver.memory": "1g",
    # C1 only: the JVM starts in ~6 s instead of ~10 s on two cores; test data is small.
    "spark.driver.extraJavaOptions": "-XX:TieredStopAtLevel=1",
}


def pytest_report_header(config) -> str | None:
    if HAVE_SPARK:
        return None
    return "tests/spark: pyspark or pyarrow missing (pip install -e '.[spark]'); only the pure tests run"


@pytest.fixture(scope="session")
def spark() -> Iterator:
    """A local[2] SparkSession with the zkafka source registered, stopped at the end of the session."""
    from zkafka.spark.session import spark_session

    session = spark_session("local[2]", "zkafka-tests", TEST_SPARK_CONF)
    session.sparkContext.setLogLevel("ERROR")
    try:
        yield session
    finally:
        session.stop()
