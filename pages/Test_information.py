"""Test information (the paper's Fig. 4): where on the θ axis each area's exam measures well, and
where the models' θ fall.

An exam is built for the human population: its information I(θ) peaks where most candidates
are. A model whose θ lies where I(θ) is low gets a wide interval — its score says little. Each
model row shows its θ over repetitions (faint markers) and its mean θ with one of three 95%
intervals the user picks (``dashboard.information_data``): the bootstrap CI of the mean, the
central 95% of the repetitions' θ, or each pattern's own SE(θ). The paper's "IRT scores, 95%
CI" does not say which it drew; the caption says which is drawn.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st
from plotly.subplots import make_subplots

from analytics.populations import Z_95
from dashboard import queries
from dashboard.figures import (
    THETA_TITLE,
    area_title,
    legend_above,
    series_styles,
    show_figure,
)
from dashboard.information_data import (
    DEFAULT_INTERVAL,
    INTERVAL_BOUNDS,
    INTERVALS,
    PAPER_AMBIGUITY,
    theta_intervals,
)
from dashboard.palette import HUMAN_COLOUR, INFORMATIVE_FILL, REFERENCE_COLOUR, with_alpha
from dashboard.state.frame import note_missing_runs, open_page
from dashboard.state.selection import information_booklet, selected_model_points
from dashboard.summaries import (
    THETA_GRID,
    VERDICT_HELP,
    information_curves,
    information_verdict,
    informative_intervals,
)
from enem.areas import LANGUAGE_NAMES
from enem.trust import INFORMATIVE_SE

#: Longest series name that still fits beside a second column of panels.
SHORT_NAME = 24
#: Pixels of an area's information panel, and of one model row (a lane): the model rows are
#: as tall as their lanes, so no empty band opens between the panel and few models.
PANEL_PX, LANE_PX = 300, 28
#: Pixels between a panel and its model rows (they share the θ axis), and between a block's
#: θ-axis title and the next block's panel titles.
INNER_GAP_PX, BLOCK_GAP_PX = 14, 110
REPETITIONS_NAME = "θ of each repetition"
#: Pixels of the verdict column: its longest words, beside the series name and area, still
#: inside a 1440-px screen with the sidebar open.
VERDICT_PX = 580

filters = open_page("Test information: where the exam can measure, and where the models are")

left, middle, right = st.columns(3)
max_se = left.slider("Call the exam informative where SE(θ) is at most", 0.2, 1.0,
                     INFORMATIVE_SE, 0.05, key="information.max_se",
                     help=f"SE(θ) = 1/√I(θ); {INFORMATIVE_SE:g} means I(θ) ≥ "
                          f"{1 / INFORMATIVE_SE ** 2:g} (the Person fit page's trust verdict "
                          "uses this default)")
interval = middle.radio("95% interval around each model's θ", list(INTERVALS),
                        index=list(INTERVALS).index(DEFAULT_INTERVAL), key="information.interval",
                        format_func=lambda key: INTERVALS[key][0],
                        help="The paper's Fig. 4 draws a \"95% CI computed using the shuffles\" "
                             "without saying which: the CI of the mean (as plotting libraries "
                             "draw by default), the central 95% of the shuffles' θ, or neither "
                             "(a pattern's own SE(θ) is in none of them).")
interval_name, interval_words = INTERVALS[interval]
low_column, high_column = INTERVAL_BOUNDS[interval]
points = selected_model_points(filters)
lc_models = points.loc[points["area"] == "LC", "item_language"].dropna() if len(points) else []
lc_default = int(pd.Series(lc_models).mode().iloc[0]) if len(lc_models) else 0
lc_language = right.radio("LC foreign-language items", list(LANGUAGE_NAMES), horizontal=True,
                          index=list(LANGUAGE_NAMES).index(lc_default), key="information.lc",
                          format_func=LANGUAGE_NAMES.get)
note_missing_runs(filters, points)

# Series names are long ("llama2-13b · few-shot · 30 seeds"): beside a second column of panels
# they would run into it. When every area has the same model rows, the right column's rows
# are unlabelled (they read as the left's), which keeps two columns and half the height (four
# stacked areas were squeezed unreadable on a 1280×720 slide); otherwise long names get one.
longest = max((len(name) for name in points["model"].unique()), default=0) if len(points) else 0
lanes = points["model"].nunique() if len(points) else 0
models_px = LANE_PX * max(1, lanes)
same_rows = len(points) == 0 or all(
    points.loc[points["area"] == area, "model"].nunique() == lanes for area in filters.areas)
columns = 2 if len(filters.areas) > 1 and (longest <= SHORT_NAME or same_rows) else 1
label_right = longest <= SHORT_NAME
blocks = -(-len(filters.areas) // columns)
# Rows per block: information panel, model rows, then an empty spacer row (none after the
# last block), so the gap inside a block is narrow and the gap between blocks is wide.
heights, specs, titles = [], [], []
for block in range(blocks):
    names = filters.areas[block * columns:(block + 1) * columns]
    if block:
        heights.append(BLOCK_GAP_PX)
        specs.append([{}] * columns)
        titles += [""] * columns
    heights += [PANEL_PX, models_px]
    specs += [[{"secondary_y": True}] * columns, [{}] * columns]
    titles += [area_title(a) for a in names] + [""] * (columns - len(names)) + [""] * columns
plot_height = sum(heights) + INNER_GAP_PX * (len(heights) - 1)
figure = make_subplots(rows=len(heights), cols=columns, specs=specs, subplot_titles=titles,
                       vertical_spacing=INNER_GAP_PX / plot_height,
                       horizontal_spacing=0.2 if label_right else 0.15,
                       row_heights=heights)
for block in range(1, blocks):
    for col in range(1, columns + 1):
        figure.update_xaxes(visible=False, row=3 * block, col=col)
        figure.update_yaxes(visible=False, row=3 * block, col=col)
styles = (series_styles(points["model"].unique(), filters.series_order)
          if len(points) else {})
intervals_table = theta_intervals(points).set_index(["model", "area"])
curves, verdicts = [], []
legend_shown: set[str] = set()
for index, area in enumerate(filters.areas):
    top, col = 3 * (index // columns) + 1, index % columns + 1
    booklet = information_booklet(filters, area)
    if booklet is None:
        continue
    items = queries.form_items(filters.year, booklet, lc_language if area == "LC" else None)
    information, se = information_curves(items)
    intervals = informative_intervals(THETA_GRID, se <= max_se)
    curves.append(pd.DataFrame({"area": area, "booklet_id": booklet, "theta": THETA_GRID,
                                "information": information, "se": se}))
    figure.add_trace(go.Scatter(x=THETA_GRID, y=information, name="information I(θ)",
                                line={"color": REFERENCE_COLOUR, "width": 2}, legendgroup="I",
                                showlegend=index == 0,
                                hovertemplate="θ %{x:.2f}: I = %{y:.2f}<extra></extra>"),
                     row=top, col=col, secondary_y=False)
    figure.add_trace(go.Scatter(x=THETA_GRID, y=np.minimum(se, 3.0), name="SE(θ) = 1/√I",
                                line={"color": HUMAN_COLOUR, "width": 2, "dash": "dot"},
                                legendgroup="SE", showlegend=index == 0,
                                hovertemplate="θ %{x:.2f}: SE = %{y:.3f}<extra></extra>"),
                     row=top, col=col, secondary_y=True)
    for low, high in intervals:
        for row in (top, top + 1):
            figure.add_vrect(x0=low, x1=high, fillcolor=INFORMATIVE_FILL, line_width=0,
                             layer="below", row=row, col=col)
    # Axis titles on the outer sides only: between two columns the left panel's SE(θ) title
    # and the right panel's I(θ) title fell on one another.
    figure.update_yaxes(title_text="I(θ)" if col == 1 else "", row=top, col=col,
                        secondary_y=False)
    figure.update_yaxes(title_text="SE(θ)" if col == columns else "", range=[0, 1.5],
                        tickmode="auto",
                        showgrid=False, row=top, col=col, secondary_y=True)
    # The panel and its model rows share one θ axis; only the model rows show its ticks.
    shared = figure.get_subplot(top + 1, col).xaxis.plotly_name.replace("axis", "")
    figure.update_xaxes(matches=shared, showticklabels=False, row=top, col=col)
    figure.update_xaxes(title_text=THETA_TITLE, range=[THETA_GRID[0], THETA_GRID[-1]],
                        row=top + 1, col=col)
    in_area = points[points["area"] == area] if len(points) else points
    for model, group in (in_area.groupby("model", sort=True) if len(in_area) else []):
        colour, symbol = styles[model]
        summary = intervals_table.loc[(model, area)]
        mean_theta, low, high = summary["mean_theta"], summary[low_column], summary[high_column]
        own = Z_95 * group["theta_se"].to_numpy(float)
        figure.add_trace(go.Scatter(
            x=group["theta"], y=[model] * len(group), mode="markers", showlegend=False,
            marker={"color": with_alpha(colour, 0.45), "size": 5, "symbol": symbol},
            error_x=({"type": "data", "array": own, "color": with_alpha(colour, 0.35),
                      "thickness": 1, "width": 0} if interval == "pattern_se" else None),
            legendgroup=model, customdata=group[["shuffle", "theta_se", "lz", "ctt"]]
            .to_numpy(object), name=f"{model}: {REPETITIONS_NAME}",
            hovertemplate=(f"<b>{model}</b> shuffle %{{customdata[0]}}<br>θ = %{{x:.3f}} "
                           "(SE %{customdata[1]:.3f})<br>l_z %{customdata[2]:.2f} · CTT "
                           "%{customdata[3]}<extra></extra>")), row=top + 1, col=col)
        ci_words = (f"{interval_name} [{low:.3f}, {high:.3f}]" if np.isfinite(low)
                    else f"one repetition: no {interval_name}")
        figure.add_trace(go.Scatter(
            x=[mean_theta], y=[model], mode="markers", name=model, legendgroup=model,
            showlegend=model not in legend_shown,
            marker={"color": colour, "size": 8, "symbol": symbol,
                    "line": {"color": "black", "width": 1}},
            error_x={"type": "data", "symmetric": False,
                     "array": [high - mean_theta if np.isfinite(high) else 0.0],
                     "arrayminus": [mean_theta - low if np.isfinite(low) else 0.0],
                     "color": colour, "thickness": 2, "width": 6},
            hovertemplate=(f"<b>{model}</b><br>mean θ = %{{x:.3f}} over "
                           f"{int(summary['repetitions'])} repetitions<br>{ci_words}"
                           "<extra></extra>")), row=top + 1, col=col)
        legend_shown.add(model)
        se_here = float(np.interp(mean_theta, THETA_GRID, se))
        # The drawn interval and the verdict first; the other two intervals after them.
        verdicts.append({"model": model, "area": area, "booklet": booklet,
                         "repetitions": int(summary["repetitions"]), "mean_theta": mean_theta,
                         low_column: low, high_column: high, "exam_se_at_theta": se_here,
                         "verdict": information_verdict(mean_theta, low, high, intervals,
                                                        se_here),
                         **{column: summary[column] for pair in INTERVAL_BOUNDS.values()
                            for column in pair if pair != (low_column, high_column)}})
    # Every series named, even when plotly would thin out crowded category labels; half a lane
    # of room above the first and below the last, none more.
    names = sorted(in_area["model"].unique()) if len(in_area) else []
    figure.update_yaxes(title_text="model" if longest <= SHORT_NAME and names else "",
                        row=top + 1, col=col, type="category", tickmode="array",
                        tickvals=names, range=[-0.5, max(1, len(names)) - 0.5],
                        showticklabels=col == 1 or label_right)
    if not names:
        # An empty row still draws its θ axis (plotly leaves out the axes of a subplot without
        # a trace) and says why it is empty, in its own axes' coordinates.
        figure.add_trace(go.Scatter(x=[None], y=[None], showlegend=False, hoverinfo="skip"),
                         row=top + 1, col=col)
        lane_axes = figure.get_subplot(top + 1, col)
        figure.add_annotation(
            text=f"no model runs in {area} in this selection", showarrow=False,
            font={"size": 12, "color": "#555555"}, x=0.5, y=0.5,
            xref=lane_axes.xaxis.plotly_name.replace("axis", "") + " domain",
            yref=lane_axes.yaxis.plotly_name.replace("axis", "") + " domain")
        figure.update_yaxes(showticklabels=False, row=top + 1, col=col)
# The two glyphs of every model row, explained once in the legend.
figure.add_trace(go.Scatter(x=[None], y=[None], mode="markers", name=REPETITIONS_NAME,
                            marker={"color": with_alpha(HUMAN_COLOUR, 0.45), "size": 5},
                            legendgroup="repetitions", showlegend=len(points) > 0), row=2, col=1)
figure.add_trace(go.Scatter(x=[None], y=[None], mode="markers", name=f"mean θ, {interval_name}",
                            marker={"color": HUMAN_COLOUR, "size": 8,
                                    "line": {"color": "black", "width": 1}},
                            error_x={"type": "constant", "value": 0.2, "color": HUMAN_COLOUR,
                                     "thickness": 2, "width": 6},
                            legendgroup="ci", showlegend=len(points) > 0), row=2, col=1)
figure.update_layout(height=plot_height + 130, margin={"t": 70, "b": 60, "l": 60, "r": 20},
                     legend=legend_above(plot_height))
show_figure(
    figure, key="information.figure", file_stem=f"test_information_{filters.year}",
    image_format=filters.image_format,
    data=pd.concat([*curves, intervals_table.reset_index().assign(kind="model θ")],
                   ignore_index=True),
    caption=("Top: test information I(θ) (solid) and SE(θ) = 1/√I(θ) (dotted, right axis) of "
             "each area's booklet (the sidebar's, else the one the models answered most, else "
             "the one most candidates took). "
             + (f"Bottom, per model ({filters.prompt_label}): its θ in each repetition (faint "
                f"markers) and its mean θ with {interval_words}. Drawn: {interval_name}. "
                f"{PAPER_AMBIGUITY} "
                + ("The right column's model rows are in the left column's order. "
                   if columns == 2 and not label_right else "") if len(points) else
                f"Bottom: one row per model; this selection ({filters.prompt_label}) has "
                "none. ")
             + f"Green shading: where SE(θ) ≤ {max_se:.2f}, i.e. where the exam measures well."
             + filters.provenance),
)

st.subheader("Verdict per model")
if verdicts:
    # The verdict right after the series and area (on screen at 1440 px with the sidebar
    # open), then the drawn interval; the other two intervals last. The CSV has this order.
    others = [column for pair in INTERVAL_BOUNDS.values() for column in pair
              if pair != (low_column, high_column)]
    table = pd.DataFrame(verdicts)[["model", "area", "verdict", "mean_theta", low_column,
                                    high_column, "exam_se_at_theta", "booklet", "repetitions",
                                    *others]]
    no_interval = "— : one repetition has no such interval"
    st.dataframe(table, hide_index=True, width="stretch", placeholder="—", column_config={
        "model": st.column_config.TextColumn("model", pinned=True),
        "area": st.column_config.TextColumn("area", width=50),
        # Wide enough for the longest verdict; the auto width stops short of it.
        "verdict": st.column_config.TextColumn("in plain words", help=VERDICT_HELP,
                                               width=VERDICT_PX),
        "mean_theta": st.column_config.NumberColumn("mean θ", format="%.3f"),
        "boot_low": st.column_config.NumberColumn("mean's CI low (bootstrap)", format="%.3f",
                                                  help=no_interval),
        "boot_high": st.column_config.NumberColumn("mean's CI high (bootstrap)",
                                                   format="%.3f", help=no_interval),
        "central_low": st.column_config.NumberColumn("θ 2.5th pct", format="%.3f"),
        "central_high": st.column_config.NumberColumn("θ 97.5th pct", format="%.3f"),
        "se_low": st.column_config.NumberColumn("mean θ − 1.96·mean SE", format="%.3f"),
        "se_high": st.column_config.NumberColumn("mean θ + 1.96·mean SE", format="%.3f"),
        "exam_se_at_theta": st.column_config.NumberColumn("exam SE at mean θ", format="%.3f"),
        "booklet": st.column_config.NumberColumn(
            "booklet", format="%d", help="the booklet whose items give I(θ)"),
    })
    st.caption("All three 95% intervals per model: the bootstrap CI of its mean θ over its "
               "repetitions, the central 95% of its repetitions' θ (2.5th–97.5th percentile), "
               "and mean θ ± 1.96 × its patterns' mean SE(θ). The verdict's interval is the "
               f"one drawn ({interval_name}). The exam's SE at the mean θ comes from the "
               "information curve above. — : not defined (one repetition has no bootstrap "
               "CI, a run without SE(θ) no SE interval).")
    st.download_button("Table (CSV)", data=table.to_csv(index=False),
                       file_name=f"information_verdicts_{filters.year}.csv", mime="text/csv",
                       on_click="ignore", key="information.table.csv")
else:
    st.caption("Verdicts appear once the selection has model runs.")
