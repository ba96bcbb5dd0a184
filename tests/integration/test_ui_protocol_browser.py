"""The web view of ``zkafka demo --line 0.8`` in a real headless Chromium: a real ZooKeeper, three 0.8 broker
processes with their request logs on ``metrics.port``, an acks=-1 producer and both kinds of groups (the
demo cluster, run in this process). Through the page's own buttons a member joins (a real rebalance) and a
leader is killed. The page must show the 0.8 partitions and the coordinator group; the protocol panel each
member's JoinGroup with the generation reached and its SyncGroup; a stop-the-world lane per member with its
longest pause; a produce replicated; the dead broker with when and why; an election that opens in one click;
no element outside its card at 1280, 1500 and 1920 px; and no console error."""

from __future__ import annotations

import os
from functools import partial

import pytest

from tests.support.browser import browser  # noqa: F401  (fixture)
from zkafka.demo08 import DemoCluster08
from zkafka.ui.server import ClusterView, serve

pytestmark = [pytest.mark.integration, pytest.mark.timeout(240)]

SCREENSHOT = os.environ.get("ZKAFKA_UI_PROTOCOL_SCREENSHOT")  # docs/ui-protocol.jpg refreshes the README's
GROUP = "demo-coordinator-group"
COOPERATIVE = "demo-cooperative-group"

# Every visible element of every panel whose box leaves its panel's box (1 px of rounding allowed).
OUTSIDE = """() => {
  const out = [];
  for (const panel of document.querySelectorAll('.panel')) {
    if (panel.hidden) continue;
    const box = panel.getBoundingClientRect();
    for (const node of panel.querySelectorAll('*')) {
      const r = node.getBoundingClientRect();
      if ((r.width === 0 && r.height === 0) || !node.checkVisibility()) continue;  // closed <details> content
      if (r.left < box.left - 1 || r.right > box.right + 1 || r.top < box.top - 1 || r.bottom > box.bottom + 1)
        out.push(`${panel.id} > ${node.tagName.toLowerCase()}.${node.getAttribute('class') || ''} ` +
                 `[${Math.round(r.left)}, ${Math.round(r.right)}] outside [${Math.round(box.left)}, ${Math.round(box.right)}]`);
    }
  }
  return out.slice(0, 10);
}"""


CLIP = """() => {
  const y = (id, side) => document.getElementById(id).getBoundingClientRect()[side] + window.scrollY;
  return [y('protocol-panel', 'top') - 8, y('replication-panel', 'bottom') + 8];
}"""


@pytest.fixture
def demo_view():
    cluster = DemoCluster08(brokers=3, partitions=4, consumers=2, rate=20)
    view = server = None
    try:
        cluster.start()
        view = ClusterView(
            cluster.zookeeper.connect_string,
            bootstrap=cluster.bootstrap().split(",")[0],
            interval=0.5,
            actions={name: partial(cluster.act, name) for name in cluster.actions},
            extra=lambda: {"produced": cluster.produced, "paused": cluster.paused},
            request_logs=cluster.request_logs,
        ).start()
        server = serve(view, 0)
        yield f"http://127.0.0.1:{server.server_port}/", cluster
    finally:
        if server is not None:
            server.stop(timeout=1)
        if view is not None:
            view.close()
        cluster.close()


def joined_rows(page, clients: list[str], generation: int) -> bool:
    """Whether every client's JoinGroup answered ``generation`` and a SyncGroup of it follows."""
    rows = page.locator(f"#protocol-groups [data-group='{GROUP}'] .seq-msg")
    seen = [
        (
            rows.nth(i).get_attribute("data-client"),
            rows.nth(i).get_attribute("data-api"),
            rows.nth(i).get_attribute("data-answer"),
        )
        for i in range(rows.count())
    ]
    for client in clients:
        joins = [
            i
            for i, (c, api, answer) in enumerate(seen)
            if c == client and api == "JoinGroup" and answer.startswith(f"generation {generation}")
        ]
        if not joins or not any(c == client and api == "SyncGroup" for c, api, _ in seen[joins[-1] :]):
            return False
    return True


def pauses(page, group: str) -> dict[str, str]:
    """Each member's lane in the stop-the-world panel: client -> its printed longest pause."""
    rows = page.locator(f"#stw [data-group='{group}'] .lane-row")
    return {
        rows.nth(i).get_attribute("data-client"): rows.nth(i).locator(".lane-pause").inner_text()
        for i in range(rows.count())
    }


def generation_of(page) -> int:
    text = page.locator(f"#coordinator-groups .group[data-name='{GROUP}'] p.muted").inner_text()
    return int(text.split("generation ")[1].split(" ")[0])


def test_the_protocol_the_pauses_a_dead_broker_and_a_page_that_holds_together(demo_view, browser):  # noqa: F811
    url, cluster = demo_view
    errors: list[str] = []

    def opened(page):
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(url)
        page.wait_for_selector("#topics tr[data-partition='3']", timeout=30000)
        page.wait_for_selector(
            f"#coordinator-groups .group[data-name='{GROUP}'] tr[data-member]", timeout=30000
        )
        page.wait_for_function(
            f"document.querySelectorAll(\"#coordinator-groups .group[data-name='{GROUP}'] tr[data-member]\").length == 2"
            f" && document.querySelector(\"#coordinator-groups .group[data-name='{GROUP}'] .badge\").textContent == 'Stable'",
            timeout=30000,
        )
        page.locator("#groups-panel button[data-action='add-consumer']").click()
        page.wait_for_function(
            f"document.querySelectorAll(\"#coordinator-groups .group[data-name='{GROUP}'] tr[data-member]\").length == 3"
            f" && document.querySelector(\"#coordinator-groups .group[data-name='{GROUP}'] .badge\").textContent == 'Stable'",
            timeout=40000,
        )
        clients = ["consumer-1", "consumer-2", "consumer-3"]
        joined = False
        for _ in range(80):  # the generation is read again: a slow machine may rebalance once more
            generation = generation_of(page)
            joined = joined_rows(page, clients, generation)
            if joined:  # kept: a later rebalance may push these rows out of the page's sequence
                break
            page.wait_for_timeout(500)
        partitions = page.locator("#topics tr[data-partition]").count()
        leaders = [page.locator(f"#topics tr[data-partition='{p}'] td").nth(1).inner_text() for p in range(4)]
        page.wait_for_function(
            f"document.querySelectorAll(\"#stw [data-group='{COOPERATIVE}'] .lane-row\").length == 3"
        )
        lanes = {group: pauses(page, group) for group in (GROUP, COOPERATIVE)}
        states = page.locator(f"#stw [data-group='{GROUP}'] .lane-row[data-client='consumer-1'] .segment")
        page.wait_for_selector("#replication .seq-msg", timeout=20000)
        replication = page.locator("#replication").inner_text()
        return (
            generation,
            joined,
            partitions,
            leaders,
            lanes,
            states.evaluate_all("s => s.map(x => x.dataset.state)"),
            replication,
        )

    generation, joined, partitions, leaders, lanes, states, replication = browser.run(opened)
    assert generation >= 2 and joined, (
        "every member's JoinGroup answered the generation reached, then its SyncGroup"
    )
    assert partitions == 4 and all(leader in ("0", "1", "2") for leader in leaders)
    eager, cooperative = lanes[GROUP], lanes[COOPERATIVE]
    assert sorted(eager) == ["consumer-1", "consumer-2", "consumer-3"]
    assert (
        eager["consumer-1"].startswith("eager: longest pause ")
        and eager["consumer-3"] == "eager: never paused"
    )
    assert cooperative["consumer-1"] == cooperative["consumer-2"] == "cooperative: never paused"
    assert (
        states[:4] == ["joining", "consuming", "paused", "consuming"][: len(states[:4])]
        and "paused" in states
    )
    assert "Produce v" in replication and "acks=-1" in replication and "Fetch from offset" in replication
    assert "Produce answered: NONE" in replication and "follower (broker" in replication

    def overflow(page):
        found = {}
        for width in (1280, 1500, 1920):
            page.set_viewport_size({"width": width, "height": 1000})
            page.wait_for_timeout(700)  # a refresh at this width
            found[width] = page.evaluate(OUTSIDE)
        page.set_viewport_size({"width": 1500, "height": 1000})
        if SCREENSHOT:  # the protocol panel, the stop-the-world lanes and the replicated produce
            page.wait_for_timeout(700)
            top, bottom = page.evaluate(CLIP)
            page.screenshot(
                path=SCREENSHOT,
                quality=70,
                full_page=True,
                clip={"x": 0, "y": top, "width": 1500, "height": bottom - top},
            )
        return found

    assert browser.run(overflow) == {1280: [], 1500: [], 1920: []}

    def killed(page):
        page.locator("#brokers-panel button[data-action='kill-leader']").click()
        page.wait_for_selector("#brokers .broker[data-dead='yes']", timeout=30000)
        dead = page.locator("#brokers .broker[data-dead='yes']").inner_text()
        election = page.locator("#timeline .entry[data-kind='leader']").first
        election.wait_for(timeout=30000)
        election.locator("summary").click()
        page.wait_for_selector("#timeline .entry[data-kind='leader'][open] .step")
        steps = election.locator(".step").count()
        measure = election.locator(".measure").inner_text()
        start_button = page.locator("#brokers-panel button[data-action='start-broker']").count()
        return dead, steps, measure, start_button, page.evaluate(OUTSIDE)

    dead, steps, measure, start_button, outside = browser.run(killed)
    assert "gone at" in dead and "session expired while it still led" in dead
    assert steps == 4 and measure.startswith("leader epoch ") and "settled" not in measure
    assert start_button == 1 and outside == []
    assert errors == []
