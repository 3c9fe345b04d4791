"""Live CAT of a model: ask the selected item through a backend, score it, update θ̂, stop.

    execute_live_cat(spec, db_path, runs_dir)

A run has ``n_paths`` paths per area, advanced in lockstep: path p shows every item with the
p-th option order of that item (``inference.shuffles.option_permutations``; path 0 keeps the
original order), so several shuffles give several CATs of one model. The item bank is the
area's booklet form (the items a full run of the same settings asks), restricted to items with
parameters and a question text in the prompt language.

Resumable: each answered step is a Parquet part in the run folder (``runs/<run id>``); a
restarted run replays the stored answers through the same deterministic CAT and asks the
backend only for the steps it lacks; the folder's ``status.json`` tells its progress. The paths
(item, answer, θ̂, SE per step) are written to the store's ``cat_paths`` table at the end, by
copy-and-swap like every writer.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from analytics.cat import CatPaths, CatSettings, LockstepCat
from analytics.irt import ItemBank
from enem.areas import AREAS, OPTION_LETTERS, check_area
from enem.scoring import ScoringOptions
from inference.backends import LetterScorer, make_scorer
from inference.plan import RunSpec, WorkUnit, build_plan, model_or_default, model_slug
from inference.prompts import build_request
from inference.shuffles import option_permutations, to_original_choices
from store.cat_queries import replace_cat_paths
from store.connection import connected, writing
from store.model_runs import ExamReader, year_scoring_options
from workflows.runs.execution import backend_options, check_booklet_areas
from workflows.runs.folder import RunFolder
from workflows.runs.service import runs_directory

#: Least seconds between two writes of a running CAT's progress to its status file.
STATUS_SECONDS = 1.0


@dataclass(frozen=True)
class CatRunSpec:
    """Everything that determines a live CAT; equal specs share a ``run_id``."""

    model: str
    backend: str
    year: int
    areas: tuple[str, ...] = AREAS
    language: str = "pt"
    shots: int = 0
    n_paths: int = 1
    seed: int = 0
    lc_language: int = 1
    booklets: dict[str, int] = field(default_factory=dict)
    settings: dict[str, Any] = field(default_factory=lambda: CatSettings().as_dict())
    backend_options: dict[str, Any] = field(default_factory=dict)
    model_name: str | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "areas", tuple(check_area(a) for a in self.areas))
        object.__setattr__(self, "model", model_or_default(self.backend, self.model))
        object.__setattr__(self, "settings", CatSettings.from_dict(self.settings).as_dict())
        if not 1 <= self.n_paths <= 120:
            raise ValueError("n_paths must be between 1 and 120")

    @property
    def cat_settings(self) -> CatSettings:
        return CatSettings.from_dict(self.settings)

    def run_spec(self) -> RunSpec:
        """The full-exam run these settings ask items from (its plan gives the units)."""
        return RunSpec(model=self.model, backend=self.backend, year=self.year, areas=self.areas,
                       languages=(self.language,), shots=(self.shots,), n_shuffles=self.n_paths,
                       seed=self.seed, lc_language=self.lc_language, booklets=self.booklets,
                       backend_options=self.backend_options, model_name=self.model_name)

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> CatRunSpec:
        known = {f.name for f in dataclasses.fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in known})

    @property
    def run_id(self) -> str:
        """``cat-<model slug>-<backend>-<year>-<hash of the spec>``."""
        content = json.dumps(self.to_dict(), sort_keys=True, default=str)
        digest = hashlib.sha256(content.encode()).hexdigest()[:8]
        slug = model_slug(self.run_spec().model_id)[:40] or "model"
        return f"cat-{slug}-{self.backend}-{self.year}-{digest}"

    @property
    def label(self) -> str:
        """How pages name the run: ``model · CAT · language k-shot · n paths``."""
        return (f"{self.run_spec().model_id} · CAT · {self.language} {self.shots}-shot · "
                f"{self.n_paths} path{'s' if self.n_paths > 1 else ''}")


@dataclass(frozen=True)
class AreaItems:
    """An area's CAT bank: the units (question, examples) and their 3PL bank, same order."""

    area: str
    units: list[WorkUnit]
    bank: ItemBank


def area_items(units: list[WorkUnit], forms: dict, options: ScoringOptions,
               area: str) -> AreaItems:
    """The asked units of ``area`` whose items have parameters, with their bank."""
    form = forms[area]
    index = {int(item): k for k, item in enumerate(form.item_ids)}
    usable = [u for u in units if u.area == area and form.bank.usable[index[u.item_id]]]
    rows = [index[u.item_id] for u in usable]
    return AreaItems(area, usable, options.item_bank(form.bank).subset(np.array(rows, int)))


def ask(scorer: LetterScorer, spec: CatRunSpec, items: AreaItems, paths: np.ndarray,
        chosen: np.ndarray, step: int) -> pd.DataFrame:
    """Ask each path its chosen item (with the path's option order); one row per path."""
    units = [items.units[k] for k in chosen]
    perms = [option_permutations(spec.n_paths, spec.seed, item_key=u.item_id)[p]
             for u, p in zip(units, paths, strict=True)]
    requests = [build_request(u.question, u.shot_examples, perm[None, :], seed=spec.seed,
                              key=f"{items.area}:{p}:{step}:{u.position}")
                for u, p, perm in zip(units, paths, perms, strict=True)]
    results = scorer.score(requests)
    original = [int(to_original_choices(r.choice, perm[None, :])[0])
                for r, perm in zip(results, perms, strict=True)]
    choice = [OPTION_LETTERS[c] if c >= 0 else "." for c in original]
    return pd.DataFrame({
        "area": items.area, "path": paths.astype(int), "step": step,
        "item_id": [u.item_id for u in units], "position": [u.position for u in units],
        "booklet_id": [u.booklet_id for u in units], "choice": choice,
        "correct": [c == u.question.key for c, u in zip(choice, units, strict=True)],
    })


def run_area(spec: CatRunSpec, items: AreaItems, folder: RunFolder, done: pd.DataFrame,
             scorer_factory: Callable[[], LetterScorer],
             on_asked: Callable[[int], None] | None = None) -> tuple[CatPaths, pd.DataFrame]:
    """The lockstep CAT of every path of one area; stored answers are replayed, not asked.
    ``on_asked(n)`` hears of each step's n newly asked answers once they are stored."""
    settings = spec.cat_settings
    area_index = AREAS.index(items.area)
    cat = LockstepCat(items.bank, spec.n_paths, settings.make_selector(),
                      settings.make_estimator(), settings.make_stopper(),
                      start_theta=settings.start_theta,
                      rng=np.random.default_rng([spec.seed, area_index]))
    stored = {(int(r.path), int(r.step)): r for r in done.itertuples()} if len(done) else {}
    answers = []
    while not cat.finished:
        paths, chosen = cat.next_items()
        step = cat.step + 1
        known = [stored.get((int(p), step)) for p in paths]
        missing = [k for k, row in enumerate(known) if row is None]
        if missing:
            asked = ask(scorer_factory(), spec, items, paths[missing], chosen[missing], step)
            folder.write_part(asked)
            if on_asked:
                on_asked(len(asked))
            for k, row in zip(missing, asked.itertuples(), strict=True):
                known[k] = row
        complete = [row for row in known if row is not None]
        assert len(complete) == len(known)  # ask answered every missing (path, step)
        for k, row in enumerate(complete):
            if int(row.item_id) != items.units[chosen[k]].item_id:
                raise ValueError(f"run folder {folder.root} holds another item for "
                                 f"{items.area} path {paths[k]} step {step}; remove it to restart")
        answers.extend(complete)
        cat.answer(np.array([bool(row.correct) for row in complete]))
    return cat.paths(), pd.DataFrame(answers).drop(columns="Index", errors="ignore")


def path_rows(spec: CatRunSpec, paths: CatPaths, answers: pd.DataFrame) -> pd.DataFrame:
    """The stored steps of one area with θ̂ and SE after each step."""
    frame = answers.sort_values(["path", "step"]).reset_index(drop=True)
    frame["theta"] = paths.theta[frame["path"], frame["step"]]
    frame["theta_se"] = paths.se[frame["path"], frame["step"]]
    run = spec.run_spec()
    return frame.assign(run_id=spec.run_id, model_id=run.model_id, label=spec.label,
                        backend=spec.backend, year=spec.year, prompt_language=spec.language,
                        shots=spec.shots, settings=json.dumps(spec.settings, sort_keys=True),
                        created_at=pd.Timestamp(time.time(), unit="s"))


def execute_live_cat(spec: CatRunSpec, db_path: Path, runs_dir: Path | None = None,
                     scorer: LetterScorer | None = None,
                     progress: Callable[[str], None] | None = None) -> pd.DataFrame:
    """Run (or finish) a live CAT and store its paths; returns the stored rows.

    Raises FileNotFoundError, before any folder is made, when ``db_path`` does not exist."""
    if not Path(db_path).exists():
        raise FileNotFoundError(f"no database at {db_path}; run `enem-llm demo` or ingest a year")
    folder = RunFolder(runs_directory(db_path, runs_dir) / spec.run_id)
    folder.acquire()
    status: dict[str, int] = {}
    try:
        existing = folder.read_json("spec.json")
        if existing is not None and CatRunSpec.from_dict(existing) != spec:
            raise ValueError(f"run folder {folder.root} holds a different spec")
        folder.write_json("spec.json", spec.to_dict())
        done = folder.read_parts()
        # Progress for the pages: answers stored of at most paths × areas × max items.
        status.update(units_done=len(done),
                      units_total=spec.n_paths * len(spec.areas) * spec.cat_settings.max_items)
        folder.update_status(status="running", pid=os.getpid(), started_at=time.time(),
                             error=None, **status)

        written = [time.monotonic()]

        def on_asked(count: int) -> None:
            # At most one status write a second: each is a file sync, and readers poll slower.
            status["units_done"] += count
            if time.monotonic() - written[0] >= STATUS_SECONDS:
                folder.update_status(**status)
                written[0] = time.monotonic()

        rows = _execute(spec, db_path, folder, done, scorer, on_asked, progress)
        folder.update_status(status="finished", finished_at=time.time(), **status)
        return rows
    except Exception as error:
        folder.update_status(status="failed", error=f"{type(error).__name__}: {error}",
                             **status)
        raise
    finally:
        folder.release()


def _execute(spec: CatRunSpec, db_path: Path, folder: RunFolder, done: pd.DataFrame,
             scorer: LetterScorer | None, on_asked: Callable[[int], None],
             progress: Callable[[str], None] | None) -> pd.DataFrame:
    """The CAT of every area from the stored answers ``done`` on; stores and returns its rows."""
    with connected(Path(db_path), read_only=True) as con:
        plan = build_plan(ExamReader(con), spec.run_spec())
        options = year_scoring_options(con, spec.year)
    check_booklet_areas(plan.forms)
    made: list[LetterScorer] = [scorer] if scorer is not None else []

    def scorer_once() -> LetterScorer:
        # A backend (a model load) is made only when some step has to be asked.
        if not made:
            made.append(make_scorer(spec.backend, **backend_options(spec)))
        return made[0]

    frames = []
    for area in spec.areas:
        items = area_items(plan.units, plan.forms, options, area)
        if items.bank.n_items == 0:
            raise ValueError(f"no {area} item with parameters and a {spec.language} text")
        mine = done[done["area"] == area] if len(done) else done
        paths, answers = run_area(spec, items, folder, mine, scorer_once, on_asked)
        frames.append(path_rows(spec, paths, answers))
        if progress:
            progress(f"{area}: {len(answers)} items asked over {spec.n_paths} path(s)")
    rows = pd.concat(frames, ignore_index=True)
    # Copy-and-swap, as every writer: pages keep reading the previous state meanwhile.
    with writing(Path(db_path)) as con:
        replace_cat_paths(con, spec.run_id, rows)
    return rows
