"""A live CAT against the same model's full exam: final θ̂ ± SE beside the full-exam θ ± SE,
and how many CAT items were needed before θ̂ stayed within the full exam's SE.

The full exam of a model is every response pattern it has in ``model_scores`` for the CAT's
year, area, prompt language and number of shots (all its full runs pooled): θ is their mean,
SE their mean SE (the SE of one full exam). Imported runs with no number of shots are not
matched.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from analytics.cat import steps_within
from store.cat_queries import full_exam_scores
from store.connection import connected

#: What identifies one CAT path, and what ties it to a full exam.
PATH_KEYS = ["run_id", "label", "model_id", "area", "prompt_language", "shots", "path"]
MATCH_KEYS = ["model_id", "area", "prompt_language", "shots"]
#: Columns of the comparison, in order.
COMPARISON_COLUMNS = [*PATH_KEYS, "items", "cat_theta", "cat_se", "full_theta", "full_se",
                      "difference", "within_se", "items_needed", "full_patterns", "full_runs"]


def theta_paths(steps: pd.DataFrame) -> tuple[pd.DataFrame, np.ndarray]:
    """One row per path (its PATH_KEYS) and its θ̂ after each step, shape (paths, T + 1):
    column 0 is the start (NaN, unused), a path that stopped early keeps its last θ̂."""
    wide = steps.set_index([*PATH_KEYS, "step"])["theta"].unstack("step")
    wide = wide.reindex(columns=range(1, int(wide.columns.max()) + 1)).ffill(axis=1)
    theta = np.column_stack([np.full(len(wide), np.nan), wide.to_numpy()])
    return wide.index.to_frame(index=False), theta


def compare_with_full_exam(steps: pd.DataFrame, full: pd.DataFrame) -> pd.DataFrame:
    """The comparison, one row per CAT path (COMPARISON_COLUMNS).

    ``steps``: live CAT steps as ``cat_paths`` stores them (PATH_KEYS, step, theta, theta_se).
    ``full``: ``store.cat_queries.full_exam_scores`` rows. ``items_needed`` is the first step
    from which |θ̂ − full θ| ≤ full SE at every later step of the path (NA when the last step
    is outside, or when the model has no full exam); ``within_se`` says whether the final θ̂
    is inside.
    """
    if steps.empty:
        return pd.DataFrame(columns=COMPARISON_COLUMNS)
    keys, theta = theta_paths(steps)
    last = steps.sort_values("step").groupby(PATH_KEYS, dropna=False).tail(1)
    final = keys.merge(last[[*PATH_KEYS, "step", "theta", "theta_se"]], on=PATH_KEYS,
                       how="left")
    reference = full.dropna(subset=["shots"]).rename(columns={
        "theta": "full_theta", "theta_se": "full_se", "n_patterns": "full_patterns",
        "runs": "full_runs"})
    table = final.merge(_typed(reference, final), on=MATCH_KEYS, how="left")
    table = table.rename(columns={"step": "items", "theta": "cat_theta", "theta_se": "cat_se"})
    table["difference"] = table["cat_theta"] - table["full_theta"]
    table["within_se"] = table["difference"].abs() <= table["full_se"]
    needed = steps_within(theta, table["full_theta"].to_numpy(float),
                          table["full_se"].to_numpy(float))
    table["items_needed"] = pd.Series(needed, dtype="Int64").where(needed > 0)
    return table[COMPARISON_COLUMNS].sort_values(PATH_KEYS, ignore_index=True)


def _typed(reference: pd.DataFrame, final: pd.DataFrame) -> pd.DataFrame:
    """``reference`` with its match keys of the same dtypes as ``final``'s (for the merge)."""
    return reference.astype({key: final[key].dtype for key in MATCH_KEYS})


def load_comparison(db_path: Path, steps: pd.DataFrame) -> pd.DataFrame:
    """The comparison of ``steps`` (one year's CAT steps) with the store's full exams."""
    if steps.empty:
        return compare_with_full_exam(steps, pd.DataFrame())
    with connected(Path(db_path), read_only=True) as con:
        full = full_exam_scores(con, int(steps["year"].iloc[0]), sorted(steps["area"].unique()),
                                sorted(steps["model_id"].unique()))
    return compare_with_full_exam(steps, full)


def comparison_lines(table: pd.DataFrame) -> list[str]:
    """The comparison as printed by ``enem-llm cat-run``: a table, or why there is none."""
    if table.empty:
        return []
    shown = table.assign(
        needed=table["items_needed"].astype("string").fillna("—"),
        within=table["within_se"].map({True: "yes", False: "no"}).where(
            table["full_theta"].notna(), "—"))
    shown = shown[["area", "path", "items", "cat_theta", "cat_se", "full_theta", "full_se",
                   "within", "needed"]].rename(columns={
                       "cat_theta": "CAT θ̂", "cat_se": "CAT SE", "full_theta": "full θ",
                       "full_se": "full SE", "within": "within SE",
                       "needed": "items needed"})
    lines = [("against the full exam (same model, prompt language and shots; θ and SE the "
              "means over its patterns):"),
             shown.to_string(index=False, float_format=lambda x: f"{x:.3f}", na_rep="—")]
    if table["full_theta"].isna().any():
        missing = sorted(table.loc[table["full_theta"].isna(), "area"].unique())
        lines.append(f"no full exam of this model for {', '.join(missing)}: run `enem-llm run` "
                     "with the same settings to compare")
    return lines
