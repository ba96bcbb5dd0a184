"""Fixtures of the Spark tests: one local[2] SparkSession for the whole test session.

Without the spark extra (pyspark, pyarrow) only the pure tests here are collected.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support.spark import TEST_SPARK_CONF

try:
    import pyarrow  # noqa: F401
    import pyspark  # noqa: F401

    HAVE_SPARK = True
except ImportError:
    HAVE_SPARK = False

NEED_SPARK = [
    "test_data_loss.py",
    "test_loader.py",
    "test_loader08.py",
    "test_planner.py",
    "test_reader08.py",
    "test_source_batch.py",
    "test_source_streaming.py",
    "test_source08.py",
    "test_streaming08.py",
]
collect_ignore = [] if HAVE_SPARK else NEED_SPARK


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
