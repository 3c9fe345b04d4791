"""Plotly building blocks shared by the pages, and the one way a figure is shown.

Humans are drawn as a grey density (a heatmap of a pre-aggregated 2-D histogram), models as one
marker per response pattern plus a closed curve around the central 90% of each model's markers.
:func:`show_figure` puts every chart on screen with its one-line caption, a camera button
(PNG or SVG), and downloads of the interactive HTML and of the numbers behind it (CSV).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st
from plotly.subplots import make_subplots

from dashboard.contours import central_region
from dashboard.palette import HUMAN_DENSITY_SCALE, model_styles, with_alpha
from enem.areas import AREA_NAMES

THETA_TITLE = "θ (ability, logits; humans ~ N(0, 1))"
CTT_TITLE = "CTT score (items correct)"
LZ_TITLE = "l_z person fit (z units)"
COVERAGE = 0.9

_POINT_HOVER = (
    "<b>%{customdata[0]}</b><br>run %{customdata[1]} · %{customdata[2]}, %{customdata[3]}-shot"
    "<br>shuffle %{customdata[4]}<br>θ = %{customdata[5]:.3f} (SE %{customdata[6]:.3f})"
    "<br>l_z = %{customdata[7]:.2f}<br>CTT = %{customdata[8]}<extra></extra>"
)
_POINT_COLUMNS = ("model", "run_id", "prompt_language", "shots", "shuffle", "theta",
                  "theta_se", "lz", "ctt")


def area_title(area: str) -> str:
    """'CN — Natural Sciences'."""
    return f"{area} — {AREA_NAMES.get(area, area)}"


def area_grid(areas: Sequence[str], columns: int = 2, row_height: int = 340,
              shared_yaxes: bool = False, vertical_spacing: float = 0.14) -> go.Figure:
    """A figure with one subplot per area (``columns`` per row), titled by area."""
    columns = max(1, min(columns, len(areas)))
    rows = math.ceil(len(areas) / columns)
    figure = make_subplots(rows=rows, cols=columns, subplot_titles=[area_title(a) for a in areas],
                           horizontal_spacing=0.08, shared_yaxes=shared_yaxes,
                           vertical_spacing=vertical_spacing if rows > 1 else 0.0)
    height, margin = row_height * rows + 80, {"t": 60, "b": 50, "l": 60, "r": 20}
    # The legend sits a fixed 30 px above the plotting area, clear of the panel titles whatever
    # the number of rows (paper coordinates scale with the plotting area's height).
    legend_y = 1.0 + 30.0 / (height - margin["t"] - margin["b"])
    figure.update_layout(height=height, margin=margin,
                         legend={"orientation": "h", "yanchor": "bottom", "y": legend_y, "x": 0})
    return figure


def panel(index: int, columns: int) -> tuple[int, int]:
    """(row, col) of the index-th panel, 1-based, in a grid with ``columns`` columns."""
    return index // columns + 1, index % columns + 1


def human_density(frame: pd.DataFrame, x: str, y: str, x_width: float, y_width: float,
                  y_label: str, show_scale: bool = False) -> go.Heatmap:
    """A heatmap of a 2-D histogram (columns ``x``, ``y`` lower bin edges and ``n``).

    Colour is log10 of the count so that both the crowd and the tails stay visible; hovering a
    cell shows its count.
    """
    table = frame.pivot_table(index=y, columns=x, values="n", aggfunc="sum", fill_value=0)
    x_edges = np.round(np.arange(table.columns.min(), table.columns.max() + x_width / 2, x_width),
                       6) if len(table.columns) else np.array([])
    y_edges = np.round(np.arange(table.index.min(), table.index.max() + y_width / 2, y_width),
                       6) if len(table.index) else np.array([])
    table = table.reindex(index=y_edges, columns=x_edges, fill_value=0)
    counts = table.to_numpy(dtype=np.float64)
    with np.errstate(divide="ignore"):
        shade = np.where(counts > 0, np.log10(np.maximum(counts, 1.0)), np.nan)
    return go.Heatmap(
        x=x_edges + x_width / 2, y=y_edges + (y_width / 2 if y_width != 1 else 0.0), z=shade,
        customdata=counts, colorscale=HUMAN_DENSITY_SCALE, showscale=show_scale,
        zmin=0.0, name="humans",
        colorbar={"title": "humans", "tickvals": [0, 1, 2, 3, 4, 5, 6],
                      "ticktext": ["1", "10", "100", "1k", "10k", "100k", "1M"], "len": 0.5},
        hovertemplate=("θ %{x:.2f} · " + y_label + " %{y:.2f}<br>"
                       "%{customdata:,.0f} candidates<extra>humans</extra>"),
    )


def model_point_traces(points: pd.DataFrame, x: str, y: str, legend_shown: set[str],
                       styles: dict[str, tuple[str, str]] | None = None,
                       size: int = 6) -> list[go.Scatter]:
    """One marker per response pattern, one trace per model (hover: model, run, shuffle, θ, SE,
    l_z, CTT). ``legend_shown`` collects models already in the legend, so each appears once."""
    styles = styles or model_styles(points["model"].unique())
    traces = []
    for model, group in points.groupby("model", sort=True):
        colour, symbol = styles[model]
        traces.append(go.Scatter(
            x=group[x], y=group[y], mode="markers", name=model, legendgroup=model,
            showlegend=model not in legend_shown,
            marker={"color": with_alpha(colour, 0.75), "symbol": symbol, "size": size,
                        "line": {"color": "white", "width": 0.5}},
            customdata=group[list(_POINT_COLUMNS)].to_numpy(dtype=object),
            hovertemplate=_POINT_HOVER,
        ))
        legend_shown.add(model)
    return traces


def model_region_traces(points: pd.DataFrame, x: str, y: str,
                        styles: dict[str, tuple[str, str]] | None = None,
                        coverage: float = COVERAGE) -> list[go.Scatter]:
    """A closed curve around the central ``coverage`` of each model's points."""
    styles = styles or model_styles(points["model"].unique())
    traces = []
    for model, group in points.groupby("model", sort=True):
        region = central_region(group[x], group[y], coverage)
        if region is None:
            continue
        colour, _ = styles[model]
        traces.append(go.Scatter(
            x=region[0], y=region[1], mode="lines", legendgroup=model, showlegend=False,
            line={"color": colour, "width": 2}, fill="toself", fillcolor=with_alpha(colour, 0.08),
            name=f"{model}: central {coverage:.0%}", hoverinfo="name",
        ))
    return traces


def plotly_config(file_stem: str, image_format: str = "png") -> dict:
    """Chart toolbar settings: the camera icon saves ``file_stem`` as PNG (2×) or SVG."""
    return {
        "displaylogo": False,
        "toImageButtonOptions": {"format": image_format, "filename": file_stem, "scale": 2},
    }


def show_figure(figure: go.Figure, *, key: str, caption: str, data: pd.DataFrame,
                file_stem: str, image_format: str = "png", on_select: bool = False):
    """Draw a chart with its caption and downloads; returns the selection event if asked.

    The HTML is self-contained (plotly.js inlined) and only built when its button is clicked.
    """
    config = plotly_config(file_stem, image_format)
    if on_select:
        event = st.plotly_chart(figure, width="stretch", key=key, config=config,
                                on_select="rerun", selection_mode=("points",))
    else:
        event = st.plotly_chart(figure, width="stretch", key=key, config=config)
    st.caption(caption)
    left, right, _ = st.columns([1, 1, 3])
    left.download_button(
        "Figure (HTML)", data=lambda: figure.to_html(include_plotlyjs=True, full_html=True),
        file_name=f"{file_stem}.html", mime="text/html", key=f"{key}.html", on_click="ignore",
        icon=":material/download:",
    )
    right.download_button(
        "Numbers (CSV)", data=lambda: data.to_csv(index=False), file_name=f"{file_stem}.csv",
        mime="text/csv", key=f"{key}.csv", on_click="ignore", icon=":material/table:",
    )
    return event


def empty_panel(figure: go.Figure, row: int, col: int, message: str, y: float = 0.5) -> None:
    """Write a short message across a subplot, at height ``y`` of its domain (the middle)."""
    figure.add_annotation(text=message, showarrow=False, font={"size": 12, "color": "#555555"},
                          xref="x domain", yref="y domain", x=0.5, y=y, row=row, col=col)


def humans_and_models_grid(
    areas: Sequence[str], densities: dict[str, pd.DataFrame], points: pd.DataFrame,
    y: str, y_bin: str, y_width: float, y_title: str, y_label: str,
    coverage: float = COVERAGE,
) -> go.Figure:
    """The paper's layout: one panel per area with θ on x and ``y`` (CTT or l_z) on y; humans
    as a density (``densities[area]`` with theta_bin, ``y_bin``, n), models as markers plus the
    closed curve around the central ``coverage`` of each model's markers."""
    figure = area_grid(areas, columns=2)
    styles = model_styles(points["model"].unique()) if len(points) else {}
    legend_shown: set[str] = set()
    for index, area in enumerate(areas):
        row, col = panel(index, 2)
        density = densities.get(area, pd.DataFrame())
        if len(density):
            figure.add_trace(human_density(density, "theta_bin", y_bin, 0.1, y_width, y_label,
                                           show_scale=index == 0), row=row, col=col)
        in_area = points[points["area"] == area] if len(points) else points
        if len(in_area):
            for trace in model_region_traces(in_area, "theta", y, styles, coverage):
                figure.add_trace(trace, row=row, col=col)
            for trace in model_point_traces(in_area, "theta", y, legend_shown, styles):
                figure.add_trace(trace, row=row, col=col)
        if not len(density) and not len(in_area):
            empty_panel(figure, row, col, f"nothing to show for {area}")
        figure.update_xaxes(title_text=THETA_TITLE, row=row, col=col)
        figure.update_yaxes(title_text=y_title, row=row, col=col)
    return figure
