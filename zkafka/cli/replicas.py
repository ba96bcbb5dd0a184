"""``zkafka preferred-replica-election`` and ``zkafka reassign-partitions``: 0.8.2's replica tools (ZooKeeper only)."""

from __future__ import annotations

from pathlib import Path

import click

from zkafka.cli.command import main
from zkafka.cli.tools import zk_session, zookeeper_options


@main.command("preferred-replica-election", short_help="Hand partitions back to their preferred replicas.")
@zookeeper_options
@click.option(
    "--path-to-json-file",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help='Partitions to elect for: {"partitions":[{"topic":"t","partition":0}]} (default: all).',
)
def preferred_replica_election(
    zookeeper: str, connection_timeout_ms: int, path_to_json_file: Path | None
) -> None:
    """Ask the controller to make each partition's first assigned replica its leader again (if in the ISR)."""
    from zkafka.tools import preferred_replica_election as command

    partitions = None
    if path_to_json_file is not None:
        partitions = command.partitions_from_json(path_to_json_file.read_text(), str(path_to_json_file))
    with zk_session(zookeeper, connection_timeout_ms, create_chroot=True) as client:
        for line in command.start_election(client, partitions):
            click.echo(line)


@main.command("reassign-partitions", short_help="Move partition replicas between brokers.")
@zookeeper_options
@click.option(
    "--generate", is_flag=True, help="Propose an assignment of --topics-to-move-json-file over --broker-list."
)
@click.option("--execute", is_flag=True, help="Start the moves of --reassignment-json-file.")
@click.option("--verify", is_flag=True, help="Check the moves of --reassignment-json-file.")
@click.option("--topics-to-move-json-file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--reassignment-json-file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--broker-list", metavar="1,2,3", help="--generate: the brokers to place replicas on.")
def reassign_partitions(
    zookeeper: str,
    connection_timeout_ms: int,
    generate: bool,
    execute: bool,
    verify: bool,
    topics_to_move_json_file: Path | None,
    reassignment_json_file: Path | None,
    broker_list: str | None,
) -> None:
    """Move replicas with 0.8.2's JSON files: --generate a proposal, --execute it, --verify it."""
    from zkafka.admin.assignment import AdminOperationError
    from zkafka.tools import reassign_partitions as command

    if [generate, execute, verify].count(True) != 1:
        raise AdminOperationError("give exactly one of --generate, --execute or --verify")
    if generate and (topics_to_move_json_file is None or broker_list is None):
        raise AdminOperationError("--generate needs --topics-to-move-json-file and --broker-list")
    if not generate and reassignment_json_file is None:
        raise AdminOperationError("--execute and --verify need --reassignment-json-file")
    with zk_session(zookeeper, connection_timeout_ms, create_chroot=execute) as client:
        if generate:
            topics = command.topics_to_move(topics_to_move_json_file.read_text())
            lines = command.generate(client, topics, command.parse_broker_list(broker_list))
        else:
            moves = command.reassignment_file(reassignment_json_file.read_text())
            lines = command.execute(client, moves) if execute else command.verify(client, moves)
    for line in lines:
        click.echo(line)
