"""What a run asks: the spec, and the list of (item, prompt variant) work units it expands to.

A plan is built once at the start of a run from an :class:`ExamSource`: booklet forms with their
item parameters, question texts in each prompt language, and the candidates for few-shot
examples. The store provides one (``store.model_runs.ExamReader``); this package never opens
the database itself.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import numbers
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, cast

import pandas as pd

from enem.areas import AREAS, OPTION_LETTERS, check_area
from enem.items import BookletForm
from inference.prompt_variants import (
    BASE_VARIANT,
    REASONING_MAX_NEW_TOKENS,
    expand_variant_names,
    variant,
)
from inference.prompts import choose_shot_examples, render_prompt
from inference.protocol import PROMPT_LANGUAGES, SHOT_SETTINGS
from inference.questions import Language, Question
from inference.shuffles import apply_permutation, option_permutations

#: The model name of the random-choice baseline (the random backend's default model).
RANDOM_BASELINE = "random-baseline"
#: The exam *Beyond accuracy* takes its solved examples from (A.4: the easiest item of each
#: subject of the 2021 exam, for its 2022 and 2023 exams).
PAPER_SHOT_YEAR = 2021
#: ``shots_source`` when no other exam in the store has the texts the examples need.
SAME_EXAM_SOURCE = "same exam (no other exam with question texts in the store)"
#: The largest seed a run takes: the store keeps it as a BIGINT (``model_runs.seed``), and
#: numpy's seed sequences take no negative one, so seeds run from 0 to this.
SEED_MAX = 2**63 - 1


def check_seed(seed: object) -> int:
    """``seed`` as a run's seed: ValueError unless it is a whole number from 0 to SEED_MAX
    (a larger one used to pass every check and fail only when the finished run was stored)."""
    if (isinstance(seed, bool) or not isinstance(seed, numbers.Integral)
            or not 0 <= int(seed) <= SEED_MAX):
        raise ValueError(f"the seed must be a whole number from 0 to {SEED_MAX:,} (2**63 - 1), "
                         f"got {seed!r}")
    return int(seed)


def check_temperature(temperature: object) -> float:
    """``temperature`` as a sampling temperature: ValueError unless it is a finite number ≥ 0
    (``1e309`` is read as infinity, which no sampler can use)."""
    if (isinstance(temperature, bool) or not isinstance(temperature, numbers.Real)
            or not math.isfinite(temperature) or temperature < 0):
        raise ValueError(f"the temperature must be a finite number of at least 0, "
                         f"got {temperature!r}")
    return float(temperature)


def model_or_default(backend: str, model: str | None) -> str:
    """The model a run asks: ``model`` when given, the random baseline's name for the random
    backend, else "" (no model: the caller must ask for one)."""
    return model or (RANDOM_BASELINE if backend == "random" else "")


def model_slug(name: str) -> str:
    """``name`` lower-cased with every run of other characters than a-z, 0-9 made one ``-``
    (no leading or trailing ``-``): the model part of a run id."""
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")


@dataclass(frozen=True)
class RunSpec:
    """Everything that determines a run's results. Equal specs share a ``run_id``.

    ``lc_language`` is the foreign language of the LC form (1 Spanish, as in the paper).
    ``booklets`` maps area → CO_PROVA; missing areas take the lowest valid booklet.
    ``prompt_variant`` names the prompt's instruction (``inference.prompt_variants``; the
    paper's by default); a chain-of-thought variant needs the ``generate`` answer method.
    """

    model: str
    backend: str
    year: int
    areas: tuple[str, ...] = AREAS
    languages: tuple[str, ...] = ("pt",)
    shots: tuple[int, ...] = (0,)
    n_shuffles: int = 30
    seed: int = 0
    lc_language: int = 1
    booklets: dict[str, int] = field(default_factory=dict)
    backend_options: dict[str, Any] = field(default_factory=dict)
    family: str | None = None
    instruction_tuned: bool | None = None
    model_name: str | None = None
    prompt_variant: str = BASE_VARIANT

    def __post_init__(self) -> None:
        object.__setattr__(self, "areas", tuple(check_area(a) for a in self.areas))
        object.__setattr__(self, "languages", tuple(self.languages))
        object.__setattr__(self, "shots", tuple(int(s) for s in self.shots))
        bad_language = [x for x in self.languages if x not in PROMPT_LANGUAGES]
        if bad_language:
            raise ValueError(f"prompt languages must be among {PROMPT_LANGUAGES}: {bad_language}")
        bad_shots = [s for s in self.shots if s not in SHOT_SETTINGS]
        if bad_shots:
            raise ValueError(f"shots must be among {SHOT_SETTINGS}: {bad_shots}")
        if not 1 <= self.n_shuffles <= 120:
            raise ValueError("n_shuffles must be between 1 and 120")
        if self.lc_language not in (0, 1):
            raise ValueError("lc_language must be 0 (English) or 1 (Spanish)")
        check_seed(self.seed)
        if "temperature" in self.backend_options:
            check_temperature(self.backend_options["temperature"])
        if (variant(self.prompt_variant).reasoning
                and self.backend_options.get("answer_method") != "generate"):
            raise ValueError(f"the {self.prompt_variant} prompt asks the model to reason before "
                             "it answers: only the generate answer method can read that answer")

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RunSpec:
        known = {f.name for f in dataclasses.fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in known})

    @property
    def model_id(self) -> str:
        """How the model is named in the store: ``model_name``, else the GGUF file's or the
        model folder's name (an API model's name as given)."""
        if self.model_name:
            return self.model_name
        gguf = self.backend_options.get("gguf_file")
        return Path(gguf).stem if gguf else Path(self.model).name or self.model

    @property
    def run_id(self) -> str:
        """``<model slug>-<backend>-<year>-<hash of the spec>``: stable, readable, unique."""
        identity = self.to_dict()
        if identity["prompt_variant"] == BASE_VARIANT:
            # Runs made before variants existed keep their ids (and resume in their folders).
            del identity["prompt_variant"]
        content = json.dumps(identity, sort_keys=True, default=str)
        digest = hashlib.sha256(content.encode()).hexdigest()[:8]
        slug = model_slug(self.model_id)[:40]
        return f"{slug or 'model'}-{self.backend}-{self.year}-{digest}"


@dataclass(frozen=True)
class WorkUnit:
    """One item asked in one prompt variant; all of its shuffles are scored together."""

    area: str
    booklet_id: int
    item_language: int | None
    position: int
    item_id: int
    prompt_language: str
    shots: int
    question: Question
    shot_examples: tuple[Question, ...]

    @property
    def key(self) -> tuple[str, str, int, int]:
        return (self.area, self.prompt_language, self.shots, self.position)


@dataclass
class RunPlan:
    """The units of a run, its booklet forms, and the items it had to skip (with why)."""

    units: list[WorkUnit]
    forms: dict[str, BookletForm]
    skipped: list[str]
    shots_source: str


def question_from_row(row: pd.Series, year: int, area: str, language: str) -> Question:
    """A Question from a ``question_texts`` row."""
    options = tuple(str(row[f"option_{x}"]) for x in OPTION_LETTERS.lower())
    annulled = bool(row.get("annulled", False))
    # The run's languages are checked against PROMPT_LANGUAGES, and Question checks it again.
    return Question(year=int(year), area=area, language=cast(Language, language),
                    stem=str(row["stem"]), options=options,
                    key=None if annulled else str(row["key"]), annulled=annulled,
                    item_id=int(row["item_id"]), source="store")


def shot_exam(years: Iterable[int], asked: int) -> tuple[int | None, str]:
    """The exam a run asking ``asked`` takes its solved examples from, among ``years`` (the
    other exams of the store with question texts for every area the examples need), and the
    words its ``shots_source`` records.

    The paper's choice, :data:`PAPER_SHOT_YEAR` (2021), whenever the store has it and it is not
    the exam asked; else the latest earlier exam; else the earliest later one; else none
    (None: the examples come from the asked exam itself, :data:`SAME_EXAM_SOURCE`).
    """
    others = sorted({int(y) for y in years} - {int(asked)})
    if PAPER_SHOT_YEAR in others:
        return PAPER_SHOT_YEAR, (f"the {PAPER_SHOT_YEAR} exam (the paper's choice, Beyond "
                                 "accuracy A.4)")
    earlier = [y for y in others if y < asked]
    if earlier:
        return earlier[-1], (f"the {earlier[-1]} exam (the latest earlier exam in the store; "
                             f"the paper takes {PAPER_SHOT_YEAR}'s, not in the store"
                             + (" or the exam asked" if asked == PAPER_SHOT_YEAR else "") + ")")
    if others:
        return others[0], (f"the {others[0]} exam (a later exam: the store holds neither "
                           f"{PAPER_SHOT_YEAR}'s, the paper's choice, nor an earlier one)")
    return None, SAME_EXAM_SOURCE


def shot_examples(candidates: pd.DataFrame, area: str, shots: int, language: str,
                  seed: int) -> tuple[Question, ...]:
    """The paper's solved examples from candidate rows (year, area, item_id, b, texts)."""
    if shots == 0:
        return ()
    questions = [question_from_row(row, row["year"], row["area"], language)
                 for _, row in candidates.iterrows()]
    return tuple(choose_shot_examples(questions, candidates["b"].tolist(), area, shots, seed,
                                      language=language))


class ExamSource(Protocol):
    """Where a plan reads the exam from (the store implements it)."""

    def default_booklet(self, year: int, area: str) -> int:
        """The booklet a run takes when none is named (ValueError when the area has none)."""
        ...

    def load_form(self, year: int, booklet_id: int, item_language: int | None) -> BookletForm:
        """One booklet form in response-string order."""
        ...

    def question_texts(self, year: int, item_ids: list[int], language: str) -> pd.DataFrame:
        """Texts of the items in one language: item_id, stem, option_a..e, key, annulled."""
        ...

    def easiest_items(self, language: str, exclude_year: int | None) -> pd.DataFrame:
        """Shot candidates with texts and b, per area easiest first: year, area, item_id, b,
        stem, option_a..e, key."""
        ...


def build_plan(source: ExamSource, spec: RunSpec) -> RunPlan:
    """Expand a spec into work units, reading the exam from ``source``."""
    forms: dict[str, BookletForm] = {}
    for area in spec.areas:
        booklet = int(spec.booklets.get(area) or source.default_booklet(spec.year, area))
        forms[area] = source.load_form(spec.year, booklet,
                                       spec.lc_language if area == "LC" else None)
    units: list[WorkUnit] = []
    skipped: list[str] = []
    sources: dict[str, str] = {}
    # 1-shot needs an example of each asked area; 4-shot one of every area.
    needed = set(AREAS) if 4 in spec.shots else set(spec.areas)
    for language in spec.languages:
        candidates = source.easiest_items(language, exclude_year=spec.year)
        covering = [year for year, rows in candidates.groupby("year")
                    if needed <= set(rows["area"])]
        year, sources[language] = shot_exam(covering, spec.year)
        if year is None:
            # No other exam with texts for every area needed: this exam's easiest items.
            candidates = source.easiest_items(language, exclude_year=None)
            candidates = candidates[candidates["year"] == spec.year]
        else:
            candidates = candidates[candidates["year"] == year]
        candidates = candidates.groupby("area").head(3)
        for area, form in forms.items():
            texts = source.question_texts(spec.year, [int(i) for i in form.item_ids], language)
            by_item = {int(row["item_id"]): row for _, row in texts.iterrows()}
            for shots in spec.shots:
                examples = shot_examples(candidates, area, shots, language, spec.seed)
                for position, item_id in enumerate(form.item_ids, start=1):
                    row = by_item.get(int(item_id))
                    if row is None:
                        skipped.append(f"{area} item {item_id} (position {position}): "
                                       f"no {language} text")
                        continue
                    question = question_from_row(row, spec.year, area, language)
                    if any(example.item_id == question.item_id for example in examples):
                        # Same-exam fallback: never show an item solved before asking it.
                        others = candidates[candidates["item_id"] != question.item_id]
                        unit_examples = shot_examples(others, area, shots, language, spec.seed)
                    else:
                        unit_examples = examples
                    if question.annulled:
                        skipped.append(f"{area} item {item_id}: annulled")
                        continue
                    units.append(WorkUnit(area, form.booklet_id, form.language, position,
                                          int(item_id), language, shots, question, unit_examples))
    if not any(s > 0 for s in spec.shots):
        shots_source = "no shots (0-shot)"
    elif len(set(sources.values())) == 1:
        shots_source = next(iter(sources.values()))
    else:
        shots_source = "; ".join(f"{language}: {words}" for language, words in sources.items())
    return RunPlan(units=units, forms=forms, skipped=sorted(set(skipped)),
                   shots_source=shots_source)


def exact_prompt(source: ExamSource, *, year: int, area: str, position: int, language: str = "pt",
                 shots: int = 0, shuffle: int = 0, n_shuffles: int = 30, seed: int = 0,
                 lc_language: int = 1, booklet: int | None = None,
                 prompt_variant: str = BASE_VARIANT) -> str:
    """The exact text a run with these settings sends for one item and shuffle.

    Raises ValueError when the item has no text in ``language`` or the shuffle is out of range.
    """
    if not 0 <= shuffle < n_shuffles:
        raise ValueError(f"shuffle must be in [0, {n_shuffles})")
    spec = RunSpec(model="-", backend="random", year=year, areas=(area,), languages=(language,),
                   shots=(shots,), n_shuffles=n_shuffles, seed=seed, lc_language=lc_language,
                   booklets={area: booklet} if booklet else {})
    plan = build_plan(source, spec)
    unit = next((u for u in plan.units if u.position == position), None)
    if unit is None:
        raise ValueError(f"no {language} text for {area} position {position} of {year}")
    perm = option_permutations(n_shuffles, seed, item_key=unit.item_id)[shuffle]
    return render_prompt(unit.question, unit.shot_examples,
                         apply_permutation(unit.question.options, perm), prompt_variant)


def run_grid(spec: RunSpec, prompt_variants: Sequence[str] = (BASE_VARIANT,),
             temperatures: Sequence[float] = ()) -> list[RunSpec]:
    """One spec per (prompt variant, temperature) of ``spec``: the runs a sweep launches.

    ``prompt_variants`` are names or set names (``inference.prompt_variants.VARIANT_SETS``);
    ``temperatures`` (``generate`` only; empty: the spec's own) become each run's
    ``temperature`` option. A chain-of-thought variant of a spec that sets no
    ``max_new_tokens`` gets :data:`~inference.prompt_variants.REASONING_MAX_NEW_TOKENS` (its
    letter comes after the reasoning). Each spec is checked as it is made (ValueError)."""
    if temperatures and spec.backend_options.get("answer_method") != "generate":
        raise ValueError("temperatures apply to the generate answer method only")
    specs = []
    for name in expand_variant_names(tuple(prompt_variants) or (BASE_VARIANT,)):
        options = dict(spec.backend_options)
        if variant(name).reasoning:
            options.setdefault("max_new_tokens", REASONING_MAX_NEW_TOKENS)
        for temperature in temperatures or (None,):
            if temperature is not None:
                options = {**options, "temperature": float(temperature)}
            specs.append(dataclasses.replace(spec, prompt_variant=name, backend_options=options))
    return specs
