"""Accuracy vs ability (the paper's Fig. 1): CTT score against IRT θ, per area.

Two models with the same number of correct answers can get very different θ: IRT weighs *which*
items were right. Humans are the grey density; each model is a cloud of repetitions with the
contour of the highest-density region holding 90% of them (a Gaussian KDE, as in the paper).
The overlay (``dashboard.overlay``) adds the same runs under a second prompt language or shots
setting as open markers.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from dashboard import queries
from dashboard.downloads import csv_download
from dashboard.expected_score import add_expected_score_lines, expected_score_curves
from dashboard.figures import CTT_TITLE, humans_and_models_figure, show_figure
from dashboard.overlay import model_caption, no_runs_words, overlay_control
from dashboard.state.frame import note_missing_runs, open_page
from dashboard.state.selection import selected_model_points
from dashboard.summaries import histogram_percentile, model_ability_table

#: The table's columns, the human percentile first after the series and area.
ACCURACY_COLUMNS = ["model", "area", "human_percentile", "mean_theta", "sd_theta", "mean_ctt",
                    "sd_ctt", "mean_se", "mean_lz", "sd_lz", "patterns"]

filters = open_page("Accuracy vs ability: CTT score against θ")
overlay = overlay_control(filters, "accuracy")

densities = {
    area: queries.human_theta_ctt(*filters.human_args(area))
    for area in filters.areas
}
points = selected_model_points(filters)
note_missing_runs(filters, points)
if overlay:
    overlay.note_missing(filters.series, filters.areas)

figure, fallbacks = humans_and_models_figure(
    filters.areas, densities, points, y="ctt", y_bin="ctt", y_width=1.0, y_title=CTT_TITLE,
    y_label="CTT", catalogue=filters.series_order,
    overlay=overlay.points if overlay else None, levels=overlay.levels if overlay else None)
expected = expected_score_curves(filters, points)
add_expected_score_lines(figure, filters.areas, expected)
fallback_note = (" Too few or degenerate repetitions for a density, drawn as the dashed convex "
                 "hull of the central 90% or not at all: " + "; ".join(fallbacks) + "."
                 if fallbacks else "")
human_rows = pd.concat([frame.assign(area=area, kind="humans") for area, frame in
                        densities.items()], ignore_index=True)
model_rows = (overlay.tagged(points) if overlay else points).assign(kind="model")
model_words = model_caption(filters, overlay, "option shuffle or sampling seed") + "."
show_figure(
    figure, key="accuracy.figure",
    file_stem=(f"ctt_vs_theta_{filters.year}_{filters.language}"
               + (overlay.stem if overlay else "")),
    image_format=filters.image_format,
    data=lambda: pd.concat([human_rows, model_rows], ignore_index=True),
    caption=((f"Grey: {filters.group_label} per (0.1 θ × 1 item) cell, darker = more (log "
              "scale); " if filters.has_humans else "No human background; ")
             + ("dotted: the expected number correct at each θ on booklet "
                + ", ".join(f"{booklet} ({area})" for area, (booklet, _) in expected.items())
                + " (the 3PL test characteristic curve); a point off it scored a CTT its θ "
                "does not predict. " if expected else "")
             + (f"{model_words}{fallback_note} Read across: same "
                "CTT, different θ means the model got a different *kind* of item right than "
                "humans with that score." if len(model_rows) else
                no_runs_words(filters, overlay) + ".")
             + filters.provenance),
)

st.subheader("Each model's accuracy and ability")
table = model_ability_table(points)
if overlay:
    table = overlay.per_level(table, model_ability_table(overlay.points))
if table.empty:
    st.caption("The table fills in once the selection has model runs.")
else:
    percentiles = []
    for row in table.itertuples():
        hist = queries.human_theta_histogram(*filters.human_args(row.area))
        value = histogram_percentile(hist["theta_bin"], hist["n"], 0.1, [row.mean_theta])[0]
        percentiles.append(value)
    table["human_percentile"] = np.round(percentiles, 1)
    # The percentile is what a reader comes for: right after the series name and area, so it
    # is on screen at 1440 px with the sidebar open; the CSV keeps the same order.
    table = table[ACCURACY_COLUMNS if overlay is None else
                  [ACCURACY_COLUMNS[0], "level", *ACCURACY_COLUMNS[1:]]]
    st.dataframe(
        table, hide_index=True, width="stretch", placeholder="—",
        column_config={
            "model": st.column_config.TextColumn("model", pinned=True),
            "level": st.column_config.TextColumn(
                "level", help="the overlaid condition's level the row's patterns were "
                              "answered under"),
            "area": st.column_config.TextColumn("area", width=50),
            "human_percentile": st.column_config.NumberColumn(
                "human percentile of mean θ", format="%.1f",
                help=(f"Share of {filters.group_label} with a lower θ than the model's mean "
                      "θ, in % (read from 0.1-wide bins); — : no candidates to compare with")),
            "mean_theta": st.column_config.NumberColumn("mean θ", format="%.3f"),
            "sd_theta": st.column_config.NumberColumn(
                "SD θ", format="%.3f", help="— : a single repetition has no SD"),
            "mean_ctt": st.column_config.NumberColumn("mean CTT", format="%.1f"),
            "sd_ctt": st.column_config.NumberColumn(
                "SD CTT", format="%.2f", help="— : a single repetition has no SD"),
            "mean_se": st.column_config.NumberColumn("mean SE(θ)", format="%.3f"),
            "mean_lz": st.column_config.NumberColumn("mean l_z", format="%.2f"),
            "sd_lz": st.column_config.NumberColumn(
                "SD l_z", format="%.2f", help="— : a single repetition has no SD"),
            "patterns": st.column_config.NumberColumn(
                "patterns", help="response patterns: runs × shuffles"),
        },
    )
    st.caption("Mean and standard deviation over every shuffle of the model "
               + (f"({filters.prompt_label}); " if overlay is None else
                  f"at each level ({filters.prompt_label}; {overlay.filters.prompt_label}), "
                  "the level column saying which; ")
               + (f"the percentile places the mean θ among {filters.group_label}. "
                  if filters.has_humans else
                  "no percentile: this year has no candidates (item file only). ")
               + "— : not defined (one repetition has no SD; no candidates, no percentile).")
    csv_download(table, label="Table (CSV)",
                 file_stem=f"model_accuracy_{filters.year}" + (overlay.stem if overlay else ""),
                 key="accuracy.table.csv")
