"""``zkafka console-producer``: send lines of standard input as messages."""

from __future__ import annotations

import sys

import click

from zkafka.cli import Context, configure_logging, friendly_errors, main


def producer_source_options(func):
    """``--zookeeper`` / ``--broker-list``: exactly one of the two."""
    func = click.option(
        "--broker-list",
        metavar="ID:HOST:PORT,...",
        help="Static brokers instead of ZooKeeper (random partition).",
    )(func)
    return click.option(
        "--zookeeper", metavar="HOST:PORT[/CHROOT]", help="ZooKeeper to find the brokers in."
    )(func)


def check_source(zookeeper: str | None, broker_list: str | None) -> None:
    if bool(zookeeper) == bool(broker_list):
        raise click.UsageError("give exactly one of --zookeeper and --broker-list")


@main.command("console-producer")
@producer_source_options
@click.option("--topic", required=True, help="Topic to send to.")
@click.option(
    "--compression", default="none", show_default=True, metavar="none|gzip|snappy", help="Compression codec."
)
@click.option(
    "--batch-size", type=click.IntRange(1), default=200, show_default=True, help="Async batch size."
)
@click.option(
    "--queue-time",
    "--timeout",
    "queue_time",
    type=click.IntRange(0),
    default=1000,
    show_default=True,
    help="Async: send a batch at the latest this many ms after its first message.",
)
@click.option("--sync", is_flag=True, help="Send each line at once (default: async batches).")
@click.option(
    "--key-separator", metavar="SEP", help="Lines are KEY<SEP>MESSAGE; the key picks the partition."
)
@click.option(
    "--producer-property", "properties", multiple=True, metavar="KEY=VALUE", help="Any producer property."
)
@friendly_errors
def console_producer(
    zookeeper: str | None,
    broker_list: str | None,
    topic: str,
    compression: str,
    batch_size: int,
    queue_time: int,
    sync: bool,
    key_separator: str | None,
    properties: tuple[str, ...],
) -> None:
    """Read lines from standard input and send each one as a message to TOPIC."""
    from zkafka.config import ProducerConfig, parse_overrides
    from zkafka.producer.console import produce_lines, read_lines
    from zkafka.producer.producer import Producer
    from zkafka.records.compression import parse_codec

    configure_logging(Context.verbose)
    check_source(zookeeper, broker_list)
    if key_separator is not None and broker_list:
        click.echo(
            "zkafka: warning: keys are ignored with --broker-list (the broker picks a partition)", err=True
        )
    props = {
        "producer.type": "sync" if sync else "async",
        "compression.codec": str(parse_codec(compression)),
        "batch.size": str(batch_size),
        "queue.time": str(queue_time),
        "queue.enqueueTimeout.ms": "-1",
    }
    props["zk.connect" if zookeeper else "broker.list"] = zookeeper or broker_list  # type: ignore[assignment]
    props.update(parse_overrides(properties))
    separator = key_separator.encode("utf-8") if key_separator else None
    with Producer(ProducerConfig(props)) as producer:
        try:
            produce_lines(producer, topic, read_lines(sys.stdin.fileno()), separator)
        except KeyboardInterrupt:
            pass
