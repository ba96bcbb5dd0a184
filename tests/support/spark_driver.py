"""A Structured Streaming driver run as its own process, so that a test can kill it with SIGKILL.

``python -m tests.support.spark_driver BOOTSTRAP OUT CHECKPOINT HOLD_BATCH [available-now]``: the zkafka source
(0.8 line) into a ``foreachBatch`` sink that writes each micro-batch's rows to ``OUT/<batch id>.json``
(replacing the file: idempotent per batch id, as Spark's exactly-once contract asks of such a sink), then
drops ``OUT/sunk-<batch id>``. At batch ``HOLD_BATCH`` it stops there, after the sink's commit and before
Spark writes the batch to the checkpoint's commit log, and waits to be killed.
"""

from __future__ import annotations

import base64
import json
import os
import sys
import time
from pathlib import Path

from tests.support.spark import TEST_SPARK_CONF

COLUMNS = ["topic", "partition", "offset", "value"]


def write_batch(out: Path, hold: int, df, batch_id: int) -> None:
    rows = [
        [r.topic, r.partition, r.offset, base64.b64encode(bytes(r.value)).decode()]
        for r in df.select(*COLUMNS).collect()
    ]
    tmp = out / f".{batch_id}.json"
    tmp.write_text(json.dumps(rows))
    os.replace(tmp, out / f"{batch_id}.json")
    (out / f"sunk-{batch_id}").touch()
    while batch_id == hold:  # killed here: the sink has the batch, the commit log does not
        time.sleep(1)


def main(bootstrap: str, out: str, checkpoint: str, hold: str, mode: str = "") -> None:
    from zkafka.spark.session import spark_session

    spark = spark_session("local[2]", "zkafka-driver", TEST_SPARK_CONF)
    spark.sparkContext.setLogLevel("ERROR")
    writer = (
        spark.readStream.format("zkafka")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("subscribe", "kill")
        .option("startingOffsets", "earliest")
        .load()
        .writeStream.foreachBatch(lambda df, batch_id: write_batch(Path(out), int(hold), df, batch_id))
        .option("checkpointLocation", checkpoint)
    )
    if mode == "available-now":
        writer.trigger(availableNow=True).start().awaitTermination()
    else:
        writer.trigger(processingTime="200 milliseconds").start().awaitTermination()
    spark.stop()


if __name__ == "__main__":
    main(*sys.argv[1:])
