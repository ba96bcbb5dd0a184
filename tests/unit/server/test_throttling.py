"""Client quotas at the request handlers (KafkaApis on real logs, no sockets): a produce over its client id's
``producer_byte_rate`` is appended and answered with ``throttle_time_ms`` (its channel to be muted for it); a
consumer's fetch over ``consumer_byte_rate`` is answered empty with the throttle time; a follower's fetch and
another client id are not counted."""

from __future__ import annotations

import pytest

from tests.unit.server.test_apis08 import BROKER, Broker
from tests.unit.server.test_fetch_versions import answered, fetch
from tests.unit.server.test_produce_versions import NoGroups
from zkafka.network.send import ThrottledResponse
from zkafka.protocol import v08
from zkafka.protocol.produce import PRODUCE_APIS
from zkafka.quota.quota_manager import ClientQuotaManager, QuotaManagers
from zkafka.records import format08
from zkafka.server.throttling import Throttler


@pytest.fixture
def broker(tmp_path):
    b = Broker(tmp_path / "logs", {("t", 0): BROKER})
    quotas = QuotaManagers(*(ClientQuotaManager(kind, samples=2) for kind in ("Produce", "Fetch", "Request")))
    b.apis = type(b.apis)(b.replicas, b.metadata, group_apis=NoGroups(), throttler=Throttler(quotas))
    b.quotas = quotas
    try:
        yield b
    finally:
        b.close()


def produce_v2(broker, client_id: str, size: int):
    """A Produce v2 of one ``size``-byte message: the handler's raw answer and its decoded body."""
    request_class = PRODUCE_APIS[2][0]
    message_set = format08.build_message_set([(None, b"x" * size)], 0)
    body = request_class(1, 1000, [(("t", [(0, message_set)]))])
    frame = v08.encode_request(body, 7, client_id)
    raw = broker.apis.handle(v08.decode_request(memoryview(frame)[4:]))
    return raw, v08.decode_response(body.API_KEY, 2, b"".join(bytes(p) for p in raw)[4:]).body


def test_a_produce_over_its_quota_is_appended_and_told_its_throttle_time(broker):
    broker.quotas.produce.update_quota(None, "c1", 1000)
    raw, answer = produce_v2(broker, "c1", 500)
    assert answer.throttle_time_ms == 0 and not isinstance(raw, ThrottledResponse)
    raw, answer = produce_v2(broker, "c1", 2000)  # about 2.5 kB over the one window's minimum
    assert answer.throttle_time_ms > 1000 and raw.throttle_s == answer.throttle_time_ms / 1000
    assert answer.topics[0].partitions[0].error == 0  # appended all the same
    assert produce_v2(broker, "c2", 100_000)[1].throttle_time_ms == 0


def test_a_fetch_over_its_quota_is_answered_empty_with_its_throttle_time(broker):
    broker.produce("t", 0, [b"v" * 3000])
    broker.quotas.fetch.update_quota(None, "test", 1000)
    first = fetch(broker, 4, {("t", 0): 0})
    assert first.throttle_time_ms > 0 and answered(first) == {}
    assert fetch(broker, 4, {("t", 0): 0}, replica_id=BROKER + 1).throttle_time_ms == 0  # a follower
