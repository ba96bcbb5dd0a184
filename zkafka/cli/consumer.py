"""``zkafka console-consumer``: print the messages of a topic (or of a topic filter) to standard output."""

from __future__ import annotations

import click

from zkafka.cli.command import Context, checked_topic, client_config_option, configure_logging, main


@main.command("console-consumer")
@click.option("--zookeeper", metavar="HOST:PORT[/CHROOT]", help="ZooKeeper of the cluster.")
@click.option(
    "--bootstrap-server",
    metavar="HOST:PORT[,...]",
    help="Instead of --zookeeper: brokers of a cluster with a group coordinator (a 0.9 group consumer).",
)
@click.option(
    "--topic", callback=checked_topic, help="Topic to consume (used as a whitelist regex, as in 0.7)."
)
@click.option("--whitelist", metavar="REGEX", help="Consume every topic the regex matches.")
@click.option("--blacklist", metavar="REGEX", help="Consume every topic the regex does not match.")
@click.option("--group", help="Consumer group (default: a random console-consumer-<n>, deleted on exit).")
@click.option(
    "--from-beginning",
    is_flag=True,
    help="Start at the oldest message (0.7: deleting the group's offsets first; 0.8: refused if the group has "
    "offsets, see --delete-consumer-offsets); default: only new messages.",
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
@client_config_option("consumer", "A consumer.properties file (0.8: group.id is read from it).")
@click.option(
    "--property",
    "formatter_properties",
    multiple=True,
    metavar="KEY=VALUE",
    help="0.8 formatter property: print.key=true, key.separator=..., line.separator=...",
)
@click.option(
    "--delete-consumer-offsets",
    is_flag=True,
    help="0.8: delete the group's offsets first (needed for --from-beginning on a group that has offsets).",
)
@click.option(
    "--line",
    type=click.Choice(["0.7", "0.8"]),
    help="The cluster's line (default: told from its brokers' and consumers' znodes).",
)
def console_consumer(
    zookeeper: str | None,
    bootstrap_server: str | None,
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
    consumer_config: str | None,
    formatter_properties: tuple[str, ...],
    delete_consumer_offsets: bool,
    line: str | None,
) -> None:
    """Print each message's value on its own line (ConsoleConsumer of 0.7 or 0.8.2, as the cluster is)."""
    from zkafka.cli.command import client_properties
    from zkafka.config import parse_overrides
    from zkafka.consumer.console import ConsoleOptions, run

    if sum(x is not None for x in (topic, whitelist, blacklist)) != 1:
        raise click.UsageError("give exactly one of --topic, --whitelist and --blacklist")
    if (zookeeper is None) == (bootstrap_server is None):
        raise click.UsageError("give exactly one of --zookeeper and --bootstrap-server")
    configure_logging(Context.verbose, level=30)
    options = ConsoleOptions(
        zookeeper=zookeeper or "",
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
        properties=client_properties(consumer_config, properties),
        line=line,
        formatter_properties=parse_overrides(formatter_properties),
        delete_consumer_offsets=delete_consumer_offsets,
    )
    if bootstrap_server is not None:
        from zkafka.consumer.group.console import run_group

        run_group(options, bootstrap_server)
    else:
        run(options)
