"""Post-hoc CAT on real candidates: replay their recorded answers adaptively.

Each sampled candidate takes a CAT on the items of their own booklet form; the answer to the
item the CAT picks is the one they gave in the exam. The CAT's estimator is the year's scoring
recipe (INEP's EAP on 40 points over [−4, 4] unless the year was scored otherwise), so after
every usable item of the form it returns the stored full-test θ; the question is how early it
is within the full test's SE of it, and stays there.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from analytics.cat import CatSettings, FixedLength, LockstepCat, steps_within
from enem.areas import check_area
from enem.items import BookletForm
from enem.responses import correctness, select_language_block, strings_to_chars
from enem.scoring import ScoringOptions
from store.cat_queries import candidate_sample
from store.connection import connected
from store.model_runs import load_form, year_scoring_options

#: θ̂ after this many items is reported beside the full-test θ (the paper's test length).
REPORT_STEP = 20


def year_cat_settings(options: ScoringOptions, selector: str = "max-info",
                      randomesque_k: int = 5) -> CatSettings:
    """A CAT whose estimator is the year's scoring recipe (ML gets the bound rule, as the
    year's ML scoring does)."""
    return CatSettings(selector=selector, randomesque_k=randomesque_k, estimator=options.method,
                       theta_range=options.theta_range, grid_points=options.n_quadrature,
                       constant_patterns="bound")


@dataclass(frozen=True, eq=False)
class PostHocResult:
    """One row per replayed candidate: examinee_id, booklet_id, n_items (usable items of the
    form), full_theta and full_se (stored), cat_theta_20 (θ̂ after REPORT_STEP items) and
    items_needed (first step from which θ̂ stays within full_theta ± full_se)."""

    frame: pd.DataFrame
    description: str

    def lines(self) -> list[str]:
        needed = self.frame["items_needed"]
        quantiles = needed.quantile([0.25, 0.5, 0.75, 0.9]).round().astype(int).tolist()
        within = (needed <= REPORT_STEP).mean()
        return [self.description,
                (f"items needed to stay within the full test's SE: quartiles "
                f"{quantiles[0]} / {quantiles[1]} / {quantiles[2]}, 90th percentile "
                f"{quantiles[3]} (of {int(self.frame['n_items'].median())}); "
                f"{100 * within:.0f}% within {REPORT_STEP} items")]


def needed_distribution(items_needed: pd.Series) -> pd.DataFrame:
    """How many candidates needed each number of items: items_needed, candidates, percent and
    cumulative_percent (of all candidates), by items_needed."""
    counts = items_needed.value_counts().sort_index()
    percent = 100.0 * counts.to_numpy() / counts.sum()
    return pd.DataFrame({"items_needed": counts.index.astype(int), "candidates": counts.to_numpy(),
                         "percent": percent, "cumulative_percent": np.cumsum(percent)})


def posthoc_cat(db_path: Path, year: int, area: str, *, n_candidates: int = 1000,
                seed: int = 0, selector: str = "max-info",
                randomesque_k: int = 5) -> PostHocResult:
    """Replay ``n_candidates`` sampled candidates of ``area`` in ``year`` adaptively."""
    area = check_area(area)
    sample, forms, options = load_candidates(db_path, year, area, n_candidates, seed)
    settings = year_cat_settings(options, selector, randomesque_k)
    frames = [_replay_form(rows, forms[index], options, settings, seed)
              for index, rows in sample.groupby("form", sort=True)]
    frame = pd.concat(frames, ignore_index=True)
    description = (f"{area} {year}: {len(frame)} candidates replayed on their own booklets; "
                   f"{settings.describe().split(' · ')[0]}, θ by {options.describe()}")
    return PostHocResult(frame, description)


def load_candidates(db_path: Path, year: int, area: str, n_candidates: int, seed: int
                    ) -> tuple[pd.DataFrame, list[BookletForm], ScoringOptions]:
    """A seeded sample of up to ``n_candidates`` scored candidates of ``area``
    (``store.cat_queries.candidate_sample``) with a ``form`` column, the index in the returned
    list of the booklet form each answered (LC: their language's); the forms, by booklet then
    language; the year's scoring settings. ValueError when the area has no scored candidate."""
    area = check_area(area)
    with connected(Path(db_path), read_only=True) as con:
        sample = candidate_sample(con, year, area, n_candidates, seed)
        options = year_scoring_options(con, year)
        languages = (sample["language"] if area == "LC"
                     else pd.Series(None, index=sample.index, dtype=object))
        keys = [(int(b), None if pd.isna(lang) else int(lang))
                for b, lang in zip(sample["booklet_id"], languages, strict=True)]
        order = sorted(set(keys), key=lambda key: (key[0], -1 if key[1] is None else key[1]))
        forms = [load_form(con, year, booklet, language) for booklet, language in order]
    if sample.empty:
        raise ValueError(f"no scored {area} candidates in {year}")
    position = {key: index for index, key in enumerate(order)}
    return sample.assign(form=[position[key] for key in keys]), forms, options


def candidate_answers(rows: pd.DataFrame, form: BookletForm) -> np.ndarray:
    """1.0 / 0.0 for every item of ``form`` (string order) and candidate of ``rows`` (their
    ``responses`` and ``language``), shape (n, form.n_items); blank and multiple marks are
    wrong, and a 50-character LC string keeps its candidate's language block."""
    strings = rows["responses"].tolist()
    width = len(strings[0])
    chars = strings_to_chars(strings, width)
    if form.language is not None and width == form.n_items + form.language_items:
        chars = select_language_block(chars, rows["language"].to_numpy(), form.language_items)
    return correctness(chars, form.keys)


def _replay_form(rows: pd.DataFrame, form: BookletForm, options: ScoringOptions,
                 settings: CatSettings, seed: int) -> pd.DataFrame:
    """The CAT of every candidate of one form, all in lockstep."""
    usable = form.bank.usable
    bank = options.item_bank(form.bank).subset(usable)
    answers = candidate_answers(rows, form)[:, usable] == 1.0
    cat = LockstepCat(bank, len(rows), settings.make_selector(), settings.make_estimator(),
                      FixedLength(bank.n_items), start_theta=settings.start_theta,
                      rng=np.random.default_rng([seed, form.booklet_id]))
    while not cat.finished:
        index, items = cat.next_items()
        cat.answer(answers[index, items])
    paths = cat.paths()
    full_theta, full_se = rows["theta"].to_numpy(), rows["theta_se"].to_numpy()
    report = min(REPORT_STEP, bank.n_items)
    return pd.DataFrame({
        "examinee_id": rows["examinee_id"].to_numpy(), "booklet_id": form.booklet_id,
        "n_items": bank.n_items, "full_theta": full_theta, "full_se": full_se,
        "cat_theta_20": paths.theta[:, report], "final_cat_theta": paths.final_theta,
        "items_needed": steps_within(paths.theta, full_theta, full_se),
    })
