"""A run's own folder: its spec, its live status, and its finished work as Parquet parts.

    runs/<run_id>/spec.json       what was asked (model, backend, exam, prompts, shuffles, seed)
    runs/<run_id>/status.json     live progress, rewritten atomically after every batch
    runs/<run_id>/parts/*.parquet one file per finished batch of items (all their shuffles)
    runs/<run_id>/lock            held (flock) by the process working on the run

A part file appears only once complete (written beside, then renamed), so a run killed at any
moment loses at most the batch in flight, and a second process can never work on the same run.

A run folder is removed by renaming it to ``runs/.removing-<run_id>`` (one atomic step) and then
deleting that: a removal killed halfway leaves either the whole run or such a tombstone, never a
half-deleted folder that looks like no run (it has lost its spec) yet is still there. Tombstones
are never listed as runs; the listing and the next removal of the run delete them.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import time
import uuid
from pathlib import Path
from typing import Any, TextIO

import pandas as pd

from workflows.file_locks import is_held


class RunBusyError(RuntimeError):
    """Another live process is working on this run."""


class RunFolder:
    """Paths and file operations of one run."""

    def __init__(self, root: Path):
        self.root = Path(root)
        self.parts = self.root / "parts"
        self._lock_handle: TextIO | None = None

    @property
    def run_id(self) -> str:
        return self.root.name

    # --- locking -------------------------------------------------------------------------
    def acquire(self) -> None:
        """Take the run's lock or raise RunBusyError; released by ``release`` or process death."""
        self.parts.mkdir(parents=True, exist_ok=True)
        handle = open(self.root / "lock", "a+")  # noqa: SIM115 - held for the run's lifetime
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.close()
            raise RunBusyError(
                f"run {self.run_id} is already being worked on by another process") from None
        self._lock_handle = handle

    def release(self) -> None:
        if self._lock_handle is not None:
            fcntl.flock(self._lock_handle, fcntl.LOCK_UN)
            self._lock_handle.close()
            self._lock_handle = None

    def is_locked(self) -> bool:
        """True while some process holds the run's lock (i.e. the run is alive)."""
        return is_held(self.root / "lock")

    # --- json files ------------------------------------------------------------------------
    def write_json(self, name: str, payload: dict[str, Any]) -> None:
        self.root.mkdir(parents=True, exist_ok=True)
        _atomic_write(self.root / name, json.dumps(payload, indent=2, sort_keys=True,
                                                   default=str).encode())

    def read_json(self, name: str) -> dict[str, Any] | None:
        path = self.root / name
        if not path.exists():
            return None
        return json.loads(path.read_text())

    def update_status(self, **fields: Any) -> dict[str, Any]:
        status = self.read_json("status.json") or {}
        status.update(fields, updated_at=time.time())
        self.write_json("status.json", status)
        return status

    # --- parts ---------------------------------------------------------------------------
    def write_part(self, rows: pd.DataFrame) -> Path:
        """Write one finished batch; visible only once complete."""
        self.parts.mkdir(parents=True, exist_ok=True)
        target = self.parts / f"part-{time.time_ns():020d}-{uuid.uuid4().hex[:8]}.parquet"
        temporary = target.with_suffix(".tmp")
        rows.to_parquet(temporary, index=False)
        with open(temporary, "rb") as handle:
            os.fsync(handle.fileno())
        os.replace(temporary, target)
        return target

    def read_parts(self) -> pd.DataFrame:
        """Every finished row so far (empty frame when none)."""
        files = sorted(self.parts.glob("*.parquet")) if self.parts.exists() else []
        if not files:
            return pd.DataFrame()
        return pd.concat([pd.read_parquet(f) for f in files], ignore_index=True)


def _atomic_write(path: Path, data: bytes) -> None:
    temporary = path.with_suffix(path.suffix + ".tmp")
    with open(temporary, "wb") as handle:
        handle.write(data)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(temporary, path)


#: What a run folder being removed is renamed to, followed by its run id.
REMOVING_PREFIX = ".removing-"


def removal_tombstone(runs_dir: Path, run_id: str) -> Path:
    """Where the folder of ``run_id`` lies while it is being deleted."""
    return Path(runs_dir) / f"{REMOVING_PREFIX}{run_id}"


def remove_run_folder(folder: RunFolder) -> None:
    """Delete a run's folder so that a kill at any moment leaves the whole run or a tombstone
    (see the module's docstring). The caller holds the run's lock (``RunFolder.acquire``)."""
    tombstone = removal_tombstone(folder.root.parent, folder.run_id)
    _delete_tree(tombstone)  # left by an interrupted removal of an earlier folder of this id
    os.rename(folder.root, tombstone)
    _delete_tree(tombstone)


def finish_removal(runs_dir: Path, run_id: str) -> bool:
    """Delete what an interrupted removal of ``run_id`` left; True when it had left something."""
    tombstone = removal_tombstone(runs_dir, run_id)
    if not os.path.lexists(tombstone):
        return False
    _delete_tree(tombstone)
    return True


def _delete_tree(path: Path) -> None:
    """Delete ``path`` and all under it, also while another process deletes it too (the
    listing and a removal finishing the same tombstone)."""
    while os.path.lexists(path):
        try:
            shutil.rmtree(path)
        except FileNotFoundError:
            continue  # an entry went under our feet: go on with what is left


def read_run_folders(runs_dir: Path) -> list[RunFolder]:
    """Every run folder (one holding a ``spec.json``) under ``runs_dir``, newest first.

    Removals that were interrupted are finished on the way (their tombstones deleted); one that
    cannot be deleted now is left for the next time, and never listed."""
    if not Path(runs_dir).exists():
        return []
    folders = []
    for path in Path(runs_dir).iterdir():
        if path.name.startswith(REMOVING_PREFIX):
            try:
                _delete_tree(path)
            except OSError:
                pass  # e.g. not ours to delete: listing the runs must not fail on it
        elif (path / "spec.json").exists():
            folders.append(RunFolder(path))
    return sorted(folders, key=lambda f: (f.read_json("status.json") or {}).get("created_at", 0),
                  reverse=True)
