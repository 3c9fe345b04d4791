"""The Conditions page's captions: what each figure shows, in words formed from the numbers."""

from __future__ import annotations

import pandas as pd

from dashboard.conditions.data import DIMENSIONS, STATISTICS


def held_conditions(dimension: str | None, language: str, shots_words: str, year: int,
                    booklet: tuple[int, str, int] | None = None) -> str:
    """The conditions held fixed, e.g. 'prompt language pt, 2022': every one but
    ``dimension`` (all three when it is None), and the sidebar's ``booklet`` (year, area,
    CO_PROVA) when it restricts the comparison."""
    held = {"prompt language": f"prompt language {language}", "shots": shots_words,
            "year": str(year)}
    words = ", ".join(words for name, words in held.items() if name != dimension)
    if booklet is not None:
        words += (f"; in {booklet[1]} {booklet[0]}, booklet {booklet[2]} and the booklets with "
                  "its items only")
    return words


def level_caption(dimension: str, statistic: str, levels: pd.DataFrame, held: str,
                  provenance: str) -> str:
    """Caption of the means figure."""
    chosen = DIMENSIONS[dimension]
    series = "run" if chosen.series_column == "run" else "model (its runs under each level)"
    counts = levels["n"]
    n_words = (f"{counts.min()}" if counts.min() == counts.max()
               else f"{counts.min()}–{counts.max()}") if not levels.empty else "0"
    return (f"Mean {STATISTICS[statistic]} per {series} under each {dimension} "
            f"({chosen.about}), with its 95% interval mean ± 1.96·SD/√n over the {n_words} "
            f"response patterns (repetitions) of each point; plain means, no weighting. Held "
            f"fixed: {held}. 'All areas' averages each repetition over the chosen areas first "
            f"(repetitions present in every area). {provenance}")


def difference_caption(dimension: str, statistic: str, first: str, second: str,
                       differences: pd.DataFrame) -> str:
    """Caption of the differences figure."""
    paired = bool(differences["paired"].all()) if not differences.empty else \
        DIMENSIONS[dimension].paired
    how = ("the mean of the per-repetition differences (repetition k under one level against "
           "repetition k under the other, same run), with the paired t interval"
           if paired else
           "the difference of the two means, with Welch's t interval (the levels are "
           "different runs or items, so nothing pairs them)")
    return (f"Difference in {statistic} ({STATISTICS[statistic]}): {second} minus {first}, "
            f"{how} (95%); "
            "an interval that crosses the grey line at 0 leaves the sign of the difference "
            "open. The table gives each row's p-value, its Benjamini–Hochberg q over the "
            "table's rows (read q, not p, when scanning many models and areas for a "
            "difference) and the counts behind each row.")


def consistency_caption(held: str) -> str:
    """Caption of the consistency table."""
    return ("Per run and area, over the items a run answered at least twice under "
            f"{held}: the mean share of its repetitions that chose the item's most frequent "
            "option (1 = always the same answer), the share of items where two repetitions "
            "chose differently, and the mean entropy of the choices in bits (0 = always the "
            "same; log₂ 5 ≈ 2.32 for five options chosen equally often). Choices are read "
            "in the options' original letters, so option shuffles compare with one another.")
