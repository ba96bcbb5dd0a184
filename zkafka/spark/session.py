"""A SparkSession ready for zkafka: the right Python for the workers, the source registered, zkafka shipped.

PySpark starts its Python workers with ``$PYSPARK_PYTHON`` (else ``python3`` on the PATH); a different
interpreter than the driver's lacks zkafka or has another Python version, and the workers crash. On a local
master the helper points it at the running interpreter. On a cluster the executors need zkafka and its
dependencies (kazoo, gevent, python-snappy, pyarrow) installed, or zkafka shipped with ``ship_zkafka``, and
they must reach the brokers (the driver must reach ZooKeeper and the brokers).
"""

from __future__ import annotations

import os
import sys
import tempfile
import urllib.parse
import zipfile
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

LOCAL_CONF = {
    "spark.driver.host": "127.0.0.1",
    "spark.driver.bindAddress": "127.0.0.1",
}


def spark_session(
    master: str = "local[2]",
    app_name: str = "zkafka",
    conf: Mapping[str, str] | None = None,
    *,
    ship: bool | None = None,
) -> SparkSession:
    """Get or create a SparkSession with the zkafka source registered.

    On a ``local`` master, workers run this very interpreter and the driver binds to 127.0.0.1. On other
    masters ``PYSPARK_PYTHON`` is left alone when set, and (``ship`` defaults to True there) a zip of the
    zkafka package is added to the executors' Python path.
    """
    from pyspark.sql import SparkSession

    local = master.startswith("local")
    if local:
        os.environ["PYSPARK_PYTHON"] = sys.executable
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    else:
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    builder = SparkSession.builder.master(master).appName(app_name)
    for key, value in {**(LOCAL_CONF if local else {}), **(conf or {})}.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    if ship if ship is not None else not local:
        ship_zkafka(spark)
    register(spark)
    return spark


def register(spark: SparkSession) -> None:
    """Register the ``zkafka`` data source with the session."""
    from zkafka.spark.source import ZKafkaDataSource

    spark.dataSource.register(ZKafkaDataSource)


def package_zip(path: str | os.PathLike) -> Path:
    """Write the zkafka package (Python sources only) as a zip for ``spark-submit --py-files``."""
    import zkafka

    root = Path(zkafka.__file__).resolve().parent
    out = Path(path)
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as zf:
        for file in sorted(root.rglob("*.py")):
            zf.write(file, Path("zkafka") / file.relative_to(root))
    return out


def ship_zkafka(spark: SparkSession) -> Path:
    """Add a zip of the zkafka package to the executors' Python path (its dependencies must be installed)."""
    out = package_zip(Path(tempfile.mkdtemp(prefix="zkafka-")) / "zkafka.zip")
    spark.sparkContext.addPyFile(str(out))
    return out



# Evaluated in the executor's JVM for each row (cheap): the log URL a standalone worker gives its executor,
# else the host. ``executor_name`` turns it into a name.
EXECUTOR_EXPR = (
    "coalesce(reflect('java.lang.System', 'getenv', 'SPARK_LOG_URL_STDERR'),"
    " reflect('java.net.InetAddress', 'getLocalHost'))"
)


def executor_name(where: str) -> str:
    """``executor <id> on <worker host:port>`` from a standalone executor's log URL; anything else as it is
    (the host, on other masters and in local mode)."""
    parts = urllib.parse.urlsplit(where)
    executor = urllib.parse.parse_qs(parts.query).get("executorId")
    return f"executor {executor[0]} on {parts.netloc}" if parts.scheme and executor else where
