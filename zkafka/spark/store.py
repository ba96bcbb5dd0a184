"""The loader's output directory: data moved in by rename, offsets published by an atomic rename.

    DIR/topic=<t>/run-<n>-<file>           data of committed runs (what readers of DIR see)
    DIR/_offsets/<n>.json                  offsets after run n; the highest n is the current one
    DIR/_offsets/.lock                     held (flock) while a load runs
    DIR/_staging/run-<n>/topic=<t>/<file>  a run's output before its commit

Run n commits when ``_offsets/<n>.json`` appears (written aside, fsynced, renamed into place). Its staged
files are then moved into the table. A run that died before the commit left only ``_staging/run-<n>``: the
next run deletes it and reads the same offsets again. A run that died after the commit is finished by the
next run (its files moved in) before anything else. Spark readers skip paths starting with ``_`` or ``.``.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from zkafka.config import LINE_07, LINE_08
from zkafka.spark.offsets import (
    Offsets,
    TopicPartition,
    TopicPartition08,
    offsets_from_json,
    offsets_to_json_obj,
)

OFFSETS_DIR = "_offsets"
STAGING_DIR = "_staging"


class LoadInProgressError(RuntimeError):
    """Another load holds the output directory's lock."""


@dataclass
class RunRecord:
    """What one committed run stored: the next offsets of every partition loaded so far, and stats.

    ``line`` says what the offsets are: 0.7 broker-partitions' byte offsets, or 0.8 partitions' logical
    offsets (files without it are 0.7's).
    """

    run: int
    offsets: Offsets
    stats: dict[str, Any] = field(default_factory=dict)
    line: str = LINE_07

    def to_json(self) -> str:
        head = {"run": self.run, "line": self.line, "offsets": offsets_to_json_obj(self.offsets)}
        return json.dumps({**head, **self.stats}, indent=1)

    @classmethod
    def from_json(cls, text: str) -> RunRecord:
        obj = json.loads(text)
        run, offsets, line = obj.pop("run"), obj.pop("offsets"), obj.pop("line", LINE_07)
        kind = TopicPartition08 if line == LINE_08 else TopicPartition
        return cls(int(run), offsets_from_json(offsets, allow_special=False, kind=kind), obj, line)


class OffsetStore:
    """The offsets files, the staging area and the commit of one output directory."""

    def __init__(self, root: str | os.PathLike) -> None:
        self.root = Path(root)
        self.offsets_dir = self.root / OFFSETS_DIR
        self.staging_root = self.root / STAGING_DIR

    @contextmanager
    def lock(self) -> Iterator[None]:
        """Hold the directory's lock for one load (raises LoadInProgressError when another holds it)."""
        self.offsets_dir.mkdir(parents=True, exist_ok=True)
        with open(self.offsets_dir / ".lock", "a") as f:
            try:
                fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                raise LoadInProgressError(f"another load is writing to {self.root}") from None
            try:
                yield
            finally:
                fcntl.flock(f, fcntl.LOCK_UN)

    def runs(self) -> list[int]:
        """Numbers of the committed runs, ascending."""
        if not self.offsets_dir.is_dir():
            return []
        return sorted(int(p.stem) for p in self.offsets_dir.glob("*.json") if p.stem.isdigit())

    def current(self) -> RunRecord | None:
        """The last committed run, or None before the first."""
        runs = self.runs()
        if not runs:
            return None
        return RunRecord.from_json((self.offsets_dir / f"{runs[-1]:06d}.json").read_text())

    def staging_dir(self, run: int) -> Path:
        return self.staging_root / f"run-{run:06d}"

    def recover(self) -> list[str]:
        """Finish committed runs whose files were not all moved, and delete uncommitted staging; what was done."""
        if not self.staging_root.is_dir():
            return []
        done, committed = [], set(self.runs())
        for staged in sorted(self.staging_root.iterdir()):
            run = int(staged.name.removeprefix("run-")) if staged.name.startswith("run-") else None
            if run in committed:
                moved = self.finish(run)
                done.append(f"finished committed run {run}: moved {moved} file(s) into {self.root}")
            else:
                shutil.rmtree(staged)
                done.append(f"deleted {staged}: its run never committed")
        return done

    def publish(self, record: RunRecord) -> Path:
        """The commit: fsync the run's staged files, then write its offsets file atomically."""
        staged = self.staging_dir(record.run)
        for path in sorted(staged.rglob("*")):
            _fsync(path)
        _fsync(staged)
        self.offsets_dir.mkdir(parents=True, exist_ok=True)
        final = self.offsets_dir / f"{record.run:06d}.json"
        tmp = self.offsets_dir / f".{record.run:06d}.json.tmp"
        with open(tmp, "w") as f:
            f.write(record.to_json())
            f.flush()
            os.fsync(f.fileno())
        os.rename(tmp, final)
        _fsync(self.offsets_dir)
        return final

    def finish(self, run: int) -> int:
        """Move a committed run's data files from staging into the table; returns the files moved."""
        staged = self.staging_dir(run)
        moved, directories = 0, {self.root}
        for path in sorted(staged.rglob("*")):
            if not path.is_file() or path.name.startswith(("_", ".")):
                continue  # Spark's _SUCCESS and .crc side files stay behind
            target_dir = self.root / path.parent.relative_to(staged)
            target_dir.mkdir(parents=True, exist_ok=True)
            os.rename(path, target_dir / f"run-{run:06d}-{path.name}")
            directories.add(target_dir)
            moved += 1
        for directory in directories:
            _fsync(directory)
        shutil.rmtree(staged)
        return moved


def _fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
