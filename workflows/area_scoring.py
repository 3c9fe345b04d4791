"""Score a year's areas, with their item statistics, in worker processes.

The ingest (``workflows.ingest``) reads each area's present records from the store and gets back
its score rows, rejects, booklet audit and item tables, area by area as the workers finish. Records
and score rows travel as Arrow IPC files in a scratch folder beside the store, memory-mapped at both
ends: piping and pickling hundreds of MB per area cost more system time than the scoring.

The workers also count the area's histograms (``store.histograms``) and summarise its
populations (``store.populations``) from the score rows they hold, so nothing is read back from
the store for them.

One area more than there are workers is in flight, so a worker that finishes starts on the next
area at once while the ingest stores the results of the last. With one worker everything runs in
the calling process (small years pay no process start).

A killed ingest leaves nothing running and nothing for good: its workers die with it
(``_die_with``), and the scratch folder it could not remove is removed by the next ingest
(``remove_stale_scratch``), which tells it from a live ingest's folder by a lock the owner
holds for as long as it lives.
"""

from __future__ import annotations

import ctypes
import fcntl
import multiprocessing
import os
import shutil
import signal
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Self

import numpy as np
import pyarrow as pa
from threadpoolctl import threadpool_limits

from enem.areas import AREAS
from enem.item_statistics import area_item_frames
from enem.items import ItemsTable
from enem.score_batches import SCORE_SCHEMA, AreaAccumulator, BookletAudit, score_batch
from enem.score_tables import area_score_frame
from enem.scoring import ScoringOptions
from store.histograms import histogram_frames
from store.populations import (
    GROUPINGS,
    population_frame,
    prior_sd_of,
    reproduced_below_share,
)
from workflows.ingest_timing import PhaseTimes

#: Name prefix of the scratch folders made beside the store, one per scoring of a year.
SCRATCH_PREFIX = ".ingest-scratch-"
#: Held (flock) by the process a scratch folder belongs to, for as long as the folder exists.
SCRATCH_OWNER = "owner.lock"
#: Beside the scratch folders: held while one is made and locked, and while stale ones are
#: looked for, so a folder is never seen between being made and being locked.
SCRATCH_GUARD = ".ingest-scratch.lock"
#: Linux's prctl option that has the kernel signal a process when its parent ends.
_PR_SET_PDEATHSIG = 1
#: Seconds between a worker's checks that its parent lives, where prctl is not available.
_PARENT_POLL_SECONDS = 1.0


@dataclass
class AreaScores:
    """What scoring one area hands back.

    ``scores``: the score rows (an Arrow table, memory-mapped; valid until the next area is
    asked for), None when nothing was scored. ``records``: present records read.
    ``rejected_ids``/``rejected_reasons``: one entry per rejected record. ``frames``: rows of
    the item and aggregate tables per table name (DataFrames, Arrow tables or None). ``cpu``:
    CPU seconds per step of the worker.
    """

    area: str
    records: int
    scores: pa.Table | None = None
    rejected_ids: list[str] = field(default_factory=list)
    rejected_reasons: list[str] = field(default_factory=list)
    audit: list[BookletAudit] = field(default_factory=list)
    nota_checked: int = 0
    nota_matched: int = 0
    frames: dict = field(default_factory=dict)
    cpu: dict[str, float] = field(default_factory=dict)


class AreaScorer:
    """``workers`` processes (or, with one, the calling process) that score areas.

    Use as a context manager, entered before the ingest opens anything: the pool is forked
    then, while this process runs no other thread and holds no database, so a fork copies
    nothing another thread could be holding. (Spawned workers would re-import the caller's
    ``__main__``, which a script that ingests at import, as ``python -m cli`` does, would make
    ingest again.)
    """

    def __init__(self, workers: int, scratch_parent: Path | None = None):
        self.workers = max(1, workers)
        self._scratch_parent = scratch_parent
        self._pool: ProcessPoolExecutor | None = None

    def __enter__(self) -> Self:
        if self._scratch_parent is not None:
            remove_stale_scratch(self._scratch_parent)  # left by ingests that were killed
        if self.workers > 1:
            self._pool = ProcessPoolExecutor(
                max_workers=self.workers, mp_context=multiprocessing.get_context("fork"),
                initializer=_start_worker, initargs=(os.getpid(),))
            # The fork start method starts every worker now, from this thread: the thread
            # whose end Linux's parent-death signal watches (see ``_die_with``), and the one
            # that leaves the ``with`` block that shuts the pool down.
            self._pool.submit(int).result()
        return self

    def __exit__(self, *exc) -> None:
        if self._pool is not None:
            self._pool.shutdown(cancel_futures=True)

    def score_areas(
        self, read_area: Callable[[str], pa.RecordBatchReader], year: int, items: ItemsTable,
        options: ScoringOptions, times: PhaseTimes | None = None,
        order: Sequence[str] = AREAS,
    ) -> Iterator[AreaScores]:
        """Yield every area's AreaScores, started in ``order`` (the largest first keeps both
        workers busy to the end) and handed back as each is done, so the last area stored
        is the last one finished; ``read_area(area)`` gives its present records (the columns
        ``enem.score_batches.score_batch`` reads). ``times`` gets the seconds spent writing
        the records out for the workers."""
        times = times or PhaseTimes()
        parent = Path(self._scratch_parent or tempfile.gettempdir())
        with _scratch_folder(parent) as folder:
            areas, in_flight = iter(order), []

            def submit_next() -> None:
                area = next(areas, None)
                if area is None:
                    return
                records, scores = folder / f"{area}.records.arrow", folder / f"{area}.scores.arrow"
                with times.phase("  of which records out to the workers"):
                    _write_arrow(read_area(area), records)
                in_flight.append((records, scores, self._submit(
                    _score_area, records, scores, year, area, items, options)))

            for _ in range(self.workers + (self.workers > 1)):
                submit_next()
            while in_flight:
                wait([future for _, _, future in in_flight], return_when=FIRST_COMPLETED)
                done = next(entry for entry in in_flight if entry[2].done())
                in_flight.remove(done)
                records, scores, future = done
                result = future.result()
                submit_next()
                with pa.memory_map(str(scores)) as source:
                    table = pa.ipc.open_file(source).read_all()
                    result.scores = table if table.num_rows else None
                    yield result
                    del table
                    result.scores = None
                records.unlink()
                scores.unlink()

    def _submit(self, function, *args) -> Future:
        if self._pool is not None:
            return self._pool.submit(function, *args)
        future: Future = Future()
        future.set_result(function(*args))
        return future


def _start_worker(parent: int) -> None:
    """Set up a worker process forked by the process ``parent``."""
    _die_with(parent)
    # Each worker already has a core: BLAS threads of their own would only fight over them.
    threadpool_limits(1)


def _die_with(parent: int) -> None:
    """Make this worker end when ``parent``, the ingest that forked it, ends, however it ends.

    An ingest killed by a signal cannot shut its pool down, and its workers would otherwise
    wait for work for ever (about 255 MB each): every one holds both ends of the pool's pipes
    (fork copies them), so none ever reads an end of file. On Linux the kernel sends this
    process SIGKILL when its parent ends (``prctl(PR_SET_PDEATHSIG)``): at once and with no
    thread here. SIGKILL because there is nothing to tidy: the scratch folder belongs to the
    parent and the next ingest removes it. (Linux sends it when the parent *thread* that forked
    ends; that is the thread that entered the AreaScorer, which outlives the pool.) Where
    prctl is not available a daemon thread checks ``os.getppid()`` every second instead.

    The parent may have ended before this runs, in which case this process has been adopted
    and no signal will ever come: checked after the signal is armed, so nothing slips between.
    """
    if not _kill_when_parent_ends():
        threading.Thread(target=_watch_parent, args=(parent,), name="parent watch",
                         daemon=True).start()
    if os.getppid() != parent:
        os._exit(1)


def _kill_when_parent_ends() -> bool:
    """Ask Linux for SIGKILL when this process's parent ends; False where it cannot."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        # prctl reads unsigned longs: pass them as such, not as C ints of unknown upper bits.
        return libc.prctl(_PR_SET_PDEATHSIG, ctypes.c_ulong(signal.SIGKILL), ctypes.c_ulong(0),
                          ctypes.c_ulong(0), ctypes.c_ulong(0)) == 0
    except (OSError, AttributeError):
        return False


def _watch_parent(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(_PARENT_POLL_SECONDS)
    os._exit(1)


@contextmanager
def _scratch_guard(parent: Path) -> Iterator[None]:
    with open(parent / SCRATCH_GUARD, "a") as guard:
        fcntl.flock(guard, fcntl.LOCK_EX)  # held for moments: released when the file closes
        yield


@contextmanager
def _scratch_folder(parent: Path) -> Iterator[Path]:
    """A new scratch folder in ``parent``, removed when the block ends.

    This process holds the lock of the folder's ``SCRATCH_OWNER`` file until then (the kernel
    drops it when the process dies, however it dies), which is how ``remove_stale_scratch``
    tells a killed ingest's folder from a live one's. It is made and locked under the
    ``SCRATCH_GUARD`` lock, so no one looking for stale folders sees it unlocked in between.
    """
    with _scratch_guard(parent):
        folder = Path(tempfile.mkdtemp(prefix=SCRATCH_PREFIX, dir=parent))
        owner = open(folder / SCRATCH_OWNER, "w")  # noqa: SIM115 - held while the folder lives
        fcntl.flock(owner, fcntl.LOCK_EX)
    try:
        yield folder
    finally:
        try:
            shutil.rmtree(folder, ignore_errors=True)
        finally:
            owner.close()


def remove_stale_scratch(parent: Path) -> list[Path]:
    """Remove the scratch folders in ``parent`` that no live process owns (those of ingests
    that were killed: nothing else removes them, and each holds a copy of a year's records);
    returns the folders removed. A live ingest's folder is never touched."""
    parent = Path(parent)
    if not parent.is_dir():
        return []
    removed = []
    with _scratch_guard(parent):
        for folder in sorted(parent.glob(SCRATCH_PREFIX + "*")):
            if folder.is_dir() and not _owned(folder):
                shutil.rmtree(folder, ignore_errors=True)
                removed.append(folder)
    return removed


def _owned(folder: Path) -> bool:
    """True while some live process holds the lock of ``folder``'s owner file (the caller
    holds the guard, so a folder without that file is no one's: its maker died first, or it
    predates the owner files)."""
    try:
        owner = os.open(folder / SCRATCH_OWNER, os.O_RDONLY)
    except FileNotFoundError:
        return False
    except OSError:
        return True  # not ours to judge (e.g. another user's): leave it
    try:
        fcntl.flock(owner, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(owner)  # also drops the lock just taken
    return False


def _write_arrow(reader: pa.RecordBatchReader, path: Path) -> None:
    with pa.OSFile(str(path), "wb") as sink, pa.ipc.new_file(sink, reader.schema) as writer:
        for batch in reader:
            writer.write_batch(batch)


def _score_area(records_path: Path, scores_path: Path, year: int, area: str, items: ItemsTable,
                options: ScoringOptions) -> AreaScores:
    """Score one area's records file into ``scores_path`` and compute its item statistics, its
    items' counts by summed score per form, histograms and populations; runs in a worker
    process when there are several. The returned AreaScores has no scores (they are in the
    file)."""
    started = time.process_time()
    accumulator = AreaAccumulator()
    result = AreaScores(area=area, records=0)
    sources = []  # the record each score row comes from, in the order of the score rows
    with pa.memory_map(str(records_path)) as source, \
            pa.OSFile(str(scores_path), "wb") as sink, \
            pa.ipc.new_file(sink, SCORE_SCHEMA) as writer:
        reader = pa.ipc.open_file(source)
        for index in range(reader.num_record_batches):
            scored = score_batch(reader.get_batch(index), year, area, items, accumulator,
                                 options)
            result.rejected_ids.extend(scored.rejected_ids)
            result.rejected_reasons.extend(scored.rejected_reasons)
            if scored.scores is not None:
                writer.write_table(scored.scores)
                sources.append(scored.rows + result.records)
            result.records += scored.records
    result.audit = list(accumulator.audit.values())
    result.nota_checked, result.nota_matched = accumulator.nota_checked, accumulator.nota_matched
    result.cpu["scoring"] = time.process_time() - started
    started = time.process_time()
    result.frames = area_item_frames(year, area, items, accumulator)
    result.cpu["item statistics"] = time.process_time() - started
    started = time.process_time()
    result.frames["item_score_counts"] = area_score_frame(year, area, items.forms, accumulator)
    result.cpu["item counts by score"] = time.process_time() - started
    if sources:
        result.frames |= _aggregate_frames(records_path, scores_path, np.concatenate(sources),
                                           year, area, result, prior_sd_of(options))
    return result


def _aggregate_frames(records_path: Path, scores_path: Path, sources: np.ndarray, year: int,
                      area: str, result: AreaScores, prior_sd: float | None) -> dict:
    """The area's histogram and population rows, from its score rows and, for the groupings,
    the records they come from (``sources``: one record index per score row); their CPU
    seconds go to ``result.cpu``."""
    columns = list(dict.fromkeys(GROUPINGS.values()))
    with pa.memory_map(str(scores_path)) as scored, pa.memory_map(str(records_path)) as read:
        started = time.process_time()
        scores = pa.ipc.open_file(scored).read_all()
        frames = histogram_frames(scores)
        result.cpu["histograms"] = time.process_time() - started
        started = time.process_time()
        groupings = pa.ipc.open_file(read).read_all().select(columns).take(sources)
        frames["agg_populations"] = population_frame(year, area, scores, groupings,
                                                     reproduced_below_share(result.audit),
                                                     prior_sd)
        result.cpu["populations"] = time.process_time() - started
    return frames
