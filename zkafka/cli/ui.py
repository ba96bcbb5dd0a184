"""``zkafka ui``: the live web view of a cluster, its groups and every rebalance explained."""

from __future__ import annotations

import logging

import click

from zkafka.cli.command import Context, configure_logging, main
from zkafka.utils.process import STOP_SIGNALS


@main.command("ui")
@click.option("--zookeeper", required=True, metavar="HOST:PORT[/CHROOT]", help="ZooKeeper of the cluster.")
@click.option(
    "--bootstrap-server",
    metavar="HOST:PORT",
    help="A broker serving the 0.9 group APIs, to show coordinator-managed groups too.",
)
@click.option(
    "--port", default=8080, show_default=True, type=click.IntRange(0, 65535), help="0: any free port."
)
@click.option("--interval", default=1.0, show_default=True, help="Seconds between full refreshes.")
@click.option(
    "--broker-metrics",
    multiple=True,
    metavar="HOST:PORT",
    help="A 0.8 broker's metrics.port, to draw its request log in the protocol panel (repeat).",
)
def ui(zookeeper, bootstrap_server, port, interval, broker_metrics) -> None:
    """Serve a live page on 127.0.0.1: brokers, topics, groups, lag, the rebalance timeline, the ZooKeeper tree."""
    import gevent
    import gevent.event

    from zkafka.ui.server import ClusterView, serve

    configure_logging(Context.verbose, level=logging.WARNING)
    if bootstrap_server:
        from zkafka.consumer.group.coordinator_groups import parse_server

        try:
            parse_server(bootstrap_server)
        except ValueError as exc:
            raise click.BadParameter(str(exc), param_hint="--bootstrap-server") from None
    stopping = gevent.event.Event()
    for signum in STOP_SIGNALS:  # before the port opens: a stop from then on is a clean one
        gevent.signal_handler(signum, stopping.set)
    urls = [f"http://{address}/requests" for address in broker_metrics]
    view = ClusterView(zookeeper, bootstrap_server, interval, request_logs=(lambda: urls) if urls else None)
    view.start()
    server = serve(view, port)
    click.echo(f"zkafka ui: serving http://127.0.0.1:{server.server_port}/", err=True)
    try:
        stopping.wait()
    finally:
        server.stop(timeout=1)
        view.close()
