"""``zkafka explain rebalance`` and ``zkafka explain assignment``: partition assignment, step by step."""

from __future__ import annotations

import json

import click

from zkafka.cli.command import main
from zkafka.cli.tools import zk_session


@main.group("explain")
def explain() -> None:
    """Show how partitions are divided among consumers, step by step, and what would move."""


def _print(explanation, as_json: bool) -> None:
    click.echo(json.dumps(explanation.to_json(), indent=2) if as_json else explanation.render())


@explain.command("rebalance")
@click.option("--topic", default="orders", show_default=True, help="Topic of --partitions.")
@click.option(
    "--partitions",
    metavar="LIST",
    help="The topic's partitions: 0.7 names (0-0,0-1), BROKER:COUNT (0:2,1:2) or 0.8 ids (0,1,2).",
)
@click.option(
    "--consumer",
    "consumers",
    multiple=True,
    metavar="ID[:STREAMS]",
    help="A member and its stream count for the topic (repeat; default 1 stream).",
)
@click.option(
    "--zookeeper", metavar="HOST:PORT[/CHROOT]", help="Explain a live group instead (with --group)."
)
@click.option("--group", help="The live group to explain (with --zookeeper).")
@click.option("--connection-timeout-ms", type=click.IntRange(1), default=6000, show_default=True)
@click.option(
    "--strategy",
    type=click.Choice(["range", "roundrobin"]),
    default="range",
    show_default=True,
    help="partition.assignment.strategy (roundrobin: the 0.8 ZooKeeper consumer only).",
)
@click.option(
    "--join", "joining", default="new-consumer", show_default=True, help="Name of a member joining."
)
@click.option("--json", "as_json", is_flag=True, help="Print the steps as JSON.")
def explain_rebalance(
    topic, partitions, consumers, zookeeper, group, connection_timeout_ms, strategy, joining, as_json
) -> None:
    """The ZooKeeper consumers' rebalance: sorted partitions, sorted consumer threads, each thread's slice,
    and what would move if a member left or joined."""
    from zkafka.explain import explain_zk_rebalance, parse_counted, parse_partitions
    from zkafka.topic_count import thread_ids

    if zookeeper or group:
        if not (zookeeper and group):
            raise click.UsageError("--zookeeper and --group go together")
        from zkafka.ui.zk_groups import read_zk_group

        with zk_session(zookeeper, connection_timeout_ms) as zk:
            live = read_zk_group(zk, group)
        if not live.members:
            raise click.ClickException(f"group {group} has no members in ZooKeeper (/consumers/{group}/ids)")
        _print(explain_zk_rebalance(live.members, live.partitions, strategy, joining), as_json)
        return
    if not partitions or not consumers:
        raise click.UsageError("give --partitions and --consumer (or --zookeeper with --group)")
    try:
        parts = parse_partitions(partitions)
        counted = [parse_counted(c) for c in consumers]
    except ValueError as exc:
        raise click.BadParameter(str(exc)) from None
    members = {name: {topic: thread_ids(name, n)} for name, n in counted}
    _print(explain_zk_rebalance(members, {topic: parts}, strategy, joining), as_json)


@explain.command("assignment")
@click.option(
    "--strategy",
    type=click.Choice(["range", "roundrobin", "sticky"]),
    default="range",
    show_default=True,
    help="The coordinator group's partition assignor.",
)
@click.option(
    "--topic", "topics", multiple=True, required=True, metavar="NAME:PARTITIONS", help="A topic (repeat)."
)
@click.option(
    "--member",
    "members",
    multiple=True,
    required=True,
    metavar="ID[=TOPIC,TOPIC]",
    help="A member and the topics it subscribes to (default: every --topic; repeat).",
)
@click.option("--join", "joining", default="new-member", show_default=True, help="Name of a member joining.")
@click.option("--json", "as_json", is_flag=True, help="Print the steps as JSON.")
def explain_assignment(strategy, topics, members, joining, as_json) -> None:
    """The group coordinator's assignors (0.9): JoinGroup, the leader's assignment, SyncGroup, and what would
    move if a member left or joined."""
    from zkafka.explain import explain_assignment as explain_it
    from zkafka.explain import parse_counted

    try:
        counts = dict(parse_counted(t, default=-1) for t in topics)
    except ValueError as exc:
        raise click.BadParameter(str(exc)) from None
    if any(n < 0 for n in counts.values()):
        raise click.BadParameter("each --topic needs NAME:PARTITIONS")
    subscriptions = {}
    for text in members:
        name, _, listed = text.partition("=")
        subscribed = [t.strip() for t in listed.split(",") if t.strip()] if listed else sorted(counts)
        unknown = [t for t in subscribed if t not in counts]
        if unknown:
            raise click.BadParameter(
                f"member {name} subscribes to {', '.join(unknown)}, not given as --topic"
            )
        subscriptions[name] = subscribed
    _print(explain_it(strategy, counts, subscriptions, joining), as_json)


def _pairs(values, what: str) -> list[tuple[int, int]]:
    """``A:B`` integer pairs of a repeated option."""
    try:
        return [(int(a), int(b)) for a, _, b in (v.partition(":") for v in values)]
    except ValueError:
        raise click.BadParameter(f"each {what} is two integers, A:B") from None


@explain.command("fetch")
@click.option(
    "--available-bytes", type=click.IntRange(0), required=True, help="Bytes readable past the fetch offset."
)
@click.option("--min-bytes", type=click.IntRange(0), default=1, show_default=True, help="fetch.min.bytes.")
@click.option("--max-wait-ms", type=int, default=500, show_default=True, help="fetch.max.wait.ms.")
@click.option(
    "--append", "appends", multiple=True, metavar="MS:BYTES", help="An append arriving later (repeat)."
)
@click.option("--error", metavar="CODE", help="Reading fails with this error (NOT_LEADER_FOR_PARTITION...).")
@click.option("--segment-behind", is_flag=True, help="The fetch offset lies in an older segment.")
@click.option("--json", "as_json", is_flag=True, help="Print the steps as JSON.")
def explain_fetch(available_bytes, min_bytes, max_wait_ms, appends, error, segment_behind, as_json) -> None:
    """The leader's side of one fetch: answered at once, or parked in the fetch purgatory until min_bytes or
    max_wait_ms."""
    from zkafka.explain.fetch import explain_fetch as explain_it

    added = _pairs(appends, "--append")
    _print(explain_it(available_bytes, min_bytes, max_wait_ms, added, error, segment_behind), as_json)


@explain.command("replication")
@click.option(
    "--replica",
    "replicas",
    multiple=True,
    required=True,
    metavar="ID:LEO",
    help="A replica and its log end offset (repeat; the first is the leader unless --leader).",
)
@click.option("--leader", type=int, help="The leader's broker id.")
@click.option("--isr", metavar="IDS", help="The in-sync replicas, comma-separated (default: every replica).")
@click.option(
    "--acks", type=int, default=-1, show_default=True, help="The produce's acks (request.required.acks)."
)
@click.option("--min-insync-replicas", type=click.IntRange(1), default=1, show_default=True)
@click.option(
    "--produce", "produces", multiple=True, type=int, metavar="OFFSET", help="A parked produce's end offset."
)
@click.option(
    "--high-watermark", type=click.IntRange(0), default=0, help="The HW before (it never moves back)."
)
@click.option("--json", "as_json", is_flag=True, help="Print the steps as JSON.")
def explain_replication(
    replicas, leader, isr, acks, min_insync_replicas, produces, high_watermark, as_json
) -> None:
    """One partition's high watermark from its replicas' log end offsets and ISR, and which produces complete,
    stay parked or fail with NOT_ENOUGH_REPLICAS."""
    from zkafka.explain.replication import explain_replication as explain_it

    leos = dict(_pairs(replicas, "--replica"))
    try:
        in_sync = [int(r) for r in isr.split(",")] if isr else list(leos)
        explained = explain_it(
            leos,
            in_sync,
            leader if leader is not None else next(iter(leos)),
            acks,
            min_insync_replicas,
            produces,
            high_watermark,
        )
    except ValueError as exc:
        raise click.BadParameter(str(exc)) from None
    _print(explained, as_json)
