"""``zkafka mirror-maker``: copy topics from source clusters into a target cluster."""

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
    import gevent

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
    for signum in (signal.SIGTERM, signal.SIGINT):
        gevent.signal_handler(signum, mirror._stopping.set)

    def report(stats) -> None:
        click.echo(
            f"mirrored {stats.messages} messages ({stats.bytes / 1e6:.1f} MB) at {stats.rate():.0f} msg/s, "
            f"{stats.commits} offset commits",
            err=True,
        )

    try:
        mirror.run(report=report, report_interval=report_interval)
    finally:
        mirror.close()
        report(mirror.stats)
