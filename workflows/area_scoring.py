"""Score a year's areas, with their item statistics, in worker processes.

The ingest (``workflows.ingest``) reads each area's present records from the store and gets back
its score rows, rejects, booklet audit and item tables, area by area as the workers finish. Records and
score rows travel as Arrow IPC files in a scratch folder beside the store, memory-mapped at
both ends: piping and pickling hundreds of MB per area cost more system time than the scoring.

The workers also count the area's histograms (``store.histograms``) and summarise its
populations (``store.populations``) from the score rows they hold, so nothing is read back from
the store for them.

One area more than there are workers is in flight, so a worker that finishes starts on the next
area at once while the ingest stores the results of the last. With one worker everything runs in
the calling process (small years pay no process start).
"""

from __future__ import annotations

import multiprocessing
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
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
from enem.scoring import ScoringOptions
from store.histograms import histogram_frames
from store.populations import GROUPINGS, population_frame, reproduced_below_share
from workflows.ingest_timing import PhaseTimes


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
        if self.workers > 1:
            self._pool = ProcessPoolExecutor(
                max_workers=self.workers, mp_context=multiprocessing.get_context("fork"),
                initializer=_one_blas_thread)
            self._pool.submit(int).result()  # the fork start method starts every worker now
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
        with tempfile.TemporaryDirectory(prefix=".ingest-scratch-",
                                         dir=self._scratch_parent) as scratch:
            folder = Path(scratch)
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
        future = Future()
        future.set_result(function(*args))
        return future


def _one_blas_thread() -> None:
    # Each worker already has a core: BLAS threads of their own would only fight over them.
    threadpool_limits(1)


def _write_arrow(reader: pa.RecordBatchReader, path: Path) -> None:
    with pa.OSFile(str(path), "wb") as sink, pa.ipc.new_file(sink, reader.schema) as writer:
        for batch in reader:
            writer.write_batch(batch)


def _score_area(records_path: Path, scores_path: Path, year: int, area: str, items: ItemsTable,
                options: ScoringOptions) -> AreaScores:
    """Score one area's records file into ``scores_path`` and compute its item statistics,
    histograms and populations; runs in a worker process when there are several. The
    returned AreaScores has no scores (they are in the file)."""
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
    if sources:
        result.frames |= _aggregate_frames(records_path, scores_path, np.concatenate(sources),
                                           year, area, result)
    return result


def _aggregate_frames(records_path: Path, scores_path: Path, sources: np.ndarray, year: int,
                      area: str, result: AreaScores) -> dict:
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
                                                     reproduced_below_share(result.audit))
        result.cpu["populations"] = time.process_time() - started
    return frames
