"""Client quotas at the request handlers (KafkaApis on real logs, no sockets): a produce over its client id's
``producer_byte_rate`` is appended and answered with ``throttle_time_ms`` (its channel to be muted for it); a
consumer's fetch over ``consumer_byte_rate`` is answered empty with the throttle time; a follower's fetch and
another client id are not counted. A client over its ``request_percentage`` (KIP-124) gets the throttle time in
any answer with the field, the longer one with a byte quota too; the cluster's own requests are exempt."""

from __future__ import annotations

from time import monotonic

import pytest

from tests.unit.server.test_apis08 import BROKER, Broker
from tests.unit.server.test_fetch_versions import answered, fetch
from tests.unit.server.test_produce_versions import NoGroups
from zkafka.network.send import ThrottledResponse
from zkafka.protocol import v08
from zkafka.protocol.api_keys import METADATA, UPDATE_METADATA
from zkafka.protocol.metadata import METADATA_APIS
from zkafka.protocol.produce import PRODUCE_APIS
from zkafka.quota.quota_manager import DEFAULT, ClientQuotaManager, ClientRequestQuotaManager, QuotaManagers
from zkafka.records import format08
from zkafka.security.auth_helper import ALLOW_ALL
from zkafka.server.throttling import Throttler, is_exempt

TINY = 0.000001  # percent of a thread: any handling time is far over it, the throttle time one window


@pytest.fixture
def broker(tmp_path):
    b = Broker(tmp_path / "logs", {("t", 0): BROKER})
    quotas = QuotaManagers(
        ClientQuotaManager("Produce", samples=2), ClientQuotaManager("Fetch", samples=2), ClientRequestQuotaManager(2)
    )
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


def metadata_v3(broker, client_id: str):
    """A Metadata v3 (the first with ``throttle_time_ms``): the raw answer and its decoded body."""
    body = METADATA_APIS[3][0](["t"])
    raw = broker.apis.handle(v08.decode_request(memoryview(v08.encode_request(body, 9, client_id))[4:]))
    return raw, v08.decode_response(METADATA, 3, b"".join(bytes(p) for p in raw)[4:]).body


def test_a_client_over_its_request_quota_gets_the_throttle_time_in_its_answer(broker):
    raw, answer = metadata_v3(broker, "c1")
    assert answer.throttle_time_ms == 0 and not isinstance(raw, ThrottledResponse)
    broker.quotas.request.update_quota(None, "c1", TINY)
    raw, answer = metadata_v3(broker, "c1")
    assert answer.throttle_time_ms == 1000 and raw.throttle_s == 1.0  # at most one window
    assert [t.topic for t in answer.topics] == ["t"]  # the answer itself unchanged
    raw, answer = metadata_v3(broker, "c2")
    assert answer.throttle_time_ms == 0 and not isinstance(raw, ThrottledResponse)
    assert {m[1] for m in broker.quotas.request.measurements(monotonic() * 1000)} == {"c1", "c2"}


def test_produce_and_fetch_carry_the_longer_of_their_two_throttle_times(broker):
    broker.quotas.request.update_quota(None, "c1", TINY)
    assert produce_v2(broker, "c1", 10)[1].throttle_time_ms == 1000  # the request quota's
    broker.quotas.produce.update_quota(None, "c1", 100)
    raw, answer = produce_v2(broker, "c1", 2000)  # some 19 windows over the byte rate
    assert answer.throttle_time_ms > 10_000 and raw.throttle_s == answer.throttle_time_ms / 1000
    broker.quotas.request.update_quota(None, "test", TINY)
    first = fetch(broker, 4, {("t", 0): 0})
    assert first.throttle_time_ms == 1000 and answered(first) == {}  # over the request quota: empty


def test_the_clusters_own_requests_are_exempt(broker):
    broker.produce("t", 0, [b"v" * 30])
    broker.quotas.request.update_quota(None, DEFAULT, TINY)
    follower = fetch(broker, 4, {("t", 0): 0}, replica_id=BROKER + 1)
    assert follower.throttle_time_ms == 0 and answered(follower)[("t", 0)].error == 0
    assert broker.quotas.request.exempt.measure(monotonic() * 1000) > 0 and list(broker.quotas.request.measurements(monotonic() * 1000)) == []
    update = v08.Request(UPDATE_METADATA, 0, 1, "controller", None)
    assert is_exempt(update, ALLOW_ALL) and not is_exempt(update._replace(api_key=METADATA), ALLOW_ALL)


def test_a_request_whose_handler_raises_counts_its_handling_time(broker):
    broker.quotas.request.update_quota(None, "c1", TINY)
    request = v08.Request(METADATA, 3, 1, "c1", None)

    def fails(_request):
        raise ValueError("a bad request")

    with pytest.raises(ValueError):
        Throttler(broker.quotas).timed(request, fails, exempt=False)
    assert {m[1] for m in broker.quotas.request.measurements(monotonic() * 1000)} == {"c1"}


@pytest.mark.parametrize("version", [0, 4])
def test_a_consumers_fetch_is_capped_at_what_its_quota_takes_at_once(broker, version):
    broker.produce("t", 0, [b"v" * 100] * 50)  # ~6 KB
    broker.quotas.fetch.update_quota(None, "test", 1000)  # two 1 s samples: 1000 bytes at once
    first = fetch(broker, version, {("t", 0): 0})
    assert getattr(first, "throttle_time_ms", 0) == 0  # not answered empty, as the whole 6 KB would be
    assert 0 < len(answered(first)[("t", 0)].message_set) <= 1000
    follower = fetch(broker, version, {("t", 0): 0}, replica_id=BROKER + 1)
    assert len(answered(follower)[("t", 0)].message_set) > 5000  # followers are not capped
