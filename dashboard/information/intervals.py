"""The numbers behind the Test information page's model rows (the paper's Fig. 4, "IRT scores,
95% CI"): per model series and area, three 95% intervals around its θ, of which the page draws
the one the user picks.

The paper draws each model's θ with a "95% Confidence Interval (CI) computed using the
shuffles"; its text does not say which interval that is. A repetition is one response pattern
of the series (option shuffle or sampling seed × prompt variant × run, one row of
``dashboard.state.selection.selected_model_points``). Over the n repetitions of a series in an
area, with θ_i and SE_i in logits:

- ``bootstrap``: the 95% CI of the mean θ, by the percentile bootstrap (1,000 resamples,
  ``analytics.populations.bootstrap_mean_ci``), the interval plotting libraries draw around a
  mean by default (seaborn's ``errorbar="ci"``); NaN for n = 1;
- ``central``: the central 95% of the repetitions' θ, their 2.5th and 97.5th percentiles
  (``numpy.percentile``, linear interpolation): how far one repetition's θ ranges;
- ``pattern_se``: each repetition's own 95% interval θ_i ± 1.96·SE_i (the measurement error of
  one pattern, which neither interval above includes); the series row carries their mean,
  mean θ ± 1.96 · mean SE.

Pure pandas/numpy on the page's points; no queries.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from analytics.populations import (
    BOOTSTRAP_RESAMPLES,
    Z_95,
    bootstrap_mean_ci,
    normal_interval,
)

#: Percentiles (in %) of θ over repetitions that bound their central 95%.
CENTRAL_PERCENTILES: tuple[float, float] = (2.5, 97.5)
#: Seed of each series' bootstrap (a fresh generator per series and area: the same numbers on
#: every visit, whatever else is selected).
BOOTSTRAP_SEED = 0

#: The intervals the page can draw: key → (short name for the picker and legend, the words a
#: caption uses for exactly what is drawn).
INTERVALS: dict[str, tuple[str, str]] = {
    "bootstrap": (
        "95% CI of the mean θ (bootstrap)",
        (f"the 95% confidence interval of its mean θ over its repetitions (percentile "
         f"bootstrap, {BOOTSTRAP_RESAMPLES:,} resamples: what plotting libraries such as "
         f"seaborn draw around a mean by default)")),
    "central": (
        "central 95% of the repetitions' θ",
        "the central 95% of its repetitions' θ (their 2.5th to 97.5th percentile)"),
    "pattern_se": (
        "each pattern's own SE(θ)",
        (f"each repetition's own 95% interval θ ± {Z_95}·SE(θ) (whiskers on the faint "
         f"markers), and at its mean θ the mean of those intervals, mean θ ± {Z_95} · mean "
         f"SE(θ)")),
}
DEFAULT_INTERVAL = "bootstrap"
#: (low, high) columns of each interval in :func:`theta_intervals`' table.
INTERVAL_BOUNDS: dict[str, tuple[str, str]] = {
    "bootstrap": ("boot_low", "boot_high"), "central": ("central_low", "central_high"),
    "pattern_se": ("se_low", "se_high")}
#: What the paper's text leaves open, said in every caption of the figure.
PAPER_AMBIGUITY = ("The paper's Fig. 4 shows a \"95% Confidence Interval (CI) computed using the "
                   "shuffles\"; its text does not settle whether that is the CI of the mean or "
                   "the central 95% of the shuffles' θ, and neither includes a pattern's own "
                   "SE(θ): the picker above draws each.")

INTERVAL_COLUMNS: tuple[str, ...] = (
    "model", "area", "repetitions", "mean_theta", "sd_theta", "mean_se", "boot_low",
    "boot_high", "central_low", "central_high", "se_low", "se_high")


def theta_intervals(points: pd.DataFrame) -> pd.DataFrame:
    """Per (model, area): the three 95% intervals around its θ over repetitions.

    ``points``: one row per repetition with columns model, area, theta and theta_se (logits);
    rows with a missing θ are left out (a missing SE leaves that repetition out of the SE
    interval only). Returns one row per (model, area), sorted, with columns
    :data:`INTERVAL_COLUMNS`: repetitions (n), mean_theta, sd_theta (ddof 1, NaN for n = 1),
    mean_se, boot_low/high (bootstrap CI of the mean, NaN for n = 1), central_low/high (2.5th
    and 97.5th percentiles of θ) and se_low/high (mean θ ± 1.96 · mean SE), all in logits.
    """
    rows = []
    if len(points):
        usable = points[np.isfinite(points["theta"].to_numpy(np.float64))]
        for (model, area), group in usable.groupby(["model", "area"], sort=True):
            theta = group["theta"].to_numpy(np.float64)
            se = group["theta_se"].to_numpy(np.float64)
            se = se[np.isfinite(se)]
            n, mean = len(theta), float(theta.mean())
            mean_se = float(se.mean()) if se.size else np.nan
            boot = bootstrap_mean_ci(theta, np.random.default_rng(BOOTSTRAP_SEED))
            low, high = np.percentile(theta, CENTRAL_PERCENTILES)
            se_low, se_high = normal_interval(mean, mean_se)
            rows.append({"model": model, "area": area, "repetitions": n, "mean_theta": mean,
                         "sd_theta": float(theta.std(ddof=1)) if n > 1 else np.nan,
                         "mean_se": mean_se, "boot_low": boot[0], "boot_high": boot[1],
                         "central_low": float(low), "central_high": float(high),
                         "se_low": float(se_low), "se_high": float(se_high)})
    return pd.DataFrame(rows, columns=list(INTERVAL_COLUMNS))
