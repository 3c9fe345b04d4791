"""The Item gaps page's tables: which rows and columns it shows, with their formats and help."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from analytics.items.gaps import HUMANS_NEAR_HALF_WIDTH, MARKED_RESIDUAL, MIN_SERIES
from dashboard.item_explorer.picker import explorer_link
from workflows.items.group_dif import GroupContrast

#: The URL parameter of the page's area picker (a link from the Item explorer sets it).
GAP_AREA_PARAM = "gap_area"
#: The URL parameters of the control's grouping (absent: none chosen) and, for ``state``, of
#: the state compared with the others.
GROUP_DIF_PARAM = "group_dif"
GROUP_DIF_STATE_PARAM = "group_dif_state"
#: The control's groupings in words (``workflows.items.group_dif.GROUPINGS``).
GROUPING_WORDS = {"sex": "sex", "school_type": "school type", "state": "state vs the rest"}
#: Characters of a question's stem shown in the ranked lists.
STEM_CHARACTERS = 140


def ranked_rows(rows: pd.DataFrame, texts: pd.DataFrame, area: str, year: int,
                direction: str) -> pd.DataFrame:
    """The marked items of one direction ('easier' / 'harder'), the largest |z| first, with
    the start of the question's text when texts are stored and a link to the explorer."""
    marked = rows[rows["direction"] == direction]
    marked = marked.sort_values("residual", ascending=(direction == "harder"))
    stems = (texts.set_index("item_id")["stem"] if len(texts) and "stem" in texts
             else pd.Series(dtype=object))
    return pd.DataFrame({
        "position": marked["position"].to_numpy(), "item_id": marked["item_id"].to_numpy(),
        "skill": marked["skill"].to_numpy(), "b": marked["b"].to_numpy(),
        "point_biserial": marked["point_biserial"].to_numpy(),
        "observed": marked["observed"].to_numpy(), "expected": marked["expected"].to_numpy(),
        "humans_near": marked["humans_near"].to_numpy(),
        "residual": marked["residual"].to_numpy(),
        "series_t": marked["series_t"].to_numpy(), "series_q": marked["series_q"].to_numpy(),
        "question": [_excerpt(stems.get(item)) for item in marked["item_id"]],
        "explorer": [explorer_link(item, area, year) for item in marked["item_id"]]})


def _excerpt(text: object) -> str | None:
    if not isinstance(text, str) or not text.strip():
        return None
    flat = " ".join(text.split())
    return flat if len(flat) <= STEM_CHARACTERS else flat[:STEM_CHARACTERS - 1] + "…"


def gap_column_config() -> dict:
    """Formats and help of the gap columns."""
    share = "%.2f"
    return {
        "position": st.column_config.NumberColumn(
            "Q", format="%d", help="the item's number in the exam (its lowest over the "
                                   "year's booklets)"),
        "item_id": st.column_config.NumberColumn("item", format="%d"),
        "a": st.column_config.NumberColumn(format="%.2f"),
        "b": st.column_config.NumberColumn(format="%.2f"),
        "c": st.column_config.NumberColumn(format="%.2f"),
        "point_biserial": st.column_config.NumberColumn(
            "humans' r_pb", format="%.2f",
            help="the humans' point-biserial: correlation of the item's right/wrong with the "
                 "candidates' number correct; below about 0.2 the item separates them poorly"),
        "theta": st.column_config.NumberColumn("θ", format="%.2f",
                                               help="the series' mean θ in the area"),
        "answers": st.column_config.NumberColumn(format="%d"),
        "observed": st.column_config.NumberColumn("machines right", format=share),
        "expected": st.column_config.NumberColumn(
            "3PL at their θ", format=share,
            help="the item's 3PL probability at each answering pattern's θ, averaged"),
        "humans_near": st.column_config.NumberColumn(
            "humans near θ", format=share,
            help=f"share correct among the candidates within ±{HUMANS_NEAR_HALF_WIDTH} of the "
                 "machines' θ (the stored empirical curve)"),
        "humans_near_n": st.column_config.NumberColumn("candidates near θ", format="%d"),
        "gap": st.column_config.NumberColumn("machines − humans", format="%+.2f"),
        "residual": st.column_config.NumberColumn(
            "z", format="%+.2f",
            help=f"standardized residual; |z| ≥ {MARKED_RESIDUAL:g} is marked"),
        "series_count": st.column_config.NumberColumn("series", format="%d"),
        "series_t": st.column_config.NumberColumn(
            "t over series", format="%+.2f",
            help="one-sample t of the series' observed − expected (pooled rows); — with "
                 f"fewer than {MIN_SERIES} series (or in a series' own rows): from two "
                 "series t has one degree of freedom and is no evidence"),
        "series_q": st.column_config.NumberColumn("q (series)", format="%.2g",
                                                  help="Benjamini–Hochberg over the items"),
        "question": st.column_config.TextColumn("question (start)", width="large"),
        "explorer": st.column_config.LinkColumn("explorer", display_text="open"),
    }


def dif_column_config() -> dict:
    """Formats and help of the DIF columns."""
    return {
        "position": st.column_config.NumberColumn("Q", format="%d",
                                                  help="the item's number in this booklet"),
        "item_id": st.column_config.NumberColumn("item", format="%d"),
        "mh_odds_ratio": st.column_config.NumberColumn("α MH", format="%.2f"),
        "mh_delta": st.column_config.NumberColumn(
            "MH Δ", format="%+.2f", help="ETS delta −2.35·ln α; < 0: harder for the machines "
                                          "than for humans of the same score"),
        "mh_delta_se": st.column_config.NumberColumn("SE(Δ)", format="%.2f"),
        "mh_chi2": st.column_config.NumberColumn("MH χ²", format="%.1f"),
        "mh_p": st.column_config.NumberColumn("p", format="%.2g"),
        "mh_q": st.column_config.NumberColumn("q (BH)", format="%.2g"),
        "ets_class": st.column_config.TextColumn("ETS class"),
        "lr_chi2_uniform": st.column_config.NumberColumn("LR χ² uniform", format="%.1f"),
        "lr_p_uniform": st.column_config.NumberColumn("p uniform", format="%.2g"),
        "lr_chi2_total": st.column_config.NumberColumn("LR χ² total (2 df)", format="%.1f"),
        "lr_p_total": st.column_config.NumberColumn("p total", format="%.2g"),
        "lr_q_total": st.column_config.NumberColumn("q total (BH)", format="%.2g"),
        "delta_r2": st.column_config.NumberColumn("ΔR² (Nagelkerke)", format="%.3f"),
        "machines": st.column_config.NumberColumn("machine answers", format="%d"),
    }


def group_dif_column_config(contrast: GroupContrast) -> dict:
    """Formats and help of the DIF columns between two groups of candidates."""
    reference, focal = contrast.reference_label, contrast.focal_label
    share = "%.2f"
    return dif_column_config() | {
        "mh_delta": st.column_config.NumberColumn(
            "MH Δ", format="%+.2f",
            help=f"ETS delta −2.35·ln α; < 0: harder for {focal} than for {reference} "
                 "candidates of the same score"),
        "favours": st.column_config.TextColumn(
            "favours", help="the group with the higher odds of a right answer at equal score"),
        "reference_rate": st.column_config.NumberColumn(
            f"right: {reference}", format=share,
            help="the reference group's share right (all scores together, not matched)"),
        "focal_rate": st.column_config.NumberColumn(
            f"right: {focal}", format=share,
            help="the focal group's share right (all scores together, not matched)"),
    }


def fit_column_config() -> dict:
    """Formats of the item-fit columns."""
    return {
        "position": st.column_config.NumberColumn("Q", format="%d"),
        "item_id": st.column_config.NumberColumn("item", format="%d"),
        "sx2": st.column_config.NumberColumn("S-X²", format="%.1f"),
        "df": st.column_config.NumberColumn(format="%d"),
        "p": st.column_config.NumberColumn(format="%.2g"),
        "q": st.column_config.NumberColumn("q (BH)", format="%.2g"),
        "rmsea": st.column_config.NumberColumn("RMSEA", format="%.3f"),
        "misfit": st.column_config.CheckboxColumn("flagged"),
    }
