"""The Item explorer's account of one item: its parameters and statistics as metrics, INEP's
reason when it was abandoned, and its texts in each prompt language (inert markdown: a stored
text never runs as markup)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from analytics.ctt import DISCRIMINATION_GROUP_FRACTION
from dashboard import access, queries
from enem.areas import OPTION_LETTERS
from inference.protocol import PROMPT_LANGUAGE_NAMES, PROMPT_LANGUAGES


def _number(value, pattern: str = "{:.3f}") -> str:
    """``value`` in ``pattern``, '—' when missing."""
    return "—" if pd.isna(value) else pattern.format(value)


def show_parameters(item: pd.Series) -> None:
    """Key, a, b, c, skill, the humans' p-value and point-biserial of ``item`` (a row of
    ``area_items``)."""
    facts = st.columns(7)
    facts[0].metric("Key", item["key"] or "—")
    facts[1].metric("a (discrimination)", _number(item["a"]))
    facts[2].metric("b (difficulty)", _number(item["b"]))
    facts[3].metric("c (guessing)", _number(item["c"]))
    facts[4].metric("Skill (CO_HABILIDADE)", "—" if pd.isna(item["skill"]) else int(item["skill"]))
    facts[5].metric("Human p-value", _number(item["p_value"]))
    facts[6].metric("Point-biserial", _number(item["point_biserial"]),
                    help="the humans' correlation of this item (1/0) with their number correct "
                         "on the other items of the test (corrected item–total correlation)")


def warn_if_abandoned(year: int, item: pd.Series) -> None:
    """Say that INEP abandoned ``item`` (no a, b, c: no curve, in nobody's θ) and why, from
    INEP's item file (the first reason any booklet gives)."""
    if not item["abandoned"]:
        return
    reasons = queries.item_record(year, int(item["item_id"]))["abandon_reason"].dropna()
    reason = next((r for r in reasons.str.strip() if r), None)
    st.warning("INEP abandoned this item: it has no IRT parameters (a, b, c), so it has no "
               "characteristic curve and no information, and it counts in nobody's θ. "
               + (f"INEP's reason: “{reason}”." if reason
                  else "INEP's item file gives no reason."))


def show_texts(texts: pd.DataFrame) -> None:
    """The item's stem and options in each stored language (``item_texts``), side by side in
    the protocol's language order, the key marked."""
    if texts.empty:
        st.info("No question text stored for this item (real exams: import texts with the "
                "question-text importer; the demo ships its own).")
        return
    prompt_order = {language: index for index, language in enumerate(PROMPT_LANGUAGES)}
    texts = texts.assign(order=texts["language"].map(prompt_order).fillna(len(prompt_order)))
    texts = texts.sort_values("order")
    for column, row in zip(st.columns(len(texts)), texts.itertuples(), strict=True):
        with column:
            st.markdown(f"**{PROMPT_LANGUAGE_NAMES.get(row.language, row.language)}** "
                        f"· source: {row.source}")
            st.markdown(access.inert_markdown(row.stem))
            for letter in OPTION_LETTERS:
                option = access.inert_markdown(getattr(row, f"option_{letter.lower()}"))
                mark = " ✔ (key)" if letter == row.key else ""
                st.markdown(f"- **({letter})** {option}{mark}")


def show_statistics(item: pd.Series, model_di: pd.Series, n_patterns: int) -> None:
    """The humans' and the models' discrimination index of ``item`` and how many candidates
    saw it (``model_di``: DI per item id over ``n_patterns`` model patterns)."""
    item_id = int(item["item_id"])
    groups = f"top − bottom {DISCRIMINATION_GROUP_FRACTION:.0%} by θ"
    stats = st.columns(3)
    stats[0].metric(f"Human DI ({groups})", _number(item["di"]))
    stats[1].metric("Model DI (patterns ranked by θ)",
                    _number(model_di.get(item_id, np.nan)),
                    help=f"{n_patterns} model response patterns in the selection")
    stats[2].metric("Humans who saw it", "—" if pd.isna(item["n"]) else f"{int(item['n']):,}")
