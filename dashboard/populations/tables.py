"""The Populations page's tables: populations and models side by side on one scale, their
ranks by percent correct and by IRT, Welch's tests of a model against each population, and
the model's percentile inside each population.

Scales (:data:`SCALES`): θ in logits; the ENEM nota; the paper's 100·θ + 500. On the nota
scale humans are described by their stored official notas (rounded to 0.1, a blank test 0)
and a model by k·θ + d of its θ (``analytics.scales.ENEM_SCALE``, unrounded); on the others
both are the same linear map of θ.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from analytics.multiple_testing import benjamini_hochberg
from analytics.populations import (
    intervals_overlap,
    normal_interval,
    percentile_in,
    rank_changes,
    welch_test,
)
from analytics.scales import ENEM_SCALE
from dashboard.populations.labels import value_label

SCALES: tuple[str, ...] = ("θ (logits)", "ENEM nota", "100·θ + 500")
#: The box figure's percentiles (index into the stored 0..100% quantiles).
BOX_PERCENTILES: tuple[int, ...] = (5, 25, 50, 75, 95)
POPULATION, MODEL = "population", "model"


def linear_map(scale: str, area: str) -> tuple[float, float]:
    """(slope, intercept) taking θ to ``scale`` in ``area``."""
    if scale == SCALES[1]:
        return ENEM_SCALE[area]
    if scale == SCALES[2]:
        return 100.0, 500.0
    return 1.0, 0.0


def _measure(rows: pd.DataFrame, prefix: str, slope: float = 1.0,
             intercept: float = 0.0) -> dict[str, np.ndarray]:
    """Mean, SE, 95% CI of the mean and box percentiles of one stored measure, mapped."""
    mean = rows[f"{prefix}_mean"].to_numpy(float) * slope + intercept
    se = rows[f"{prefix}_se"].to_numpy(float) * slope
    quantiles = np.stack(rows[f"{prefix}_quantiles"].map(np.asarray).to_numpy()) \
        if len(rows) else np.empty((0, 101))
    ci_low, ci_high = normal_interval(mean, se)
    out = {"mean": mean, "sd": rows[f"{prefix}_sd"].to_numpy(float) * slope, "se": se,
           "ci_low": ci_low, "ci_high": ci_high}
    for p in BOX_PERCENTILES:
        out[f"p{p}"] = quantiles[:, p] * slope + intercept if len(rows) else np.array([])
    return out


def population_summary(rows: pd.DataFrame, scale: str, area: str) -> pd.DataFrame:
    """One row per stored population (``store.population_queries.population_rows``): name,
    entry ('population'), kind, value, n, and for IRT (``irt_*``, on ``scale``) and percent
    correct (``pct_*``) the mean, SD, SE, 95% CI of the mean and the 5/25/50/75/95th
    percentiles."""
    nota = scale == SCALES[1]
    irt = _measure(rows, "nota") if nota else _measure(rows, "theta", *linear_map(scale, area))
    pct = _measure(rows, "pct")
    out = pd.DataFrame({
        "name": [value_label(k, v) for k, v in zip(rows["group_kind"], rows["group_value"],
                                                     strict=True)],
        "entry": POPULATION, "kind": rows["group_kind"].to_numpy(),
        "value": rows["group_value"].to_numpy(), "n": rows["n"].to_numpy()})
    for prefix, values in (("irt", irt), ("pct", pct)):
        for key, array in values.items():
            out[f"{prefix}_{key}"] = array
    return out


def model_entries(summaries: pd.DataFrame, scale: str, area: str) -> pd.DataFrame:
    """The models (``dashboard.populations.models.model_summaries``) in the columns of
    :func:`population_summary`: IRT is the pooled θ̄ and its CI on ``scale``; percent correct
    the mean over variants with its CI; n the number of variants."""
    slope, intercept = linear_map(scale, area)
    return pd.DataFrame({
        "name": summaries["model"], "entry": MODEL, "kind": MODEL, "value": summaries["model"],
        "n": summaries["variants"],
        "irt_mean": summaries["theta"] * slope + intercept, "irt_se": summaries["se"] * slope,
        "irt_ci_low": summaries["ci_low"] * slope + intercept,
        "irt_ci_high": summaries["ci_high"] * slope + intercept,
        "pct_mean": summaries["pct"], "pct_sd": summaries["pct_sd"],
        "pct_ci_low": summaries["pct_ci_low"], "pct_ci_high": summaries["pct_ci_high"],
    })


def ranking(entries: pd.DataFrame) -> pd.DataFrame:
    """Populations and models ranked by mean percent correct (CTT) and by mean IRT score:
    name, entry, pct_mean, irt_mean, rank_ctt, rank_irt, change (rank by CTT − rank by IRT:
    positive climbs under IRT), sorted by the IRT rank."""
    by_ctt, by_irt, change = rank_changes(entries["pct_mean"], entries["irt_mean"])
    out = entries[["name", "entry", "n", "pct_mean", "irt_mean"]].copy()
    out["rank_ctt"], out["rank_irt"], out["change"] = by_ctt, by_irt, change
    return out.sort_values(["rank_irt", "name"]).reset_index(drop=True)


def welch_table(model: pd.Series, populations: pd.DataFrame, scale: str,
                area: str) -> pd.DataFrame:
    """Welch's test of one model (a row of ``model_summaries``) against every population, by
    percent correct and by IRT (on ``scale``), and whether their 95% CIs overlap.

    The model's side is its variants: mean, SD and n over them (percent correct; θ mapped to
    ``scale``); a population's side is its mean, SD and n (from ``population_summary``).
    ctt_q / irt_q: Benjamini–Hochberg over the populations (one model tested against many).
    """
    slope, intercept = linear_map(scale, area)
    n = float(model["variants"])
    irt = welch_test(model["variant_theta_mean"] * slope + intercept,
                     model["variant_theta_sd"] * abs(slope), n,
                     populations["irt_mean"], populations["irt_sd"], populations["n"])
    pct = welch_test(model["pct"], model["pct_sd"], n, populations["pct_mean"],
                     populations["pct_sd"], populations["n"])
    low, high = model["ci_low"] * slope + intercept, model["ci_high"] * slope + intercept
    return pd.DataFrame({
        "population": populations["name"].to_numpy(), "n": populations["n"].to_numpy(),
        "ctt_difference": model["pct"] - populations["pct_mean"].to_numpy(),
        "ctt_t": pct.t, "ctt_df": pct.df, "ctt_p": pct.p,
        "ctt_q": benjamini_hochberg(np.asarray(pct.p, dtype=np.float64)),
        "ctt_ci_overlap": _overlap(model["pct_ci_low"], model["pct_ci_high"],
                                   populations["pct_ci_low"], populations["pct_ci_high"]),
        "irt_difference": model["theta"] * slope + intercept
        - populations["irt_mean"].to_numpy(),
        "irt_t": irt.t, "irt_df": irt.df, "irt_p": irt.p,
        "irt_q": benjamini_hochberg(np.asarray(irt.p, dtype=np.float64)),
        "irt_ci_overlap": _overlap(low, high, populations["irt_ci_low"],
                                   populations["irt_ci_high"]),
    })


def _overlap(low1, high1, low2, high2) -> pd.arrays.BooleanArray:
    """:func:`analytics.populations.intervals_overlap`, missing (shown "—", not "no") where an
    interval is undefined (a model of one variant has no spread to build one from)."""
    ends = np.broadcast_arrays(*(np.asarray(v, dtype=np.float64)
                                 for v in (low1, high1, low2, high2)))
    known = np.logical_and.reduce([np.isfinite(end) for end in ends])
    overlap = intervals_overlap(*ends)
    return pd.array([bool(o) if k else None for o, k in zip(overlap, known, strict=True)],
                    dtype="boolean")


def percentile_table(model: pd.Series, rows: pd.DataFrame) -> pd.DataFrame:
    """The model's place inside each stored population: the percent of its candidates below
    the model's pooled θ̄ (``theta_percentile``) and below its mean percent correct
    (``pct_percentile``), ties counted half (``analytics.populations.percentile_in``)."""
    theta = [float(percentile_in(model["theta"], q)) for q in rows["theta_quantiles"]]
    pct = [float(percentile_in(model["pct"], q)) for q in rows["pct_quantiles"]]
    return pd.DataFrame({
        "population": [value_label(k, v) for k, v in zip(rows["group_kind"],
                                                          rows["group_value"], strict=True)],
        "kind": rows["group_kind"].to_numpy(), "value": rows["group_value"].to_numpy(),
        "n": rows["n"].to_numpy(), "theta_percentile": theta, "pct_percentile": pct})


def ordinal(number: float) -> str:
    """'83rd' for 83.2."""
    whole = round(float(number))
    suffix = "th" if 10 <= whole % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(whole % 10,
                                                                                  "th")
    return f"{whole}{suffix}"


def measurement_error_table(rows: pd.DataFrame, scale: str, area: str) -> pd.DataFrame:
    """Per stored population (``store.population_queries.population_rows``): n; mean percent
    correct with its 95% CI; the mean of the candidates' EAP θ with mean ± 1.96·SD/√n; the
    latent mean by plausible values (``analytics.plausible_means``) with mean ± 1.96·SE, SE by
    Rubin's rules; and how many times wider the plausible-value interval is. θ on ``scale``
    (logits on the nota scale, where humans have official notas and no plausible values).
    Empty when the rows were stored before plausible values existed."""
    if rows.empty or "theta_pv_se" not in rows or rows["theta_pv_se"].isna().all():
        return pd.DataFrame()
    slope, intercept = (1.0, 0.0) if scale == SCALES[1] else linear_map(scale, area)
    eap = _measure(rows, "theta", slope, intercept)
    pct = _measure(rows, "pct")
    pv_mean = rows["theta_pv_mean"].to_numpy(float) * slope + intercept
    pv_se = rows["theta_pv_se"].to_numpy(float) * slope
    pv_low, pv_high = normal_interval(pv_mean, pv_se)
    return pd.DataFrame({
        "name": [value_label(k, v) for k, v in zip(rows["group_kind"], rows["group_value"],
                                                     strict=True)],
        "n": rows["n"].to_numpy(),
        # The answer first (how much wider), then the two intervals it compares.
        "width_ratio": pv_se / eap["se"],
        "pv_mean": pv_mean, "pv_ci_low": pv_low, "pv_ci_high": pv_high,
        "eap_mean": eap["mean"], "eap_ci_low": eap["ci_low"], "eap_ci_high": eap["ci_high"],
        "pct_mean": pct["mean"], "pct_ci_low": pct["ci_low"], "pct_ci_high": pct["ci_high"]})
