"""Humans and models compared item by item on the Options and traps page (no Streamlit): the
option distributions (Jensen–Shannon distance), accuracy by difficulty band and the lengths of
the questions answered correctly and incorrectly (Welch's t-test).

Inputs are the frames of :mod:`dashboard.options.data`: ``items`` from ``human_items`` (one row
per item, areas concatenated) and ``answers`` from ``answer_table``.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from analytics.options import counts_near, jensen_shannon_distance, option_shares
from analytics.significance import welch_t_test
from dashboard.options.data import BAND_NAMES, HUMANS, NEAR, SHARE_COLUMNS, model_item_accuracy
from enem.areas import OPTION_LETTERS
from enem.item_statistics import ICC_BIN_WIDTH

MODEL_SHARE_COLUMNS = [f"model_{letter}" for letter in OPTION_LETTERS]
#: The measures of the length tests: (column of ``store.option_queries.question_lengths``, name).
LENGTH_MEASURES: tuple[tuple[str, str], ...] = (("stem_chars", "question length"),
                                                ("option_chars", "option length"))


def model_option_counts(answers: pd.DataFrame) -> pd.DataFrame:
    """Per series and item: how many answers chose each original letter (columns A–E; answers
    without a choice are left out)."""
    chosen = answers[answers["chosen"] >= 0]
    table = chosen.groupby(["model", "item_id", "chosen"]).size().unstack("chosen", fill_value=0)
    return table.reindex(columns=range(len(OPTION_LETTERS)), fill_value=0) \
        .set_axis(list(OPTION_LETTERS), axis=1)


def item_distances(items: pd.DataFrame, answers: pd.DataFrame,
                   cubes: dict[str, tuple[np.ndarray, np.ndarray]],
                   model_theta: dict[tuple[str, str], float]) -> pd.DataFrame:
    """One row per (series, item it answered): the humans' and the model's option shares, its
    accuracy (model_accuracy) and answers with a choice (model_answers), the
    Jensen–Shannon distance (base 2, 0 = same distribution, 1 = disjoint) to all humans
    (js_humans) and to the humans within :data:`NEAR` of the series' mean θ in that area
    (js_near_theta; NaN without such humans).

    ``cubes[area]``: (item × θ bin × letter counts, bin lower edges) from
    :func:`dashboard.options.data.theta_cube` in the order of that area's rows of ``items``;
    ``model_theta[(series, area)]``: the series' mean θ.
    """
    counts = model_option_counts(answers)
    if counts.empty:
        return pd.DataFrame()
    frame = counts.reset_index().merge(items, on="item_id", how="inner")
    model = frame[list(OPTION_LETTERS)].to_numpy(np.float64)
    frame[MODEL_SHARE_COLUMNS] = option_shares(model)
    frame["model_answers"] = model.sum(axis=1)
    accuracy = model_item_accuracy(answers).set_index(["model", "item_id"])["accuracy"]
    frame["model_accuracy"] = accuracy.reindex(
        pd.MultiIndex.from_frame(frame[["model", "item_id"]])).to_numpy()
    frame["js_humans"] = jensen_shannon_distance(model, frame[SHARE_COLUMNS].fillna(0.0))
    near = np.zeros_like(model)
    for (series, area), rows in frame.groupby(["model", "area"]).groups.items():
        cube, bins = cubes.get(area, (np.zeros((0, 0, 5)), np.zeros(0)))
        theta = model_theta.get((series, area), np.nan)
        if not len(bins) or not np.isfinite(theta):
            continue
        area_ids = items.loc[items["area"] == area, "item_id"].to_numpy()
        position = pd.Series(np.arange(len(area_ids)), index=area_ids)
        picked = position[frame.loc[rows, "item_id"]].to_numpy()
        near[frame.index.get_indexer(rows)] = counts_near(cube[picked], bins, ICC_BIN_WIDTH,
                                                          theta, NEAR)
    frame["js_near_theta"] = jensen_shannon_distance(model, near)
    frame["model_theta"] = [model_theta.get(key, np.nan)
                            for key in zip(frame["model"], frame["area"], strict=True)]
    return frame.drop(columns=list(OPTION_LETTERS)).rename(columns={"model": "series"})


def band_accuracy(items: pd.DataFrame, answers: pd.DataFrame) -> pd.DataFrame:
    """Accuracy by difficulty band, humans then each series: series, band, items, accuracy
    (mean over the band's items of the share correct)."""
    banded = items.dropna(subset=["band"])
    rows = [_band_rows(HUMANS, banded.set_index("item_id")["human_p"], banded)]
    per_item = model_item_accuracy(answers)
    for model, group in per_item.groupby("model", sort=False):
        rows.append(_band_rows(model, group.set_index("item_id")["accuracy"], banded))
    return pd.concat(rows, ignore_index=True)


def _band_rows(who: str, accuracy: pd.Series, banded: pd.DataFrame) -> pd.DataFrame:
    band = banded.set_index("item_id")["band"]
    joined = pd.DataFrame({"accuracy": accuracy}).join(band, how="inner").dropna()
    summary = joined.groupby("band")["accuracy"].agg(items="size", accuracy="mean")
    summary = summary.reindex(list(BAND_NAMES)).reset_index()
    summary.insert(0, "series", who)
    summary["items"] = summary["items"].fillna(0).astype(int)
    return summary


def length_tests(items: pd.DataFrame, answers: pd.DataFrame, human_lengths: pd.DataFrame,
                 model_lengths: pd.DataFrame) -> pd.DataFrame:
    """Welch's t-test of question and option lengths (characters) between correct and incorrect
    answers, humans then each series: series, measure, mean_correct, mean_incorrect, p_value,
    t, dof, n_correct, n_incorrect (the means and p first: they are what a reader compares, and
    the page's table shows its first columns without scrolling sideways).

    Every answer is one observation carrying its item's length: a human answer (p·n correct and
    (1 − p)·n incorrect ones per item, blanks counted incorrect as in CTT) measured on the
    Portuguese text ``human_lengths``, a model answer on the text of its prompt language
    ``model_lengths``. Items without a text are left out.
    """
    human = items[["item_id", "human_p", "human_n"]].merge(human_lengths, on="item_id")
    rows = _length_rows(HUMANS, human, human["human_p"] * human["human_n"],
                        (1 - human["human_p"]) * human["human_n"])
    per_item = model_item_accuracy(answers).merge(model_lengths, on="item_id")
    for model, group in per_item.groupby("model", sort=False):
        rows += _length_rows(model, group, group["correct"], group["answers"] - group["correct"])
    return pd.DataFrame(rows, columns=["series", "measure", "mean_correct", "mean_incorrect",
                                       "p_value", "t", "dof", "n_correct", "n_incorrect"])


def _length_rows(who: str, frame: pd.DataFrame, correct: pd.Series,
                 incorrect: pd.Series) -> list[dict]:
    usable = (correct.notna() & incorrect.notna()).to_numpy()
    rows = []
    for column, measure in LENGTH_MEASURES:
        values = frame[column].to_numpy(np.float64)[usable]
        test = welch_t_test(values, values, correct.to_numpy(np.float64)[usable],
                            incorrect.to_numpy(np.float64)[usable])
        rows.append({"series": who, "measure": measure, "mean_correct": test.mean_x,
                     "mean_incorrect": test.mean_y, "n_correct": test.n_x,
                     "n_incorrect": test.n_y, "t": test.t, "dof": test.dof,
                     "p_value": test.p_value})
    return rows
