"""Whether another process holds an advisory lock file: how the dashboard tells a background
job (a model run, a fetch) is alive without asking the process that started it."""

from __future__ import annotations

import fcntl
from pathlib import Path


def is_held(lock: Path) -> bool:
    """True while some process holds an exclusive ``flock`` on ``lock``; False when the file
    is missing or free (trying the lock and releasing it at once)."""
    if not lock.is_file():
        return False
    with open(lock, "a+") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        fcntl.flock(handle, fcntl.LOCK_UN)
    return False
