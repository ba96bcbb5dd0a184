"""A broker restarted right after kill -9 waits out its previous session's registration; a live duplicate is refused.

Both lines: the 0.7 and 0.8 brokers as `zkafka broker start` processes, and the 0.8 registration
(KafkaHealthcheck) alone in a child process.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from tests.support.server08 import Client08, fetch_request, produce_request, wait_for_leaders
from tests.support.wire import connect, round_trip
from zkafka.protocol.v07 import FetchRequest, ProducerRequest, encode_request
from zkafka.records.format07 import iter_messages
from zkafka.records.format08 import build_message_set as build_message_set08
from zkafka.records.format08 import iter_messages as iter_messages08
from zkafka.records.message07 import build_message_set
from zkafka.utils import wait_until
from zkafka.zk.paths08 import BrokerRegistration

pytestmark = pytest.mark.integration


def owner(zk_client, path):
    stat = zk_client.exists(path)
    return stat.ephemeralOwner if stat else None


def fetch_all(port, topic="t"):
    with connect(port) as sock:
        error, body = round_trip(sock, FetchRequest(topic, 0, 0, 1 << 20))
    assert error == 0
    return [m.payload for m, _ in iter_messages(body, 0)]


def test_0_7_broker_killed_and_started_again_at_once_comes_up_by_itself(broker_process, zk_client):
    broker = broker_process(0)
    wait_until(lambda: owner(zk_client, "/brokers/ids/0"), 30, message="broker registered")
    old_session = owner(zk_client, "/brokers/ids/0")
    with connect(broker.port) as sock:
        sock.sendall(encode_request(ProducerRequest("t", 0, build_message_set([b"before"]))))
    wait_until(lambda: fetch_all(broker.port) == [b"before"], 30, message="message flushed")
    broker.proc.kill()
    broker.wait()
    assert owner(zk_client, "/brokers/ids/0") == old_session  # the stale registration is still there

    broker = broker_process(0)  # at once: no waiting for the old session here
    wait_until(
        lambda: owner(zk_client, "/brokers/ids/0") not in (None, old_session), 30, message="registered anew"
    )
    assert broker.proc.poll() is None
    assert "waiting up to" in broker.log_text()
    with connect(broker.port) as sock:
        sock.sendall(encode_request(ProducerRequest("t", 0, build_message_set([b"after"]))))
    wait_until(lambda: fetch_all(broker.port) == [b"before", b"after"], 30, message="serving again")


def test_0_7_live_duplicate_is_refused_naming_its_host_and_port(broker_process, zk_client):
    first = broker_process(3)
    wait_until(lambda: owner(zk_client, "/brokers/ids/3"), 30, message="first broker registered")
    second = broker_process(3)
    assert second.wait(60) == 1
    assert f"already registered by another live broker at 127.0.0.1:{first.port}" in second.log_text()
    assert first.proc.poll() is None


HEALTHCHECK = textwrap.dedent(
    """
    import sys, threading
    from zkafka.server.registry08 import KafkaHealthcheck
    from zkafka.config08 import BrokerConfig08
    config = BrokerConfig08({"broker.id": "4", "zookeeper.connect": sys.argv[1],
                             "zookeeper.session.timeout.ms": "3000", "advertised.host.name": "127.0.0.1"})
    registry = KafkaHealthcheck.from_config(config, int(sys.argv[2]), use_gevent=False)
    try:
        registry.startup()
    except Exception as exc:
        print(f"refused: {exc}", flush=True)
        sys.exit(1)
    print("registered", flush=True)
    threading.Event().wait()
    """
)


def start_healthcheck(zk_connect, port, log_path):
    with open(log_path, "ab") as out:
        return subprocess.Popen(
            [sys.executable, "-c", HEALTHCHECK, zk_connect, str(port)], stdout=out, stderr=subprocess.STDOUT
        )


def test_0_8_registration_after_kill_9_and_a_live_duplicate(zk_connect, zk_client, tmp_path):
    log_path = tmp_path / "healthcheck.log"
    procs = [start_healthcheck(zk_connect, 9001, log_path)]
    try:
        wait_until(lambda: owner(zk_client, "/brokers/ids/4"), 30, message="0.8 broker registered")
        old_session = owner(zk_client, "/brokers/ids/4")
        procs[0].kill()
        procs[0].wait()
        procs.append(start_healthcheck(zk_connect, 9002, log_path))
        wait_until(
            lambda: owner(zk_client, "/brokers/ids/4") not in (None, old_session),
            30,
            message="registered anew",
        )
        registration = BrokerRegistration.parse(4, zk_client.get("/brokers/ids/4")[0])
        assert (registration.host, registration.port, registration.version) == ("127.0.0.1", 9002, 1)
        assert "waiting up to" in log_path.read_text()

        procs.append(start_healthcheck(zk_connect, 9003, log_path))
        assert procs[-1].wait(60) == 1
        assert (
            "broker id 4 is already registered by another live broker at 127.0.0.1:9002"
            in log_path.read_text()
        )
        assert procs[1].poll() is None
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait()


def test_0_8_broker_killed_and_started_again_at_once_comes_up_by_itself(broker08_process, zk_client):
    broker = broker08_process(0)
    wait_until(lambda: owner(zk_client, "/brokers/ids/0"), 30, message="0.8 broker registered")
    old_session = owner(zk_client, "/brokers/ids/0")
    with Client08(broker.port) as client:
        wait_for_leaders(client, ["t"])
        [topic] = client.call(produce_request("t", 0, build_message_set08([(None, b"before")]))).topics
        assert topic.partitions[0].error == 0
    broker.proc.kill()
    broker.wait()
    assert owner(zk_client, "/brokers/ids/0") == old_session

    broker = broker08_process(0)
    wait_until(
        lambda: owner(zk_client, "/brokers/ids/0") not in (None, old_session), 30, message="registered anew"
    )
    assert broker.proc.poll() is None
    assert "waiting up to" in broker.log_text()
    with Client08(broker.port) as client:
        wait_for_leaders(client, ["t"])
        [topic] = client.call(fetch_request("t", 0, 0)).topics
        assert topic.partitions[0].error == 0
        assert [m.value for m in iter_messages08(topic.partitions[0].message_set)] == [b"before"]
