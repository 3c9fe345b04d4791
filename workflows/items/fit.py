"""Item fit of the humans' calibration on one booklet form: Orlando–Thissen S-X²
(:func:`analytics.items.fit.sx2_item_fit`) from the stored score tables, its RMSEA as the
effect size, and Benjamini–Hochberg q-values over the form's items.

With hundreds of thousands of candidates per booklet S-X² rejects even trivial misfit, so the
table flags an item by its RMSEA (mirt's ``RMSEA.S_X2``):
RMSEA = sqrt(max(0, (S-X² − df) / (df · (N − 1)))), N the candidates of the form; an item is
flagged when its q-value is below :data:`FIT_Q` and its RMSEA above :data:`MISFIT_RMSEA`.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from analytics.irt import ItemBank
from analytics.items.fit import DEFAULT_POOLING, sx2_item_fit
from analytics.multiple_testing import benjamini_hochberg

#: The RMSEA of S-X² above which an item's misfit is more than sampling noise of a large
#: sample: 0.05, the usual "close fit" bound of RMSEA.
MISFIT_RMSEA = 0.05
#: The false discovery rate of the flags.
FIT_Q = 0.05
#: INEP calibrates each edition's items on its candidates, so a, b and c were estimated from
#: data like these: S-X²'s df subtract the three (Orlando & Thissen's convention).
ESTIMATED_PARAMETERS = 3

FIT_COLUMNS = ["item_id", "position", "sx2", "df", "p", "q", "rmsea", "misfit"]


def rmsea(statistic: np.ndarray, df: np.ndarray, n: float) -> np.ndarray:
    """RMSEA of χ² statistics with their df over ``n`` examinees (NaN where df ≤ 0)."""
    x = np.asarray(statistic, dtype=np.float64)
    d = np.asarray(df, dtype=np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        value = np.sqrt(np.maximum(0.0, (x - d) / (d * (n - 1.0))))
    return np.where((d > 0) & (n > 1), value, np.nan)


def human_item_fit(item_ids: np.ndarray, positions: np.ndarray, bank: ItemBank,
                   score_counts: np.ndarray, correct_by_score: np.ndarray,
                   prior_mean: float = 0.0, prior_sd: float = 1.0,
                   pooling: str = DEFAULT_POOLING) -> pd.DataFrame:
    """One row per item of the form (:data:`FIT_COLUMNS`), in booklet order.

    ``bank``: the form's items' parameters (all usable, with the year's D); ``score_counts``
    (n + 1,) and ``correct_by_score`` (n, n + 1): the stored tables of the form;
    ``prior_mean``/``prior_sd``: the candidates' ability distribution on INEP's scale;
    ``pooling``: how sparse score groups are pooled (``analytics.items.fit.POOLING_RULES``;
    mirt's rule by default).
    """
    result = sx2_item_fit(bank, score_counts, correct_by_score,
                          n_estimated_parameters=ESTIMATED_PARAMETERS,
                          prior_mean=prior_mean, prior_sd=prior_sd, pooling=pooling)
    q = benjamini_hochberg(result.p_value)
    effect = rmsea(result.statistic, result.df, float(np.sum(score_counts)))
    with np.errstate(invalid="ignore"):
        misfit = (q < FIT_Q) & (effect > MISFIT_RMSEA)
    return pd.DataFrame({"item_id": item_ids, "position": positions, "sx2": result.statistic,
                         "df": result.df, "p": result.p_value, "q": q, "rmsea": effect,
                         "misfit": misfit})[FIT_COLUMNS]
