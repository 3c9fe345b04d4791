"""Person fit (the paper's Fig. 3): l_z against θ, per area.

l_z measures how plausible a response pattern is under the IRT model at its own θ (≈ N(0, 1) for
humans who answer like the calibration population; strongly negative = incoherent, e.g. hard
items right and easy ones wrong). l_z alone cannot vouch for a θ (near the bottom of the scale
a random answerer fits about as well as a candidate), so the trust table adds precision, the
informative band and a comparison with random answering (``dashboard.trust``).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from dashboard import queries
from dashboard.figures import (
    LZ_TITLE,
    REGION_RULE,
    area_grid,
    humans_and_models_grid,
    panel,
    series_styles,
    show_figure,
)
from dashboard.palette import HUMAN_COLOUR, REFERENCE_COLOUR, with_alpha
from dashboard.state import note_missing_runs, open_page, selected_model_points
from dashboard.summaries import histogram_quantile
from dashboard.trust import RULE
from dashboard.trust_table import trust_table

filters = open_page("Person fit: l_z against θ")

densities = {
    area: queries.human_theta_lz(*filters.human_args(area))
    for area in filters.areas
}
marginals = {area: frame.groupby("lz_bin", as_index=False)["n"].sum()
             for area, frame in densities.items()}
human_p5 = {area: histogram_quantile(m["lz_bin"], m["n"], 0.1, 0.05)
            for area, m in marginals.items()}
points = selected_model_points(filters)
note_missing_runs(filters, points)

figure = humans_and_models_grid(filters.areas, densities, points, y="lz", y_bin="lz_bin",
                                y_width=0.1, y_title=LZ_TITLE, y_label="l_z")
for index, area in enumerate(filters.areas):
    if np.isfinite(human_p5[area]):
        row, col = panel(index, 2)
        figure.add_hline(y=human_p5[area], line={"color": REFERENCE_COLOUR, "dash": "dash", "width": 1},
                         annotation_text="humans' 5th percentile", annotation_position="bottom left",
                         row=row, col=col)
show_figure(
    figure, key="fit.figure", file_stem=f"lz_vs_theta_{filters.year}_{filters.language}",
    image_format=filters.image_format,
    data=pd.concat([pd.concat([f.assign(area=a, kind="humans") for a, f in densities.items()],
                              ignore_index=True), points.assign(kind="model")], ignore_index=True),
    caption=(f"Grey: {filters.group_label} per (0.1 θ × 0.1 l_z) cell, log scale; coloured: one "
             f"marker per model repetition (shuffle or seed; {filters.prompt_label}); "
             f"{REGION_RULE}; dashed: the humans' 5th percentile of l_z. Below it = less coherent "
             "than 95% of humans."
             + filters.provenance),
)

st.subheader("The human l_z distribution for reference")
reference = area_grid(filters.areas, columns=2, row_height=280, vertical_spacing=0.22)
styles = series_styles(points["model"].unique(), filters.series_order) \
    if len(points) else {}
legend_shown: set[str] = set()
for index, area in enumerate(filters.areas):
    row, col = panel(index, 2)
    marginal = marginals[area]
    if len(marginal):
        share = 100.0 * marginal["n"] / marginal["n"].sum()
        reference.add_trace(go.Bar(
            x=marginal["lz_bin"] + 0.05, y=share, width=0.1, name="humans",
            marker_color=with_alpha(HUMAN_COLOUR, 0.6), legendgroup="humans",
            showlegend=index == 0,
            hovertemplate="l_z %{x:.2f}: %{y:.2f}% of candidates<extra></extra>"), row=row, col=col)
        top = float(share.max())
    else:
        top = 1.0
    in_area = points[points["area"] == area] if len(points) else points
    for offset, (model, group) in enumerate(in_area.groupby("model", sort=True)
                                               if len(in_area) else []):
        colour, symbol = styles[model]
        reference.add_trace(go.Scatter(
            x=group["lz"], y=[top * (1.1 + 0.12 * offset)] * len(group), mode="markers",
            name=model, legendgroup=model, showlegend=model not in legend_shown,
            marker={"color": with_alpha(colour, 0.7), "symbol": symbol, "size": 7},
            customdata=group[["shuffle", "theta", "theta_se"]].to_numpy(object),
            hovertemplate=(f"<b>{model}</b><br>l_z = %{{x:.2f}}<br>shuffle %{{customdata[0]}}"
                           " · θ %{customdata[1]:.3f} (SE %{customdata[2]:.3f})<extra></extra>"),
        ), row=row, col=col)
        legend_shown.add(model)
    if np.isfinite(human_p5[area]):
        reference.add_vline(x=human_p5[area], line={"color": REFERENCE_COLOUR, "dash": "dash",
                                                        "width": 1}, row=row, col=col)
    reference.update_xaxes(title_text="l_z (standardised)", row=row, col=col)
    reference.update_yaxes(title_text="% of candidates per 0.1 l_z", row=row, col=col)
show_figure(
    reference, key="fit.reference", file_stem=f"lz_distribution_{filters.year}",
    image_format=filters.image_format,
    data=pd.concat([m.assign(area=a) for a, m in marginals.items()], ignore_index=True),
    caption=("Bars: share of candidates per 0.1-wide l_z bin (values beyond −10 and 5 are in "
             "the edge bins); markers above: each model shuffle's l_z; dashed: the humans' "
             "5th percentile."
             + filters.provenance),
)

st.subheader("Which models' θ can be trusted?")
if points.empty:
    st.caption("The table fills in once the selection has model runs.")
else:
    table = trust_table(filters, points, human_p5)
    st.dataframe(table, hide_index=True, width="stretch", column_config={
        "booklet_id": st.column_config.NumberColumn("booklet", format="%d",
                                                    help="the booklet whose items give the "
                                                         "test information"),
        "mean_theta": st.column_config.NumberColumn("mean θ", format="%.3f"),
        "mean_se": st.column_config.NumberColumn("model SE", format="%.3f"),
        "human_se": st.column_config.NumberColumn(
            "humans' SE at θ", format="%.3f",
            help="mean SE of the humans whose θ is in the model's 0.1-wide θ bin"),
        "se_ratio": st.column_config.NumberColumn("SE ratio", format="%.2f"),
        "exam_se": st.column_config.NumberColumn("exam SE at θ", format="%.3f",
                                                 help="1/√I(θ) of the booklet's items"),
        "share_below_p5": st.column_config.ProgressColumn(
            "share below humans' 5th pct l_z", format="percent", min_value=0.0,
            max_value=1.0),
        "random_p": st.column_config.NumberColumn("p vs random", format="%.2g",
                                                  help="Mann–Whitney U, two-sided"),
        "theta_trusted": st.column_config.TextColumn("θ trusted?"),
    })
    st.caption(RULE + f" Humans: {filters.group_label}." + filters.provenance)
    st.download_button("Table (CSV)", data=table.to_csv(index=False),
                       file_name=f"person_fit_{filters.year}.csv", mime="text/csv",
                       on_click="ignore", key="fit.table.csv")
