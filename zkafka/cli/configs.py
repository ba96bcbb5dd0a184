"""``zkafka configs``: kafka-configs.sh for topics (and brokers, described only) through ``--bootstrap-server``
(DescribeConfigs/AlterConfigs) or ``--zookeeper``; users' SCRAM credentials through ``--zookeeper``."""

from __future__ import annotations

import click

from zkafka.cli.command import main
from zkafka.cli.tools import zk_session, zookeeper_options


@main.command("configs", short_help="Describe and alter topic configs (kafka-configs.sh).")
@click.option("--bootstrap-server", metavar="HOST:PORT", help="A broker of the cluster (the admin requests).")
@zookeeper_options(required=False)
@click.option("--entity-type", type=click.Choice(["topics", "brokers", "users"]), required=True)
@click.option("--entity-name", required=True, help="The topic, the broker id, or the user.")
@click.option(
    "--describe", is_flag=True, help="List the entity's configs (dynamic ones; --all for every one)."
)
@click.option("--all", "all_configs", is_flag=True, help="--describe: every config, not only the overrides.")
@click.option("--alter", is_flag=True, help="Change the entity's overrides.")
@click.option("--add-config", metavar="K=V,K2=[A,B]", help="--alter: overrides to set.")
@click.option("--delete-config", metavar="K,K2", help="--alter: overrides to remove.")
def configs(**options) -> None:
    """Describe or alter a topic's overrides as kafka-configs.sh does; brokers (read only) through
    --bootstrap-server."""
    from zkafka.tools import config_command as cc
    from zkafka.tools.admin_client import AdminClient

    if (options["zookeeper"] is None) == (options["bootstrap_server"] is None):
        raise click.UsageError("give exactly one of --bootstrap-server and --zookeeper")
    if options["describe"] == options["alter"]:
        raise click.UsageError("give exactly one of --describe and --alter")
    if options["alter"] and not (options["add_config"] or options["delete_config"]):
        raise click.UsageError("--alter needs --add-config or --delete-config")
    add = cc.parse_add_config(options["add_config"] or "")
    delete = [k.strip() for k in (options["delete_config"] or "").split(",") if k.strip()]
    kind, name = options["entity_type"], options["entity_name"]
    if kind == "users" and options["bootstrap_server"] is not None:
        raise click.UsageError("--entity-type users takes --zookeeper (SCRAM credentials are kept there)")
    if options["bootstrap_server"] is not None:
        admin = AdminClient(options["bootstrap_server"])
        if options["describe"]:
            lines = cc.describe(admin, kind, name, options["all_configs"])
        else:
            lines = cc.alter(admin, kind, name, add, delete)
    else:
        if kind == "brokers":
            raise click.UsageError(
                "--zookeeper takes --entity-type topics or users (brokers: --bootstrap-server)"
            )
        if kind == "users" and not options["alter"]:
            raise click.UsageError("--entity-type users takes --alter (SCRAM credentials)")
        with zk_session(
            options["zookeeper"], options["connection_timeout_ms"], create_chroot=options["alter"]
        ) as zk:
            if kind == "users":
                from zkafka.admin.users import alter_user_scram

                lines = alter_user_scram(zk, name, add, delete)
            else:
                lines = (
                    cc.describe_zookeeper(zk, name)
                    if options["describe"]
                    else cc.alter_zookeeper(zk, name, add, delete)
                )
    for line in lines:
        click.echo(line)
