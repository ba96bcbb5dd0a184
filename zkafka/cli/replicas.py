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
