"""The three sections of the Paper tables page: Table 1 (random baseline), Table 2 (item
attributes against discrimination, with the attribute editor) and Fig 6 / Table 3 (Min-K% Prob
against 4-shot accuracy). Each draws its tables and figures with captions and downloads."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import streamlit as st

from analytics.paper_tables import YATES_DEFAULT
from dashboard import access, queries
from dashboard.downloads import csv_download
from dashboard.figures import series_styles, show_figure
from dashboard.paper_tables import queries as paper_queries
from dashboard.paper_tables.figures import (
    attribute_display,
    baseline_figure,
    min_k_figure,
    r_p_markdown,
)
from dashboard.state.filters import Filters
from dashboard.state.frame import no_runs_message
from dashboard.summaries import model_item_di
from inference.min_k import DEFAULT_K_PERCENT, SEEN_DIRECTION
from inference.protocol import PROMPT_LANGUAGES
from store.paper_table_queries import ATTRIBUTE_COLUMNS
from workflows.paper_tables import (
    GOOD_DI,
    attribute_tests,
    baseline_display,
    changed_attributes,
    derive_year_attributes,
    launch_random_baseline,
    min_k_correlations,
    missing_cells,
    random_baseline_table,
    save_attribute_corrections,
)
from workflows.runs.service import check_queue, runs_directory

#: The paper's Min-K% figure uses 4-shot accuracy.
MIN_K_SHOTS = 4


def download_csv(frame: pd.DataFrame, label: str, file_stem: str, key: str) -> None:
    """A CSV download button of ``frame``."""
    csv_download(frame, label=label, file_stem=file_stem, key=key, icon=":material/table:")


def baseline_section(filters: Filters, db_path: Path) -> None:
    """Table 1: the random baseline per prompt language and area, its figure, and the button
    that launches the runs the selection still lacks."""
    st.subheader("Table 1 · Random-choice baseline")
    languages = st.multiselect("Prompt languages", PROMPT_LANGUAGES,
                               default=list(PROMPT_LANGUAGES), key="paper.languages") \
        or list(PROMPT_LANGUAGES)
    patterns = paper_queries.random_baseline_patterns(filters.year, filters.areas, languages)
    table = random_baseline_table(patterns)
    if table.empty:
        st.info(f"No random-baseline run for {filters.year} in the chosen areas and languages "
                "yet: launch it below.")
    else:
        st.dataframe(baseline_display(table), hide_index=True, width="stretch",
                     placeholder="—")
        st.caption(f"Random choice on {filters.year}: mean ± SD over repetitions (option "
                   "shuffles of every random-baseline run, pooled: random answers ignore the "
                   "prompt) of the CTT accuracy (% of scored items correct), θ and l_z, per "
                   "prompt language and area; SD with divisor n − 1." + filters.provenance)
        download_csv(table, "Table 1 (CSV)", f"paper_table1_{filters.year}", "paper.t1.csv")
        show_figure(baseline_figure(table), key="paper.t1.figure",
                    file_stem=f"paper_table1_{filters.year}", image_format=filters.image_format,
                    data=table,
                    caption=("Table 1 drawn: bars at the mean over repetitions of the random "
                             "baseline, error bars ± 1 SD, per area and prompt language "
                             f"({filters.year})." + filters.provenance))
    missing = missing_cells(patterns, filters.areas, languages)
    if missing:
        listed = "; ".join(f"{language}: {', '.join(areas)}"
                           for language, areas in missing.items())
        st.info(f"No random-baseline patterns yet for {listed}.")
        config = access.operator_config()
        role = access.session_access(config)
        if not role.may_operate or config is None:
            access.viewer_note(role, "Launching runs")
        elif st.button("Launch the missing random runs", key="paper.launch", type="primary"):
            try:
                runs_dir = runs_directory(db_path)
                check_queue(runs_dir, launching=len(missing))
                launched = launch_random_baseline(db_path, runs_dir, filters.year, missing,
                                                  slots=config.dashboard.max_concurrent_runs)
            except (ValueError, OSError) as error:
                st.error(f"The random runs could not start: {error}")
            else:
                st.success("Started " + ", ".join(f"**{run.run_id}**" for run in launched)
                           + " (see the Runs page); the table fills in when they finish.")


def attribute_section(filters: Filters, db_path: Path) -> None:
    """Table 2: per area the 2×2 counts and χ² test of each attribute against discrimination
    for the models, and the editor that stores corrections of an item's attributes."""
    st.subheader("Table 2 · Item attributes against poor discrimination")
    yates = st.toggle("Yates' continuity correction", value=YATES_DEFAULT, key="paper.yates",
                      help="As scipy.stats.chi2_contingency(correction=True), its default")
    excluded = set(paper_queries.random_series())
    models = [m for m in filters.models if m not in excluded]
    attributes = {area: paper_queries.area_item_attributes(filters.year, area)
                  for area in filters.areas}
    tables = []
    for area, frame in attributes.items():
        long = queries.model_pattern_matrix(filters.year, area, filters.booklet_for(area),
                                            filters.language, filters.shots, models)
        di, patterns = model_item_di(long)
        if patterns:
            tables.append(attribute_tests(frame, di, correction=yates)
                          .assign(area=area, year=filters.year, patterns=patterns))
    derived = any(frame["source"].notna().any() for frame in attributes.values())
    if not derived:
        st.info(f"No item attributes are stored for {filters.year} yet: derive them from the "
                "stored question texts below (or import texts with `enem-llm "
                "import-questions`).")
    elif not tables:
        st.info(no_runs_message(filters, ", ".join(filters.areas)))
    else:
        result = pd.concat(tables, ignore_index=True)
        result = result[["year", "area", "patterns", *result.columns[:-3]]]
        st.dataframe(attribute_display(result), hide_index=True, width="stretch",
                     placeholder="—")
        st.caption(
            f"Items of {filters.year} split by whether they discriminate for the models (DI ≥ "
            f"{GOOD_DI} over every selected model run's patterns, {filters.prompt_label}, ranked "
            "by θ; random-baseline runs left out) and by each attribute; χ² test of "
            "independence of the 2×2 table, 1 degree of freedom, "
            + ("with" if yates else "without") + " Yates' continuity correction. Items without "
            "a DI or without attributes are not counted; χ² is undefined (blank) when a row or "
            "column of the table is empty. q: Benjamini–Hochberg over the table's tests."
            + filters.provenance)
        download_csv(result, "Table 2 (CSV)", f"paper_table2_{filters.year}", "paper.t2.csv")
    attribute_editor(filters, db_path, attributes)


def attribute_editor(filters: Filters, db_path: Path, attributes: dict[str, pd.DataFrame]
                     ) -> None:
    """Derive attributes from the texts, or correct an item's attributes by hand (the
    operator); a viewer reads the same table."""
    with st.expander("Item attributes: derive or correct"):
        role = access.session_access()
        if role.may_operate and st.button("Derive attributes from the stored question texts",
                                          key="paper.derive"):
            written, kept = derive_year_attributes(db_path, filters.year)
            st.success(f"Derived the attributes of {written} items of {filters.year}; "
                       f"{kept} corrected by hand were kept.")
        area = st.selectbox("Area", list(filters.areas), key="paper.attribute_area")
        original = attributes[area]
        if role.may_operate:
            edited = st.data_editor(
                original, hide_index=True, width="stretch", key=f"paper.editor.{area}",
                disabled=["item_id", "first_position", "has_text", "source"],
                column_config={column: st.column_config.CheckboxColumn(column)
                               for column in ATTRIBUTE_COLUMNS})
            st.caption("Tick or untick an attribute, then save: a saved row is marked 'user' "
                       "and no later derivation from the texts overwrites it.")
            if st.button("Save corrections", key="paper.save"):
                changes = changed_attributes(original, edited)
                saved = save_attribute_corrections(db_path, filters.year, changes)
                st.success(f"Saved {saved} corrected item(s)." if saved else "Nothing changed.")
        else:
            st.dataframe(original, hide_index=True, width="stretch", placeholder="—")
            access.viewer_note(role, "Deriving and correcting item attributes")
        download_csv(original, "Attributes (CSV)", f"item_attributes_{filters.year}_{area}",
                     "paper.attributes.csv")


def min_k_section(filters: Filters) -> None:
    """Fig 6 / Table 3: Min-K% Prob against 4-shot accuracy per item, with the r (p) table."""
    st.subheader("Fig 6 / Table 3 · Min-K% Prob against 4-shot accuracy")
    pooled = filters.pooled
    frames = [paper_queries.min_k_accuracy(filters.year, area, filters.booklet_for(area), None,
                                           MIN_K_SHOTS, filters.models, DEFAULT_K_PERCENT,
                                           pooled).assign(area=area)
              for area in filters.areas]
    frame = pd.concat(frames, ignore_index=True)
    if frame.empty:
        st.info(f"No selected model run of {filters.year} has both {MIN_K_SHOTS}-shot answers "
                "and Min-K% Prob values (computed by transformers runs) in these areas: launch "
                f"a transformers run with {MIN_K_SHOTS}-shot prompts on the Runs page.")
        return
    correlations = pd.concat(
        [min_k_correlations(frame[frame["area"] == area]).assign(area=area)
         for area in filters.areas], ignore_index=True)
    shown = frame[frame["prompt_language"] == filters.language]
    styles = series_styles(frame["model"].unique(), filters.series_order)
    show_figure(min_k_figure(shown, correlations[correlations["prompt_language"]
                                                 == filters.language], filters.areas, styles),
                key="paper.min_k.figure", file_stem=f"paper_min_k_{filters.year}",
                image_format=filters.image_format, data=shown,
                caption=(f"One marker per item and model run: Min-K% Prob (K = "
                         f"{DEFAULT_K_PERCENT:g}; the paper's Eq. 4, −mean of the lowest "
                         f"{DEFAULT_K_PERCENT:g}% token log-probabilities, ≥ 0) of the item's "
                         f"text in {filters.language} against the share of the run's "
                         f"{MIN_K_SHOTS}-shot answers to it that were correct (over every "
                         f"repetition); lines are least-squares fits per run. Direction: "
                         f"{SEEN_DIRECTION}." + filters.provenance))
    st.markdown(r_p_markdown(correlations, filters.areas))
    st.caption(f"Pearson's r (two-sided p) of Min-K% Prob against {MIN_K_SHOTS}-shot accuracy over "
               f"items, per model run, prompt language and area ({filters.year}); bold where p < "
               "0.05 (the paper's marking); † where the Benjamini–Hochberg q over the table's "
               f"cells is below 0.05 too. Reading r: {SEEN_DIRECTION}; a positive r (the paper's "
               "Table 3 reports +0.45…+0.65 for 2022 English CN) is no such evidence.")
    download_csv(correlations, "Table 3 (CSV)", f"paper_table3_{filters.year}", "paper.t3.csv")
