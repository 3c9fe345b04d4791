"""Run an exam on a model: plan, score batch by batch into the run folder, then publish.

    execute_run(spec, db_path, runs_dir)

Resumable by construction: finished batches are Parquet parts in the run folder, a restarted
run skips every (item, prompt variant) already there, and the store is written once at the end
(and again by ``publish`` if needed), replacing the run's rows in one transaction.

``check_run`` refuses a run before anything is written or sent (backend settings such as a
missing API key, the exam, a booklet of another area). A run where more than
``NO_LETTER_LIMIT`` (10%) of the answers had no letter A–E, whatever its answer method, is
never published: it ends with NoLetterError, whose message gives the share, and its folder keeps
every finished batch (``inference.run_scoring.check_answer_letters``; a run in progress stops as
soon as it can no longer pass). A published run with some answers without a letter logs a
warning with their share (``logging``: on stderr for the command line, in ``log.txt`` for a
background run) and records their count (``no_letter_answers``) in its status and options.

SIGTERM (``enem-llm cancel``) and SIGINT set a stop event that the backend watches between
requests when it can (``watch_stop``, the OpenAI-compatible backend): the run then stops within
one request, the unfinished batch is discarded and the finished ones kept (status
'cancelled'). Other backends stop after the batch in flight.
"""

from __future__ import annotations

import logging
import os
import signal
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple, Protocol

import pandas as pd

from enem.items import BookletForm
from enem.scoring import ScoringOptions
from inference.answer_methods import DEFAULT_ANSWER_METHOD, DEFAULT_TEMPERATURE
from inference.backends import LetterScorer, check_backend, make_scorer
from inference.backends.base import ScoringCancelled
from inference.min_k import DEFAULT_K_PERCENT, signed_as_eq4
from inference.plan import RunPlan, RunSpec, build_plan
from inference.prompt_variants import BASE_VARIANT, variant_texts
from inference.run_scoring import (
    NoLetterError,
    check_answer_letters,
    no_letter_counts,
    no_letter_warning,
    score_patterns,
    score_units,
    unparsed_count,
)
from store.connection import connected
from store.model_runs import ExamReader, publish_run, shots_prompt_type, year_scoring_options
from workflows.runs.folder import RunFolder

BATCH_ITEMS = 4
logger = logging.getLogger(__name__)


class RunCancelled(RuntimeError):
    """The run was asked to stop; finished batches are kept and it can be resumed."""


@dataclass
class RunOutcome:
    run_id: str
    status: str
    units_done: int
    units_total: int
    seconds: float
    #: Generated answers whose letter could not be read (left out of the scores).
    unparsed: int = 0
    #: Answers without a letter A–E of any kind (``unparsed`` included), and all answers.
    no_letter: int = 0
    answers: int = 0


class AnswerCounts(NamedTuple):
    """What ``publish`` counted among a run's answers."""

    unparsed: int
    no_letter: int
    answers: int


def execute_run(
    spec: RunSpec,
    db_path: Path,
    runs_dir: Path,
    scorer: LetterScorer | None = None,
    batch_items: int = BATCH_ITEMS,
    progress: Callable[[dict], None] | None = None,
    options: ScoringOptions | None = None,
) -> RunOutcome:
    """Do (or finish) the run described by ``spec`` and publish it into the store.

    The patterns are scored with ``options``, by default the settings stored for the year (so
    the model sits on the scale of that year's humans); the run records which.
    SIGTERM/SIGINT stop the run (RunCancelled, status 'cancelled'; run again to resume): within
    one request for a backend with ``watch_stop``, the unfinished batch discarded; else after
    the batch in flight. Raises RunBusyError if another process is working on the same run,
    NoLetterError (nothing published, the finished batches kept) when more than
    ``NO_LETTER_LIMIT`` of the answers had no letter A–E.
    """
    folder = RunFolder(Path(runs_dir) / spec.run_id)
    folder.acquire()
    started = time.monotonic()
    stop = _StopFlag()
    watch: Callable[[threading.Event | None], None] | None = None
    try:
        claim_spec(folder, spec)
        with connected(Path(db_path), read_only=True) as con:
            plan = build_plan(ExamReader(con), spec)
            options = options or year_scoring_options(con, spec.year)
        check_booklet_areas(plan.forms)
        done_rows = folder.read_parts()
        done = _done_keys(done_rows)
        missing_letters, answers = no_letter_counts(done_rows)
        todo = [u for u in plan.units if u.key not in done]
        status = folder.update_status(
            status="running", pid=os.getpid(), units_total=len(plan.units),
            units_done=len(plan.units) - len(todo), skipped=plan.skipped,
            shots_source=plan.shots_source, error=None,
            created_at=(folder.read_json("status.json") or {}).get("created_at", time.time()))
        scorer = scorer or make_scorer(spec.backend, **backend_options(spec))
        watch = getattr(scorer, "watch_stop", None)
        if callable(watch):
            watch(stop.event)
        folder.update_status(scorer=scorer.describe())
        top_k = scorer.describe().get("top_logprobs")
        method = spec.backend_options.get("answer_method")
        total_answers = len(plan.units) * spec.n_shuffles
        units_done, rate_start, rate_units = status["units_done"], time.monotonic(), 0
        for start in range(0, len(todo), batch_items):
            if stop.requested:
                raise RunCancelled(f"run {spec.run_id} cancelled; run it again to resume")
            batch = todo[start:start + batch_items]
            try:
                part = score_units(spec, batch, scorer)
            except ScoringCancelled:
                raise RunCancelled(
                    f"run {spec.run_id} cancelled; its unfinished batch was discarded and its "
                    f"{units_done:,} finished items kept: run it again to resume") from None
            folder.write_part(part)
            missing, scored = no_letter_counts(part)
            missing_letters, answers = missing_letters + missing, answers + scored
            _refuse_without_letters(folder, missing_letters, answers, top_k, method,
                                    total=total_answers)
            units_done += len(batch)
            rate_units += len(batch)
            rate = rate_units / max(time.monotonic() - rate_start, 1e-9)
            status = folder.update_status(
                units_done=units_done, items_per_s=rate,
                eta_s=(len(plan.units) - units_done) / rate if rate else None)
            if progress:
                progress(status)
        _write_min_k(folder, spec, plan, scorer)
        counts = publish(folder, spec, db_path, plan, options)
        warning = no_letter_warning(counts.no_letter, counts.answers, spec.run_id, method)
        if warning:
            logger.warning("%s", warning)
        folder.update_status(status="finished", finished_at=time.time(),
                             no_letter_answers=counts.no_letter, answers=counts.answers)
        return RunOutcome(spec.run_id, "finished", units_done, len(plan.units),
                          time.monotonic() - started, counts.unparsed, counts.no_letter,
                          counts.answers)
    except RunCancelled:
        folder.update_status(status="cancelled")
        raise
    except BaseException as error:
        folder.update_status(status="failed", error=f"{type(error).__name__}: {error}")
        raise
    finally:
        if callable(watch):
            watch(None)
        stop.restore()
        folder.release()


def publish(folder: RunFolder, spec: RunSpec, db_path: Path, plan: RunPlan,
            options: ScoringOptions | None = None) -> AnswerCounts:
    """Score the run's finished parts (with ``options``, by default the year's stored
    settings) and replace its rows in the store, recording the settings. NoLetterError (nothing
    written) when more than ``NO_LETTER_LIMIT`` of the answers had no letter. Returns the
    counts of generated answers whose letter could not be read, of answers without a letter of
    any kind, and of answers."""
    if options is None:
        with connected(Path(db_path), read_only=True) as con:
            options = year_scoring_options(con, spec.year)
    responses = folder.read_parts()
    status = folder.read_json("status.json") or {}
    no_letter, answers = no_letter_counts(responses)
    _refuse_without_letters(folder, no_letter, answers,
                            (status.get("scorer") or {}).get("top_logprobs"),
                            spec.backend_options.get("answer_method"))
    scores = score_patterns(responses, plan, options)
    unparsed = unparsed_count(responses)
    run = {
        "run_id": spec.run_id, "backend": spec.backend, "origin": "local", "year": spec.year,
        "areas": spec.areas, "languages": spec.languages, "shots": spec.shots,
        "n_shuffles": spec.n_shuffles, "seed": spec.seed, "status": "finished",
        "scoring": options.as_dict(),
        "created_at": _timestamp(status.get("created_at")), "finished_at": _timestamp(time.time()),
        **_prompt_type(spec),
        "temperature": _temperature(spec),
        "options": {"spec": spec.to_dict(), "shots_source": plan.shots_source,
                    "prompt_variant": variant_texts(spec.prompt_variant, spec.languages),
                    # Read by the Conditions page (store.condition_queries).
                    "answer_method": (spec.backend_options.get("answer_method")
                                      or DEFAULT_ANSWER_METHOD),
                    "skipped": plan.skipped, "scorer": status.get("scorer"),
                    "unparsed_answers": unparsed, "no_letter_answers": no_letter},
    }
    model = {"model_id": spec.model_id,
             "family": spec.family, "instruction_tuned": spec.instruction_tuned,
             "notes": f"backend {spec.backend}"}
    min_k_path = folder.root / "min_k.parquet"
    min_k = pd.read_parquet(min_k_path) if min_k_path.exists() else None
    if min_k is not None:  # a folder written before Min-K% took Eq. 4's sign
        min_k["value"] = signed_as_eq4(min_k["value"])
    with connected(Path(db_path)) as con:
        publish_run(con, run, model, responses, scores, min_k)
    return AnswerCounts(unparsed, no_letter, answers)


def _prompt_type(spec: RunSpec) -> dict:
    """A run whose answers are read otherwise than by letter probabilities, or whose prompt is
    not the paper's, says so in its prompt type, hence in its label (``tiny · 0-shot ·
    generate T=0.6 · bullets · 30 shuffles``), so that two runs of one model that differ only
    in the method, the temperature of a sweep or the prompt variant are told apart on every
    page."""
    method = spec.backend_options.get("answer_method")
    temperature = _temperature(spec)
    if temperature is not None:
        method = f"{method} T={temperature:g}"
    parts = [part for part in (method if method != DEFAULT_ANSWER_METHOD else None,
                               spec.prompt_variant if spec.prompt_variant != BASE_VARIANT
                               else None) if part]
    if not parts:
        return {}
    return {"prompt_type": " · ".join([shots_prompt_type(spec.shots), *parts])}


def _temperature(spec: RunSpec) -> float | None:
    """The sampling temperature of a ``generate`` run (its scorer's default when the run set
    none); None for the methods that sample nothing."""
    if spec.backend_options.get("answer_method") != "generate":
        return None
    return float(spec.backend_options.get("temperature", DEFAULT_TEMPERATURE))


def check_run(spec: RunSpec, db_path: Path) -> RunPlan:
    """Refuse ``spec`` before anything is written or sent: ValueError (BackendSettingsError)
    for backend settings that cannot work (e.g. no API key for a remote endpoint), a store or
    year that is not there, a booklet of another area. Returns the plan."""
    check_backend(spec.backend, backend_options(spec))
    with connected(Path(db_path), read_only=True) as con:
        plan = build_plan(ExamReader(con), spec)
    check_booklet_areas(plan.forms)
    return plan


def check_booklet_areas(forms: dict[str, BookletForm]) -> None:
    """ValueError when a booklet asked for an area belongs to another area."""
    for area, form in forms.items():
        if form.area != area:
            raise ValueError(f"booklet {form.booklet_id} is a booklet of {form.area}, not {area}")


def _refuse_without_letters(folder: RunFolder, missing: int, answers: int,
                            top_k: int | None, method: str | None,
                            total: int | None = None) -> None:
    """``check_answer_letters`` with the run's id and folder in its message."""
    try:
        check_answer_letters(missing, answers, top_k, method, total)
    except NoLetterError as error:
        raise NoLetterError(f"run {folder.run_id}: {error} Its answers are kept in "
                            f"{folder.root}; remove the run (`enem-llm remove-run "
                            f"{folder.run_id}`) to ask again.") from None


def _write_min_k(folder: RunFolder, spec: RunSpec, plan: RunPlan, scorer) -> None:
    """Min-K% Prob of every asked question text, for backends that can compute it."""
    compute = getattr(scorer, "min_k_percent_prob", None)
    if compute is None or (folder.root / "min_k.parquet").exists():
        return
    seen: dict[tuple[int, str], str] = {}
    for unit in plan.units:
        seen.setdefault((unit.item_id, unit.prompt_language), unit.question.stem)
    keys = list(seen)
    values = compute([seen[k] for k in keys]) if keys else []
    frame = pd.DataFrame({
        "model_id": spec.model_id, "year": spec.year, "item_id": [k[0] for k in keys],
        "language": [k[1] for k in keys], "k_percent": DEFAULT_K_PERCENT, "value": values,
    })
    frame.to_parquet(folder.root / "min_k.parquet", index=False)


def claim_spec(folder: RunFolder, spec: RunSpec) -> None:
    """Write ``spec`` into the run folder, or ValueError when the folder holds another spec."""
    existing = folder.read_json("spec.json")
    if existing is not None and RunSpec.from_dict(existing) != spec:
        raise ValueError(f"run folder {folder.root} holds a different spec")
    folder.write_json("spec.json", spec.to_dict())


def _done_keys(rows: pd.DataFrame) -> set[tuple[str, str, int, int]]:
    if rows.empty:
        return set()
    keys = rows[["area", "prompt_language", "shots", "position"]].drop_duplicates()
    return {(a, lang, int(s), int(p)) for a, lang, s, p in keys.itertuples(index=False)}


class BackendSpec(Protocol):
    """What ``backend_options`` reads of a spec: a RunSpec and a live CAT's CatRunSpec have it."""

    @property
    def backend(self) -> str: ...
    @property
    def backend_options(self) -> dict[str, Any]: ...
    @property
    def seed(self) -> int: ...
    @property
    def model(self) -> str: ...


def backend_options(spec: BackendSpec) -> dict:
    """The options a run's scorer is made with: the spec's own, plus the random backend's seed
    or the model to load. Any spec with backend, backend_options, seed and model will do (a
    live CAT's too)."""
    options = dict(spec.backend_options)
    if spec.backend == "random":
        options.setdefault("seed", spec.seed)
    else:
        options.setdefault("model", spec.model)
    return options


def _timestamp(seconds: float | None):
    return None if seconds is None else pd.Timestamp(seconds, unit="s")


class _StopFlag:
    """Turns SIGTERM/SIGINT into a stop request: ``event`` is set, which a backend with
    ``watch_stop`` checks between requests, and the run checks between batches."""

    def __init__(self) -> None:
        self.event = threading.Event()
        self._previous: dict[int, Any] = {}
        for sig in (signal.SIGTERM, signal.SIGINT):
            try:
                self._previous[sig] = signal.signal(sig, self._handle)
            except ValueError:  # not the main thread: no signal handling
                pass

    @property
    def requested(self) -> bool:
        return self.event.is_set()

    def _handle(self, signum: int, frame: Any) -> None:
        self.event.set()

    def restore(self) -> None:
        for sig, handler in self._previous.items():
            signal.signal(sig, handler)
