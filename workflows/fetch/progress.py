"""A fetch's progress as a small JSON file, for a reader in another process (the dashboard's
Home page follows a fetch it started in the background this way; ``enem-llm fetch
--progress-file FILE``).

The file holds one :class:`FetchProgress`: the phase (:data:`PHASES`), the file being worked
on, bytes done and total where they are known, the phases entered so far, the message of a
failure, and the writer's pid and times. Each write goes to a temporary file in the same folder
renamed over the old one, so a reader sees the previous state or the new one, never half a
file. Byte counts are written at most every :data:`WRITE_INTERVAL_SECONDS` (a download calls
once per chunk); a phase change is written at once.

The writer holds an ``flock`` on ``FILE.lock`` from before its first write to its process's
end (the kernel frees it however the process ends), so a reader tells a working fetch from one
whose process is gone, and a second fetch given the same file is refused before it writes
anything (:class:`FetchBusyError`).
"""

from __future__ import annotations

import fcntl
import json
import os
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any, TextIO

from workflows.file_locks import is_held

#: The phases of a fetch, in order; a fetch ends in one of :data:`FINAL_PHASES`.
PHASES: tuple[str, ...] = ("starting", "downloading", "checking", "extracting", "ingesting",
                           "done", "failed")
FINAL_PHASES: tuple[str, ...] = ("done", "failed")
#: The most often byte counts are written: often enough for a page refreshing every second or
#: two, rarely enough that a fast local download is not slowed by renames.
WRITE_INTERVAL_SECONDS = 0.5
LOCK_SUFFIX = ".lock"


class FetchBusyError(OSError):
    """Another process is writing the progress file: one fetch at a time per file."""

    def __init__(self, message: str) -> None:
        super().__init__(message)


@dataclass(frozen=True)
class FetchProgress:
    """One state of a fetch as the progress file holds it (times in seconds since the epoch)."""

    phase: str
    task: str = ""
    file: str = ""
    done: int | None = None
    total: int | None = None
    message: str = ""
    history: tuple[str, ...] = ()
    pid: int | None = None
    started_at: float | None = None
    phase_started_at: float | None = None
    updated_at: float | None = None

    @property
    def final(self) -> bool:
        """True once the fetch has ended (done or failed)."""
        return self.phase in FINAL_PHASES

    @property
    def fraction(self) -> float | None:
        """Bytes done over bytes total in this phase, None when the total is not known."""
        if not self.total or self.done is None:
            return None
        return min(1.0, max(0.0, self.done / self.total))

    def as_dict(self) -> dict[str, Any]:
        """The JSON object of the file."""
        values = asdict(self)
        values["history"] = list(self.history)
        return values

    @classmethod
    def from_dict(cls, values: dict[str, Any]) -> FetchProgress:
        """The state a progress file holds; unknown keys are ignored (a newer writer's)."""
        known = {name: values[name] for name in cls.__dataclass_fields__ if name in values}
        known["history"] = tuple(known.get("history") or ())
        return cls(**known)


def write_json_atomically(path: Path, values: dict[str, Any]) -> None:
    """Write ``values`` as JSON to ``path`` through a temporary file renamed over it."""
    path = Path(path)
    handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            json.dump(values, out)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def read_progress(path: Path) -> FetchProgress | None:
    """The state in the progress file at ``path``; None when there is none (or it is not one:
    the file is only ever replaced whole, so that means nobody wrote it)."""
    try:
        values = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(values, dict) or values.get("phase") not in PHASES:
        return None
    try:
        return FetchProgress.from_dict(values)
    except TypeError:
        return None


def lock_path(path: Path) -> Path:
    """The lock file beside the progress file ``path``."""
    path = Path(path)
    return path.with_name(path.name + LOCK_SUFFIX)


def is_locked(path: Path) -> bool:
    """True while a process holds the lock of the progress file ``path`` (a fetch works)."""
    return is_held(lock_path(path))


@dataclass
class ProgressFile:
    """The writer: each method records one step of the fetch. ``path`` None writes nothing (the
    fetch was not asked for a progress file), so the workflows call it unconditionally."""

    path: Path | None
    clock: Callable[[], float] = time.time
    state: FetchProgress = field(default_factory=lambda: FetchProgress("starting"))
    _last_write: float = float("-inf")

    def phase(self, phase: str, *, file: str = "", total: int | None = None,
              done: int | None = None, task: str | None = None) -> None:
        """Enter ``phase`` (a name of :data:`PHASES`) working on ``file``; written at once."""
        if phase not in PHASES:
            raise ValueError(f"unknown fetch phase {phase!r}; expected one of "
                             f"{', '.join(PHASES)}")
        now = self.clock()
        history = self.state.history
        if not history or history[-1] != phase:
            history = (*history, phase)
        self.state = replace(
            self.state, phase=phase, file=file, total=total,
            done=done if done is not None else (0 if total is not None else None),
            task=self.state.task if task is None else task, history=history,
            phase_started_at=now)
        self._write(now)

    def advance(self, count: int) -> None:
        """``count`` more bytes done in this phase; written when the last write is old enough."""
        self.state = replace(self.state, done=(self.state.done or 0) + count)
        now = self.clock()
        if now - self._last_write >= WRITE_INTERVAL_SECONDS:
            self._write(now)

    def finish(self) -> None:
        """The fetch ended well."""
        self.phase("done", file="")

    def fail(self, message: str) -> None:
        """The fetch stopped; ``message`` says why (one line)."""
        self.state = replace(self.state, message=" ".join(message.split()))
        self.phase("failed", file=self.state.file)

    def _write(self, now: float) -> None:
        self._last_write = now
        if self.path is None:
            return
        started = self.state.started_at if self.state.started_at is not None else now
        self.state = replace(self.state, pid=os.getpid(), started_at=started, updated_at=now)
        write_json_atomically(self.path, self.state.as_dict())


def no_progress() -> ProgressFile:
    """A writer that records nothing (the default of every fetch workflow)."""
    return ProgressFile(None)


@contextmanager
def _held_lock(path: Path) -> Iterator[TextIO]:
    """The lock of the progress file ``path``, held for the block; FetchBusyError when another
    process holds it."""
    lock = lock_path(path)
    lock.parent.mkdir(parents=True, exist_ok=True)
    handle = open(lock, "a+")  # noqa: SIM115 - held for the block, closed in finally
    try:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise FetchBusyError(f"another fetch is writing {path}; wait for it to end "
                                 "(one fetch at a time)") from None
        yield handle
    finally:
        handle.close()  # closing the file releases the lock


@contextmanager
def reporting(path: Path | None, *, task: str = "") -> Iterator[ProgressFile]:
    """A writer for the block: it takes the file's lock (FetchBusyError before any write when
    another fetch holds it), writes ``starting``, and ``done`` when the block ends or
    ``failed`` with the error's message when it raises (Ctrl-C included). ``path`` None: a
    writer that records nothing."""
    if path is None:
        yield no_progress()
        return
    with _held_lock(Path(path)):
        writer = ProgressFile(Path(path))
        writer.phase("starting", task=task)
        try:
            yield writer
        except KeyboardInterrupt:
            writer.fail("interrupted; the partial download (.part) is kept: start the same "
                        "fetch again to resume")
            raise
        except BaseException as error:
            writer.fail(str(error) or type(error).__name__)
            raise
        writer.finish()
