"""The client quotas' pure part: Kafka's sampled rate, the throttle time, the quota precedence, the request
quota's percentages."""

from zkafka.quota.quota_manager import (
    DEFAULT,
    UNLIMITED,
    ClientQuotaManager,
    ClientRequestQuotaManager,
    Rate,
    throttle_time_ms,
)


def test_rate_counts_at_least_samples_minus_one_windows():
    rate = Rate(samples=11, window_ms=1000)
    rate.record(1000, 0)
    assert rate.measure(0) == 100.0  # 1000 units over the 10 whole windows assumed
    for t in range(1, 21):
        rate.record(1000, t * 1000)
    assert rate.measure(20_000) == 11_000 / 10.0  # 11 samples retained, the oldest began 10 s ago


def test_rate_forgets_samples_older_than_the_windows():
    rate = Rate(samples=2, window_ms=1000)
    rate.record(5000, 0)
    assert round(rate.measure(500)) == 3333  # 0.5 s elapsed and one whole window
    assert rate.measure(2500) == 0.0


def test_throttle_time_brings_the_rate_back_to_the_bound():
    assert throttle_time_ms(1500, 1000, 10_000) == 5000
    assert throttle_time_ms(900, 1000, 10_000) == 0


def test_record_throttles_once_over_the_bound():
    quotas = ClientQuotaManager("Produce", samples=2, window_s=1)
    assert quotas.record("ANONYMOUS", "c1", 10**9, 0) == 0  # no quota at all
    quotas.update_quota(None, "c1", 1000)
    assert quotas.record("ANONYMOUS", "c1", 900, 0) == 0
    # 2000 bytes over 1.01 s (10 ms and the one whole window assumed): 1980 B/s, 990 ms to wait
    assert quotas.record("ANONYMOUS", "c1", 1100, 10) == 990
    assert quotas.record("ANONYMOUS", "c2", 10**6, 10) == 0  # another client id: no quota


def test_precedence_and_shared_rates():
    quotas = ClientQuotaManager("Fetch", static_default=50)
    assert quotas.quota("alice", "c1") == 50  # the static client-id default
    quotas.update_quota(None, DEFAULT, 70)
    assert quotas.quota("alice", "c1") == 70
    quotas.update_quota(None, "c1", 80)
    assert quotas.quota("alice", "c1") == 80
    quotas.update_quota(DEFAULT, None, 90)  # user quotas in use: the client-id ones still hold where no user's
    assert quotas.quota("alice", "c1") == 90
    assert quotas.metric_tags("alice", "c1") == ("alice", "")  # alice's clients share her rate
    quotas.update_quota("alice", DEFAULT, 100)
    assert (quotas.quota("alice", "c1"), quotas.metric_tags("alice", "c1")) == (100, ("alice", "c1"))
    quotas.update_quota("alice", "c1", 110)
    assert quotas.quota("alice", "c1") == 110
    quotas.update_quota("alice", "c1", None)
    assert quotas.quota("alice", "c1") == 100
    only_users = ClientQuotaManager("Produce")
    only_users.update_quota("bob", None, 10)
    assert only_users.quota("alice", "c1") == UNLIMITED


def test_request_time_counts_in_percent_of_one_thread():
    quotas = ClientRequestQuotaManager(samples=2, window_s=1)
    assert quotas.record_time("ANONYMOUS", "c1", 5.0, 0) == 0 and quotas.sensors == {}  # no quota: not counted
    quotas.update_quota(None, "c1", 50)  # half a thread
    # 0.3 s of handling over the one whole window assumed: 30 %, within the quota
    assert quotas.record_time("ANONYMOUS", "c1", 0.3, 0) == 0
    assert [m[:3] for m in quotas.measurements(0)] == [("", "c1", 30.0)]
    # 0.3 s more 100 ms later: 60 % over 1.1 s is 54.5 %, 4.5 % over 50 % of 1.1 s
    assert quotas.record_time("ANONYMOUS", "c1", 0.3, 100) == 100
    assert quotas.record_time("ANONYMOUS", "c2", 10.0, 100) == 0  # another client id: no quota


def test_request_throttle_time_is_at_most_one_window():
    quotas = ClientRequestQuotaManager(samples=11, window_s=2)
    quotas.update_quota(DEFAULT, None, 0.01)
    assert quotas.record_time("alice", "c1", 1.0, 0) == 2000  # far over: one window (Kafka's maxThrottleTimeMs)


def test_exempt_time_is_counted_apart_only_while_a_request_quota_is_set():
    quotas = ClientRequestQuotaManager(samples=2, window_s=1)
    quotas.record_exempt(1.0, 0)
    assert quotas.exempt.measure(0) == 0.0
    quotas.update_quota(None, DEFAULT, 1)
    quotas.record_exempt(0.5, 0)
    assert quotas.exempt.measure(0) == 50.0 and quotas.sensors == {}  # no client's rate, no throttle
