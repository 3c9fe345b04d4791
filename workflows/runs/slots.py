"""The queue of background runs launched from the dashboard: at most N work at once.

A queued run's worker process waits for one of N *slots* before it loads a model: slot k is an
advisory lock on ``<runs dir>/.slots/slot-k.lock``. The kernel frees a slot when its holder
exits in any way (SIGKILL included), so a killed run never blocks the queue. Runs take free
slots in no guaranteed order; a waiting worker looks again every ``poll_seconds``.
"""

from __future__ import annotations

import fcntl
import os
import time
from collections.abc import Callable
from pathlib import Path

#: How many launched runs may wait for a slot; beyond it a launch is refused. It bounds what
#: waiting workers hold (each is an interpreter with the project imported, about 100 MB).
MAX_QUEUED = 4


class RunSlot:
    """A held slot; :meth:`release` (or the process's end) frees it."""

    def __init__(self, index: int, descriptor: int):
        self.index = index
        self._descriptor: int | None = descriptor

    def release(self) -> None:
        if self._descriptor is not None:
            os.close(self._descriptor)  # closing the file drops its lock
            self._descriptor = None


def slots_folder(runs_dir: Path) -> Path:
    return Path(runs_dir) / ".slots"


def try_slot(runs_dir: Path, limit: int) -> RunSlot | None:
    """A free slot among the first ``limit``, taken now, or None when all are held."""
    folder = slots_folder(runs_dir)
    folder.mkdir(parents=True, exist_ok=True)
    for index in range(limit):
        descriptor = os.open(folder / f"slot-{index}.lock", os.O_CREAT | os.O_RDWR, 0o644)
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(descriptor)
            continue
        return RunSlot(index, descriptor)
    return None


def wait_for_slot(runs_dir: Path, limit: int, poll_seconds: float = 1.0,
                  waiting: Callable[[], object] | None = None) -> RunSlot:
    """Block until one of ``limit`` slots is free and take it; ``waiting`` is called once
    before the first wait (when a slot is not free at once), and what it returns is ignored."""
    told = False
    while True:
        slot = try_slot(runs_dir, limit)
        if slot is not None:
            return slot
        if waiting is not None and not told:
            waiting()
            told = True
        time.sleep(poll_seconds)
