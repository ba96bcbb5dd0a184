"""``zkafka configs``: kafka-configs.sh for topics (and brokers, described only) through ``--bootstrap-server``
(DescribeConfigs/AlterConfigs) or ``--zookeeper``; users' SCRAM credentials and client quotas through
``--zookeeper``."""

from __future__ import annotations

import click

from zkafka.cli.command import command_config_option, main
from zkafka.cli.tools import zk_session, zookeeper_options
from zkafka.quota.quota_entity import DEFAULT


@main.command("configs", short_help="Describe and alter topic, client and user configs (kafka-configs.sh).")
@click.option("--bootstrap-server", metavar="HOST:PORT", help="A broker of the cluster (the admin requests).")
@command_config_option
@zookeeper_options(required=False)
@click.option(
    "--entity-type",
    "entity_types",
    multiple=True,
    required=True,
    type=click.Choice(["topics", "brokers", "users", "clients"]),
    help="Twice for a user's client: --entity-type users ... --entity-type clients ...",
)
@click.option("--entity-name", "entity_names", multiple=True, help="The topic, broker id, user or client id.")
@click.option(
    "--entity-default",
    "entity_names",
    flag_value=DEFAULT,
    multiple=True,
    help="The default user or client id (in place of --entity-name).",
)
@click.option(
    "--describe", is_flag=True, help="List the entity's configs (dynamic ones; --all for every one)."
)
@click.option("--all", "all_configs", is_flag=True, help="--describe: every config, not only the overrides.")
@click.option("--alter", is_flag=True, help="Change the entity's overrides.")
@click.option("--add-config", metavar="K=V,K2=[A,B]", help="--alter: overrides to set.")
@click.option("--delete-config", metavar="K,K2", help="--alter: overrides to remove.")
def configs(**options) -> None:
    """Describe or alter a topic's overrides as kafka-configs.sh does; brokers (read only) through
    --bootstrap-server; users' SCRAM credentials and client quotas (users, clients, a user's clients, and
    their --entity-default) through --zookeeper."""
    from zkafka.admin.client_quotas import describe_quota_entities
    from zkafka.tools import config_command as cc
    from zkafka.tools.command_config import admin_client

    if (options["zookeeper"] is None) == (options["bootstrap_server"] is None):
        raise click.UsageError("give exactly one of --bootstrap-server and --zookeeper")
    if options["describe"] == options["alter"]:
        raise click.UsageError("give exactly one of --describe and --alter")
    if options["alter"] and not (options["add_config"] or options["delete_config"]):
        raise click.UsageError("--alter needs --add-config or --delete-config")
    add = cc.parse_add_config(options["add_config"] or "")
    delete = [k.strip() for k in (options["delete_config"] or "").split(",") if k.strip()]
    kinds, names = options["entity_types"], options["entity_names"]
    every = (
        options["describe"] and not names and kinds in (("users",), ("clients",))
    )  # every entity of the type
    if every:
        names = (None,)
    if len(names) != len(kinds) or (len(kinds) == 2 and set(kinds) != {"users", "clients"}) or len(kinds) > 2:
        raise click.UsageError(
            "give --entity-name or --entity-default with each --entity-type (users, then clients)"
        )
    kind, name = kinds[0], names[0]
    if kind in ("users", "clients") and options["bootstrap_server"] is not None:
        raise click.UsageError(f"--entity-type {kind} takes --zookeeper (kept there in ZooKeeper mode)")
    if options["bootstrap_server"] is not None:
        admin = admin_client(options["bootstrap_server"], options["command_config"])
        if options["describe"]:
            lines = cc.describe(admin, kind, name, options["all_configs"])
        else:
            lines = cc.alter(admin, kind, name, add, delete)
    else:
        if kind == "brokers":
            raise click.UsageError(
                "--zookeeper takes --entity-type topics, users or clients (brokers: --bootstrap-server)"
            )
        with zk_session(
            options["zookeeper"], options["connection_timeout_ms"], create_chroot=options["alter"]
        ) as zk:
            if kind == "topics":
                lines = (
                    cc.describe_zookeeper(zk, name)
                    if options["describe"]
                    else cc.alter_zookeeper(zk, name, add, delete)
                )
            else:
                entity = dict(zip(kinds, names, strict=True))
                lines = (
                    describe_quota_entities(zk, kind)
                    if every
                    else cc.quota_entity(
                        zk, entity.get("users"), entity.get("clients"), add, delete, options["alter"]
                    )
                )
    for line in lines:
        click.echo(line)
