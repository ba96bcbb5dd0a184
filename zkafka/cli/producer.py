"""``zkafka console-producer``: send lines of standard input as messages."""

from __future__ import annotations

import logging
import sys

import click

from zkafka.cli.command import (
    Context,
    checked_topic,
    client_config_option,
    client_properties,
    configure_logging,
    main,
    not_delivered,
)


def producer_source_options(func):
    """``--zookeeper`` / ``--broker-list``: exactly one of the two."""
    func = click.option(
        "--broker-list",
        metavar="HOST:PORT,...|ID:HOST:PORT,...",
        help="0.8 line: brokers to ask for metadata (HOST:PORT,...). 0.7: static brokers instead of "
        "ZooKeeper (ID:HOST:PORT,..., random partition).",
    )(func)
    return click.option(
        "--zookeeper", metavar="HOST:PORT[/CHROOT]", help="ZooKeeper to find the brokers in."
    )(func)


def acks_option(default: int):
    """``--request-required-acks`` of the 0.8 line's producer tools."""
    return click.option(
        "--request-required-acks",
        type=click.IntRange(-1, 32767),
        default=default,
        show_default=True,
        help="0.8 line (--broker-list HOST:PORT,...): acknowledgements each produce waits for "
        "(0 none, 1 the leader, -1 all in-sync replicas).",
    )


# The producer properties each option of console-producer sets (0.8's key, then 0.7's): typed, it wins over
# --producer.config and --producer-property.
PRODUCER_OPTIONS = {
    "sync": ("producer.type",),
    "compression": ("compression.codec",),
    "batch_size": ("batch.num.messages", "batch.size"),
    "queue_time": ("queue.buffering.max.ms", "queue.time"),
    "request_required_acks": ("request.required.acks",),
    "request_timeout_ms": ("request.timeout.ms",),
    "message_send_max_retries": ("message.send.max.retries",),
    "retry_backoff_ms": ("retry.backoff.ms",),
}


def check_source(zookeeper: str | None, broker_list: str | None) -> None:
    if bool(zookeeper) == bool(broker_list):
        raise click.UsageError("give exactly one of --zookeeper and --broker-list")


@main.command("console-producer")
@producer_source_options
@click.option("--topic", required=True, callback=checked_topic, help="Topic to send to.")
@click.option(
    "--compression",
    "--compression-codec",
    "compression",
    default="none",
    show_default=True,
    metavar="none|gzip|snappy|lz4",
    help="Compression codec (lz4: the 0.8 line only).",
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
    "--property",
    "line_properties",
    multiple=True,
    metavar="KEY=VALUE",
    help="Line reader: parse.key=true with key.separator=SEP (default a tab) reads KEY<SEP>MESSAGE lines.",
)
@acks_option(0)
@click.option("--request-timeout-ms", type=click.IntRange(1), default=1500, show_default=True, help="0.8.")
@click.option("--message-send-max-retries", type=click.IntRange(0), default=3, show_default=True, help="0.8.")
@click.option("--retry-backoff-ms", type=click.IntRange(0), default=100, show_default=True, help="0.8.")
@click.option(
    "--producer-property", "properties", multiple=True, metavar="KEY=VALUE", help="Any producer property."
)
@client_config_option(
    "producer", "A producer.properties file (--producer-property wins; an option typed here wins over both)."
)
def console_producer(
    zookeeper: str | None,
    broker_list: str | None,
    topic: str,
    compression: str,
    batch_size: int,
    queue_time: int,
    sync: bool,
    key_separator: str | None,
    line_properties: tuple[str, ...],
    request_required_acks: int,
    request_timeout_ms: int,
    message_send_max_retries: int,
    retry_backoff_ms: int,
    properties: tuple[str, ...],
    producer_config: str | None,
) -> None:
    """Read lines from standard input and send each one as a message to TOPIC.

    With --broker-list HOST:PORT,... the 0.8 producer sends them (partition leaders from Metadata, acks).
    A topic name the broker would refuse stops it before anything is sent; it exits with status 1, saying
    how many, if some messages could not be delivered.
    """
    from zkafka.client08.topic_metadata import is_broker_list_08
    from zkafka.config import parse_overrides
    from zkafka.records.compression import ALL_CODECS, CODECS_07, parse_codec

    line08 = bool(broker_list and is_broker_list_08(broker_list))
    # 0.8: the retries' warnings stay quiet; a failure to deliver is the one line the command ends with.
    configure_logging(Context.verbose, level=logging.CRITICAL if line08 else logging.INFO)
    check_source(zookeeper, broker_list)
    reader = parse_overrides(line_properties)
    if reader.get("parse.key", "false").lower() == "true":
        key_separator = reader.get("key.separator", "\t")
    separator = key_separator.encode("utf-8") if key_separator else None
    codec = str(parse_codec(compression, ALL_CODECS if line08 else CODECS_07))
    given = client_properties(producer_config, properties, PRODUCER_OPTIONS)
    if line08:
        props = {
            "metadata.broker.list": broker_list,
            "producer.type": "sync" if sync else "async",
            "compression.codec": codec,
            "batch.num.messages": str(batch_size),
            "queue.buffering.max.ms": str(queue_time),
            "queue.enqueue.timeout.ms": "-1",
            "request.required.acks": str(request_required_acks),
            "request.timeout.ms": str(request_timeout_ms),
            "message.send.max.retries": str(message_send_max_retries),
            "retry.backoff.ms": str(retry_backoff_ms),
            "client.id": "console-producer",
        }
        props.update(given)
        _console_producer08(props, topic, separator)
        return
    _console_producer07(zookeeper, broker_list, topic, codec, batch_size, queue_time, sync, separator, given)


def _console_producer07(
    zookeeper, broker_list, topic, codec, batch_size, queue_time, sync, separator, properties
):
    from zkafka.config07 import ProducerConfig
    from zkafka.producer.console import produce_lines, read_lines
    from zkafka.producer.producer07 import Producer

    if separator is not None and broker_list:
        click.echo(
            "zkafka: warning: keys are ignored with --broker-list (the broker picks a partition)", err=True
        )
    props = {
        "producer.type": "sync" if sync else "async",
        "compression.codec": codec,
        "batch.size": str(batch_size),
        "queue.time": str(queue_time),
        "queue.enqueueTimeout.ms": "-1",
    }
    props["zk.connect" if zookeeper else "broker.list"] = zookeeper or broker_list  # type: ignore[assignment]
    props.update(properties)
    lines = CountedLines(read_lines(sys.stdin.fileno()))
    failure = None
    with Producer(ProducerConfig(props)) as producer:
        try:
            produce_lines(producer, topic, lines, separator)
        except KeyboardInterrupt:
            pass
        except Exception as exc:  # sync: the send of the last line read failed; the rest stays unread
            failure = exc
    undelivered = producer.undelivered + (failure is not None)
    if undelivered:
        raise not_delivered(undelivered, lines.count, failure)


class CountedLines:
    """An iterator over lines that counts those taken."""

    def __init__(self, lines) -> None:
        self._lines = iter(lines)
        self.count = 0

    def __iter__(self):
        return self

    def __next__(self) -> bytes:
        line = next(self._lines)
        self.count += 1
        return line


def _console_producer08(props: dict[str, str], topic: str, separator: bytes | None) -> None:
    from zkafka.producer.console import produce_lines08, read_lines
    from zkafka.producer.errors import FailedToSendMessageError
    from zkafka.producer.producer08 import Producer08

    failures: list[FailedToSendMessageError] = []
    producer = Producer08(props, on_send_failure=failures.append)
    read = undelivered = 0
    try:
        read, undelivered = produce_lines08(producer, topic, read_lines(sys.stdin.fileno()), separator)
    except KeyboardInterrupt:
        pass
    finally:
        try:
            producer.close()
        except FailedToSendMessageError as exc:
            undelivered += exc.undelivered
    if undelivered:
        raise not_delivered(undelivered, read, failures[-1] if failures else None)
