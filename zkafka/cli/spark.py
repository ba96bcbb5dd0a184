"""``zkafka spark load``, ``zkafka spark offsets`` and ``zkafka spark package``."""

from __future__ import annotations

import click

from zkafka.cli.command import Context, configure_logging, main


@main.group()
def spark() -> None:
    """Load topics with Spark (needs the spark extra: pyspark 4, pyarrow)."""


@spark.command("load")
@click.option(
    "--zookeeper", "-z", help="ZooKeeper connect string host:port[,host:port][/chroot] (either line)."
)
@click.option("--bootstrap-servers", "-b", help="host:port,... of 0.8 brokers (instead of --zookeeper).")
@click.option("--topics", "-t", required=True, help="Comma list of topics to load.")
@click.option("--output", "-o", required=True, type=click.Path(file_okay=False), help="Output directory.")
@click.option(
    "--format", "fmt", default="parquet", show_default=True, type=click.Choice(["parquet", "orc", "json"])
)
@click.option("--master", default="local[2]", show_default=True, help="Spark master URL.")
@click.option(
    "--fail-on-data-loss/--no-fail-on-data-loss",
    default=True,
    show_default=True,
    help="Fail when stored offsets were deleted by retention (else skip to the earliest kept).",
)
@click.option("--fetch-size", type=int, default=None, help="Bytes per fetch request (default 1 MiB).")
@click.option(
    "--min-partitions", type=int, default=None, help="Split ranges so that at least this many tasks run."
)
@click.option("--conf", "confs", multiple=True, metavar="KEY=VALUE", help="A Spark configuration property.")
def spark_load(
    zookeeper: str | None,
    bootstrap_servers: str | None,
    topics: str,
    output: str,
    fmt: str,
    master: str,
    fail_on_data_loss: bool,
    fetch_size: int | None,
    min_partitions: int | None,
    confs: tuple[str, ...],
) -> None:
    """Load what is new in TOPICS into OUTPUT/topic=<t>/, storing the next offsets in OUTPUT/_offsets/.

    Prints progress on stderr and one summary line on stdout. The offsets are byte positions per
    broker-partition on a 0.7 cluster, message numbers per partition on a 0.8 cluster.
    """
    if bool(zookeeper) == bool(bootstrap_servers):
        raise click.UsageError("give one of --zookeeper and --bootstrap-servers")
    from zkafka.spark.loader import load
    from zkafka.spark.session import spark_session

    configure_logging(Context.verbose)
    conf = {"spark.ui.showConsoleProgress": "false"}
    for item in confs:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise click.BadParameter(f"{item!r} is not KEY=VALUE", param_hint="--conf")
        conf[key.strip()] = value.strip()
    topic_list = [t.strip() for t in topics.split(",") if t.strip()]
    if not topic_list:
        raise click.BadParameter("names no topic", param_hint="--topics")
    session = spark_session(master, "zkafka-load", conf)
    try:
        result = load(
            session,
            zookeeper,
            topic_list,
            output,
            bootstrap_servers=bootstrap_servers,
            fmt=fmt,
            fail_on_data_loss=fail_on_data_loss,
            fetch_size=fetch_size,
            min_partitions=min_partitions,
            progress=lambda line: click.echo(f"zkafka spark load: {line}", err=True),
        )
    finally:
        session.stop()
    click.echo(f"zkafka spark load: {result.summary()}")


@spark.command("offsets")
@click.option(
    "--output", "-o", required=True, type=click.Path(file_okay=False, exists=True), help="Output directory."
)
def spark_offsets(output: str) -> None:
    """Print the offsets stored by the last committed load into OUTPUT (JSON)."""
    from zkafka.spark.store import OffsetStore

    record = OffsetStore(output).current()
    if record is None:
        raise click.ClickException(f"no load has committed into {output} yet")
    click.echo(record.to_json())


@spark.command("package")
@click.option("--output", "-o", default="zkafka.zip", show_default=True, help="Zip file to write.")
def spark_package(output: str) -> None:
    """Write the zkafka package as a zip for spark-submit --py-files."""
    from zkafka.spark.session import package_zip

    click.echo(str(package_zip(output)))
