"""The Options and traps page's sections, each drawn from the selection's
:class:`dashboard.options.loading.OptionResults` (which computes a table the first time a
section asks for it). Every section takes the sidebar's filters, the results, the series'
(colour, symbol) and the stem of its download file names."""

from __future__ import annotations

import streamlit as st

from dashboard.downloads import csv_download
from dashboard.figures import area_title, show_figure
from dashboard.item_explorer.picker import explorer_link
from dashboard.options.data import HUMANS, NEAR
from dashboard.options.figures import (
    band_figure,
    distractor_figure,
    key_dependence_figure,
    key_position_figure,
    position_figure,
)
from dashboard.options.loading import OptionResults, item_words, runs_without_order
from dashboard.options.pairs import choice_agreement, pair_table
from dashboard.options.tables import (
    ITEM_COLUMNS,
    item_column_config,
    length_column_config,
    trap_column_config,
    with_p_text,
    with_ratio,
)
from dashboard.state.filters import Filters
from dashboard.state.frame import no_runs_message
from workflows.key_positions import shuffled_series
from workflows.views import ITEM_EXPLORER


def show_traps(filters: Filters, results: OptionResults, styles: dict, stem: str) -> None:
    """Khayyam's trap table, the distractor agreement and the item-by-item table."""
    series = results.series
    st.subheader("Trap items: accuracy on all items / on trap items")
    if not results.has_option_counts:
        st.info(f"{filters.year} holds no candidates' answers for these areas (stored from its "
                "item file alone, or no candidate took them), so there are no trap items, "
                "distractors or human option shares to compare with; the position bias and the "
                "accuracy by difficulty below need only the model runs.")
    else:
        traps = with_ratio(results.traps)
        st.dataframe(traps, hide_index=True, placeholder="—", width="stretch",
                     column_config=trap_column_config())
        st.caption(
            "Humans: every candidate of the year (item p-values, pooled over booklets by item); "
            f"runs: their answers in the selection ({filters.prompt_label}), on the items they "
            "answered. x/y = accuracy on all items / on trap items, as in the Khayyam Challenge's "
            "trap table." + filters.provenance)
        if results.without_theta_counts:
            st.info("The θ-conditional trap flags need the humans' option counts per θ bin, which "
                    f"this store lacks for {', '.join(results.without_theta_counts)}: re-ingest "
                    f"{filters.year} to get them.")
        csv_download(traps, label="Trap table (CSV)", file_stem=f"{stem}_traps",
                     key="options.traps.csv")

        st.subheader("Do models fall for the humans' distractor?")
        agreement = results.agreement
        if agreement.empty:
            st.info(no_runs_message(filters))
        else:
            show_figure(
                distractor_figure(agreement, styles), key="options.distractor",
                file_stem=f"{stem}_distractor", image_format=filters.image_format, data=agreement,
                caption=("Per run: of its wrong answers (a chosen option other than the key), the "
                         "share that chose the option most often chosen wrongly by the humans, "
                         "with the two-sided exact binomial test against 1/4 (dashed). Answers "
                         "without a choice are left out. "
                         f"{filters.prompt_label}." + filters.provenance))

        st.subheader("Item by item")
        distances = results.distances
        shown_series = st.selectbox("Run", series, key="options.series") if series else None
        if distances.empty or shown_series is None:
            table = results.items.assign(series=None)
        else:
            table = distances[distances["series"] == shown_series]
        table = table.assign(explorer=[
            explorer_link(item, area, filters.year)
            for item, area in zip(table["item_id"], table["area"], strict=True)])
        table = table[[c for c in ITEM_COLUMNS if c in table.columns]].sort_values(
            ["area", "b"], na_position="last").reset_index(drop=True)
        event = st.dataframe(table, hide_index=True, placeholder="—", width="stretch",
                             key="options.items", on_select="rerun", selection_mode="single-row",
                             column_config=item_column_config())
        st.caption(
            "One row per item (sort by any column; select a row, or follow its link, to open the "
            "item in the Item explorer). Shares are of the answers that chose an option A–E, in "
            "the original letters. JS = the Jensen–Shannon distance (base 2: 0 same distribution, "
            "1 no option in common) between the run's choices over its repetitions and all humans' "
            f"choices, and the humans within ±{NEAR} of the run's mean θ in that area."
            + filters.provenance)
        csv_download(table, label="Item table (CSV)", file_stem=f"{stem}_items",
                     key="options.items.csv")
        left, right = st.columns([3, 1])
        picker_words = [item_words(row) for row in table.to_dict("records")]
        choice = left.selectbox("Item", range(len(table)), key="options.item",
                                format_func=picker_words.__getitem__)
        opened = right.button("Open in the item explorer", key="options.open", width="stretch")
        rows = event.selection.rows if event is not None and hasattr(event, "selection") else []
        if rows or (opened and len(table)):
            picked = table.iloc[rows[0] if rows else choice]
            st.switch_page(ITEM_EXPLORER.file, query_params={"item": str(int(picked["item_id"])),
                                                             "area": picked["area"]})


def show_pair(filters: Filters, results: OptionResults, styles: dict, stem: str) -> None:
    """Two of the selected runs' choices compared item by item."""
    answers, series = results.answers, results.series
    st.subheader("Two runs compared")
    if len(series) < 2:
        st.info("Select at least two runs in the sidebar to compare their choices, e.g. one model "
                "whose answers were read by two answer methods.")
    else:
        left, right = st.columns(2)
        first = left.selectbox("First run", series, key="options.pair.first")
        second = right.selectbox("Second run", [s for s in series if s != first],
                                 key="options.pair.second")
        agreement = choice_agreement(answers, first, second)
        pair = pair_table(answers, first, second, results.model_theta)
        st.dataframe(pair, hide_index=True, placeholder="—", column_config={
            "accuracy": st.column_config.NumberColumn(format="%.3f"),
            "mean_theta": st.column_config.NumberColumn("mean θ", format="%.2f")})
        st.caption(
            f"The two runs chose the same option in {agreement['agreeing']} of "
            f"{agreement['pairs']} answers to the same item, prompt variant and repetition"
            + (f" ({agreement['agreement']:.1%})" if agreement["pairs"] else "")
            + "; answers without a choice (e.g. a generated answer whose letter could not be read) "
            "are left out, and count in neither run's accuracy. Repetitions with the same number "
            "show the options in the same order when the runs share their seed."
            + filters.provenance)
        csv_download(pair.assign(**agreement), label="Comparison (CSV)", file_stem=f"{stem}_pair",
                     key="options.pair.csv")


def show_positions(filters: Filters, results: OptionResults, styles: dict, stem: str) -> None:
    """Where the chosen options were shown, with the χ² test against uniform."""
    answers, series = results.answers, results.series
    st.subheader("Position bias: where was the chosen option shown?")
    positions, chi_square = results.positions, results.chi_square
    unordered = runs_without_order(answers)
    if positions.empty or chi_square["answers"].sum() == 0:
        st.info(no_runs_message(filters) if not series else
                "None of the selected runs recorded the order its options were shown in.")
    else:
        drawn = chi_square[chi_square["answers"] > 0]
        show_figure(
            position_figure(positions[positions["series"].isin(drawn["series"])], drawn, styles),
            key="options.positions", file_stem=f"{stem}_positions",
            image_format=filters.image_format, data=positions,
            caption=("Per run: the share of its answers whose chosen option was shown at each "
                     "position A–E (the shuffles spread the key evenly over the positions, so an "
                     "unbiased reader picks each about 1/5 of the time, dashed). The legend gives "
                     "the χ² test of the five counts against uniform (4 degrees of freedom); the "
                     "hover also counts where the key was shown. Runs that never shuffled the "
                     "options (the paper's sampling seeds show them in the exam's order) have the "
                     "key where the exam put it, so their shares mix a preference for a position "
                     "with the exam's spread of keys: compare them with the key counts. "
                     "Imported shuffle runs record only where the key and the chosen option were "
                     "shown, which is all this figure needs. " + filters.prompt_label + "."
                     + filters.provenance))
        st.dataframe(with_p_text(chi_square), hide_index=True, placeholder="—", column_config={
            "chi2": st.column_config.NumberColumn("χ²", format="%.2f"),
            "p_value": st.column_config.TextColumn("p")})
    if unordered:
        st.caption("Left out (no option order recorded; results imported before the import kept "
                   "the paper's key positions get them when their file is imported again with "
                   "`enem-llm import-results`): " + "; ".join(unordered) + ".")


#: Labels of the two measures of key-position dependence.
MEASURE_LABELS = {"dependence": "χ² of correct × position", "uniformity": "paper's uniformity"}
UNIFORMITY_CAPTION = (
    "{run}, per item: the paper's uniformity measure against the item's difficulty b. With the "
    "item asked under all 120 orders of its options (each option keeping its letter), the key "
    "stands at each of the five positions in 24 orders; the measure is the most minus the "
    "fewest correct answers over the five positions, 0 (no position matters) to 24. Answers "
    "without a letter count as not correct, as in the paper. Per area: Pearson's r over the "
    "items, its two-sided p and the least-squares line (dashed); items without a b are left "
    "out. `enem-llm items --table key-position` prints the same numbers.")


def show_key_positions(filters: Filters, results: OptionResults, styles: dict, stem: str) -> None:
    """Whether correctness depends on the position the key was shown at."""
    series = results.series
    st.subheader("Does correctness depend on where the key was shown?")
    moved = shuffled_series(results.key_dependence)
    if not series:
        st.info(no_runs_message(filters))
    elif not moved:
        st.info("The selected runs showed no item's key at more than one position (runs without "
                "option shuffles, such as the paper's sampling seeds, or runs that recorded no "
                "option order), so correctness cannot be compared across key positions.")
    else:
        key_run = st.selectbox("Run", moved, key="options.keypos.series",
                               help="The run whose answers the two figures below show; the table "
                                    "under them gives every selected run.")
        colour, symbol = styles[key_run]
        run_counts = results.key_counts[results.key_counts["series"] == key_run]
        run_dependence = results.key_dependence[results.key_dependence["series"] == key_run]
        # One area at a time: each area's figure is 45 small panels, and drawing all four at once
        # (tabs draw their hidden panes too) cost about a second in the browser.
        area = st.segmented_control(
            "Area", list(filters.areas), key="options.keypos.area", format_func=area_title,
            default=filters.areas[0], required=True,
            help="The area whose items the figure below shows, one panel per item.")
        area_counts = run_counts[run_counts["area"] == area]
        if area_counts.empty:
            st.info(f"{key_run} has no answer in {area} whose key position is known.")
        else:
            show_figure(
                key_position_figure(area_counts, area, colour), key="options.keypos.figure",
                file_stem=f"{stem}_key_positions_{area}", image_format=filters.image_format,
                data=area_counts,
                caption=(f"{key_run}, one panel per item of {area} in booklet order (Q = its place "
                         "in the booklet, b its difficulty): of the answers given when the key was "
                         "shown under each letter, the share that were correct, over a grey bar "
                         "wherever the key was shown (no grey: it never was; 30 shuffles put the "
                         "key about 6 times under each letter, so one answer moves a bar by about "
                         "17 points). Dotted: the item's accuracy over every position. Answers "
                         "that were scored neither way are left out. " + filters.prompt_label + "."
                         + filters.provenance))
        measures = ["dependence"] + (["uniformity"] if run_dependence["uniformity"].notna().any()
                                     else [])
        measure = st.segmented_control(
            "Measure", measures, key="options.keydep.measure", default="dependence",
            required=True, format_func=lambda name: MEASURE_LABELS[name],
            help="χ²: how far correctness depends on the key's position, for any run with "
                 "shuffles. The paper's uniformity: the most minus the fewest correct answers "
                 "over the five positions, offered for runs that showed every item under all "
                 "120 option orders (the paper's key-position experiment).")
        key_fits = (results.key_correlations if measure == "dependence"
                    else results.uniformity_correlations)
        show_figure(
            key_dependence_figure(run_dependence, key_fits[key_fits["series"] == key_run],
                                  list(filters.areas), colour, symbol, measure),
            key="options.keydep", file_stem=f"{stem}_key_{measure}",
            image_format=filters.image_format, data=results.key_dependence,
            caption=(UNIFORMITY_CAPTION.format(run=key_run) if measure == "uniformity" else
                     f"{key_run}, per item: how much correctness depends on the position the key "
                     "was shown at, against the item's difficulty b. The measure is Pearson's χ² "
                     "of the 2 × k table of correct and wrong answers by the k positions that "
                     "held the key: with n answers and c correct ones at a position and the "
                     "item's accuracy p, χ² = Σ (c − n·p)² / (n·p·(1 − p)); 0 when every position "
                     "has the same accuracy (or the item was always right, or always wrong), at "
                     "most the item's number of answers when the position alone decides. Per "
                     "area: Pearson's r over the items, its two-sided p (Student's t, n − 2 "
                     "degrees of freedom) and the least-squares line (dashed). Items without a b "
                     "(abandoned) or whose key was shown at fewer than two positions are left "
                     "out; the table gives every selected run." + filters.provenance))
        fits = key_fits[key_fits["series"].isin(moved) & (key_fits["items"] > 0)]
        st.dataframe(with_p_text(fits[["series", "area", "items", "r", "p_value"]]),
                     hide_index=True, placeholder="—", column_config={
                         "items": st.column_config.NumberColumn("items", format="%d"),
                         "r": st.column_config.NumberColumn("Pearson r", format="%.2f"),
                         "p_value": st.column_config.TextColumn("p")})
        rescored = results.rescored[results.rescored["series"].isin(moved)]
        if len(rescored):
            runs_per_item = rescored.groupby(["area", "item_id", "position"]).size()
            st.caption("Left out of these figures: items whose answers were scored against "
                       "another key than the stored one (the published results' own key), so "
                       "where the stored key stood says nothing about them: " + "; ".join(
                           f"{area} Q{position} (item {item_id}, {runs} run{'s' * (runs > 1)})"
                           for (area, item_id, position), runs in runs_per_item.items()) + ".")


def show_bands(filters: Filters, results: OptionResults, styles: dict, stem: str) -> None:
    """Accuracy per difficulty third, humans and runs."""
    st.subheader("Accuracy by difficulty")
    bands = results.bands
    if bands.empty:
        st.info("No item of these areas has a difficulty b, so there are no difficulty bands.")
    else:
        human_line = bool(bands.loc[bands["series"] == HUMANS, "accuracy"].notna().any())
        show_figure(
            band_figure(bands, styles), key="options.bands", file_stem=f"{stem}_bands",
            image_format=filters.image_format, data=bands,
            caption=("Each area's items with a b are split into thirds by b (easy, medium, "
                     "difficult) and pooled over the areas; accuracy is the mean over a band's "
                     "items of the share correct, for "
                     + ("humans (grey, every candidate) and " if human_line else "")
                     + "each run (the items it answered)"
                     + ("" if human_line else
                        f"; no human line: {filters.year} holds no candidates' answers")
                     + "." + filters.provenance))


def show_lengths(filters: Filters, results: OptionResults, styles: dict, stem: str) -> None:
    """Question and option lengths of correct and incorrect answers."""
    st.subheader("Question and option lengths of correct and incorrect answers")
    lengths = results.lengths
    if not results.has_lengths:
        st.info("No question texts are stored for these areas, so there are no lengths to compare; "
                "import them with `enem-llm import-questions`.")
    else:
        st.dataframe(with_p_text(lengths), hide_index=True, placeholder="—", width="stretch",
                     column_config=length_column_config())
        st.caption(
            "Welch's t-test (unequal variances) of the mean length in characters of the question "
            "(stem) and of the options (mean of the five) between correct and incorrect answers; "
            "every answer counts once, humans on the Portuguese texts (blanks incorrect), runs on "
            f"the texts of their prompt language ({filters.language}). With hundreds of thousands "
            "of human answers even a tiny difference is significant: compare the means.")
        csv_download(lengths, label="Length tests (CSV)", file_stem=f"{stem}_lengths",
                     key="options.lengths.csv")
