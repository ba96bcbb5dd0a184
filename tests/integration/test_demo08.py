"""`zkafka demo --line 0.8`: 3 replicating brokers, a leader killed from the web view and restarted, a coordinator
group beside a ZooKeeper group, and a clean exit. The test acts on what the demo prints, not on a schedule."""

import json
import re
import urllib.request

import pytest

from tests.support.demo_process import DemoProcess, assert_cleaned_up
from tests.support.web_view import post_action
from zkafka.utils import wait_until

pytestmark = [pytest.mark.integration, pytest.mark.slow]


def leader_of(block: str, partition: int) -> int:
    return int(re.search(rf"^  demo-{partition} leader=(-?\d+) ", block, re.M).group(1))


def isr_of(block: str, partition: int) -> list[int]:
    return json.loads(
        re.search(rf"^  demo-{partition} leader=\S+ replicas=\[.*?\] isr=(\[.*?\])", block, re.M)[1]
    )


def coordinator_group(block: str) -> tuple[str, int, int] | None:
    found = re.search(r"state=(\w+) generation=(\d+) members=(\d+)", block)
    return (found[1], int(found[2]), int(found[3])) if found else None


def settled(block: str) -> bool:
    return (
        "owner=(none)" not in block
        and "ZooKeeper group rebalance: every partition owned" in block
        and (group := coordinator_group(block)) is not None
        and group[0] == "Stable"
        and group[2] == 2
        and all(leader_of(block, p) >= 0 and len(isr_of(block, p)) == 3 for p in range(4))
    )


def test_demo08_leader_kill_from_the_page_restart_and_both_groups_rebalance():
    demo = DemoProcess("--line", "0.8", "--web", "--web-port", "0", "--interval", "0.5")
    try:
        line = wait_until(
            lambda: next((x for x in demo.stderr if x.startswith("web view: ")), None), 90, message="url"
        )
        url = line.split("web view: ", 1)[1].strip()
        first = demo.wait_for(settled, "both groups settled, every partition led with a full ISR", 90)
        generation = coordinator_group(first)[1]
        old_leader = leader_of(first, 0)

        assert post_action(url, "kill-leader") == {"done": "kill-leader"}
        elected = demo.wait_for(
            lambda b: f"{old_leader}:stopped" in b and leader_of(b, 0) not in (-1, old_leader),
            "a new leader of demo-0",
        )
        new_leader = leader_of(elected, 0)
        assert old_leader not in isr_of(elected, 0)
        assert f"leader election: demo-0 leader {old_leader} -> {new_leader}" in elected
        assert f"; trigger: broker {old_leader} (leader of demo-0) killed)" in elected

        def view_shows_the_new_leader():
            with urllib.request.urlopen(url + "api/state", timeout=10) as answer:
                state = json.loads(answer.read())
            (topic,) = [t for t in state["topics"] if t["name"] == "demo"]
            return topic["partitions"][0]["leader"] == new_leader and state["line"] == "0.8"

        wait_until(view_shows_the_new_leader, 30, message="the web view shows the new leader")

        demo.act("start-broker")
        demo.wait_for(
            lambda b: f"{old_leader}:running" in b and old_leader in isr_of(b, 0),
            "the restarted broker in the ISR",
        )

        demo.act("stop-consumer")
        left = demo.wait_for(
            lambda b: (
                (g := coordinator_group(b)) is not None
                and g[0] == "Stable"
                and g[1] > generation
                and g[2] == 1
                and "consumer-2-0" not in b.split("events:")[0]
            ),
            "both groups rebalanced after consumer-2 left",
        )
        assert re.search(
            r"coordinator group rebalance: generation \d+, 1 members \(trigger: consumer-2 left", left
        )
        assert (
            "ZooKeeper group rebalance: partitions changed owners (trigger: consumer-2 left both groups)"
            in left
        )
        assert re.search(r"member consumer-1 partitions=0,1,2,3$", left, re.M)
        demo.act("quit")
        assert demo.proc.wait(60) == 0, "".join(demo.stderr)
    finally:
        demo.stop()
    stderr = assert_cleaned_up(demo)
    assert int(re.search(r"produced (\d+)", stderr).group(1)) > 0
