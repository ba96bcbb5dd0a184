"""``zkafka mirror-maker`` (copy topics between clusters) and ``zkafka migrate`` (from a 0.7 cluster into a 0.8 one)."""

from __future__ import annotations

import signal

import click

from zkafka.cli import Context, configure_logging, friendly_errors, main


@main.command("mirror-maker")
@click.option(
    "--consumer-config",
    "--consumer.config",
    "consumer_configs",
    multiple=True,
    required=True,
    type=click.Path(exists=True, dir_okay=False),
    help="consumer.properties of a source cluster (repeatable).",
)
@click.option(
    "--producer-config",
    "--producer.config",
    required=True,
    type=click.Path(exists=True, dir_okay=False),
    help="producer.properties of the target cluster.",
)
@click.option("--whitelist", default=None, help="Regex of topics to mirror.")
@click.option("--blacklist", default=None, help="Regex of topics not to mirror.")
@click.option(
    "--num-streams",
    "--num.streams",
    default=1,
    show_default=True,
    type=click.IntRange(1),
    help="Streams per source cluster.",
)
@click.option("--num-producers", "--num.producers", default=1, show_default=True, type=click.IntRange(1))
@click.option(
    "--batch-size",
    default=200,
    show_default=True,
    type=click.IntRange(1),
    help="Messages a stream hands to a producer at once; offsets are committed after each hand-over.",
)
@click.option("--report-interval", default=5.0, show_default=True, help="Seconds between rate reports.")
@friendly_errors
def mirror_maker(
    consumer_configs,
    producer_config,
    whitelist,
    blacklist,
    num_streams,
    num_producers,
    batch_size,
    report_interval,
) -> None:
    """Mirror the topics a filter allows from the source cluster(s) into the target, until Ctrl-C/SIGTERM."""
    from zkafka.config import ConsumerConfig, ProducerConfig
    from zkafka.tools.mirror_maker import MirrorMaker
    from zkafka.topic_count import Blacklist, Whitelist

    if (whitelist is None) == (blacklist is None):
        raise click.UsageError("exactly one of --whitelist and --blacklist is needed")
    configure_logging(Context.verbose)
    topic_filter = Whitelist(whitelist) if whitelist is not None else Blacklist(blacklist)
    mirror = MirrorMaker(
        [ConsumerConfig.from_file(path) for path in consumer_configs],
        ProducerConfig.from_file(producer_config),
        topic_filter,
        num_streams=num_streams,
        num_producers=num_producers,
        batch_size=batch_size,
    )
    run_until_stopped(mirror, report_interval, "mirrored")


def run_until_stopped(mirror, report_interval: float, verb: str) -> None:
    """Run a mirror until SIGTERM/Ctrl-C, reporting its rate; then commit, shut down and report."""
    import gevent

    for signum in (signal.SIGTERM, signal.SIGINT):
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


@main.command("migrate")
@click.option(
    "--consumer-config",
    "--consumer.config",
    "consumer_config",
    required=True,
    type=click.Path(exists=True, dir_okay=False),
    help="0.7 consumer.properties of the source cluster (zk.connect, groupid).",
)
@click.option(
    "--producer-config",
    "--producer.config",
    "producer_config",
    required=True,
    type=click.Path(exists=True, dir_okay=False),
    help="0.8 producer.properties of the target cluster (metadata.broker.list).",
)
@click.option("--whitelist", default=None, help="Regex of topics to migrate.")
@click.option("--blacklist", default=None, help="Regex of topics not to migrate.")
@click.option("--num-streams", "--num.streams", default=1, show_default=True, type=click.IntRange(1))
@click.option("--num-producers", "--num.producers", default=1, show_default=True, type=click.IntRange(1))
@click.option(
    "--batch-size",
    "--queue.size",
    "batch_size",
    default=200,
    show_default=True,
    type=click.IntRange(1),
    help="Messages a stream hands over at once; the 0.7 offsets are committed once they are acknowledged.",
)
@click.option("--report-interval", default=5.0, show_default=True, help="Seconds between rate reports.")
@click.option(
    "--kafka.07.jar", "kafka_07_jar", hidden=True, help="Accepted from 0.8.2 command lines, not used."
)
@click.option("--zkclient.01.jar", "zkclient_01_jar", hidden=True, help="Accepted, not used.")
@friendly_errors
def migrate(
    consumer_config,
    producer_config,
    whitelist,
    blacklist,
    num_streams,
    num_producers,
    batch_size,
    report_interval,
    kafka_07_jar,
    zkclient_01_jar,
) -> None:
    """Copy topics from a 0.7 cluster into a 0.8 cluster until Ctrl-C/SIGTERM (0.8.2's KafkaMigrationTool).

    Payloads are re-sent with no key under the same topic name; the 0.7 group's offsets are committed only
    after the 0.8 brokers acknowledged the messages, so a restarted migration loses nothing.
    """
    from zkafka.config import ConsumerConfig
    from zkafka.config08 import ProducerConfig08
    from zkafka.tools.migration import KafkaMigrationTool
    from zkafka.topic_count import Blacklist, Whitelist

    if (whitelist is None) == (blacklist is None):
        raise click.UsageError("exactly one of --whitelist and --blacklist is needed")
    configure_logging(Context.verbose)
    topic_filter = Whitelist(whitelist) if whitelist is not None else Blacklist(blacklist)
    tool = KafkaMigrationTool(
        [ConsumerConfig.from_file(consumer_config)],
        ProducerConfig08.from_file(producer_config),
        topic_filter,
        num_streams=num_streams,
        num_producers=num_producers,
        batch_size=batch_size,
    )
    run_until_stopped(tool, report_interval, "migrated")
