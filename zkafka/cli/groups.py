"""``zkafka consumer-groups``: list and describe the groups brokers' coordinators manage."""

from __future__ import annotations

import logging

import click

from zkafka.cli.command import Context, ToolFailure, configure_logging, main, topic_lists_option


@main.command("consumer-groups", short_help="List or describe coordinator-managed groups.")
@click.option("--bootstrap-server", required=True, metavar="HOST:PORT", help="A broker of the cluster.")
@click.option("--list", "list_", is_flag=True, help="List every consumer group.")
@click.option("--describe", is_flag=True, help="Describe the --group: members, assignment, offsets and lag.")
@click.option("--group", help="The group to describe.")
@topic_lists_option("With --describe: also these topics' partitions (an empty group has no subscriptions).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.option("--timeout-ms", type=click.IntRange(1), default=10000, show_default=True, help="Per request.")
def consumer_groups(
    bootstrap_server: str,
    list_: bool,
    describe: bool,
    group: str | None,
    topics: tuple[str, ...],
    as_json: bool,
    timeout_ms: int,
) -> None:
    """The coordinator groups (0.9's ConsumerGroupCommand with --new-consumer).

    --describe prints the group's state, generation and protocol, each member (id, client id, host) with its
    assignment, and per partition the committed offset (OffsetFetch at the coordinator), the log end
    (ListOffsets at the leader) and the lag.
    """
    from zkafka.tools.consumer_groups import (
        GroupToolError,
        describe_group,
        format_description,
        format_json,
        list_groups,
    )
    from zkafka.tools.offset_checker import split_topics

    if list_ == describe:
        raise click.UsageError("give exactly one of --list and --describe")
    configure_logging(Context.verbose, level=logging.WARNING)
    if list_:
        names = list_groups(bootstrap_server, timeout_ms)
        for text in [format_json(names)] if as_json else names:
            click.echo(text)
        return
    if not group:
        raise click.UsageError("--describe needs --group")
    try:
        description = describe_group(bootstrap_server, group, split_topics(topics) or None, timeout_ms)
    except GroupToolError as exc:
        raise ToolFailure(str(exc)) from None
    for text in [format_json(description)] if as_json else format_description(description):
        click.echo(text)
