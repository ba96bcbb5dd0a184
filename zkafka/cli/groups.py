"""``zkafka consumer-groups``: kafka-consumer-groups.sh against ``--bootstrap-server`` (list, describe, delete,
delete offsets, reset offsets), and 0.9's ``--zookeeper`` path for ZooKeeper groups (list, describe)."""

from __future__ import annotations

import logging

import click

from zkafka.cli.command import Context, ToolFailure, command_config_option, configure_logging, main
from zkafka.cli.tools import zk_session, zookeeper_options

_RESETS = ("to_earliest", "to_latest", "to_current", "to_offset", "shift_by", "to_datetime", "by_duration")


@main.command("consumer-groups", short_help="List, describe, delete and reset consumer groups.")
@click.option("--bootstrap-server", metavar="HOST:PORT", help="A broker of the cluster.")
@command_config_option
@zookeeper_options(required=False)
@click.option("--list", "list_", is_flag=True, help="List the consumer groups (with --state: and their states).")
@click.option("--describe", is_flag=True, help="Describe the --group: offsets (default), --members or --state.")
@click.option("--delete", is_flag=True, help="Delete the --group (refused while it has members).")
@click.option("--delete-offsets", is_flag=True, help="Delete the --group's offsets of the --topic (OffsetDelete).")
@click.option("--reset-offsets", is_flag=True, help="Reset the --group's offsets (the group must be inactive).")
@click.option("--group", "groups", multiple=True, help="The group (repeatable with --delete).")
@click.option("--members", is_flag=True, help="With --describe: the members.")
@click.option("--offsets", is_flag=True, help="With --describe: the offsets and lags (the default view).")
@click.option("--verbose", is_flag=True, help="With --describe --members: each member's assignment.")
@click.option("--state", is_flag=False, flag_value="", default=None, metavar="[S,S...]",
              help="With --describe: the group's state; with --list: every group's, or those in S,S...")  # fmt: skip
@click.option("--topic", "topics", multiple=True, metavar="T[:P,P...]", help="Topic (and partitions) to reset.")
@click.option("--all-topics", is_flag=True, help="With --reset-offsets: every topic the group has offsets of.")
@click.option("--to-earliest", is_flag=True, help="Reset to the log start.")
@click.option("--to-latest", is_flag=True, help="Reset to the log end.")
@click.option("--to-current", is_flag=True, help="Reset to the committed offset.")
@click.option("--to-offset", type=int, metavar="N", help="Reset to offset N.")
@click.option("--shift-by", type=int, metavar="N", help="Shift the committed offset by N (may be negative).")
@click.option("--to-datetime", metavar="YYYY-MM-DDTHH:mm:SS.sss", help="Reset to the first offset at that time.")
@click.option("--by-duration", metavar="PnDTnHnMnS", help="Reset to the first offset that long ago.")
@click.option("--dry-run", is_flag=True, help="Only print the reset plan (the default).")
@click.option("--execute", is_flag=True, help="Commit the reset plan.")
@click.option("--export", is_flag=True, help="Print the reset plan as CSV (topic,partition,offset).")
@click.option("--json", "as_json", is_flag=True, help="With --list or --describe: JSON (zkafka's).")
@click.option("--timeout", "--timeout-ms", "timeout_ms", type=click.IntRange(1), default=10000, show_default=True,
              help="Per request, in ms.")  # fmt: skip
def consumer_groups(**options) -> None:
    """Kafka's ConsumerGroupCommand for the groups the brokers' coordinators manage.

    --describe prints Kafka 3.4's tables: per partition the committed offset (OffsetFetch at the coordinator),
    the log end (ListOffsets at the leader), the lag and the member holding it; --members each member (its
    group.instance.id when static, its partition count, with --verbose its assignment); --state the
    coordinator, assignment strategy, state and member count. --reset-offsets prints its plan and changes
    nothing unless --execute, which commits it while the group is inactive (Empty).
    """
    from zkafka.tools.consumer_group_service import GroupToolError
    from zkafka.tools.reset_offsets import ResetError

    actions = [a for a in ("list_", "describe", "delete", "delete_offsets", "reset_offsets") if options[a]]
    if len(actions) != 1:
        raise click.UsageError(
            "give exactly one of --list, --describe, --delete, --delete-offsets and --reset-offsets"
        )
    if (options["zookeeper"] is None) == (options["bootstrap_server"] is None):
        raise click.UsageError("give exactly one of --bootstrap-server and --zookeeper")
    configure_logging(Context.verbose, level=logging.WARNING)
    action = _ACTIONS[actions[0]] if options["zookeeper"] is None else _zookeeper_action(actions[0])
    try:
        for line in action(options):
            click.echo(line)
    except (GroupToolError, ResetError) as exc:
        raise ToolFailure(str(exc)) from None


def _service(options: dict):
    from zkafka.tools.consumer_group_service import ConsumerGroupService

    return ConsumerGroupService(options["bootstrap_server"], options["timeout_ms"], _secure(options))


def _secure(options: dict):
    from zkafka.tools.command_config import client_secure

    return client_secure(options["command_config"])


def _group(options: dict) -> str:
    if len(options["groups"]) != 1:
        raise click.UsageError("give one --group")
    return options["groups"][0]


def _list(options: dict) -> list[str]:
    from zkafka.tools.consumer_groups import format_json, format_states

    state = options["state"]
    groups = _service(options).list_groups(_states(state) if state else None)
    if options["as_json"]:
        return [format_json(dict(groups) if state is not None else [g for g, _ in groups])]
    return format_states(groups) if state is not None else [g for g, _ in groups]


def _states(text: str) -> list[str]:
    """``--state S,S``: Kafka's state names, matched without regard to case."""
    from zkafka.coordinator.group_state import GroupState

    names = {state.value.lower(): state.value for state in GroupState}
    given = [s.strip() for s in text.split(",") if s.strip()]
    unknown = [s for s in given if s.lower() not in names]
    if unknown:
        raise ToolFailure(f"Invalid state list '{text}'. Valid states are: {', '.join(names.values())}")
    return [names[s.lower()] for s in given]


def _describe(options: dict) -> list[str]:
    from zkafka.tools import consumer_groups as cg

    group = _group(options)
    if options["as_json"]:
        description = cg.describe_group(options["bootstrap_server"], group, list(options["topics"]) or None,
                                        options["timeout_ms"], _secure(options))  # fmt: skip
        return [cg.format_json(description)]
    service = _service(options)
    described = service.describe(group)
    notice = cg.state_notice(described)
    if notice:
        click.echo(notice, err=True)
    if options["state"] is not None:
        return cg.format_state(described)
    if options["members"]:
        return cg.format_members(described, options["verbose"])
    return cg.format_offsets(cg.describe_offsets(service, described))


def _delete(options: dict) -> list[str]:
    from zkafka.protocol.errors import ErrorCode

    if not options["groups"]:
        raise click.UsageError("--delete needs --group")
    results = _service(options).delete_groups(list(options["groups"]))
    failed = {g: code for g, code in results.items() if code != ErrorCode.NONE}
    deleted = [g for g in results if g not in failed]
    if not failed:
        return [f"Deletion of requested consumer groups ({_quoted(deleted)}) was successful."]
    lines = ["", "Error: Deletion of some consumer groups failed:"]
    lines += [f"* Group '{g}' could not be deleted due to: {_why_not_deleted(code)}" for g, code in failed.items()]
    if deleted:
        lines += ["", f"These consumer groups were deleted successfully: {_quoted(deleted)}"]
    for line in lines:
        click.echo(line)
    raise ToolFailure(f"{len(failed)} of {len(results)} consumer groups were not deleted")


def _quoted(groups: list[str]) -> str:
    return ", ".join(f"'{g}'" for g in groups)


def _why_not_deleted(code: int) -> str:
    from zkafka.protocol.errors import ErrorCode

    return {
        ErrorCode.NON_EMPTY_GROUP: "org.apache.kafka.common.errors.GroupNotEmptyException: The group is not empty.",
        ErrorCode.GROUP_ID_NOT_FOUND: "org.apache.kafka.common.errors.GroupIdNotFoundException: The group id does not exist.",
    }.get(code, ErrorCode(code).name)  # fmt: skip


def _delete_offsets(options: dict) -> list[str]:
    from zkafka.tools.reset_offsets import parse_topic_partitions

    group = _group(options)
    if not options["topics"]:
        raise click.UsageError("--delete-offsets needs --topic")
    service = _service(options)
    partitions = []
    for value in options["topics"]:
        topic, chosen = parse_topic_partitions(value)
        partitions += [(topic, p) for p in chosen] if chosen is not None else service.partitions(topic)
    error, results = service.delete_offsets(group, partitions)
    return _deleted_offsets_lines(group, [t.partition(":")[0] for t in options["topics"]], error, results)


def _deleted_offsets_lines(group: str, topics: list[str], error: int, results: dict) -> list[str]:
    from zkafka.protocol.errors import ErrorCode

    if error == ErrorCode.GROUP_ID_NOT_FOUND:
        raise ToolFailure(f"'{group}' does not exist.")
    if error == ErrorCode.NON_EMPTY_GROUP:
        raise ToolFailure(f"Deleting offsets of a consumer group '{group}' is forbidden if the group is not empty.")
    if error != ErrorCode.NONE:
        raise ToolFailure(f"Encounter some unknown error: {ErrorCode(error).name}")
    failed = any(code != ErrorCode.NONE for code in results.values())
    head = ("Error: Encounter some partition level error, see the follow-up details:" if failed
            else f"Request succeed for deleting offsets with topic {', '.join(topics)} group {group}")  # fmt: skip
    rows = ["", f"{'TOPIC':<30} {'PARTITION':<15} STATUS"]
    for (topic, partition), code in sorted(results.items()):
        status = "Successful" if code == ErrorCode.NONE else f"Error: {ErrorCode(code).name}"
        rows.append(f"{topic:<30} {partition:<15} {status}")
    return [head, *rows]


def _scenario(options: dict):
    from zkafka.tools.reset_offsets import Scenario, parse_datetime, parse_duration

    given = [name for name in _RESETS if options[name] is not None and options[name] is not False]  # 0 counts
    if len(given) != 1:
        raise click.UsageError("--reset-offsets needs one of --to-earliest, --to-latest, --to-current, --to-offset,"
                               " --shift-by, --to-datetime and --by-duration")  # fmt: skip
    name = given[0]
    if name == "to_datetime":
        return Scenario("datetime", parse_datetime(options[name]))
    if name == "by_duration":
        from zkafka import utils

        return Scenario("duration", utils.now_ms() - parse_duration(options[name]))
    kind = {"to_earliest": "earliest", "to_latest": "latest", "to_current": "current", "to_offset": "offset"}
    return Scenario(kind.get(name, "shift"), 0 if isinstance(options[name], bool) else options[name])


def _reset_partitions(options: dict, service, committed: dict) -> list:
    from zkafka.tools.reset_offsets import parse_topic_partitions

    if options["all_topics"] == bool(options["topics"]):
        raise click.UsageError("--reset-offsets needs one of --topic and --all-topics")
    if options["all_topics"]:
        return sorted(committed)
    partitions = []
    for value in options["topics"]:
        topic, chosen = parse_topic_partitions(value)
        partitions += [(topic, p) for p in chosen] if chosen is not None else service.partitions(topic)
    return partitions


def _reset_offsets(options: dict) -> list[str]:
    """Kafka's resetOffsets: plan; --execute commits it if the group is inactive (Empty or Dead)."""
    from zkafka.protocol import EARLIEST_TIME
    from zkafka.tools.reset_offsets import LogRange, export_csv, format_plan, plan

    if options["dry_run"] and options["execute"]:
        raise click.UsageError("--reset-offsets takes one of --execute and --dry-run")
    group, scenario = _group(options), _scenario(options)
    service = _service(options)
    described = service.describe(group)
    if described.state not in ("Empty", "Dead"):
        raise ToolFailure(f"Assignments can only be reset if the group '{group}' is inactive, but the current"
                          f" state is {described.state}.")  # fmt: skip
    committed = service.committed(group) if described.state == "Empty" else {}
    partitions = _reset_partitions(options, service, committed)
    starts, ends = service.log_offsets(partitions, EARLIEST_TIME), service.log_offsets(partitions)
    logs = {tp: LogRange(starts[tp], ends[tp]) for tp in partitions if tp in starts and tp in ends}
    by_time = service.offsets_for_time(partitions, scenario.value) if scenario.kind in ("datetime", "duration") else None
    offsets, warnings = plan(scenario, partitions, committed, logs, by_time)
    for warning in warnings:
        click.echo(warning, err=True)
    if options["execute"]:
        failed = {tp: code for tp, code in service.commit(group, offsets).items() if code}
        if failed:
            raise ToolFailure(f"OffsetCommit of group {group!r} failed for {_partitions_errors(failed)}")
    elif not options["dry_run"]:
        click.echo("WARN: No action will be performed as the --execute option is missing.", err=True)
    return export_csv(offsets) if options["export"] else format_plan(group, offsets)


def _partitions_errors(failed: dict) -> str:
    from zkafka.protocol.errors import ErrorCode

    return ", ".join(f"{t}-{p} ({ErrorCode(code).name})" for (t, p), code in sorted(failed.items()))


def _zookeeper_action(action: str):
    """0.9's ZkConsumerGroupService: the groups under /consumers (``--list``, ``--describe``)."""
    if action not in ("list_", "describe"):
        raise click.UsageError("with --zookeeper: --list or --describe (ZooKeeper groups, as 0.9's tool)")

    def run(options: dict) -> list[str]:
        from zkafka.tools.consumer_groups import format_zk_description
        from zkafka.tools.offset_checker08 import check_offsets08
        from zkafka.zk.paths import CONSUMERS_PATH

        with zk_session(options["zookeeper"], options["connection_timeout_ms"]) as client:
            if action == "list_":
                return sorted(client.get_children(CONSUMERS_PATH)) if client.exists(CONSUMERS_PATH) else []
            group = _group(options)
            if not client.exists(f"{CONSUMERS_PATH}/{group}"):
                raise ToolFailure(f"Consumer group '{group}' does not exist in ZooKeeper.")
            return format_zk_description(check_offsets08(client, group, None, options["timeout_ms"]))

    return run


_ACTIONS = {
    "list_": _list,
    "describe": _describe,
    "delete": _delete,
    "delete_offsets": _delete_offsets,
    "reset_offsets": _reset_offsets,
}
