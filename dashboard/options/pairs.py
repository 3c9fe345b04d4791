"""Two runs side by side (e.g. one model whose answers were read by two answer methods): how
often they chose the same option, and each one's accuracy and mean θ (no Streamlit).

``answers`` are the rows of :func:`dashboard.options.data.answer_table`; ``model_theta`` maps
(series, area) to the series' mean θ in that area.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from dashboard.options.data import model_item_accuracy

#: An answer of one run meets the other run's answer to the same question in the same form.
PAIR_KEYS = ["item_id", "prompt_language", "shots", "shuffle"]


def choice_agreement(answers: pd.DataFrame, first: str, second: str) -> dict:
    """Over the answers both runs gave with a choice to the same item, prompt variant and
    repetition: pairs, agreeing (same original option) and agreement (their share, NaN
    without pairs)."""
    one = answers[(answers["model"] == first) & (answers["chosen"] >= 0)]
    two = answers[(answers["model"] == second) & (answers["chosen"] >= 0)]
    keys = [key for key in PAIR_KEYS if key in answers]
    merged = one[keys + ["chosen"]].merge(two[keys + ["chosen"]], on=keys,
                                          suffixes=("_first", "_second"))
    same = int((merged["chosen_first"] == merged["chosen_second"]).sum())
    return {"pairs": len(merged), "agreeing": same,
            "agreement": same / len(merged) if len(merged) else np.nan}


def pair_table(answers: pd.DataFrame, first: str, second: str,
               model_theta: dict[tuple[str, str], float]) -> pd.DataFrame:
    """One row per run: series, accuracy (mean over items of the share correct, unanswered left
    out), mean_theta (over the areas), answers and unanswered (no choice, e.g. unparsed)."""
    per_item = model_item_accuracy(answers)
    rows = []
    for series in (first, second):
        own = answers[answers["model"] == series]
        thetas = [theta for (name, _), theta in model_theta.items() if name == series]
        rows.append({
            "series": series,
            "accuracy": per_item.loc[per_item["model"] == series, "accuracy"].mean(),
            "mean_theta": float(np.mean(thetas)) if thetas else np.nan, "answers": len(own),
            "unanswered": int((own["chosen"] < 0).sum()),
        })
    return pd.DataFrame(rows)
