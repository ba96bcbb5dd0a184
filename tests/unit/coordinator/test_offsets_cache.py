"""The coordinator's offsets cache: replaying an offsets partition, commits, expiry, unloading."""

from __future__ import annotations

from zkafka.coordinator.offsets_cache import Expiry, OffsetsCache
from zkafka.coordinator.offsets_schema import (
    GroupMemberRecord,
    GroupValue,
    OffsetAndMetadata,
    group_key,
    group_value,
    offset_key,
    offset_value,
    partition_for,
)

GROUP = GroupValue("consumer", 3, "range", "m", -1, [GroupMemberRecord("m", None, "c", "/h", 6000, 6000, b"s", b"a")])


def om(offset: int, expire: int = 10**12) -> OffsetAndMetadata:
    return OffsetAndMetadata(offset, "", 0, expire)


def test_replay_keeps_the_last_value_of_each_key_and_tombstones_delete() -> None:
    cache = OffsetsCache(num_partitions=1)
    records = [
        (offset_key("g", "t", 0), offset_value(om(5))),
        (offset_key("g", "t", 1), offset_value(om(6))),
        (offset_key("g", "t", 0), offset_value(om(9))),
        (offset_key("g", "t", 1), None),
        (group_key("g"), group_value(GROUP)),
        (offset_key("h", "t", 0), b"\x00\x00" + bytes(8) + b"\x00\x00" + (1000).to_bytes(8, "big")),  # v0
        (group_key("dead"), group_value(GROUP)),
        (group_key("dead"), None),
    ]
    result = cache.load(0, records)
    assert result.groups == {"g": GROUP, "h": None} and result.offsets == 2 and result.skipped == 0
    assert cache.fetch("g") == {("t", 0): om(9)}
    assert cache.fetch("g", [("t", 0), ("t", 1)]) == {("t", 0): om(9), ("t", 1): None}
    assert cache.fetch("h") == {("t", 0): OffsetAndMetadata(0, "", 1000, 1000 + cache.retention_ms)}
    assert cache.group("g") == GROUP and cache.group("dead") is None


def test_bad_records_are_skipped_and_counted() -> None:
    cache = OffsetsCache(num_partitions=1)
    result = cache.load(
        0, [(b"\x00\x09junk", b""), (None, b"x"), (offset_key("g", "t", 0), offset_value(om(1)))]
    )
    assert result.skipped == 2 and cache.fetch("g") == {("t", 0): om(1)}


def test_commit_records_then_put() -> None:
    cache = OffsetsCache()
    offsets = {("t", 1): om(4), ("s", 0): om(2)}
    assert cache.commit_records("g", offsets) == [
        (offset_key("g", "s", 0), offset_value(om(2))),
        (offset_key("g", "t", 1), offset_value(om(4))),
    ]
    assert cache.fetch("g", [("t", 1)]) == {("t", 1): None}  # not before the append succeeded
    cache.put_offsets("g", offsets)
    assert cache.fetch("g") == {("s", 0): om(2), ("t", 1): om(4)}


def test_expire_drops_old_offsets_and_returns_their_tombstones_by_partition() -> None:
    cache = OffsetsCache()
    cache.put_offsets("g", {("t", 0): om(1, expire=100), ("t", 1): om(2, expire=300)})
    cache.put_offsets("my-group", {("t", 0): om(1, expire=50)})
    tombstones = cache.expire(200, lambda group: Expiry())  # explicit expire times (v2-v4's retention)
    assert tombstones == {
        partition_for("g"): [(offset_key("g", "t", 0), None)],
        partition_for("my-group"): [(offset_key("my-group", "t", 0), None)],
    }
    assert cache.fetch("g") == {("t", 1): om(2, expire=300)} and cache.fetch("my-group") == {}
    assert cache.groups_with_offsets() == ["g"]


def test_unload_forgets_only_that_partitions_groups() -> None:
    cache = OffsetsCache()
    cache.put_offsets("g", {("t", 0): om(1)})
    cache.put_group("g", GROUP)
    cache.put_offsets("my-group", {("t", 0): om(1)})
    assert cache.unload(partition_for("g")) == ["g"]
    assert cache.fetch("g") == {} and cache.group("g") is None and cache.fetch("my-group") != {}


def test_kip_211_retention_runs_from_the_commit_or_from_when_the_group_became_empty() -> None:
    """Without an expire time of the committer's, an offset expires ``retention_ms`` after its commit, or after
    ``since_ms`` (the group became Empty); a kept topic's never; None keeps the whole group's."""
    cache = OffsetsCache(retention_ms=100)
    committed = OffsetAndMetadata(1, "", 0, 100)  # commit time + retention: no explicit expire time
    cache.put_offsets("simple", {("t", 0): committed})
    cache.put_offsets("empty", {("t", 0): committed})
    cache.put_offsets("stable", {("t", 0): committed, ("u", 0): committed})
    cache.put_offsets("rebalancing", {("t", 0): committed})
    rules = {"simple": Expiry(), "empty": Expiry(since_ms=500), "stable": Expiry(kept_topics=frozenset({"t"}))}
    assert cache.expire(99, rules.get) == {}
    assert sorted(k for records in cache.expire(100, rules.get).values() for k, _ in records) == sorted(
        [offset_key("simple", "t", 0), offset_key("stable", "u", 0)]
    )
    assert cache.expire(599, rules.get) == {} and cache.fetch("empty") == {("t", 0): committed}
    assert cache.expire(600, rules.get) == {partition_for("empty"): [(offset_key("empty", "t", 0), None)]}
    assert cache.fetch("stable") == {("t", 0): committed} and cache.fetch("rebalancing") == {("t", 0): committed}
