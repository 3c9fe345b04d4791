"""Person fit (the paper's Fig. 3): l_z (or l_z*) against θ, per area.

l_z measures how plausible a response pattern is under the IRT model at its own θ (≈ N(0, 1) for
humans who answer like the calibration population; strongly negative = incoherent, e.g. hard
items right and easy ones wrong). l_z alone cannot vouch for a θ (near the bottom of the scale
a random answerer fits about as well as a candidate), so the trust table adds precision, the
informative band and a comparison with random answering (``enem.trust``). The overlay
(``dashboard.overlay``) adds the same runs under a second prompt language or shots setting as
open markers, and its rows to the trust table. A switch draws l_z* (l_z corrected for θ being
estimated) in place of l_z (``dashboard.person_fit``); the trust table stays on l_z.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from dashboard import queries
from dashboard.downloads import csv_download
from dashboard.figures import (
    humans_and_models_grid,
    panel,
    reference_line,
    series_styles,
    show_figure,
)
from dashboard.lane_figure import histogram_with_lanes
from dashboard.overlay import model_caption, no_runs_words, overlay_control
from dashboard.palette import REFERENCE_COLOUR
from dashboard.patterns.data import short_labels
from dashboard.person_fit import (
    LZ,
    LZ_STAR_WORDS,
    blank_free_densities,
    drawn_statistic,
    fifth_percentiles,
    human_densities,
    lz_fifth_percentiles,
    marginals,
    statistic_control,
)
from dashboard.state.frame import note_missing_runs, open_page
from dashboard.state.selection import selected_model_points
from dashboard.summaries import left_out_cells
from dashboard.trust_table import trust_table
from enem.trust import BASELINE_VERDICT, RULE

P5_LINE = {"color": REFERENCE_COLOUR, "dash": "dash", "width": 1}
BLANK_NAME = "all-blank tests (no answer marked)"


def legend_line(figure: go.Figure, row: int, col: int, symbol: str) -> None:
    """A legend entry (no data) naming the dashed line of the humans' 5th percentile of
    ``symbol`` (in the legend: a label inside a panel sat on the markers and contours)."""
    figure.add_trace(go.Scatter(x=[None], y=[None], mode="lines",
                                name=f"humans' 5th percentile of {symbol}", line=P5_LINE,
                                legendgroup="p5", hoverinfo="skip"), row=row, col=col)


filters = open_page("Person fit: l_z against θ")
overlay = overlay_control(filters, "fit")
fit = drawn_statistic(filters.year, statistic_control())
symbol = fit.symbol

densities = human_densities(filters, fit)
marginal = marginals(densities)
human_p5 = fifth_percentiles(marginal)
# False where no area has humans (an item-file-only year, a filter leaving none): no grey
# background and no dashed line to speak of.
has_p5 = any(np.isfinite(value) for value in human_p5.values())
points = selected_model_points(filters)
note_missing_runs(filters, points)
if overlay:
    overlay.note_missing(filters.series, filters.areas)

# All-blank tests share one all-wrong pattern per booklet: hundreds of candidates in a cell or
# two at the lowest θ, the darkest cells of the grey. They are boxed and named in the legend.
blank_cells = {}
if filters.include_blank:
    without_blank = blank_free_densities(filters, fit)
    blank_cells = {area: left_out_cells(densities[area], without_blank[area])
                   for area in filters.areas}
blank_total = int(sum(cells["n"].sum() for cells in blank_cells.values()))

figure = humans_and_models_grid(filters.areas, densities, points, y=fit.column, y_bin="lz_bin",
                                y_width=0.1, y_title=fit.axis_title, y_label=symbol,
                                overlay=overlay.points if overlay else None,
                                levels=overlay.levels if overlay else None)
blank_in_legend = False
for index, area in enumerate(filters.areas):
    row, col = panel(index, 2)
    if np.isfinite(human_p5[area]):
        reference_line(figure, row, col, y=human_p5[area], line=P5_LINE)
    cells = blank_cells.get(area)
    if cells is not None and len(cells):
        figure.add_trace(go.Scatter(
            x=cells["theta_bin"] + 0.05, y=cells["lz_bin"] + 0.05, mode="markers",
            name=BLANK_NAME, legendgroup="blank", showlegend=not blank_in_legend,
            marker={"symbol": "square-open", "size": 16, "color": REFERENCE_COLOUR,
                    "line": {"width": 1.5}},
            customdata=cells["n"], hovertemplate=(f"{area}: %{{customdata:,}} all-blank tests"
                                                  "<extra></extra>")), row=row, col=col)
        blank_in_legend = True
if has_p5:
    legend_line(figure, 1, 1, symbol)
blank_words = (f" Boxed: the {blank_total:,} all-blank tests (no answer marked, scored as all "
               "wrong): a cell per booklet at its lowest θ, where an all-wrong pattern fits "
               f"well (high {symbol}); the sidebar's switch leaves them out."
               if blank_total else "")
star_words = "" if fit == LZ else " " + LZ_STAR_WORDS
blank_lz = (sum(float((cells["lz_bin"] * cells["n"]).sum()) for cells in blank_cells.values())
            / blank_total + 0.05 if blank_total else float("nan"))
model_rows = (overlay.tagged(points) if overlay else points).assign(kind="model")
model_words = model_caption(filters, overlay, "shuffle or seed")
show_figure(
    figure, key="fit.figure",
    file_stem=(f"{fit.column}_vs_theta_{filters.year}_{filters.language}"
               + (overlay.stem if overlay else "")),
    image_format=filters.image_format,
    data=lambda: pd.concat([pd.concat([f.assign(area=a, kind="humans")
                                       for a, f in densities.items()], ignore_index=True),
                            model_rows], ignore_index=True),
    caption=((f"Grey: {filters.group_label} per (0.1 θ × 0.1 {symbol}) cell, log scale; "
              if has_p5 else "No human background; ")
             + (model_words if len(model_rows) else no_runs_words(filters, overlay))
             + (f"; dashed: the humans' 5th percentile of {symbol}. Below it = less coherent "
                "than 95% of humans." if has_p5 else ".") + star_words + blank_words
             + filters.provenance),
)

st.subheader(f"The human {symbol} distribution for reference" if filters.has_humans
             else f"Each model's {symbol} per area")
styles = series_styles(points["model"].unique(), filters.series_order) if len(points) else {}
lane_names, shared_tail = short_labels(sorted(points["model"].unique()) if len(points) else [])
reference, table = histogram_with_lanes(
    filters.areas, {area: m.rename(columns={"lz_bin": "bin"}) for area, m in marginal.items()},
    points, fit.column, bin_width=0.1, styles=styles, x_title=fit.axis_title,
    human_label="humans", lane_names=lane_names, references=human_p5)
if has_p5:
    legend_line(reference, 1, 1, symbol)
show_figure(
    reference, key="fit.reference", file_stem=f"{fit.column}_distribution_{filters.year}",
    image_format=filters.image_format, data=table,
    caption=((f"Grey bars: share of {filters.group_label} per 0.1-wide {symbol} bin (values "
              "beyond −10 and 5 in the edge bins). " if has_p5 else
              "No human histogram: " + ("this store holds no candidates of "
                                         f"{filters.year} (its item file only). "
                                         if not filters.has_humans else
                                         "no scored candidates in this selection. "))
             + (f"Under them, one lane per model: each tick is one repetition's {symbol} "
                f"({filters.prompt_label}"
                + (f"; every lane's run is {shared_tail}" if shared_tail else "") + ")."
                + (f" The lanes show the sidebar's level only ({overlay.base}); "
                   f"{overlay.level} is overlaid in the figure above and the table below."
                   if overlay else "")
                if len(points) else f"No model lanes: no runs in this selection "
                f"({filters.prompt_label}).")
             + (" Dashed: the humans' 5th percentile." if has_p5 else "")
             + (f" The all-blank tests add a lone bar at {symbol} ≈ {blank_lz:.1f}."
                if blank_total else "") + filters.provenance),
)

st.subheader("Which models' θ can be trusted?")
if points.empty and not (overlay and len(overlay.points)):
    st.caption("The table fills in once the selection has model runs.")
else:
    # The person-fit check is defined on l_z (enem.trust.RULE), whichever statistic is drawn.
    lz_p5 = lz_fifth_percentiles(filters, fit, human_p5)
    # A baseline answers at random by construction: it gets no model's verdict.
    baselines = set(queries.baseline_series())
    table = trust_table(filters, points, lz_p5, baselines)
    if overlay:
        # The overlay's rows are checked against its own booklet and prompt (overlay.filters).
        table = overlay.per_level(table, trust_table(overlay.filters, overlay.points, lz_p5,
                                                     baselines))
    # The verdict and the check behind most verdicts first (on screen at 1440 px with the
    # sidebar open); "—" where a value cannot be had, each column's help saying why.
    st.dataframe(table, hide_index=True, width="stretch", placeholder="—", column_config={
        "model": st.column_config.TextColumn("model", pinned=True),
        "level": st.column_config.TextColumn(
            "level", help="the overlaid condition's level the row's patterns were answered "
                          "under"),
        "area": st.column_config.TextColumn("area", width=50),
        "theta_trusted": st.column_config.TextColumn(
            "θ trusted?", help="yes only when all four checks below pass (the rule under the "
                               "table); undecided when a check has nothing to compare with"),
        "share_below_p5": st.column_config.ProgressColumn(
            "share below humans' 5th pct l_z", format="percent", min_value=0.0, max_value=1.0,
            help="share of the repetitions whose l_z is below the humans' 5th percentile; "
                 "empty: no humans to give a percentile"),
        "mean_theta": st.column_config.NumberColumn("mean θ", format="%.3f"),
        "mean_se": st.column_config.NumberColumn("model SE", format="%.3f"),
        "human_se": st.column_config.NumberColumn(
            "humans' SE at θ", format="%.3f",
            help="mean SE of the humans whose θ is in the model's 0.1-wide θ bin; — : no "
                 "candidate at this θ"),
        "se_ratio": st.column_config.NumberColumn(
            "SE ratio", format="%.2f",
            help="model SE ÷ humans' SE at θ; — : no candidate at this θ to compare with"),
        "exam_se": st.column_config.NumberColumn(
            "exam SE at θ", format="%.3f",
            help="1/√I(θ) of the booklet's items; — : no booklet to read it from"),
        "random_p": st.column_config.NumberColumn(
            "p vs random", format="%.2g",
            help="Mann–Whitney U, two-sided; — : no booklet to simulate random answers on"),
        "booklet_id": st.column_config.NumberColumn(
            "booklet", format="%d",
            help="the booklet whose items give the test information; — : none chosen"),
        "patterns": st.column_config.NumberColumn(
            "patterns", help="response patterns: runs × repetitions"),
    })
    st.caption(RULE + (" The person-fit check uses l_z, as the rule is defined on it, not "
                       "the l_z* drawn above." if fit != LZ else "")
               + (f" Humans: {filters.group_label}." if filters.has_humans else "")
               + (f" One row per model, level and area: {filters.prompt_label} and "
                  f"{overlay.filters.prompt_label}, the level column saying which."
                  if overlay else "")
               + (f" '{BASELINE_VERDICT}': a random-choice baseline run, not checked "
                  "like a model; its row shows what random answering gives on the same "
                  "booklet." if baselines & set(table["model"]) else "")
               + " — : not available (no candidate in the model's θ bin, no booklet); the "
               "column's help says which." + filters.provenance)
    csv_download(table, label="Table (CSV)",
                 file_stem=f"person_fit_{filters.year}" + (overlay.stem if overlay else ""),
                 key="fit.table.csv")
