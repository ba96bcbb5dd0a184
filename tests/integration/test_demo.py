"""`zkafka demo --no-ui`: the whole cluster starts, settles, reacts to changes and stops cleanly.

The test acts when the demo's output shows the state it waits for (actions on stdin), not on a schedule.
"""

import re
import shutil
import signal

import pytest

from tests.support.demo_process import DemoProcess, assert_cleaned_up, processes_mentioning, snapshots
from tests.support.web_view import post_action
from zkafka.utils import wait_until

pytestmark = [pytest.mark.integration, pytest.mark.slow]


def lags(block: str) -> list[str]:
    return re.findall(r"committed=\S+\s+lag=(\S+)", block)


def test_demo_settles_rebalances_on_a_stopped_consumer_and_exits_cleanly():
    demo = DemoProcess("--consumers", "3", "--rate", "30", "--interval", "0.5")
    try:
        first_settled = demo.wait_for(
            lambda b: "owner=(none)" not in b and "rebalance: every partition owned" in b, "the group settled"
        )
        demo.act("stop-consumer")
        demo.wait_for(
            lambda b: (
                "(trigger: consumer demo-group_consumer-3 left)" in b
                and "demo-group_consumer-3-0" not in b.split("events:")[0]
            ),
            "consumer 3's partitions moved",
        )
        demo.wait_for(lambda b: int(re.search(r"produced=(\d+)", b).group(1)) > 100, "100 messages produced")
        demo.act("pause-producer")
        demo.wait_for(lambda b: "producer paused" in b and lags(b) == ["0"] * 4, "the lag drained")
        demo.wait_for(lambda b: len(demo.blocks()) >= 10, "10 snapshots")
        demo.act("quit")
        assert demo.proc.wait(40) == 0, "".join(demo.stderr)
    finally:
        demo.stop()
    stderr = assert_cleaned_up(demo)

    blocks = snapshots("".join(demo.stdout))
    assert len(blocks) >= 10
    assert first_settled.count("broker 0 running") == 1 and first_settled.count("broker 1 running") == 1
    assert len(re.findall(r"^  demo \d-\d ", first_settled, re.M)) == 4  # 2 brokers x 2 partitions
    last = blocks[-1]
    # the stopped consumer's partitions moved to the others, with the stop as the trigger
    assert "rebalance: partitions changed owners (trigger: consumer demo-group_consumer-3 left)" in last
    assert "demo-group_consumer-3-0" not in last.split("events:")[0]
    # with the producer paused, every partition's lag drained to zero
    assert re.findall(r"committed=\S+\s+lag=(\d+)", last) == ["0"] * 4
    assert "total lag=0" in last
    produced = int(re.search(r"produced (\d+)", stderr).group(1))
    consumed = int(re.search(r"consumed (\d+)", stderr).group(1))
    assert produced > 100 and consumed >= produced


def test_demo_web_view_acts_on_the_cluster_and_explains_the_rebalance():
    """``--web``: the page's action stops a consumer, and the view's timeline explains the rebalance."""
    import json
    import urllib.request

    def call(url: str):
        with urllib.request.urlopen(url, timeout=10) as answer:
            return json.loads(answer.read())

    demo = DemoProcess("--web", "--web-port", "0", "--interval", "0.5")
    try:
        line = wait_until(
            lambda: next((x for x in demo.stderr if x.startswith("web view: ")), None), 60, message="url"
        )
        url = line.split("web view: ", 1)[1].strip()
        state = wait_until(
            lambda: (
                (s := call(url + "api/state"))["zk_groups"] and len(s["zk_groups"][0]["members"]) == 2 and s
            ),
            60,
            message="the group in the view",
        )
        assert "stop-consumer" in state["actions"] and len(state["brokers"]) == 2
        assert post_action(url, "stop-consumer") == {"done": "stop-consumer"}

        def explained():
            entries = call(url + "api/state")["timeline"]
            return next(
                (e for e in entries if "consumer-2 left" in e["title"] and e["status"] == "settled"), None
            )

        entry = wait_until(explained, 60, message="the rebalance in the timeline")
        wheres = [step["where"] for step in entry["steps"]]
        assert (
            "zkafka.assignment.range_assignor.range_share" in wheres
            and "zkafka.consumer.rebalancer.ZKRebalancer._release_and_claim" in wheres
        )
        demo.act("quit")
        assert demo.proc.wait(40) == 0, "".join(demo.stderr)
    finally:
        demo.stop()


def _started_demo() -> tuple[DemoProcess, str]:
    """A demo whose cluster is up; its temporary directory."""
    demo = DemoProcess("--consumers", "1", "--brokers", "1", "--partitions", "1", "--interval", "0.5")
    demo.wait_for(lambda b: "broker 0 running" in b, "the demo's broker running")
    return demo, re.search(r"starting ZooKeeper in (\S+)", "".join(demo.stderr)).group(1)


def test_demo_stops_cleanly_on_sighup():
    demo, _ = _started_demo()
    try:
        demo.proc.send_signal(signal.SIGHUP)  # the terminal window closed
        assert demo.proc.wait(40) == 0, "".join(demo.stderr)
    finally:
        demo.stop()
    assert_cleaned_up(demo)


def test_demo_killed_9_leaves_no_children():
    demo, root = _started_demo()
    try:
        assert len(processes_mentioning(root)) == 2  # its ZooKeeper and its broker
        demo.proc.kill()
        demo.proc.wait(10)
        wait_until(lambda: processes_mentioning(root) == [], 20, message="the demo's children gone")
    finally:
        demo.stop()
        shutil.rmtree(root, ignore_errors=True)
