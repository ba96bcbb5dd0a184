"""``zkafka topics``: 0.8.2's kafka-topics.sh (talks to ZooKeeper only)."""

from __future__ import annotations

import click

from zkafka.cli.command import command_config_option, main
from zkafka.cli.tools import zk_session, zookeeper_options
from zkafka.errors import KafkaError

ACTIONS = ("create", "list", "describe", "alter", "delete")


class TopicCommandError(KafkaError):
    """Options that do not make one topic command."""


@main.command("topics", short_help="Create, list, describe, alter and delete 0.8 topics.")
@click.option("--bootstrap-server", metavar="HOST:PORT", help="A broker of the cluster (the admin requests).")
@command_config_option
@zookeeper_options(required=False)
@click.option("--create", is_flag=True, help="Create a topic.")
@click.option("--list", "list_", is_flag=True, help="List the topics.")
@click.option("--describe", is_flag=True, help="Describe topics: assignment, leader and ISR per partition.")
@click.option("--alter", is_flag=True, help="Add partitions to a topic, or change its configuration.")
@click.option("--delete", is_flag=True, help="Mark a topic for deletion (acted upon if delete.topic.enable).")
@click.option("--topic", help="The topic (a whitelist regex for all actions but --create).")
@click.option("--partitions", type=click.IntRange(1), help="Partitions to create, or to grow the topic to.")
@click.option("--replication-factor", type=click.IntRange(1), help="Replicas of each partition (--create).")
@click.option("--replica-assignment", metavar="B1:B2,B3:B4", help="Manual replicas, one list per partition.")
@click.option(
    "--config", "configs", multiple=True, metavar="KEY=VALUE", help="A topic override (repeatable)."
)
@click.option(
    "--delete-config", "delete_configs", multiple=True, metavar="KEY", help="Remove an override (--alter)."
)
@click.option(
    "--under-replicated-partitions", is_flag=True, help="--describe: only partitions short of replicas."
)
@click.option(
    "--unavailable-partitions", is_flag=True, help="--describe: only partitions without a live leader."
)
@click.option("--topics-with-overrides", is_flag=True, help="--describe: only topics with overrides.")
def topics(**options) -> None:
    """Manage 0.8 topics as kafka-topics.sh does: in ZooKeeper (--zookeeper; the controller elects their leaders)
    or through CreateTopics, CreatePartitions, DeleteTopics and Metadata (--bootstrap-server)."""
    from zkafka.config import parse_overrides
    from zkafka.tools import topic_command
    from zkafka.tools.command_config import admin_client

    flags = (options["create"], options["list_"], options["describe"], options["alter"], options["delete"])
    chosen = [name for name, flag in zip(ACTIONS, flags, strict=True) if flag]
    if len(chosen) != 1:
        raise TopicCommandError("give exactly one action: --list, --describe, --create, --alter or --delete")
    if (options["zookeeper"] is None) == (options["bootstrap_server"] is None):
        raise TopicCommandError("give exactly one of --zookeeper and --bootstrap-server")
    action, topic = chosen[0], options["topic"]
    partitions, assignment = options["partitions"], options["replica_assignment"]
    configs, delete_configs = options["configs"], options["delete_configs"]
    _check(action, topic, partitions, options["replication_factor"], assignment, configs, delete_configs)
    filters = {
        "under_replicated": options["under_replicated_partitions"],
        "unavailable": options["unavailable_partitions"],
        "with_overrides": options["topics_with_overrides"],
    }
    if action != "describe" and any(filters.values()):
        raise TopicCommandError(
            "--under-replicated-partitions, --unavailable-partitions and --topics-with-overrides go with --describe"
        )
    config = parse_overrides(configs)
    if options["bootstrap_server"] is not None:
        admin = admin_client(options["bootstrap_server"], options["command_config"])
        lines = topic_command.admin_run(admin, action, {**options, "config": config, "filters": filters})
    else:
        create_chroot = action in ("create", "alter", "delete")
        with zk_session(options["zookeeper"], options["connection_timeout_ms"], create_chroot) as client:
            if action == "create":
                lines = topic_command.create(
                    client, topic, partitions, options["replication_factor"], assignment, config
                )
            elif action == "list":
                lines = topic_command.list_topics(client, topic)
            elif action == "describe":
                lines = topic_command.describe(client, topic, **filters)
            elif action == "alter":
                lines = topic_command.alter(client, topic, partitions, assignment, config, delete_configs)
            else:
                lines = topic_command.delete(client, topic)
    for line in lines:
        click.echo(line)


def _check(
    action, topic, partitions, replication_factor, replica_assignment, configs, delete_configs
) -> None:
    if action in ("create", "alter", "delete") and not topic:
        raise TopicCommandError(f"--{action} needs --topic")
    if partitions is not None and action not in ("create", "alter"):
        raise TopicCommandError("--partitions goes with --create or --alter")
    if replication_factor is not None and action != "create":
        raise TopicCommandError("--replication-factor goes with --create")
    if (
        replica_assignment
        and action == "create"
        and (partitions is not None or replication_factor is not None)
    ):
        raise TopicCommandError("--replica-assignment replaces --partitions and --replication-factor")
    if replica_assignment and action == "alter" and partitions is None:
        raise TopicCommandError("--replica-assignment with --alter needs --partitions")
    if replica_assignment and action not in ("create", "alter"):
        raise TopicCommandError("--replica-assignment goes with --create or --alter")
    if configs and action not in ("create", "alter"):
        raise TopicCommandError("--config goes with --create or --alter")
    if delete_configs and action != "alter":
        raise TopicCommandError("--delete-config goes with --alter")
    if action == "alter" and partitions is None and not configs and not delete_configs:
        raise TopicCommandError("--alter needs --partitions, --config or --delete-config")
