"""The diagnostic report by skill (the CAT paper's Fig. 5): a model's accuracy on each skill
(``CO_HABILIDADE``) against the 3PL expectation at its θ and against humans of the same θ.

For a model (a run series) on an area, over the items it answered that have parameters and a
skill, per skill:

- observed: the mean over the skill's items of the model's fraction correct on the item (over
  all its answers: shuffles, prompt variants, runs of the series);
- expected: the mean over the skill's items of P_j(θ), θ the model's mean θ over its scored
  patterns of the area, P the 3PL with the year's D;
- humans: the mean over the skill's items of n_correct / n of the humans in the item's θ bin
  (``item_icc``, bins of width ICC_BIN_WIDTH) holding θ; items without humans in that bin are
  left out of the mean (``humans_n`` counts the humans behind it).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from analytics.irt import ItemBank, probability
from enem.item_statistics import ICC_BIN_WIDTH

#: Columns of the report, in order.
SKILL_COLUMNS = ["model", "skill", "n_items", "theta", "observed", "expected", "humans",
                 "humans_n", "observed_minus_expected"]


def bin_index(theta: np.ndarray, width: float = ICC_BIN_WIDTH) -> np.ndarray:
    """The index k of the θ bin [k·width, (k + 1)·width) holding each θ (integers, shape of
    ``theta``)."""
    return np.floor(np.asarray(theta, dtype=np.float64) / width).astype(np.int64)


def item_rows(answers: pd.DataFrame, theta: pd.DataFrame, items: pd.DataFrame) -> pd.DataFrame:
    """One row per (model, item) the model answered, with its fraction correct, the model's θ
    and the item's skill and parameters (items without either left out)."""
    rows = answers.merge(theta[["model", "theta"]], on="model")
    rows = rows.merge(items[["item_id", "skill", "a", "b", "c"]], on="item_id")
    rows = rows.dropna(subset=["skill", "a", "b", "c", "theta"])
    rows = rows.assign(observed=rows["correct"] / rows["answers"],
                       skill=rows["skill"].astype(int))
    # A fixed order: the means below then add the same numbers in the same order whatever order
    # the store returned the answers in (float sums differ in the last bit otherwise).
    return rows.sort_values(["model", "skill", "item_id"], ignore_index=True)


def expected_at_theta(rows: pd.DataFrame, scaling: float) -> np.ndarray:
    """P_j(θ) of each row's item at the row's θ, shape (rows,)."""
    expected = np.empty(len(rows))
    for theta, index in rows.groupby("theta").indices.items():
        part = rows.iloc[index]
        bank = ItemBank.from_arrays(part["a"], part["b"], part["c"], scaling=scaling)
        expected[index] = probability(float(theta), bank)[0]
    return expected


def humans_at_theta(rows: pd.DataFrame, icc: pd.DataFrame) -> pd.DataFrame:
    """Each row's humans in the item's θ bin holding the row's θ: columns humans (fraction
    correct, NaN without humans there) and humans_n."""
    table = icc.assign(bin=np.rint(icc["theta_bin"] / ICC_BIN_WIDTH).astype(np.int64))
    wanted = pd.DataFrame({"item_id": rows["item_id"].to_numpy(),
                           "bin": bin_index(rows["theta"].to_numpy())})
    found = wanted.merge(table[["item_id", "bin", "n", "n_correct"]], on=["item_id", "bin"],
                         how="left")
    n = found["n"].fillna(0).to_numpy(np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        fraction = np.where(n > 0, found["n_correct"].to_numpy(np.float64) / n, np.nan)
    return pd.DataFrame({"humans": fraction, "humans_n": n.astype(np.int64)}, index=rows.index)


def skill_diagnostics(answers: pd.DataFrame, theta: pd.DataFrame, items: pd.DataFrame,
                      icc: pd.DataFrame, scaling: float = 1.0) -> pd.DataFrame:
    """The report (SKILL_COLUMNS), one row per model and skill, by model then skill.

    ``answers``: model, item_id, answers, correct (``model_item_correct``); ``theta``: model,
    theta (its mean θ on the area); ``items``: the area's distinct items with item_id, skill,
    a, b, c; ``icc``: item_id, theta_bin, n, n_correct (``area_item_icc``).
    """
    rows = item_rows(answers, theta, items)
    if rows.empty:
        return pd.DataFrame(columns=SKILL_COLUMNS)
    rows["expected"] = expected_at_theta(rows, scaling)
    rows[["humans", "humans_n"]] = humans_at_theta(rows, icc)
    report = rows.groupby(["model", "skill"], as_index=False).agg(
        n_items=("item_id", "nunique"), theta=("theta", "first"),
        observed=("observed", "mean"), expected=("expected", "mean"),
        humans=("humans", "mean"), humans_n=("humans_n", "sum"))
    report["observed_minus_expected"] = report["observed"] - report["expected"]
    return report[SKILL_COLUMNS].sort_values(["model", "skill"], ignore_index=True)


def mean_theta(points: pd.DataFrame) -> pd.DataFrame:
    """Each model's mean θ over its scored patterns (``model_points`` rows): model, theta."""
    finite = points[np.isfinite(points["theta"].to_numpy(np.float64))]
    return finite.groupby("model", as_index=False)["theta"].mean()
