"""The web view in a real headless Chromium, on a real ZooKeeper, two 0.7 brokers and a consumer group of
two: the page shows the brokers and the group; when a member leaves, the timeline gets the new rebalance and
it opens into its steps, each naming the zkafka function that does it. Also ``zkafka ui`` as a command."""

from __future__ import annotations

import os
import subprocess
import sys
import urllib.request
from pathlib import Path

import gevent
import pytest

from tests.support.browser import browser  # noqa: F401  (fixture)
from tests.support.consumers import consumer_config
from tests.support.wire import Producer
from zkafka.consumer import ZookeeperConsumerConnector
from zkafka.ui.server import ClusterView, serve
from zkafka.utils import wait_until

pytestmark = [pytest.mark.integration, pytest.mark.timeout(180)]

GROUP = "web"
SCREENSHOT = os.environ.get("ZKAFKA_UI_SCREENSHOT")  # e.g. docs/ui.png to refresh the README's picture


@pytest.fixture
def cluster(start_broker, zk_connect):
    brokers = [start_broker(b, **{"num.partitions": "2"}) for b in (0, 1)]
    for broker in brokers:
        producer = Producer(broker.port)
        for partition in (0, 1):
            producer.send("clicks", partition, [f"click {i}".encode() for i in range(20 + 10 * partition)])
        producer.close()
    consumers = []
    for name in ("alice", "bob"):
        connector = ZookeeperConsumerConnector(consumer_config(zk_connect, GROUP, consumerid=name))
        connector.create_message_streams({"clicks": 1})
        consumers.append(connector)
    wait_until(
        lambda: sum(len(c.owned_partitions()) for c in consumers) == 4, timeout=30, message="group settled"
    )
    view = ClusterView(zk_connect, interval=0.5).start()
    server = serve(view, 0)
    try:
        yield f"http://127.0.0.1:{server.server_port}/", consumers
    finally:
        server.stop(timeout=1)
        view.close()
        for connector in consumers:
            connector.shutdown()


def test_page_shows_the_cluster_and_a_member_leaving_opens_a_new_rebalance(cluster, browser):  # noqa: F811
    url, consumers = cluster

    def loaded(page):
        page.goto(url)
        page.wait_for_selector("#brokers .broker[data-id='1']", timeout=20000)
        page.wait_for_selector(f"#zk-groups .group[data-name='{GROUP}'] .member[data-member='{GROUP}_bob']")
        return {
            "brokers": page.locator("#brokers .broker").count(),
            "members": page.locator(f"#zk-groups .group[data-name='{GROUP}'] .members .member").count(),
            "partitions": page.locator(f"#zk-groups .group[data-name='{GROUP}'] tr[data-partition]").count(),
            "captions": page.locator(".panel > .caption").count(),
            "panels": page.locator(".panel").count(),
            "protocol hidden": page.locator("#protocol-panel").is_hidden(),
            "coordinator hidden": page.locator("#coordinator-panel").is_hidden(),
        }

    seen = browser.run(loaded)
    assert seen["brokers"] == 2 and seen["members"] == 2 and seen["partitions"] == 4
    assert seen["captions"] == seen["panels"]  # every panel has its caption (the hidden ones too)
    assert seen["protocol hidden"]  # no broker's request log to read
    assert seen["coordinator hidden"]  # no --bootstrap-server: no coordinator groups to show

    consumers.pop().shutdown()  # bob leaves

    def rebalance(page):
        entry = page.locator(
            "#timeline .entry[data-kind='zookeeper'][data-status='settled']", has_text="web_bob left"
        )
        entry.first.wait_for(timeout=30000)
        entry.first.locator("summary").click()
        page.wait_for_selector("#timeline .entry[open] .step")
        steps = entry.first.locator(".step")
        texts = [steps.nth(i).inner_text() for i in range(steps.count())]
        if SCREENSHOT:
            page.wait_for_timeout(1500)  # a few lag points on the chart
            page.screenshot(path=SCREENSHOT, full_page=True)
        return texts

    texts = browser.run(rebalance)
    joined = "\n".join(texts)
    assert "zkafka.assignment.range_assignor.sort_partitions" in joined and "0-0, 0-1, 1-0, 1-1" in joined
    assert "zkafka.assignment.range_assignor.sort_threads" in joined and "web_alice-0" in joined
    assert "zkafka.assignment.range_assignor.range_share" in joined and "web_alice-0: [0, 4) -> 0-0, 0-1, 1-0, 1-1" in joined
    assert "zkafka.consumer.ownership.release" in joined and "(was web_bob-0)" in joined
    assert "zkafka.consumer.rebalancer.ZKRebalancer._release_and_claim" in joined and "-> web_alice-0" in joined
    state = gevent.get_hub().threadpool.apply(_get_json, (url + "api/state",))
    assert [m["id"] for m in state["zk_groups"][0]["members"]] == [f"{GROUP}_alice"]


def test_browsing_the_zookeeper_tree_shows_ephemeral_owners(cluster, browser):  # noqa: F811
    url, _ = cluster

    def browse(page):
        page.goto(url)
        page.locator("#tree .child a", has_text="brokers").click()
        page.locator("#tree .child a", has_text="ids").click()
        page.locator("#tree .child a", has_text="0").first.click()
        page.wait_for_selector("#tree .badge")
        return page.locator("#tree").inner_text()

    text = browser.run(browse)
    assert "ephemeral, session 0x" in text and "127.0.0.1" in text


def _get_json(url: str):
    import json

    with urllib.request.urlopen(url, timeout=10) as answer:
        return json.loads(answer.read())


def test_zkafka_ui_command_serves_the_state(zk_connect, start_broker):
    start_broker(0)
    proc = subprocess.Popen(
        [sys.executable, "-m", "zkafka.cli", "ui", "--zookeeper", zk_connect, "--port", "0"],
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])},
    )
    try:
        line = proc.stderr.readline()
        assert line.startswith("zkafka ui: serving http://127.0.0.1:"), line
        url = line.split("serving ", 1)[1].strip()
        state = _get_json(url + "api/state")
        assert state["line"] == "0.7" and [b["id"] for b in state["brokers"]] == [0]
        with urllib.request.urlopen(url, timeout=10) as page:
            assert b"Rebalances, step by step" in page.read()
        with urllib.request.urlopen(url + "api/znode?path=/brokers/ids/0", timeout=10) as node:
            assert b'"ephemeral_owner": "0x' in node.read()
    finally:
        proc.terminate()
        assert proc.wait(timeout=20) == 0
