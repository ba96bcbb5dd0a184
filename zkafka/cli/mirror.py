"""``zkafka mirror-maker`` (copy topics between clusters) and ``zkafka migrate`` (from a 0.7 cluster into a 0.8 one)."""

from __future__ import annotations

import click

from zkafka.cli.command import Context, configure_logging, main
from zkafka.utils.process import STOP_SIGNALS


def config_options(consumer_help: str, producer_help: str, multiple_sources: bool):
    """``--consumer-config`` (source cluster(s)) and ``--producer-config`` (target), with 0.8's dotted names."""

    def decorate(func):
        func = click.option(
            "--producer-config",
            "--producer.config",
            "producer_config",
            required=True,
            type=click.Path(exists=True, dir_okay=False),
            help=producer_help,
        )(func)
        return click.option(
            "--consumer-config",
            "--consumer.config",
            "consumer_configs",
            multiple=multiple_sources,
            required=True,
            type=click.Path(exists=True, dir_okay=False),
            help=consumer_help,
        )(func)

    return decorate


def stream_options(func):
    """The topic filter, the streams and producers, the hand-over batch and the reports of a mirror."""
    for option in reversed(
        [
            click.option("--whitelist", default=None, help="Regex of topics to copy."),
            click.option("--blacklist", default=None, help="Regex of topics not to copy."),
            click.option(
                "--num-streams",
                "--num.streams",
                default=1,
                show_default=True,
                type=click.IntRange(1),
                help="Streams per source cluster.",
            ),
            click.option(
                "--num-producers", "--num.producers", default=1, show_default=True, type=click.IntRange(1)
            ),
            click.option(
                "--batch-size",
                "--queue.size",
                "batch_size",
                default=200,
                show_default=True,
                type=click.IntRange(1),
                help="Messages a stream hands to a producer at once; offsets are committed after each hand-over.",
            ),
            click.option(
                "--report-interval", default=5.0, show_default=True, help="Seconds between rate reports."
            ),
        ]
    ):
        func = option(func)
    return func


def topic_filter_of(whitelist: str | None, blacklist: str | None):
    from zkafka.topic_count import Blacklist, Whitelist

    if (whitelist is None) == (blacklist is None):
        raise click.UsageError("exactly one of --whitelist and --blacklist is needed")
    return Whitelist(whitelist) if whitelist is not None else Blacklist(blacklist)


@main.command("mirror-maker")
@config_options(
    "consumer.properties of a source cluster (repeatable).",
    "producer.properties of the target cluster.",
    True,
)
@stream_options
def mirror_maker(consumer_configs, producer_config, **options) -> None:
    """Mirror the topics a filter allows from the source cluster(s) into the target, until Ctrl-C/SIGTERM/SIGHUP."""
    from zkafka.config07 import ConsumerConfig, ProducerConfig
    from zkafka.tools.mirror_maker import MirrorMaker

    consumers = [ConsumerConfig.from_file(path) for path in consumer_configs]
    run_mirror(MirrorMaker, consumers, ProducerConfig.from_file(producer_config), "mirrored", **options)


@main.command("migrate")
@config_options(
    "0.7 consumer.properties of the source cluster (zk.connect, groupid).",
    "0.8 producer.properties of the target cluster (metadata.broker.list).",
    False,
)
@stream_options
@click.option(
    "--kafka.07.jar", "kafka_07_jar", hidden=True, help="Accepted from 0.8.2 command lines, not used."
)
@click.option("--zkclient.01.jar", "zkclient_01_jar", hidden=True, help="Accepted, not used.")
def migrate(consumer_configs, producer_config, kafka_07_jar, zkclient_01_jar, **options) -> None:
    """Copy topics from a 0.7 cluster into a 0.8 cluster until Ctrl-C/SIGTERM (0.8.2's KafkaMigrationTool).

    Payloads are re-sent with no key under the same topic name; the 0.7 group's offsets are committed only
    after the 0.8 brokers acknowledged the messages, so a restarted migration loses nothing.
    """
    from zkafka.config07 import ConsumerConfig
    from zkafka.config08 import ProducerConfig08
    from zkafka.tools.migration import KafkaMigrationTool

    consumers = [ConsumerConfig.from_file(consumer_configs)]
    run_mirror(
        KafkaMigrationTool, consumers, ProducerConfig08.from_file(producer_config), "migrated", **options
    )


def run_mirror(
    tool_class,
    consumer_configs,
    producer_config,
    verb: str,
    *,
    whitelist: str | None,
    blacklist: str | None,
    report_interval: float,
    **sizes: int,
) -> None:
    """Start a MirrorMaker (or a subclass) with the command's options and run it until stopped."""
    topic_filter = topic_filter_of(whitelist, blacklist)
    configure_logging(Context.verbose)
    mirror = tool_class(consumer_configs, producer_config, topic_filter, **sizes)
    run_until_stopped(mirror, report_interval, verb)


def run_until_stopped(mirror, report_interval: float, verb: str) -> None:
    """Run a mirror until SIGTERM/Ctrl-C, reporting its rate; then commit, shut down and report."""
    import gevent

    for signum in STOP_SIGNALS:
        gevent.signal_handler(signum, mirror._stopping.set)

    def report(stats) -> None:
        click.echo(
            f"{verb} {stats.messages} messages ({stats.bytes / 1e6:.1f} MB) at {stats.rate():.0f} msg/s, "
            f"{stats.commits} offset commits",
            err=True,
        )

    try:
        mirror.run(report=report, report_interval=report_interval)
    finally:
        mirror.close()
        report(mirror.stats)
