"""The Item gaps page's sections, each drawn from the checks of one area
(``dashboard.items.loading.checks_for``); the control between human groups reads its own
tables (``dashboard.items.loading.group_tables_for``) once a grouping is picked."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from analytics.items.gaps import MARKED_RESIDUAL, MIN_SERIES
from dashboard import queries
from dashboard.downloads import csv_download
from dashboard.figures import area_title, show_figure
from dashboard.item_fit import MARK
from dashboard.items.figures import calibration_figure, residual_figure
from dashboard.items.loading import group_tables_for
from dashboard.items.tables import (
    GROUP_DIF_PARAM,
    GROUP_DIF_STATE_PARAM,
    GROUPING_WORDS,
    dif_column_config,
    fit_column_config,
    gap_column_config,
    group_dif_column_config,
    ranked_rows,
)
from dashboard.state.filters import Filters
from dashboard.state.frame import no_runs_message
from dashboard.state.url import leave_page_choice_out, seed_page_choice, write_page_choice
from workflows.items.checks import ItemChecks
from workflows.items.fit import FIT_Q, MISFIT_RMSEA
from workflows.items.gaps import ALL_RUNS, GAP_COLUMNS
from workflows.items.group_dif import (
    GROUPINGS,
    OTHER_STATES,
    FormGroupTables,
    GroupContrast,
    GroupDIF,
    ets_counts,
    group_dif,
)

#: Why DIF and item fit are missing for a year stored from its item file alone.
_NO_CANDIDATES = ("{year} holds only its item file, no candidates' answers: DIF and item fit "
                  "compare with the candidates (ingest the year's microdata with "
                  "`enem-llm ingest-enem`).")
#: Session keys of the control's pickers.
_GROUPING_KEY, _STATE_KEY = "items.group_dif", "items.group_dif_state"


def _stem(filters: Filters, checks: ItemChecks) -> str:
    return f"item_gaps_{filters.year}_{checks.selection.area}"


def _booklet_words(checks: ItemChecks) -> str:
    return f"booklet {checks.selection.booklet}" if checks.selection.booklet else "—"


def baseline_words(checks: ItemChecks) -> str:
    """Which selected series are baselines and why they take no part ("" when none is)."""
    if not checks.baselines:
        return ""
    return (f"Left out as a baseline: {', '.join(checks.baselines)} (random answers, not a "
            "model). A random answerer is no machine: it is not pooled into "
            f"'{ALL_RUNS}', counted as a series, matched in the DIF or calibrated.")


def _no_machines(filters: Filters, checks: ItemChecks) -> str:
    """The empty state of a check: only baselines selected, or no runs at all."""
    if checks.baselines:
        return ("Only a baseline is selected: " + baseline_words(checks)
                + " Select a model run in the sidebar.")
    return no_runs_message(filters, checks.selection.area)


def show_residuals(filters: Filters, checks: ItemChecks) -> None:
    """The residual bars, the items much easier / much harder for the machines, the full table."""
    area, stem = checks.selection.area, _stem(filters, checks)
    pooled = checks.gaps[checks.gaps["series"] == ALL_RUNS]
    st.subheader("Which items do the machines find much easier, or much harder?")
    if pooled.empty:
        st.info(_no_machines(filters, checks))
    else:
        if checks.baselines:
            st.caption(baseline_words(checks))
        by_series = len(set(checks.gaps["series"])) - 1 >= MIN_SERIES
        marks = (f"Blue: the {len(set(checks.gaps['series'])) - 1} run series agree the item is "
                 "easier for them than the curve says (a one-sample t over the series' observed "
                 "− expected, Benjamini–Hochberg q < 0.05; the 30 repetitions of one prompt are "
                 "nearly one draw, so the series are the unit); vermillion: harder."
                 if by_series else
                 f"Blue: z ≥ {MARKED_RESIDUAL:g} (much easier for the machines than the curve "
                 f"says); vermillion: z ≤ −{MARKED_RESIDUAL:g} (much harder); dashed: ±"
                 f"{MARKED_RESIDUAL:g}. With fewer than {MIN_SERIES} series the repetitions are "
                 "the only replication: read z as a ranking (and the t over series is '—': "
                 "from two series it has one degree of freedom and means nothing).")
        show_figure(
            residual_figure(pooled, f"{area_title(area)}: every selected run pooled",
                            z_lines=not by_series),
            key="items.residuals", file_stem=f"{stem}_residuals",
            image_format=filters.image_format, data=checks.gaps,
            caption=(f"One bar per item of {_booklet_words(checks)} with 3PL parameters, by "
                     "its number there: z = (right answers − Σ P(θ)) / √Σ P(θ)(1 − P(θ)) over "
                     f"every repetition of the selected runs ({filters.prompt_label}), each at "
                     f"its own θ. {marks} The hover gives the humans near the machines' θ."
                     + filters.provenance))
        texts = queries.area_stems(filters.year, area, "pt")
        for direction, heading in (("easier", "Much easier for the machines"),
                                   ("harder", "Much harder for the machines")):
            rows = ranked_rows(pooled, texts, area, filters.year, direction)
            st.markdown(f"**{heading}** ({len(rows)} item{'s' * (len(rows) != 1)})")
            if rows.empty:
                st.caption("No item is marked.")
            else:
                st.dataframe(rows, hide_index=True, width="stretch", placeholder="—",
                             column_config=gap_column_config())
        st.markdown("**Every item and run**")
        st.dataframe(checks.gaps[GAP_COLUMNS], hide_index=True, width="stretch", placeholder="—",
                     column_config=gap_column_config())
        csv_download(checks.gaps, label="Gap table (CSV)", file_stem=f"{stem}_gaps",
                     key="items.gaps.csv")



def show_dif(filters: Filters, checks: ItemChecks) -> None:
    """DIF of the booklet's items between its candidates and the machines."""
    area, stem = checks.selection.area, _stem(filters, checks)
    pooled = checks.gaps[checks.gaps["series"] == ALL_RUNS]
    booklet_words = _booklet_words(checks)
    st.subheader(f"DIF: humans against machines of the same score ({booklet_words})")
    if checks.selection.booklet is None:
        st.info(f"No booklet of {filters.year} {area} to compare on.")
    elif not filters.has_humans:
        st.info(_NO_CANDIDATES.format(year=filters.year))
    elif checks.score_tables_missing:
        st.info(f"This store holds no per-score item tables for {filters.year} (stored before "
                "they existed): ingest the year again for DIF and item fit.")
    elif pooled.empty:
        st.info(_no_machines(filters, checks))
    else:
        st.dataframe(checks.dif, hide_index=True, width="stretch", placeholder="—",
                     column_config=dif_column_config())
        st.caption(
            "Reference group: the candidates of the booklet; focal group: every repetition of the "
            "selected runs, each one examinee. Both are matched on the number-correct score of the "
            "booklet (an unanswered item counts wrong, as a blank does). Mantel–Haenszel: the "
            "common odds ratio α, ETS Δ = −2.35·ln α with its Robins–Breslow–Greenland SE, the "
            "continuity-corrected χ² and the ETS class (A negligible; B moderate; C large: |Δ| ≥ "
            "1.5 and significantly above 1). Logistic regression: likelihood-ratio χ² of the group "
            "(uniform) and group × score terms (total, 2 df) and Nagelkerke's ΔR². q: "
            "Benjamini–Hochberg over the booklet's items." + filters.provenance)
        csv_download(checks.dif, label="DIF table (CSV)", file_stem=f"{stem}_dif",
                     key="items.dif.csv")


def show_group_dif(filters: Filters, checks: ItemChecks) -> None:
    """The same Mantel–Haenszel DIF between two groups of the booklet's candidates, computed
    only once the reader picks a grouping (a second or two on a full-size booklet)."""
    st.subheader(f"Control: the same DIF between human groups ({_booklet_words(checks)})")
    if checks.selection.booklet is None:
        st.info(f"No booklet of {filters.year} {checks.selection.area} to compare on.")
        return
    if not filters.has_humans:
        st.info(_NO_CANDIDATES.format(year=filters.year))
        return
    seed_page_choice(GROUP_DIF_PARAM, list(GROUPINGS), _GROUPING_KEY)
    grouping = st.segmented_control(
        "Compare the booklet's candidates by", list(GROUPINGS), key=_GROUPING_KEY,
        format_func=GROUPING_WORDS.__getitem__,
        help="Sex: female (reference) against male (focal); school type: public (reference) "
             "against private (focal); state: one state (focal) against every other "
             "(reference). Counted on demand: a second or two on a full-size booklet.")
    if grouping is None:
        leave_page_choice_out(GROUP_DIF_PARAM, _GROUPING_KEY)
        leave_page_choice_out(GROUP_DIF_STATE_PARAM, _STATE_KEY)
        st.caption("Pick a grouping to see how much DIF two groups of real candidates show "
                   "on the same items: a yardstick for the machines' B and C items above.")
        return
    write_page_choice(GROUP_DIF_PARAM, _GROUPING_KEY)
    tables = group_tables_for(checks, grouping)
    focal = _state_picker(tables) if grouping == "state" else None
    if grouping != "state":
        leave_page_choice_out(GROUP_DIF_STATE_PARAM, _STATE_KEY)
    if grouping == "state" and focal is None:
        st.info("No candidate of this booklet has a state recorded.")
        return
    try:
        result = group_dif(tables, focal=focal)
    except ValueError as error:  # a group without candidates on this booklet
        st.info(f"Nothing to compare: {error}.")
        return
    _show_group_table(filters, checks, result)


def _state_picker(tables: FormGroupTables) -> str | None:
    """The state compared with the others (the form's largest first), kept in the URL."""
    states = tables.values()
    if not states:
        return None
    seed_page_choice(GROUP_DIF_STATE_PARAM, states, _STATE_KEY, states[0])
    chosen = st.selectbox("State (focal group; reference: every other state)", states,
                          key=_STATE_KEY,
                          format_func=lambda s: f"{s} ({tables.candidates(s):,} candidates)")
    write_page_choice(GROUP_DIF_STATE_PARAM, _STATE_KEY)
    return chosen


def _groups_words(contrast: GroupContrast) -> str:
    if contrast.reference_label == OTHER_STATES:
        return f"candidates from {contrast.focal_label} and from the other states"
    return f"{contrast.reference_label} and {contrast.focal_label} candidates"


def _class_words(counts: dict[str, int]) -> str:
    return f"{counts['B']} item{'s' * (counts['B'] != 1)} of class B, {counts['C']} of class C"


def comparison_line(result: GroupDIF, machine_dif: pd.DataFrame) -> str:
    """One sentence: B and C items between the two groups, and between humans and machines
    when the machines' DIF table has rows."""
    line = (f"Between {_groups_words(result.contrast)} of the same score: "
            f"{_class_words(result.classes)} (of {len(result.table)})")
    if len(machine_dif):
        line += (f"; between the candidates and the selected runs: "
                 f"{_class_words(ets_counts(machine_dif))}")
    return line + "."


def _show_group_table(filters: Filters, checks: ItemChecks, result: GroupDIF) -> None:
    contrast = result.contrast
    st.markdown(comparison_line(result, checks.dif))
    st.dataframe(result.table, hide_index=True, width="stretch", placeholder="—",
                 column_config=group_dif_column_config(contrast))
    st.caption(
        f"Reference group: {contrast.reference_label} ({result.reference_candidates:,} "
        f"candidates); focal group: {contrast.focal_label} ({result.focal_candidates:,}). "
        f"Only candidates with a value in one of the two groups take part: "
        f"{result.outside:,} of the booklet's are in neither (no value recorded, or another "
        "one). Both groups are matched on the number-correct score of the booklet's counted "
        "items, exactly as the humans are above (present, scored, not all blank). "
        "Mantel–Haenszel α, ETS Δ = −2.35·ln α (< 0: harder for the focal group than for "
        "reference candidates of the same score) with its Robins–Breslow–Greenland SE, the "
        "continuity-corrected χ², the ETS class (A negligible; B moderate; C large) and "
        "Benjamini–Hochberg q over the booklet's items. With this many candidates tiny "
        "differences are significant: the class, an effect size, is the yardstick for the "
        "machines' classes. The 'right' columns are each group's share right, not matched."
        + filters.provenance)
    csv_download(result.table, label="DIF between human groups (CSV)",
                 file_stem=f"{_stem(filters, checks)}_group_dif_{contrast.grouping}",
                 key="items.group_dif.csv")


def show_calibration(filters: Filters, checks: ItemChecks) -> None:
    """The items calibrated on the machines against INEP's calibration."""
    area, stem = checks.selection.area, _stem(filters, checks)
    st.subheader("The items calibrated on the machines")
    calibration = checks.calibration
    if not calibration.patterns:
        st.info(_no_machines(filters, checks))
    else:
        for note in calibration.notes[:3]:
            st.warning(note)
        table = calibration.table.assign(se_linked=calibration.table["se_b_machines"]
                                         * calibration.slope)
        show_figure(
            calibration_figure(table, f"{area_title(area)}: b on machines vs b on humans"),
            key="items.calibration", file_stem=f"{stem}_calibration",
            image_format=filters.image_format, data=calibration.table,
            caption=(f"A {calibration.model} fitted by marginal maximum likelihood (EM) on the "
                     f"{calibration.patterns} response patterns of the selected runs (each "
                     "repetition one examinee, the runs pooled into one population with a N(0, 1) "
                     "ability), linked to INEP's scale by mean/sigma on b (A = "
                     f"{calibration.slope:.2f}, B = {calibration.intercept:+.2f}); bars: ±1.96 "
                     "SE (they may reach past the axes). Dashed: the same difficulty for "
                     "machines and humans. Items whose machine answers separate perfectly or look "
                     "like pure guessing have no estimate and are not drawn."
                     + filters.provenance))


def show_fit(filters: Filters, checks: ItemChecks) -> None:
    """The humans' S-X² item fit on the booklet."""
    stem = _stem(filters, checks)
    booklet_words = _booklet_words(checks)
    st.subheader(f"Human item fit ({booklet_words})")
    if checks.fit.empty:
        st.info(f"No booklet of {filters.year} {checks.selection.area}."
                if checks.selection.booklet is None else
                _NO_CANDIDATES.format(year=filters.year) if not filters.has_humans else
                f"This store holds no per-score item tables for {filters.year}: ingest the "
                "year again for the item fit.")
    else:
        st.dataframe(checks.fit, hide_index=True, width="stretch", placeholder="—",
                     column_config=fit_column_config())
        st.caption(
            "Orlando–Thissen S-X² of INEP's parameters on the booklet's candidates (scores grouped "
            "from the tails until every group expects at least one right and one wrong answer; df "
            "= groups − 3), q by Benjamini–Hochberg, RMSEA = √max(0, (S-X² − df) / (df·(N − 1))). "
            f"With this many candidates tiny misfit is significant: an item is flagged ({MARK}) "
            f"when q < {FIT_Q:g} and RMSEA > {MISFIT_RMSEA:g}; the Item explorer and the Response "
            "patterns heatmap mark it too." + filters.provenance)
        csv_download(checks.fit, label="Item fit (CSV)", file_stem=f"{stem}_fit",
                     key="items.fit.csv")
