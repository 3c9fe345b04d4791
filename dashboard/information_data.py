"""The numbers behind the Test information page's model rows (the paper's Fig. 4, "IRT scores,
95% CI"): per model series and area, how its θ spreads over repetitions and how precisely its
mean θ is known.

A repetition is one response pattern of the series (option shuffle or sampling seed × prompt
variant × run, one row of ``dashboard.state.selected_model_points``). Over the n repetitions of
a series in an area, with θ_i in logits:

- spread: the 5th and 95th percentiles of θ_i (``numpy.percentile``, linear interpolation);
- 95% CI of the mean: mean θ ± 1.96 · SD/√n, with SD the sample standard deviation (ddof 1);
  not defined (NaN) for n = 1.

Pure pandas/numpy on the page's points; no queries.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from analytics.populations import Z_95

#: Percentiles (in %) of θ over repetitions drawn as a series' spread.
SPREAD_PERCENTILES: tuple[float, float] = (5.0, 95.0)

INTERVAL_COLUMNS: tuple[str, ...] = ("model", "area", "repetitions", "mean_theta", "sd_theta",
                                     "ci_low", "ci_high", "p5", "p95")


def theta_intervals(points: pd.DataFrame) -> pd.DataFrame:
    """Per (model, area): spread of θ over repetitions and the 95% CI of its mean.

    ``points``: one row per repetition with columns model, area and theta (logits); rows with a
    missing θ are left out. Returns one row per (model, area), sorted, with columns
    :data:`INTERVAL_COLUMNS`: repetitions (n), mean_theta, sd_theta (ddof 1), ci_low and
    ci_high (mean ± 1.96·SD/√n, NaN when n = 1) and p5, p95 (percentiles of θ), all in logits.
    """
    rows = []
    if len(points):
        usable = points[np.isfinite(points["theta"].to_numpy(np.float64))]
        for (model, area), group in usable.groupby(["model", "area"], sort=True):
            theta = group["theta"].to_numpy(np.float64)
            n = len(theta)
            mean = float(theta.mean())
            sd = float(theta.std(ddof=1)) if n > 1 else np.nan
            half = Z_95 * sd / np.sqrt(n) if n > 1 else np.nan
            low, high = np.percentile(theta, SPREAD_PERCENTILES)
            rows.append({"model": model, "area": area, "repetitions": n, "mean_theta": mean,
                         "sd_theta": sd, "ci_low": mean - half, "ci_high": mean + half,
                         "p5": float(low), "p95": float(high)})
    return pd.DataFrame(rows, columns=list(INTERVAL_COLUMNS))
