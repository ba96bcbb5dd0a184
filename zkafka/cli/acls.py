"""``zkafka acls``: kafka-acls.sh, through ZooKeeper (``--authorizer-properties zookeeper.connect=…``) or a
broker (``--bootstrap-server``)."""

from __future__ import annotations

import click

from zkafka.cli.command import command_config_option, main
from zkafka.cli.tools import zk_session

OPERATIONS = (
    "Read", "Write", "Create", "Delete", "Alter", "Describe", "ClusterAction", "AlterConfigs",
    "DescribeConfigs", "IdempotentWrite", "All",
)  # fmt: skip


@main.command("acls", short_help="Add, remove and list ACLs (kafka-acls.sh).")
@click.option(
    "--bootstrap-server", metavar="HOST:PORT", help="A broker (CreateAcls, DeleteAcls, DescribeAcls)."
)
@command_config_option
@click.option(
    "--authorizer-properties", multiple=True, metavar="KEY=VALUE",
    help="The authorizer's properties: zookeeper.connect=HOST:PORT[/CHROOT] reaches the ACLs in ZooKeeper.",
)  # fmt: skip
@click.option("--add", is_flag=True, help="Add the ACLs the other options describe.")
@click.option("--remove", is_flag=True, help="Remove them (every ACL of the resource without principals).")
@click.option(
    "--list", "list_", is_flag=True, help="List the ACLs of the resources (every resource without any)."
)
@click.option("--topic", multiple=True, help="A topic resource (repeatable; * for every topic).")
@click.option("--group", multiple=True, help="A consumer group resource (repeatable; * for every group).")
@click.option("--cluster", is_flag=True, help="The cluster resource.")
@click.option(
    "--resource-pattern-type", default="literal", show_default=True,
    type=click.Choice(["literal", "prefixed", "any", "match"], case_sensitive=False),
    help="literal or prefixed names (--add); any or match also filter --list and --remove.",
)  # fmt: skip
@click.option("--allow-principal", multiple=True, metavar="User:NAME", help="Principal the ACLs allow.")
@click.option("--deny-principal", multiple=True, metavar="User:NAME", help="Principal the ACLs deny.")
@click.option(
    "--allow-host", multiple=True, metavar="HOST", help="Host the allowed principals may come from (*)."
)
@click.option(
    "--deny-host", multiple=True, metavar="HOST", help="Host the denied principals are refused from (*)."
)
@click.option(
    "--operation", multiple=True, type=click.Choice(OPERATIONS, case_sensitive=False),
    help="Operation the ACLs name (repeatable; default All).",
)  # fmt: skip
@click.option("--producer", is_flag=True, help="Write, Describe and Create on the topics (a producer's rights).")
@click.option("--idempotent", is_flag=True, help="--producer: IdempotentWrite on the cluster too.")
@click.option("--consumer", is_flag=True, help="Read and Describe on the topics, Read on the groups.")
@click.option("--principal", multiple=True, metavar="User:NAME", help="--list: only this principal's ACLs.")
@click.option("--force", is_flag=True, help="--remove without asking.")
def acls(**options) -> None:
    """Add, remove or list ACLs as kafka-acls.sh does."""
    from zkafka.tools import acl_command as ac

    if sum(map(bool, (options["add"], options["remove"], options["list_"]))) != 1:
        raise click.UsageError("give exactly one of --add, --remove and --list")
    props = dict(p.split("=", 1) for p in options["authorizer_properties"] if "=" in p)
    connect = props.get("zookeeper.connect")
    if (connect is None) == (options["bootstrap_server"] is None):
        raise click.UsageError(
            "give exactly one of --bootstrap-server and --authorizer-properties zookeeper.connect=HOST:PORT"
        )
    choice = ac.AclOptions(
        topics=options["topic"], groups=options["group"], cluster=options["cluster"],
        pattern_type=options["resource_pattern_type"].lower(),
        allow_principals=options["allow_principal"], deny_principals=options["deny_principal"],
        allow_hosts=options["allow_host"], deny_hosts=options["deny_host"],
        operations=options["operation"], principals=options["principal"],
        producer=options["producer"], consumer=options["consumer"], idempotent=options["idempotent"],
    )  # fmt: skip
    if connect is not None:
        with zk_session(connect, 30000, create_chroot=not options["list_"]) as zk:
            _run(ac, ac.ZkAcls(zk), choice, options)
    else:
        from zkafka.tools.command_config import admin_client

        admin = admin_client(options["bootstrap_server"], options["command_config"])
        _run(ac, ac.AdminAcls(admin), choice, options)


def _run(ac, store, choice, options) -> None:
    if options["add"]:
        lines = ac.add(store, choice)
    elif options["list_"]:
        lines = ac.list_acls(store, choice)
    else:
        filters, questions = ac.remove(store, choice)
        for question in questions:
            if not options["force"] and not click.confirm(question, default=False, show_default=False):
                click.echo("Aborted.")
                return
        store.remove(filters)
        lines = ac.list_acls(store, choice)
    for line in lines:
        click.echo(line)
