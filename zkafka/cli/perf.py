"""``zkafka perf``: the performance tests of 0.7's ``kafka.perf`` package."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from typing import Any

import click

from zkafka.cli.command import (
    Context,
    check_brokers_answer,
    checked_topic,
    client_config_option,
    client_properties,
    configure_logging,
    main,
)
from zkafka.cli.producer import acks_option, check_source, producer_source_options
from zkafka.utils.process import interrupt_greenlet_on_stop

# The producer properties each option of perf produce sets (0.8's key, then 0.7's): typed, it wins over
# --producer.config and --producer-property.
PERF_PRODUCER_OPTIONS = {
    "is_async": ("producer.type",),
    "compression": ("compression.codec",),
    "batch_size": ("batch.num.messages", "batch.size"),
    "request_required_acks": ("request.required.acks",),
}


def options(*decorators: Callable) -> Callable:
    """One decorator applying click options (or any decorators) in the order listed, top first."""

    def apply(func: Callable) -> Callable:
        for decorator in reversed(decorators):
            func = decorator(func)
        return func

    return apply


# How a perf test prints its result (both tests take them; their values go to ``show_result``).
output_options = options(
    click.option("--hide-header", is_flag=True, help="Do not print the CSV header."),
    click.option("--json", "as_json", is_flag=True, help="Print the result as one JSON object."),
    click.option(
        "--progress/--no-progress", default=None, help="Progress bar (default: when stderr is a terminal)."
    ),
)


PerfRun = Callable[[Callable[[int], None] | None], Any]  # run(report) -> the perf result


def run_with_progress(run: PerfRun, length: int, label: str) -> Any:
    """``run(report)`` with a progress bar on stderr of ``length`` messages that ``report(done)`` moves,
    finished at the result's ``total_messages``."""
    with click.progressbar(length=length, label=label, file=sys.stderr, show_pos=True) as bar:
        done = [0]

        def report(count: int) -> None:
            bar.update(count - done[0])
            done[0] = count

        result = run(report)
        report(result.total_messages)
    return result


def run_perf(run: PerfRun, progress: bool | None, length: int | None, label: str) -> Any:
    """``run(report)`` with a progress bar of ``length`` messages if ``progress`` (None: if stderr is a
    terminal) and the length is known; else ``run(None)``."""
    if progress is None:
        progress = sys.stderr.isatty()
    if progress and length:
        return run_with_progress(run, length, label)
    return run(None)


def show_result(result: Any, as_json: bool, header: str | None) -> None:
    """Print a perf result: one JSON object, or ``header`` (None: none) and its CSV line."""
    if as_json:
        click.echo(json.dumps(result.to_json()))
        return
    if header is not None:
        click.echo(header)
    click.echo(result.csv_line())


@main.group()
def perf() -> None:
    """Performance tests."""
    interrupt_greenlet_on_stop()  # Ctrl-C, SIGTERM, SIGHUP: "Aborted!", nothing more


@perf.command("produce")
@producer_source_options
@click.option("--topic", required=True, callback=checked_topic, help="Topic to send to.")
@click.option("--messages", type=click.IntRange(1), required=True, help="Number of messages to send.")
@click.option(
    "--message-size", type=click.IntRange(1), default=100, show_default=True, help="Bytes per message."
)
@click.option("--vary-message-size", is_flag=True, help="Random message sizes up to --message-size.")
@click.option(
    "--batch-size",
    type=click.IntRange(1),
    default=200,
    show_default=True,
    help="Sync: messages per send call (one request); async: batch.size.",
)
@click.option(
    "--compression",
    default="none",
    show_default=True,
    metavar="none|gzip|snappy|lz4|0-3",
    help="lz4 (3): the 0.8 line only.",
)
@click.option("--async", "is_async", is_flag=True, help="Use the async producer (one message per send call).")
@acks_option(1)
@click.option(
    "--max-in-flight",
    type=click.IntRange(1),
    default=None,
    help="0.8 line: max.in.flight.requests.per.connection (acks 1 or -1: requests awaiting an answer at once; "
    "default 1, one round trip a request).",
)
@click.option("--threads", type=click.IntRange(1), default=1, show_default=True, help="Producer threads.")
@click.option("--initial-message-id", type=int, default=None, help="Start each payload with its message id.")
@click.option(
    "--producer-property", "properties", multiple=True, metavar="KEY=VALUE", help="Any producer property."
)
@client_config_option(
    "producer", "A producer.properties file (--producer-property wins; an option typed here wins over both)."
)
@output_options
def perf_produce(
    zookeeper: str | None,
    broker_list: str | None,
    topic: str,
    messages: int,
    message_size: int,
    vary_message_size: bool,
    batch_size: int,
    compression: str,
    is_async: bool,
    request_required_acks: int,
    max_in_flight: int | None,
    threads: int,
    initial_message_id: int | None,
    properties: tuple[str, ...],
    producer_config: str | None,
    hide_header: bool,
    as_json: bool,
    progress: bool | None,
) -> None:
    """Send MESSAGES messages to TOPIC as fast as possible and print the rate, as Kafka's
    ProducerPerformance does (start, end, compression, message size, batch size, MB, MB/s, messages,
    messages/s)."""
    from zkafka.client08.topic_metadata import is_broker_list_08
    from zkafka.records.compression import ALL_CODECS, CODECS_07, parse_codec
    from zkafka.tools.producer_performance import CSV_HEADER, PerfOptions, run

    configure_logging(Context.verbose, level=30)
    check_source(zookeeper, broker_list)
    line08 = bool(broker_list) and is_broker_list_08(broker_list)
    if line08:
        check_brokers_answer(broker_list, topic)
    producer_props = client_properties(producer_config, properties, PERF_PRODUCER_OPTIONS)
    if max_in_flight is not None:
        if not line08:
            raise click.UsageError("--max-in-flight: the 0.8 line only (a host:port,... --broker-list)")
        producer_props["max.in.flight.requests.per.connection"] = str(max_in_flight)
    options = PerfOptions(
        topic=topic,
        messages=messages,
        message_size=message_size,
        batch_size=batch_size,
        compression=parse_codec(compression, ALL_CODECS if line08 else CODECS_07),
        is_async=is_async,
        threads=threads,
        initial_message_id=initial_message_id,
        vary_message_size=vary_message_size,
        zookeeper=zookeeper,
        broker_list=broker_list,
        producer_props=producer_props,
        request_required_acks=request_required_acks,
    )
    result = run_perf(lambda report: run(options, report), progress, messages, "producing")
    show_result(result, as_json, None if hide_header else CSV_HEADER)


@perf.command("consume")
@click.option(
    "--zookeeper", metavar="HOST:PORT[/CHROOT]", help="ZooKeeper of the cluster (a consumer group)."
)
@click.option(
    "--broker-list",
    metavar="HOST:PORT,...",
    help="0.8 line: read every partition with SimpleConsumer08 from its leader (no group).",
)
@click.option(
    "--bootstrap-server",
    metavar="HOST:PORT,...",
    help="One member of a coordinator-managed group (a 0.9 GroupConsumer) instead of a ZooKeeper group.",
)
@click.option("--topic", required=True, callback=checked_topic, help="Topic to consume.")
@click.option("--group", help="Consumer group (default: a fresh perf-consumer-<n>, deleted afterwards).")
@click.option("--fetch-size", type=click.IntRange(1), default=1024 * 1024, show_default=True)
@click.option(
    "--messages", type=click.IntRange(1), help="Stop after this many messages (default: all there are)."
)
@click.option("--threads", type=click.IntRange(1), default=10, show_default=True, help="Streams to read.")
@click.option("--from-latest", is_flag=True, help="Start at the log ends (default: the oldest messages).")
@click.option("--socket-buffer-size", type=click.IntRange(1), default=2 * 1024 * 1024, show_default=True)
@click.option(
    "--consumer-timeout-ms",
    type=click.IntRange(1),
    default=5000,
    show_default=True,
    help="End when idle this long.",
)
@click.option("--reporting-interval", type=click.IntRange(1), default=5000, show_default=True, help="ms.")
@click.option("--show-detailed-stats", is_flag=True, help="Per-thread lines every reporting interval.")
@click.option(
    "--consumer-property", "properties", multiple=True, metavar="KEY=VALUE", help="Any consumer property."
)
@client_config_option("consumer", "A consumer.properties file (--consumer-property wins).")
@output_options
@click.option(
    "--line",
    type=click.Choice(["0.7", "0.8"]),
    help="With --zookeeper: the cluster's line (default: told from its znodes).",
)
def perf_consume(
    zookeeper: str | None,
    broker_list: str | None,
    bootstrap_server: str | None,
    topic: str,
    group: str | None,
    fetch_size: int,
    messages: int | None,
    threads: int,
    from_latest: bool,
    socket_buffer_size: int,
    consumer_timeout_ms: int,
    reporting_interval: int,
    show_detailed_stats: bool,
    properties: tuple[str, ...],
    consumer_config: str | None,
    hide_header: bool,
    as_json: bool,
    progress: bool | None,
    line: str | None,
) -> None:
    """Consume TOPIC with a ZooKeeper consumer group (the 0.7 or 0.8 high-level consumer, as the cluster is)
    as fast as possible and print the rate, as Kafka's ConsumerPerformance does (start, end, fetch size, MB,
    MB/s, messages, messages/s). The group's streams are read a fetched chunk at a time
    (KafkaStream.next_batch; every message is still taken and its payload measured), which spares the
    per-message next() call; on the 0.8 line each chunk is a MessageBatch08 whose values column is
    measured, with no object made per message. With --broker-list HOST:PORT,... (0.8 line) every partition is read from its
    leader with SimpleConsumer08 instead; with --bootstrap-server, by one member of a coordinator group."""
    from zkafka.tools.consumer_performance import CSV_HEADER

    configure_logging(Context.verbose, level=30)
    if sum(bool(x) for x in (zookeeper, broker_list, bootstrap_server)) != 1:
        raise click.UsageError("give exactly one of --zookeeper, --broker-list and --bootstrap-server")
    props = client_properties(consumer_config, properties)
    if broker_list:  # a --bootstrap-server group consumer checks through its own channels
        check_brokers_answer(broker_list, topic)
    common = {"topic": topic, "fetch_size": fetch_size, "messages": messages, "from_latest": from_latest}
    common["consumer_timeout_ms"] = consumer_timeout_ms
    detailed = show_detailed_stats and bool(zookeeper)  # per-thread lines: a ZooKeeper group's only
    if bootstrap_server:
        run_it = _coordinator_group_run(bootstrap_server, group, properties=props, **common)
    elif broker_list:
        run_it = _simple_consumer_run(broker_list, socket_buffer_size=socket_buffer_size, **common)
    else:
        run_it = _zookeeper_group_run(
            zookeeper,
            group,
            threads=threads,
            socket_buffer_size=socket_buffer_size,
            reporting_interval_ms=reporting_interval,
            properties=props,
            line=line,
            detailed=detailed and not as_json,
            hide_header=hide_header,
            **common,
        )
    if detailed and progress is None:
        progress = False  # the per-thread lines show the progress
    result = run_perf(run_it, progress, messages, "consuming")
    show_result(result, as_json, None if hide_header or detailed else CSV_HEADER)


def _coordinator_group_run(
    bootstrap_server: str,
    group: str | None,
    *,
    topic: str,
    fetch_size: int,
    messages: int | None,
    from_latest: bool,
    consumer_timeout_ms: int,
    properties: dict[str, str],
) -> PerfRun:
    """One member of a coordinator-managed group (a 0.9 GroupConsumer), made (the brokers asked) before the run."""
    from zkafka.tools.group_consumer_performance import group_perf_consumer, run_group_perf

    consumer = group_perf_consumer(bootstrap_server, topic, group, fetch_size, from_latest, properties)

    def run_it(report):
        return run_group_perf(consumer, topic, messages, consumer_timeout_ms, report)

    return run_it


def _simple_consumer_run(broker_list: str, **settings: Any) -> PerfRun:
    """Every partition read from its leader with SimpleConsumer08 (0.8 line, no group); ``settings`` are
    SimplePerfOptions fields."""
    from zkafka.tools.simple_consumer_performance import SimplePerfOptions
    from zkafka.tools.simple_consumer_performance import run as run_simple

    simple = SimplePerfOptions(broker_list=broker_list, **settings)

    def run_it(report):
        return run_simple(simple, report)

    return run_it


def _zookeeper_group_run(
    zookeeper: str | None,
    group: str | None,
    *,
    properties: dict[str, str],
    detailed: bool,
    hide_header: bool,
    **settings: Any,
) -> PerfRun:
    """A ZooKeeper consumer group (the line's high-level consumer); ``settings`` are ConsumerPerfOptions
    fields, ``detailed`` asks for per-thread lines after their header (unless hidden)."""
    from zkafka.tools.consumer_performance import DETAIL_HEADER, ConsumerPerfOptions, run

    options = ConsumerPerfOptions(zookeeper=zookeeper, group=group, consumer_props=properties, **settings)
    detail = None
    if detailed:
        if not hide_header:
            click.echo(DETAIL_HEADER)
        detail = click.echo

    def run_it(report):
        return run(options, report, detail)

    return run_it
