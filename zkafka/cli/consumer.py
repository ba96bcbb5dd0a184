"""``zkafka console-consumer``: print the messages of a topic (or of a topic filter) to standard output."""

from __future__ import annotations

import click

from zkafka.cli import Context, configure_logging, friendly_errors, main


@main.command("console-consumer")
@click.option("--zookeeper", required=True, metavar="HOST:PORT[/CHROOT]", help="ZooKeeper of the cluster.")
@click.option("--topic", help="Topic to consume (used as a whitelist regex, as in 0.7).")
@click.option("--whitelist", metavar="REGEX", help="Consume every topic the regex matches.")
@click.option("--blacklist", metavar="REGEX", help="Consume every topic the regex does not match.")
@click.option("--group", help="Consumer group (default: a random console-consumer-<n>, deleted on exit).")
@click.option(
    "--from-beginning",
    is_flag=True,
    help="Start at the oldest message (and delete the group's offsets first); default: only new messages.",
)
@click.option("--max-messages", type=click.IntRange(1), help="Stop after this many messages.")
@click.option(
    "--consumer-timeout-ms",
    type=int,
    default=-1,
    show_default=True,
    help="Stop when no message arrives for this long (-1: wait forever).",
)
@click.option("--print-offsets", is_flag=True, help="Print topic, partition and offset before each payload.")
@click.option("--fetch-size", type=click.IntRange(1), default=1024 * 1024, show_default=True)
@click.option("--socket-buffer-size", type=click.IntRange(1), default=2 * 1024 * 1024, show_default=True)
@click.option("--autocommit-interval-ms", type=click.IntRange(1), default=10000, show_default=True)
@click.option(
    "--skip-message-on-error", is_flag=True, help="Log a bad message and go on instead of stopping."
)
@click.option(
    "--consumer-property", "properties", multiple=True, metavar="KEY=VALUE", help="Any consumer property."
)
@friendly_errors
def console_consumer(
    zookeeper: str,
    topic: str | None,
    whitelist: str | None,
    blacklist: str | None,
    group: str | None,
    from_beginning: bool,
    max_messages: int | None,
    consumer_timeout_ms: int,
    print_offsets: bool,
    fetch_size: int,
    socket_buffer_size: int,
    autocommit_interval_ms: int,
    skip_message_on_error: bool,
    properties: tuple[str, ...],
) -> None:
    """Print each message's payload on its own line (0.7's ConsoleConsumer)."""
    from zkafka.config import parse_overrides
    from zkafka.consumer.console import ConsoleOptions, run

    if sum(x is not None for x in (topic, whitelist, blacklist)) != 1:
        raise click.UsageError("give exactly one of --topic, --whitelist and --blacklist")
    configure_logging(Context.verbose, level=30)
    options = ConsoleOptions(
        zookeeper=zookeeper,
        topic=topic,
        whitelist=whitelist,
        blacklist=blacklist,
        group=group,
        from_beginning=from_beginning,
        max_messages=max_messages,
        consumer_timeout_ms=consumer_timeout_ms,
        print_offsets=print_offsets,
        fetch_size=fetch_size,
        socket_buffer_size=socket_buffer_size,
        autocommit_interval_ms=autocommit_interval_ms,
        skip_message_on_error=skip_message_on_error,
        properties=parse_overrides(properties),
    )
    run(options)
