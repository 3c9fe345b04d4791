"""Model runs on the Populations page: θ per prompt variant, pooled over variants.

A run series answers each area under several prompt variants (prompt language × shots × the
prompt's instruction, ``inference.prompt_variants``: one run per instruction, so the runs of
one model are pooled when the sidebar pools runs by model) and repetitions (option shuffles or
sampling seeds); every (run, variant, repetition) is one
response pattern with its θ and SE. The user chooses which of prompt language, shots and
repetition tell variants apart. The patterns of one variant are one cluster: they answered the
same items, so their measurement errors are shared, and the variant's θ is their mean with the
SE of one measurement (``analytics.populations.cluster_estimate``; pooling them by inverse
variance would shrink the SE by about √30 as if each shuffle were a new test). The variants
are pooled into the series' θ̄ with its 95% CI by a random-effects model
(``analytics.populations.pool_random_effects``, DerSimonian–Laird): when the variants agree
within their SEs it is the fixed-effect pool, when they disagree (prompt sensitivity) the CI
widens by the between-variant variance τ².

θ per pattern is the stored EAP (the seed paper's estimator) or the bounded ML (PATCH's),
re-estimated from the stored 0/1 pattern by ``enem.rescoring`` (θ ∈ [−6, 6]); an ML estimate
on a bound (all right or all wrong) is no estimate and is left out.
Percent correct per variant is the mean of its patterns' 100·CTT/items counted.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from analytics.populations import (
    cluster_estimate,
    normal_interval,
    pool_random_effects,
    standard_error,
)
from dashboard import queries
from dashboard.runs.picker import shots_words
from enem.rescoring import ml_rescore_patterns
from enem.scoring import ScoringOptions
from inference.prompt_variants import BASE_VARIANT

#: What may tell variants apart → the pattern columns that carry it.
VARIANT_DIMENSIONS: dict[str, tuple[str, ...]] = {
    "prompt language": ("prompt_language",),
    "shots": ("shots",),
    "prompt variant": ("prompt_variant",),
    "repetition": ("run_id", "shuffle"),
}
DEFAULT_DIMENSIONS: tuple[str, ...] = ("prompt language", "shots", "prompt variant")
ESTIMATORS: dict[str, str] = {"EAP": "EAP (stored; the seed paper's)",
                              "ML": "ML (re-estimated; PATCH's)"}

VARIANT_COLUMNS = ("model", "variant", "patterns", "theta", "se", "ci_low", "ci_high", "pct")
SUMMARY_COLUMNS = ("model", "variants", "patterns", "theta", "se", "ci_low", "ci_high", "tau2",
                   "variant_theta_mean", "variant_theta_sd", "pct", "pct_sd", "pct_ci_low",
                   "pct_ci_high")


def ml_rescored(patterns: pd.DataFrame, year: int) -> pd.DataFrame:
    """``patterns`` (``store.population_queries.model_patterns``) with theta and theta_se
    replaced by the bounded ML estimate on θ ∈ [−6, 6] (``enem.rescoring``) and a column
    at_bound (True where the estimate sits on a bound; its θ and SE are then NaN)."""
    out = patterns.copy()
    out["at_bound"] = False
    if out.empty:
        return out
    keys = ["booklet_id", "item_language", "scoring"]
    for (booklet, language, scoring), group in out.groupby(keys, dropna=False, sort=False):
        items = queries.form_items(year, int(booklet),
                                   None if pd.isna(language) else int(language))
        rescored = ml_rescore_patterns(list(group["response_pattern"]), items["a"], items["b"],
                                       items["c"], ScoringOptions.from_stored(scoring))
        out.loc[group.index, "theta"] = rescored.theta
        out.loc[group.index, "theta_se"] = rescored.se
        out.loc[group.index, "at_bound"] = rescored.at_bound
    return out


def _variant_label(key: tuple, dimensions: tuple[str, ...]) -> str:
    """'pt · 0-shot · shuffle 3 of run x' for the key values of the chosen dimensions."""
    values = dict(zip([c for d in dimensions for c in VARIANT_DIMENSIONS[d]], key, strict=True))
    parts = []
    if "prompt_language" in values:
        parts.append(str(values["prompt_language"]))
    if "shots" in values:
        shots = values["shots"]
        parts.append(shots_words(shots))
    if "prompt_variant" in values:
        parts.append(f"prompt {values['prompt_variant']}")
    if "shuffle" in values:
        parts.append(f"repetition {int(values['shuffle'])} of {values['run_id']}")
    return " · ".join(parts) or "every pattern"


def variant_estimates(patterns: pd.DataFrame, dimensions: tuple[str, ...]) -> pd.DataFrame:
    """One row per (model, variant): patterns, θ (their mean) and SE (of one measurement, the
    patterns taken as one cluster) with the 95% CI θ ± 1.96·SE, and mean percent correct.
    Columns :data:`VARIANT_COLUMNS`; θ in logits."""
    columns = [c for d in dimensions for c in VARIANT_DIMENSIONS[d]]
    usable = patterns[np.isfinite(patterns["theta"].to_numpy(float))
                      & (patterns["theta_se"].to_numpy(float) > 0)]
    # A run that recorded no variant was made with the base prompt (before variants existed).
    usable = usable.assign(prompt_variant=usable["prompt_variant"].fillna(BASE_VARIANT))
    rows = []
    for key, group in usable.groupby(["model", *columns], sort=True, dropna=False):
        theta, se = cluster_estimate(group["theta"], group["theta_se"])
        low, high = normal_interval(theta, se)
        pct = 100.0 * group["ctt"].to_numpy(float) / group["n_scored"].to_numpy(float)
        rows.append({"model": key[0], "variant": _variant_label(key[1:], dimensions),
                     "patterns": len(group), "theta": theta, "se": se,
                     "ci_low": float(low), "ci_high": float(high),
                     "pct": float(np.mean(pct))})
    return pd.DataFrame(rows, columns=list(VARIANT_COLUMNS))


def model_summaries(variants: pd.DataFrame) -> pd.DataFrame:
    """Per model: θ̄ pooled over its variants by random effects (DerSimonian–Laird) with SE,
    95% CI and τ² (the between-variant variance; 0 when they agree within their SEs); the
    mean and SD of the variants' θ (what Welch's test uses, n = variants); percent correct as
    the mean over variants with SD and the 95% CI mean ± 1.96·SD/√n (NaN for one variant).
    Columns :data:`SUMMARY_COLUMNS`."""
    rows = []
    for model, group in variants.groupby("model", sort=True):
        pooled = pool_random_effects(group["theta"], group["se"])
        n = len(group)
        pct = group["pct"].to_numpy(float)
        pct_sd = float(np.std(pct, ddof=1)) if n > 1 else np.nan
        pct_low, pct_high = normal_interval(pct.mean(), standard_error(pct_sd, n))
        theta = group["theta"].to_numpy(float)
        rows.append({"model": model, "variants": n, "patterns": int(group["patterns"].sum()),
                     "theta": pooled.theta, "se": pooled.se, "ci_low": pooled.ci_low,
                     "ci_high": pooled.ci_high, "tau2": pooled.tau2,
                     "variant_theta_mean": float(theta.mean()),
                     "variant_theta_sd": float(np.std(theta, ddof=1)) if n > 1 else np.nan,
                     "pct": float(pct.mean()), "pct_sd": pct_sd,
                     "pct_ci_low": float(pct_low), "pct_ci_high": float(pct_high)})
    return pd.DataFrame(rows, columns=list(SUMMARY_COLUMNS))
