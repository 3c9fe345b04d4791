"""The Person fit page's trust table: the four checks of ``enem.trust`` per model and area,
read through the cached queries."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

import numpy as np
import pandas as pd
import streamlit as st

from analytics.irt import ItemBank
from dashboard import queries
from dashboard.state.filters import Filters
from dashboard.state.selection import information_booklet
from enem.items import stored_item_bank
from enem.scoring import ScoringOptions
from enem.trust import BASELINE_VERDICT, humans_se_at, random_answer_theta, trust_verdict
from store.histograms import THETA_BIN_WIDTH

#: The table's columns: the series, the verdict and the check behind most verdicts first, so a
#: reader sees them without scrolling; the remaining measures after them.
TRUST_COLUMNS = ("model", "area", "theta_trusted", "share_below_p5", "mean_theta", "mean_se",
                 "human_se", "se_ratio", "exam_se", "random_p", "booklet_id", "patterns")


def form_bank(year: int, booklet: int, item_language: int | None,
              scoring: str | None) -> ItemBank:
    """The 3PL bank of one booklet form (items without parameters kept, unusable) with the D
    of the year's stored scoring settings (``scoring``, JSON; INEP's when None): the exam's
    SE and the random answerers' θ of one verdict both use it."""
    items = queries.form_items(year, booklet, item_language)
    return stored_item_bank(items, scaling=ScoringOptions.from_stored(scoring).scaling)


@st.cache_data(show_spinner=False, max_entries=64)
def cached_random_theta(year: int, booklet: int, item_language: int | None,
                        scoring: str | None) -> np.ndarray:
    """θ of simulated random answerers on one form, scored with the year's settings (JSON)."""
    options = ScoringOptions.from_stored(scoring)
    return random_answer_theta(form_bank(year, booklet, item_language, scoring), options)


@dataclass(frozen=True)
class _FormChecks:
    """What every model's verdict on one form shares: the booklet, its bank and the random
    answerers' θ (empty without a booklet)."""

    booklet: int | None
    bank: ItemBank | None
    random_theta: np.ndarray


def trust_table(filters: Filters, points: pd.DataFrame, human_p5: dict[str, float],
                baselines: Collection[str] = ()) -> pd.DataFrame:
    """One row per (model, area) of ``points`` (``selected_model_points``) with the checks.

    Columns :data:`TRUST_COLUMNS`: model, area, theta_trusted (the verdict in words),
    share_below_p5, mean_theta, mean_se, human_se (NaN: no candidate in the model's θ bin),
    se_ratio, exam_se, random_p, booklet_id, patterns. A series named in ``baselines``
    (``queries.baseline_series``) keeps its measures but gets no model's verdict: its
    theta_trusted is ``enem.trust.BASELINE_VERDICT``.
    """
    rows = []
    scoring = filters.profile.get("scoring")
    # Read once per area and form, not once per model: each cached read costs its hashing.
    forms: dict[tuple[str, int | None], _FormChecks] = {}
    human_se_tables: dict[str, pd.DataFrame] = {}
    for (model, area), group in points.groupby(["model", "area"], sort=True):
        language = None
        if area == "LC" and group["item_language"].notna().any():
            language = int(group["item_language"].mode().iloc[0])
        if (area, language) not in forms:
            booklet = information_booklet(filters, area)
            forms[area, language] = _FormChecks(
                booklet, None if booklet is None else form_bank(filters.year, booklet,
                                                                language, scoring),
                np.array([]) if booklet is None else
                cached_random_theta(filters.year, booklet, language, scoring))
        form = forms[area, language]
        if area not in human_se_tables:
            human_se_tables[area] = queries.human_theta_se(*filters.human_args(area))
        mean_theta = float(group["theta"].mean())
        human_se = humans_se_at(human_se_tables[area], mean_theta, THETA_BIN_WIDTH)
        verdict = trust_verdict(group["theta"], group["theta_se"], group["lz"],
                                human_p5.get(area, np.nan), human_se, form.bank,
                                form.random_theta)
        rows.append({
            "model": model, "area": area, "patterns": len(group), "booklet_id": form.booklet,
            "mean_theta": mean_theta, "mean_se": float(group["theta_se"].mean()),
            "human_se": human_se, "se_ratio": verdict.se_ratio, "exam_se": verdict.exam_se,
            "share_below_p5": verdict.fit.share_below, "random_p": verdict.random_p,
            "theta_trusted": BASELINE_VERDICT if model in baselines else verdict.words,
        })
    return pd.DataFrame(rows, columns=list(TRUST_COLUMNS))
