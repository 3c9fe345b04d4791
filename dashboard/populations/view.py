"""How the Populations page shows its tables: column formats, the highlighted rank table and
a CSV download under each table."""

from __future__ import annotations

import pandas as pd
import streamlit as st
from pandas.io.formats.style import Styler

from dashboard.downloads import csv_download
from dashboard.populations.tables import SCALES, measurement_error_table

#: Background of a row whose rank differs between percent correct and IRT.
CHANGED = "background-color: #FFF2CC"

_FORMATS: dict[str, tuple[str, str]] = {
    "pct_mean": ("mean % correct", "%.1f"), "irt_mean": ("mean IRT score", "%.3f"),
    "rank_ctt": ("rank by % correct", "%d"), "rank_irt": ("rank by IRT", "%d"),
    "change": ("rank change", "%+d"), "ctt_difference": ("% correct: model − population", "%.2f"),
    "ctt_t": ("t (% correct)", "%.2f"), "ctt_df": ("df (% correct)", "%.1f"),
    "ctt_p": ("p (% correct)", "%.3g"), "ctt_q": ("q (% correct, BH)", "%.3g"),
    "irt_difference": ("IRT: model − population", "%.3f"),
    "irt_t": ("t (IRT)", "%.2f"), "irt_df": ("df (IRT)", "%.1f"), "irt_p": ("p (IRT)", "%.3g"),
    "irt_q": ("q (IRT, BH)", "%.3g"),
    "theta_percentile": ("percentile by θ", "%.1f"),
    "pct_percentile": ("percentile by % correct", "%.1f"),
    "pct_ci_low": ("95% CI from (% correct)", "%.2f"),
    "pct_ci_high": ("95% CI to (% correct)", "%.2f"),
    "eap_mean": ("mean of EAP θ", "%.3f"), "eap_ci_low": ("95% CI from (EAP)", "%.3f"),
    "eap_ci_high": ("95% CI to (EAP)", "%.3f"),
    "pv_mean": ("latent mean θ (plausible values)", "%.3f"),
    "pv_ci_low": ("95% CI from (plausible values)", "%.3f"),
    "pv_ci_high": ("95% CI to (plausible values)", "%.3f"),
    "width_ratio": ("CI width: plausible values ÷ EAP", "%.2f"),
}


def table_config() -> dict:
    """Column titles and number formats shared by the page's tables."""
    config = {name: st.column_config.NumberColumn(title, format=fmt)
              for name, (title, fmt) in _FORMATS.items()}
    config["ctt_ci_overlap"] = st.column_config.CheckboxColumn("95% CIs overlap (% correct)")
    config["irt_ci_overlap"] = st.column_config.CheckboxColumn("95% CIs overlap (IRT)")
    return config


def rank_styler(ranks: pd.DataFrame) -> Styler:
    """The rank table with the rows that change rank highlighted."""
    return ranks.style.apply(
        lambda row: [CHANGED if row["change"] != 0 else ""] * len(row), axis=1)


def download(table: pd.DataFrame, file_stem: str, key: str) -> None:
    """A CSV download of ``table``."""
    csv_download(table, label="Table (CSV)", file_stem=file_stem, key=key,
                 icon=":material/table:")


def measurement_error_section(rows: pd.DataFrame, scale: str, area: str, file_stem: str) -> None:
    """The humans' means with and without measurement error in their intervals (PATCH: IRT
    intervals are wider than they look), or one line saying the year needs a new ingest."""
    st.subheader("Humans: the interval of a mean, with measurement error")
    table = measurement_error_table(rows, scale, area)
    if table.empty:
        st.info("This year's populations were stored before plausible values existed: ingest "
                "it again (`enem-llm ingest-enem …`) to see intervals with measurement error.")
        return
    st.dataframe(table, hide_index=True, width="stretch", placeholder="—", column_config={
        "name": st.column_config.TextColumn("population", pinned=True), **table_config()})
    unit = "θ in logits" if scale == SCALES[1] else scale
    st.caption(
        f"Per population ({unit}): the mean of the candidates' EAP θ with mean ± 1.96·SD/√n "
        "(what the figure above draws) takes each estimate as exact, and the N(0, 1) prior "
        "shrinks each one toward 0. The latent mean is the group's N(μ, σ²) fitted to each "
        "candidate's likelihood (the normal that, times the prior, gives their EAP and SE), "
        "and its interval is Rubin's rules over plausible values drawn from each candidate's "
        "posterior under that model, in expectation over infinitely many sets — it adds the "
        "measurement error and the model's own uncertainty (docs/populations.md). Percent "
        "correct: mean ± 1.96·SD/√n.")
    download(table, f"{file_stem}_measurement_error", "populations.measurement_error")
