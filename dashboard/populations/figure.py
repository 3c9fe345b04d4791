"""The Populations page's figures: PATCH's box figure (percent correct and IRT side by side,
models inserted among the populations in rank order) and the forest plot of a model's prompt
variants beside their pooled θ̄."""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from dashboard.figures import legend_above
from dashboard.palette import HUMAN_COLOUR, REFERENCE_COLOUR, with_alpha
from dashboard.populations.tables import MODEL, linear_map

#: Pixels per row of the box figure and of the forest plot.
ROW_PX = 22
PCT_TITLE = "percent correct (%)"


def _ordered(entries: pd.DataFrame, prefix: str) -> pd.DataFrame:
    """Entries with a finite mean, best first."""
    usable = entries[np.isfinite(entries[f"{prefix}_mean"].to_numpy(float))]
    return usable.sort_values(f"{prefix}_mean", ascending=False, kind="stable")


def _population_traces(rows: pd.DataFrame, prefix: str, show_legend: bool) -> list:
    """Whiskers (5th–95th percentile), boxes (25th–75th), the mean as a line across the box
    and the 95% CI of the mean as an error bar on it."""
    if rows.empty:
        return []
    names = rows["name"].tolist()
    p5, p25, p75, p95 = (rows[f"{prefix}_p{p}"].to_numpy(float) for p in (5, 25, 75, 95))
    mean = rows[f"{prefix}_mean"].to_numpy(float)
    whisker_x = np.column_stack([p5, p95, np.full(len(rows), np.nan)]).ravel()
    whisker_y = np.repeat(names, 3)
    hover = [f"<b>{name}</b> ({n:,} candidates)<br>mean {m:.2f} (95% CI {lo:.2f}–{hi:.2f})"
             f"<br>percentiles 5/25/50/75/95: {a:.2f} / {b:.2f} / {c:.2f} / {d:.2f} / {e:.2f}"
             for name, n, m, lo, hi, a, b, c, d, e in zip(
                 names, rows["n"], mean, rows[f"{prefix}_ci_low"], rows[f"{prefix}_ci_high"],
                 p5, p25, rows[f"{prefix}_p50"], p75, p95, strict=True)]
    return [
        go.Scatter(x=whisker_x, y=whisker_y, mode="lines", name="5th–95th percentile",
                   legendgroup="whisker", showlegend=show_legend, hoverinfo="skip",
                   line={"color": HUMAN_COLOUR, "width": 1}),
        go.Bar(x=p75 - p25, base=p25, y=names, orientation="h", name="25th–75th percentile",
               legendgroup="box", showlegend=show_legend, width=0.6,
               marker={"color": with_alpha(HUMAN_COLOUR, 0.25),
                       "line": {"color": HUMAN_COLOUR, "width": 1}},
               hovertext=hover, hoverinfo="text"),
        go.Scatter(x=mean, y=names, mode="markers", name="mean, 95% CI of the mean",
                   legendgroup="mean", showlegend=show_legend,
                   marker={"symbol": "line-ns", "size": 14, "color": REFERENCE_COLOUR,
                           "line": {"width": 2, "color": REFERENCE_COLOUR}},
                   error_x={"type": "data", "symmetric": False,
                            "array": rows[f"{prefix}_ci_high"].to_numpy(float) - mean,
                            "arrayminus": mean - rows[f"{prefix}_ci_low"].to_numpy(float),
                            "color": REFERENCE_COLOUR, "thickness": 1.5, "width": 4},
                   hovertext=hover, hoverinfo="text"),
    ]


def _model_trace(row: pd.Series, prefix: str, style: tuple[str, str], show_legend: bool,
                 what: str) -> go.Scatter:
    mean, low, high = (float(row[f"{prefix}_{k}"]) for k in ("mean", "ci_low", "ci_high"))
    finite = np.isfinite(low) and np.isfinite(high)
    return go.Scatter(
        x=[mean], y=[row["name"]], mode="markers", name=row["name"], legendgroup=row["name"],
        showlegend=show_legend,
        marker={"color": style[0], "symbol": style[1], "size": 10,
                "line": {"color": "black", "width": 1}},
        error_x={"type": "data", "symmetric": False, "array": [high - mean if finite else 0],
                 "arrayminus": [mean - low if finite else 0], "color": style[0],
                 "thickness": 2, "width": 6},
        hovertemplate=(f"<b>{row['name']}</b><br>{what} %{{x:.2f}}"
                       + (f" (95% CI {low:.2f}–{high:.2f})" if finite else " (no CI)")
                       + "<extra></extra>"))


def box_figure(entries: pd.DataFrame, irt_title: str,
               styles: dict[str, tuple[str, str]]) -> go.Figure:
    """Two panels, percent correct (left) and IRT (right), each listing populations and models
    best first; ``entries`` has the columns of ``population_summary`` (models with NaN
    percentiles), ``styles`` (colour, symbol) per model."""
    rows = max(len(entries), 1)
    plot_height = ROW_PX * rows + 40
    # Each panel lists its rows in its own order, so each needs its own labels: the left
    # panel's sit in the left margin and the right panel's in the right margin (automargin
    # widens both to the longest label). Between the panels, where the right panel's labels
    # used to be, they ran over the left panel's markers once a label was wider than the gap.
    figure = make_subplots(rows=1, cols=2, horizontal_spacing=0.06,
                           subplot_titles=["Percent correct (CTT)", f"IRT: {irt_title}"])
    for col, prefix, title in ((1, "pct", PCT_TITLE), (2, "irt", irt_title)):
        ordered = _ordered(entries, prefix)
        people = ordered[ordered["entry"] != MODEL]
        for trace in _population_traces(people, prefix, show_legend=col == 1):
            figure.add_trace(trace, row=1, col=col)
        for _, model in ordered[ordered["entry"] == MODEL].iterrows():
            what = "percent correct" if prefix == "pct" else title
            figure.add_trace(_model_trace(model, prefix, styles[model["name"]], col == 1, what),
                             row=1, col=col)
        figure.update_yaxes(type="category", categoryorder="array",
                            categoryarray=ordered["name"].tolist()[::-1], tickmode="array",
                            tickvals=ordered["name"].tolist(), automargin=True,
                            side="left" if col == 1 else "right", row=1, col=col)
        figure.update_xaxes(title_text=title, row=1, col=col)
    figure.update_layout(height=plot_height + 150, barmode="overlay",
                         margin={"t": 90, "b": 60, "l": 10, "r": 20},
                         legend=legend_above(plot_height))
    return figure


def forest_figure(variants: pd.DataFrame, summaries: pd.DataFrame, scale: str, area: str,
                  styles: dict[str, tuple[str, str]]) -> go.Figure:
    """Per model, each variant's θ with its 95% CI and, below them, the pooled θ̄ (a diamond)
    with its CI, on ``scale``."""
    slope, intercept = linear_map(scale, area)
    figure = go.Figure()
    labels: list[str] = []
    for _, summary in summaries.iterrows():
        model = summary["model"]
        colour, symbol = styles[model]
        mine = variants[variants["model"] == model]
        names = [f"{model} · {v}" for v in mine["variant"]]
        pooled_name = f"{model} · POOLED ({int(summary['variants'])} variants)"
        labels += names + [pooled_name]
        theta = mine["theta"].to_numpy(float) * slope + intercept
        figure.add_trace(go.Scatter(
            x=theta, y=names, mode="markers", name=model, legendgroup=model, showlegend=False,
            marker={"color": with_alpha(colour, 0.8), "symbol": symbol, "size": 7},
            error_x={"type": "data", "symmetric": False,
                     "array": mine["ci_high"].to_numpy(float) * slope + intercept - theta,
                     "arrayminus": theta - (mine["ci_low"].to_numpy(float) * slope + intercept),
                     "color": with_alpha(colour, 0.8), "thickness": 1.2, "width": 3},
            customdata=mine[["patterns"]].to_numpy(),
            hovertemplate="%{y}<br>θ %{x:.3f} from %{customdata[0]} patterns<extra></extra>"))
        pooled = summary["theta"] * slope + intercept
        figure.add_trace(go.Scatter(
            x=[pooled], y=[pooled_name], mode="markers", name=model, legendgroup=model,
            marker={"color": colour, "symbol": "diamond", "size": 12,
                    "line": {"color": "black", "width": 1}},
            error_x={"type": "data", "symmetric": False,
                     "array": [summary["ci_high"] * slope + intercept - pooled],
                     "arrayminus": [pooled - (summary["ci_low"] * slope + intercept)],
                     "color": colour, "thickness": 2.5, "width": 6},
            hovertemplate=(f"<b>{model}</b> pooled θ̄ %{{x:.3f}} (95% CI "
                           f"{summary['ci_low'] * slope + intercept:.3f}–"
                           f"{summary['ci_high'] * slope + intercept:.3f})<extra></extra>")))
    plot_height = ROW_PX * max(len(labels), 1) + 40
    figure.update_yaxes(type="category", categoryorder="array", categoryarray=labels[::-1],
                        tickmode="array", tickvals=labels, automargin=True)
    figure.update_xaxes(title_text=scale)
    figure.update_layout(height=plot_height + 130, margin={"t": 70, "b": 60, "l": 10, "r": 20},
                         legend=legend_above(plot_height))
    return figure
