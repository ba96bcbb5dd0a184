"""The loader's output directory: commit by publishing the offsets file, recovery on either side of it."""

from __future__ import annotations

import pytest

from zkafka.spark.offsets import TopicPartition
from zkafka.spark.store import LoadInProgressError, OffsetStore, RunRecord

pytestmark = pytest.mark.spark

A0 = TopicPartition("a", 0, 0)


def stage(store: OffsetStore, run: int, names: list[str]) -> None:
    staged = store.staging_dir(run)
    staged.mkdir(parents=True)
    for name in names:
        path = staged / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(name)
    (staged / "_SUCCESS").write_text("")


def visible(store: OffsetStore) -> list[str]:
    return sorted(
        str(p.relative_to(store.root))
        for p in store.root.rglob("*")
        if p.is_file() and not any(part.startswith(("_", ".")) for part in p.relative_to(store.root).parts)
    )


def test_publish_then_finish_moves_the_files_in_under_run_prefixed_names(tmp_path):
    store = OffsetStore(tmp_path)
    assert store.current() is None and store.runs() == []
    with store.lock():
        stage(store, 1, ["topic=a/part-0.parquet", "topic=b/part-1.parquet", "topic=a/.part-0.parquet.crc"])
        assert visible(store) == []
        store.publish(RunRecord(1, {A0: 77}, {"rows": 3}))
        assert visible(store) == []
        assert store.finish(1) == 2
    assert visible(store) == ["topic=a/run-000001-part-0.parquet", "topic=b/run-000001-part-1.parquet"]
    assert not store.staging_dir(1).exists()
    current = store.current()
    assert (current.run, current.offsets, current.stats) == (1, {A0: 77}, {"rows": 3})


def test_recover_deletes_uncommitted_staging_and_finishes_committed_runs(tmp_path):
    store = OffsetStore(tmp_path)
    stage(store, 1, ["topic=a/p0.parquet"])
    store.publish(RunRecord(1, {A0: 10}))  # committed, then "killed" before finish
    stage(store, 2, ["topic=a/p1.parquet"])  # never committed
    done = store.recover()
    assert done[0].startswith("finished committed run 1: moved 1 file(s)")
    assert done[1].startswith("deleted") and "never committed" in done[1]
    assert visible(store) == ["topic=a/run-000001-p0.parquet"]
    assert not store.staging_root.exists() or list(store.staging_root.iterdir()) == []
    assert store.runs() == [1] and store.recover() == []


def test_a_second_load_on_the_same_directory_is_refused(tmp_path):
    store = OffsetStore(tmp_path)
    with store.lock():
        with pytest.raises(LoadInProgressError, match="another load"):
            with OffsetStore(tmp_path).lock():
                pass
    with store.lock():  # released again
        pass


def test_the_highest_run_is_current_and_special_offsets_are_refused(tmp_path):
    store = OffsetStore(tmp_path)
    for run, offset in ((1, 5), (2, 9), (10, 12)):
        stage(store, run, [])
        store.publish(RunRecord(run, {A0: offset}))
    assert store.runs() == [1, 2, 10]
    assert store.current().offsets == {A0: 12}
    with pytest.raises(ValueError):
        RunRecord.from_json('{"run": 3, "offsets": {"a": {"0-0": -1}}}')
