"""What every import of model results shares: its summary, the scoring settings a run gets,
and re-scoring a run's answers booklet by booklet.

Imported results are re-scored with the same code as humans and, unless the caller says
otherwise, with the scoring settings stored for the year (its latest ingest), so a run made
elsewhere sits on the same scale as that year's humans; only the raw answers are taken from the
file. Published scores (the paper's θ, SE and l_z) are kept beside ours and every import reports
how far apart the two are.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from enem.scoring import ScoringOptions
from inference.plan import RunPlan
from inference.run_scoring import (
    NoLetterError,
    check_answer_letters,
    no_letter_share,
    score_patterns,
)
from store.model_runs import load_form, year_scoring_options

#: The paper's published scores and the ``model_scores`` columns that keep them.
PUBLISHED_SCORES = {"IRT_SCORE": "published_theta", "IRT_SCORE_SE": "published_se",
                    "LZ_SCORE": "published_lz"}
#: Where one imported pattern lands: a run holds exactly one row per such key.
PATTERN_KEYS = ["year", "booklet_id", "prompt_language", "shuffle"]


class ResultsFormatError(ValueError):
    """The file is not a usable project run export or paper results parquet: the message says
    why, naming the column, value and row of a value that cannot be used."""


@dataclass(frozen=True)
class ImportedRun:
    """One run an import stored: its id, how pages name it, its kind and its pattern count."""

    run_id: str
    label: str
    repetition: str
    rows: int


@dataclass
class ImportSummary:
    """What one ``import-results`` stored, and how close the published scores are to ours.

    ``max_*_diff`` are None for files without published scores (our own run exports);
    ``key_differences`` lists scored items whose key in the file is not the stored key.
    """

    source: str
    runs: list[ImportedRun]
    years: list[int]
    booklets: int
    scoring: list[ScoringOptions] = field(default_factory=list)
    max_theta_diff: float | None = None
    max_se_diff: float | None = None
    max_lz_diff: float | None = None
    key_differences: list[str] = field(default_factory=list)

    @property
    def run_ids(self) -> list[str]:
        return [run.run_id for run in self.runs]

    @property
    def rows(self) -> int:
        """Response patterns stored (one per published row of the paper's files)."""
        return sum(run.rows for run in self.runs)

    def lines(self) -> list[str]:
        """The summary as the command line prints it."""
        years = ", ".join(str(y) for y in self.years)
        out = [(f"imported {self.source}: {self.rows:,} rows in {len(self.runs)} run(s), "
                f"years {years}, {self.booklets} booklets"),
               "re-scored with " + "; ".join(o.describe() for o in self.scoring)]
        if self.max_theta_diff is not None:
            out.append(f"largest |Δθ| between published and re-scored θ: "
                       f"{self.max_theta_diff:.2e} (SE {_format_diff(self.max_se_diff)}, "
                       f"l_z {_format_diff(self.max_lz_diff)})")
        out += [f"answer key differs from the store (correctness follows RESPONSE_PATTERN): "
                f"{difference}" for difference in self.key_differences]
        out += [f"  {run.run_id}  {run.label}  {run.rows:,} rows" for run in self.runs]
        return out


def _format_diff(value: float | None) -> str:
    return "n/a" if value is None or np.isnan(value) else f"{value:.2e}"


def refuse_without_letters(source: object, missing: int, answers: int) -> None:
    """ResultsFormatError when more than ``NO_LETTER_LIMIT`` of an imported run's ``answers``
    have no letter A–E (``missing``; ``source`` names the file in the message).

    The rule a run of the project must pass to be published
    (``inference.run_scoring.check_answer_letters``) holds for a run made elsewhere: a file of
    unreadable answers would otherwise publish a run of blanks.
    """
    try:
        check_answer_letters(missing, answers)  # the one rule; its message speaks of a run
    except NoLetterError:
        raise ResultsFormatError(
            f"{source}: {no_letter_share(missing, answers)}; not imported, as a run of the "
            "project with as many is not published: too few of the answers can be read for "
            "its patterns to measure the model") from None


def run_scoring_options(con, years, overrides: dict) -> ScoringOptions:
    """The settings a run is scored with: each year's stored settings with ``overrides`` on
    top, which must agree across the run's years (ValueError otherwise)."""
    chosen = {int(year): ScoringOptions.from_dict(
        {**year_scoring_options(con, int(year)).as_dict(), **overrides}) for year in years}
    if len(set(chosen.values())) > 1:
        stored = "; ".join(f"{year}: {options.describe()}" for year, options in chosen.items())
        raise ValueError(f"the years of one run were stored with different scoring settings "
                         f"({stored}); choose one with explicit scoring flags")
    return next(iter(chosen.values()))


def score_imported(con, responses: pd.DataFrame, options: ScoringOptions) -> pd.DataFrame:
    """Score a run's responses booklet by booklet: a run may span years (and booklets)."""
    frames = []
    for (year, booklet), part in responses.groupby(["year", "booklet_id"], sort=True):
        language = part["item_language"].dropna()
        form = load_form(con, int(year), int(booklet),
                         int(language.iloc[0]) if len(language) else None)
        plan = RunPlan(units=[], forms={form.area: form}, skipped=[], shots_source="imported")
        frames.append(score_patterns(part, plan, options))
    return pd.concat(frames, ignore_index=True)


#: (summary attribute, our score column, the published one) of each difference reported.
_DIFFERENCES = (("max_theta_diff", "theta", "published_theta"),
                ("max_se_diff", "theta_se", "published_se"),
                ("max_lz_diff", "lz", "published_lz"))


def fold_published(summary: ImportSummary, scores: pd.DataFrame) -> None:
    """Fold one part of an import's scores into the summary's largest differences between our
    scores and the published ones, so a file read in batches reports the largest over all of
    its rows (NaN while no row has both)."""
    for attribute, ours, published in _DIFFERENCES:
        gap, current = _max_difference(scores, ours, published), getattr(summary, attribute)
        if current is None or np.isnan(current):
            setattr(summary, attribute, gap)
        elif not np.isnan(gap):
            setattr(summary, attribute, max(current, gap))


def _max_difference(scores: pd.DataFrame, ours: str, published: str) -> float:
    """Largest |ours − published| over rows that have both (NaN when none has)."""
    gap = (scores[ours] - scores[published]).abs().dropna()
    return float(gap.max()) if len(gap) else float("nan")
