"""The drills' conclusions on made-up observations: they must see what they claim to see (no Docker)."""

from collections import Counter

from tests.containers.observe import (
    Ledger,
    Owner,
    Sample,
    ZkWatcher,
    double_owner_deliveries,
    settled,
    with_claims,
)


def owner(thread: str, ctime_ms: int) -> Owner:
    return Owner(thread, ctime_ms, session=ctime_ms, first_seen=ctime_ms / 1000, last_seen=ctime_ms / 1000)


def test_a_message_got_after_another_member_claimed_the_partition_is_a_double_owner() -> None:
    history = {"1-0": [owner("g_c1-0", 1000), owner("g_c2-0", 5000)]}
    deliveries = {
        "c1": [{"p": "1-0", "t": 4.9}, {"p": "1-0", "t": 5.2}],  # the second is after c2's claim
        "c2": [{"p": "1-0", "t": 5.1}],
    }
    assert double_owner_deliveries(history, deliveries) == [("c1", "1-0", 5.2, "g_c2-0")]


def test_consumer_ids_with_dashes_and_underscores_match_their_threads() -> None:
    history = {"2-1": [owner("grp_a-b_c-0", 1000)]}
    assert double_owner_deliveries(history, {"a-b_c": [{"p": "2-1", "t": 2.0}]}) == []
    assert double_owner_deliveries(history, {"a-b": [{"p": "2-1", "t": 2.0}]}) != []


def sample(t, owners, offsets=None, brokers=("1", "2"), consumers=("g_c1",)) -> Sample:
    return Sample(
        t,
        {b: 1 for b in brokers},
        set(brokers),
        {c: 1 for c in consumers},
        {p: (thread, 0, 1) for p, thread in owners.items()},
        offsets or {},
        live={1},
    )


def test_settled_needs_every_partition_owned_by_a_registered_member() -> None:
    parts = {"1-0", "2-0"}
    assert settled(sample(0, {"1-0": "g_c1-0", "2-0": "g_c1-0"}), parts, {"g_c1"}, {"1", "2"})
    assert not settled(sample(0, {"1-0": "g_c1-0"}), parts, {"g_c1"}, {"1", "2"})
    assert not settled(sample(0, {"1-0": "g_c1-0", "2-0": "g_gone-0"}), parts, {"g_c1"}, {"1", "2"})
    assert not settled(
        sample(0, {"1-0": "g_c1-0", "2-0": "g_c1-0"}, brokers=("1",)), parts, {"g_c1"}, {"1", "2"}
    )


def test_offset_regressions_and_owner_history_from_samples() -> None:
    watcher = ZkWatcher("127.0.0.1:1", "g", "t")
    watcher.samples = [
        sample(1.0, {"1-0": "g_c1-0"}, {"1-0": 10}),
        sample(1.1, {"1-0": "g_c1-0"}, {"1-0": 30}),
        sample(1.2, {}, {"1-0": 20}),
    ]
    assert watcher.offset_regressions() == [("1-0", 30, 20, 1.2)]
    history = watcher.owner_history()
    assert [(o.thread, o.first_seen, o.last_seen) for o in history["1-0"]] == [("g_c1-0", 1.0, 1.1)]


def test_ledger_counts_losses_and_duplicates() -> None:
    ledger = Ledger(
        sent={"r:0", "r:1", "r:2"},
        failed={"r:3"},
        flushed_before={"r:0", "r:1"},
        stored_after=Counter({"r:0": 1, "r:2": 2}),
        consumed=Counter({"r:0": 2}),
    )
    figures = ledger.figures()
    assert figures["lost_flushed"] == 1  # r:1
    assert figures["duplicates_stored"] == 1 and figures["duplicates_consumed"] == 1
    assert figures["flushed_not_consumed"] == 1  # r:2


def test_claims_reported_by_members_fill_what_the_poller_missed() -> None:
    history = {"3-0": [owner("g_c2-0", 1000), owner("g_c2-0", 9000)]}
    claims = {"g_c1-0": [{"e": "own", "t": 5.1, "ctimes": {"3-0": 5000}}]}
    merged = with_claims(history, claims)
    assert [(o.thread, o.ctime_ms) for o in merged["3-0"]] == [
        ("g_c2-0", 1000),
        ("g_c1-0", 5000),
        ("g_c2-0", 9000),
    ]
    deliveries = {"c1": [{"p": "3-0", "t": 6.0}, {"p": "3-0", "t": 9.5}]}
    assert double_owner_deliveries(history, deliveries) == [
        ("c1", "3-0", 6.0, "g_c2-0"),
        ("c1", "3-0", 9.5, "g_c2-0"),
    ]
    assert double_owner_deliveries(merged, deliveries) == [("c1", "3-0", 9.5, "g_c2-0")]
