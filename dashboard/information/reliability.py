"""The Test information page's reliability table: per area, the marginal reliability of the
booklet drawn (from its items' information over its candidates' ability distribution) and the
empirical reliability of its candidates' stored EAP scores."""

from __future__ import annotations

import math
from collections.abc import Mapping

import pandas as pd
import streamlit as st

from analytics.reliability import marginal_reliability
from dashboard import queries
from dashboard.information.figure import AreaInformation
from enem.items import stored_item_bank
from enem.scoring import ScoringOptions

RELIABILITY_COLUMNS = ["area", "booklet_id", "items", "candidates", "theta_mean", "theta_sd",
                       "marginal", "empirical"]


def reliability_table(year: int, curves: Mapping[str, AreaInformation], lc_language: int,
                      scoring: str | None) -> pd.DataFrame:
    """One row per drawn area (:data:`RELIABILITY_COLUMNS`): the booklet, its counted items,
    its scored candidates (all-blank tests left out; in LC, only those of ``lc_language``), the mean
    and latent SD of their θ, the marginal reliability σ²/(σ² + E[1/I(θ)]) over N(mean, SD²) (N(0,
    1) without candidates) and the empirical reliability var(θ̂)/(var(θ̂) + mean SE²) (NaN without
    candidates)."""
    scaling = ScoringOptions.from_stored(scoring).scaling
    rows = []
    for area, curve in curves.items():
        language = lc_language if area == "LC" else None
        items = queries.form_items(year, curve.booklet, language)
        bank = stored_item_bank(items, scaling=scaling)
        counted = bank.subset(bank.usable)
        moments = queries.booklet_theta_moments(year, area, curve.booklet, language)
        known = moments.candidates > 1 and math.isfinite(moments.latent_sd)
        mean, sd = (moments.mean, moments.latent_sd) if known else (0.0, 1.0)
        rows.append({
            "area": area, "booklet_id": curve.booklet, "items": counted.n_items,
            "candidates": moments.candidates, "theta_mean": mean if known else math.nan,
            "theta_sd": sd if known else math.nan,
            "marginal": marginal_reliability(counted, prior_mean=mean, prior_sd=sd),
            "empirical": moments.empirical_reliability if known else math.nan})
    return pd.DataFrame(rows, columns=RELIABILITY_COLUMNS)


def reliability_columns() -> dict:
    """Formats and help of the reliability table."""
    return {
        "booklet_id": st.column_config.NumberColumn("booklet", format="%d"),
        "items": st.column_config.NumberColumn("items counted", format="%d"),
        "candidates": st.column_config.NumberColumn(format="%d"),
        "theta_mean": st.column_config.NumberColumn("candidates' mean θ", format="%.2f"),
        "theta_sd": st.column_config.NumberColumn(
            "their SD", format="%.2f", help="sqrt(var(θ̂) + mean SE²): the spread of the "
                                             "abilities behind the shrunken EAP scores"),
        "marginal": st.column_config.NumberColumn(
            "marginal reliability", format="%.3f",
            help="σ²/(σ² + E[1/I(θ)]) over the candidates' ability distribution (model-based; "
                 "the error variance of ML scores)"),
        "empirical": st.column_config.NumberColumn(
            "empirical reliability", format="%.3f",
            help="var(θ̂)/(var(θ̂) + mean SE²) of the stored EAP scores"),
    }


RELIABILITY_CAPTION = (
    "Marginal reliability: the booklet's items over the candidates' ability distribution, "
    "σ²/(σ² + E[1/I(θ)]) with I the test information drawn above. Empirical reliability: the "
    "candidates' own EAP scores, var(θ̂)/(var(θ̂) + mean SE(θ̂)²). With guessing (c > 0) the "
    "information vanishes far below the items, so E[1/I] is dominated by the weakest "
    "candidates and the marginal value sits well below the empirical one (0.63–0.73 against "
    "0.88–0.90 on simulated ENEM-like booklets, where the squared correlation of θ and θ̂ was "
    "0.88–0.90): read the empirical one as the precision of the scores actually reported.")
