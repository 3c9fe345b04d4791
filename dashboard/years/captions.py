"""The Years page's captions and notes: what each figure shows, in words formed from the
numbers and the store."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from dashboard.summaries import scoring_words
from dashboard.years.data import HUMANS, STATISTICS


def one_year_note(year: int) -> str:
    """The note of a store holding one exam year."""
    return (f"Years compares exam years and needs at least two ingested years; this store holds "
            f"only {year}, shown alone below. Ingest another year (`enem-llm ingest-enem`, or "
            "`enem-llm ingest-items` for its item file alone) to compare.")


def without_humans(years: Sequence[int], human_years: Sequence[int]) -> str:
    """The sentence naming the years drawn without humans ('' when every year has them)."""
    missing = [str(y) for y in years if y not in set(human_years)]
    if not missing:
        return ""
    which = ", ".join(missing)
    return (f" No humans in {which} (stored from the item file alone, no candidates' answers): "
            f"{'that year shows' if len(missing) == 1 else 'those years show'} the models only.")


def _counts(table: pd.DataFrame) -> str:
    """'30' or '4–30': the repetitions behind the model points."""
    counts = table.loc[table["series"] != HUMANS, "n"]
    if counts.empty:
        return "no"
    low, high = int(counts.min()), int(counts.max())
    return f"{low}" if low == high else f"{low}–{high}"


def _runs_words(prompt: str, year: int) -> str:
    return (f"Model series: the runs the sidebar selects (among {year}'s runs), in every year "
            f"they answered, under prompt {prompt}")


def year_caption(means: pd.DataFrame, prompt: str, sidebar_year: int, missing: str,
                 scoring: str) -> str:
    """Caption of the year figure."""
    return (f"Per exam year (x) and area (column): top, the {STATISTICS['θ']}; bottom, the "
            f"{STATISTICS['% correct']}. Humans (grey, dashed): every scored candidate of the "
            "year, every booklet, all-blank tests included (the sidebar's subgroup, booklet and "
            "switches belong to one year and are not applied here), with mean ± 1.96·SE. "
            f"{_runs_words(prompt, sidebar_year)}: plain means over each series' repetitions "
            f"(response patterns; {_counts(means)} per point) with the 95% interval "
            "mean ± 1.96·SD/√n. The θ scale is common to ENEM's years (INEP equates them). "
            f"Dotted line: chance, 20% (one of five options at random).{missing} {scoring}")


def band_caption(bands: pd.DataFrame, prompt: str, sidebar_year: int, missing: str,
                 thirds_in_rows: bool = False) -> str:
    """Caption of the band figure (``thirds_in_rows``: its layout with a row per third and the
    years on x, ``dashboard.years.figure.thirds_in_rows``)."""
    layout = ("Percent correct per exam year (x), a row per difficulty third and a column per "
              "area." if thirds_in_rows else
              "Percent correct per difficulty third (x), a row per exam year and a column per "
              "area.")
    return (f"{layout} Within each year and area the usable items (a difficulty b, not abandoned; "
            "LC with both foreign-language blocks) of the reference form (the booklet most "
            "candidates took; in a year without candidates, the one the runs answered) are "
            "ranked by b, ties by item id, and cut "
            "into thirds by rank (rank r of n goes to third ⌊3r/n⌋): a third is relative to "
            "its own exam, and the table gives its b range. Humans (grey, dashed): the mean "
            "over the third's items of each item's share of correct answers among the "
            "candidates who saw it (no interval: each share is over the whole population; in "
            "LC each language's items over that language's candidates). "
            f"{_runs_words(prompt, sidebar_year)}: per repetition the percent right of the "
            "third's items it answered (LC: the block it answered; answers to other forms' "
            "items are not counted), then the mean over "
            f"repetitions ({_counts(bands)} per point) with the 95% interval "
            f"mean ± 1.96·SD/√n. Dotted line: chance, 20%.{missing}")


def scoring_sentence(year_scorings: dict[int, str], run_scorings: set[str]) -> str:
    """How θ was scored: each year's settings (once when every year shares them) and the
    selected runs' settings where they differ."""
    distinct = set(year_scorings.values())
    if len(distinct) == 1:
        humans = f"θ: {next(iter(distinct))} in every year."
    else:
        humans = "θ: " + "; ".join(f"{year}: {words}"
                                   for year, words in sorted(year_scorings.items())) + "."
    others = sorted(run_scorings - distinct)
    return humans + (f" Model runs scored otherwise: {'; '.join(others)}." if others else "")


def run_scorings(catalogue: pd.DataFrame, runs: Sequence[str]) -> set[str]:
    """The scoring settings (in words) of the runs labelled ``runs``, from the sidebar's
    catalogue (``store.catalogue_queries.model_catalogue``: a list of stored settings per
    label, missing where none was stored)."""
    if catalogue.empty or "scorings" not in catalogue:
        return set()
    chosen = catalogue[catalogue["model"].isin(list(runs))]
    return {scoring_words(stored) for stored_list in chosen["scorings"]
            if isinstance(stored_list, (list, tuple, np.ndarray)) for stored in stored_list}


def year_scorings(profiles: dict[int, dict]) -> dict[int, str]:
    """Each year's scoring settings in words, from its live ingest
    (``store.catalogue_queries.year_profile``)."""
    return {year: scoring_words(profile.get("scoring")) for year, profile in profiles.items()}
