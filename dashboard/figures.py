"""Plotly building blocks shared by the pages, and the one way a figure is shown.

Humans are drawn as a grey density (a heatmap of a pre-aggregated 2-D histogram), models as one
marker per response pattern plus the contour of the highest-density region holding 90% of each
model's markers (:func:`analytics.contours.density_region`). A model keeps one colour on every
page and whatever else is selected (:func:`series_styles`). Panel grids keep fixed pixel gaps
between a panel's axis title and the next row's title, and between the legend and the first
row's titles (:func:`area_grid`). :func:`show_figure` puts every chart on screen with its
one-line caption, a camera button (PNG or SVG), and downloads of the interactive HTML and of
the numbers behind it (CSV).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st
from plotly.subplots import make_subplots
from streamlit.delta_generator import DeltaGenerator
from streamlit.elements.plotly_chart import PlotlyState

from analytics.contours import DensityRegion, density_region
from dashboard import queries
from dashboard.downloads import csv_download
from dashboard.margins import presize_margins
from dashboard.palette import HUMAN_DENSITY_SCALE, model_styles, series_style_table, with_alpha
from dashboard.runs.picker import shots_words
from enem.areas import AREA_NAMES

THETA_TITLE = "θ (ability, logits)"
CTT_TITLE = "CTT score (items correct)"
LZ_TITLE = "l_z person fit (z units)"
LZ_STAR_TITLE = "l_z* person fit (z units)"
COVERAGE = 0.9
#: Pixels between a row's x-axis title and the next row's panel titles, and between the
#: legend's lower edge and the first row's titles.
ROW_GAP_PX = 110
LEGEND_GAP_PX = 34
#: The rule of the curve around a model's points, for captions.
REGION_RULE = ("the line encloses the highest-density region holding 90% of the run's "
               "repetitions, from a Gaussian KDE (Scott's bandwidth)")

#: A model point's hover: its words (model, run, prompt language, shots) are the point's
#: ``text``, its numbers the ``customdata`` of :data:`_POINT_NUMBERS`, in order.
_POINT_HOVER = (
    "%{text}<br>shuffle %{customdata[0]}<br>θ = %{customdata[1]:.3f} (SE %{customdata[2]:.3f})"
    "<br>l_z = %{customdata[3]:.2f} · l_z* = %{customdata[5]:.2f}<br>CTT = %{customdata[4]}"
    "<extra></extra>"
)
_POINT_NUMBERS = ("shuffle", "theta", "theta_se", "lz", "ctt", "lz_star")


def area_title(area: str) -> str:
    """'CN — Natural Sciences'."""
    return f"{area} — {AREA_NAMES.get(area, area)}"


def _stored_series_order() -> list[str]:
    """Every series label of the database in catalogue order (``queries.model_catalogue``)."""
    stored = queries.model_catalogue()
    return stored["model"].tolist() if "model" in stored else []


def series_styles(labels: Iterable[str],
                  catalogue: Iterable[str] | None = None) -> dict[str, tuple[str, str]]:
    """(colour, marker symbol) per series label, the same on every page and for any selection.

    The colour is the model's (the label's part before " · ", or the label itself for a pooled
    series), so pooling the runs of a model keeps its colour; its runs differ by symbol.
    ``catalogue``: every series label of the database in catalogue order (e.g.
    ``filters.series_order``); when None it is read from the database
    (``queries.model_catalogue``, cached). See :func:`dashboard.palette.series_style_table`.
    """
    labels = list(labels)
    return model_styles(labels, list(catalogue) if catalogue is not None
                        else _stored_series_order())


def series_dashes(labels: Iterable[str],
                  catalogue: Iterable[str] | None = None) -> dict[str, str]:
    """The plotly line dash per series label ('solid' for a model's first run), the companion
    of :func:`series_styles` for series drawn as lines (contours, paths)."""
    labels = list(labels)
    order = list(catalogue) if catalogue is not None else _stored_series_order()
    return {label: style.dash for label, style in series_style_table(labels, order).items()}


def area_grid(areas: Sequence[str], columns: int = 2, row_height: int = 340,
              shared_yaxes: bool = False, vertical_spacing: float | None = None,
              row_gap_px: int = ROW_GAP_PX) -> go.Figure:
    """A figure with one subplot per area (``columns`` per row), titled by area.

    Rows are ``row_height`` px of plotting area each, ``row_gap_px`` apart (room for the tick
    labels and x-axis title of one row and the panel titles of the next). The horizontal
    legend sits :data:`LEGEND_GAP_PX` above the first row's titles, its lower edge fixed, so a
    legend that wraps to more lines grows upwards into the top margin, never onto a title.
    ``vertical_spacing`` (the older share of the plotting height, read as that share of
    ``row_height × rows`` px) only ever widens the gap.
    """
    columns = max(1, min(columns, len(areas)))
    rows = math.ceil(len(areas) / columns)
    margin = {"t": 70, "b": 60, "l": 60, "r": 20}
    if vertical_spacing is not None:
        row_gap_px = max(row_gap_px, round(vertical_spacing * row_height * rows))
    plot_height = row_height * rows + row_gap_px * (rows - 1)
    spacing = row_gap_px / plot_height if rows > 1 else 0.0
    figure = make_subplots(rows=rows, cols=columns, subplot_titles=[area_title(a) for a in areas],
                           horizontal_spacing=0.08, shared_yaxes=shared_yaxes,
                           vertical_spacing=spacing)
    height = plot_height + margin["t"] + margin["b"]
    figure.update_layout(height=height, margin=margin,
                         legend=legend_above(plot_height, LEGEND_GAP_PX))
    return figure


def legend_above(plot_height: float, gap_px: float = LEGEND_GAP_PX) -> dict:
    """A horizontal legend whose lower edge sits ``gap_px`` px above the plotting area (of
    ``plot_height`` px), clear of the first row's subplot titles (about 20 px tall) whatever
    the number of rows or of legend lines (extra lines grow upwards)."""
    return {"orientation": "h", "yanchor": "bottom", "y": 1.0 + gap_px / plot_height, "x": 0,
            "xanchor": "left"}


def panel(index: int, columns: int) -> tuple[int, int]:
    """(row, col) of the index-th panel, 1-based, in a grid with ``columns`` columns."""
    return index // columns + 1, index % columns + 1


def _bin_positions(lower_edges: np.ndarray, width: float) -> tuple[np.ndarray, np.ndarray]:
    """Every bin from the smallest to the largest lower edge, ``width`` apart (rounded to 6
    decimals), and the position of each of ``lower_edges`` among them."""
    if not len(lower_edges):
        return np.array([]), np.array([], dtype=np.int64)
    low = lower_edges.min()
    positions = np.rint((lower_edges - low) / width).astype(np.int64)
    return np.round(low + width * np.arange(positions.max() + 1), 6), positions


def human_density(frame: pd.DataFrame, x: str, y: str, x_width: float, y_width: float,
                  y_label: str, show_scale: bool = False) -> go.Heatmap:
    """A heatmap of a 2-D histogram (columns ``x``, ``y`` lower bin edges and ``n``).

    Colour is log10 of the count so that both the crowd and the tails stay visible; hovering a
    cell shows its count.
    """
    x_edges, columns = _bin_positions(frame[x].to_numpy(np.float64), x_width)
    y_edges, rows = _bin_positions(frame[y].to_numpy(np.float64), y_width)
    counts = np.zeros((len(y_edges), len(x_edges)))
    np.add.at(counts, (rows, columns), frame["n"].to_numpy(np.float64))
    with np.errstate(divide="ignore"):
        shade = np.where(counts > 0, np.log10(np.maximum(counts, 1.0)), np.nan)
    # float32 shades and int32 counts: half the bytes of float64 in the figure sent to the
    # browser (Plotly ships numpy arrays as typed binary), with colour and counts unchanged.
    return go.Heatmap(
        x=x_edges + x_width / 2, y=y_edges + (y_width / 2 if y_width != 1 else 0.0),
        z=shade.astype(np.float32), customdata=counts.astype(np.int32),
        colorscale=HUMAN_DENSITY_SCALE, showscale=show_scale,
        # At least one decade: a sparse group (every cell one candidate) would otherwise get a
        # colour bar from 1 to 1, a single tick.
        zmin=0.0, zmax=max(1.0, float(np.nanmax(shade, initial=0.0))), name="humans",
        colorbar={"title": "humans", "tickvals": [0, 1, 2, 3, 4, 5, 6],
                      "ticktext": ["1", "10", "100", "1k", "10k", "100k", "1M"], "len": 0.5},
        hovertemplate=("θ %{x:.2f} · " + y_label + " %{y:.2f}<br>"
                       "%{customdata:,.0f} candidates<extra>humans</extra>"),
    )


def model_point_traces(points: pd.DataFrame, x: str, y: str, legend_shown: set[str],
                       styles: dict[str, tuple[str, str]] | None = None,
                       size: int = 6, level: str | None = None, hollow: bool = False,
                       ranks: dict[str, int] | None = None) -> list[go.Scatter]:
    """One marker per response pattern, one trace per model (hover: model, run, shuffle, θ, SE,
    l_z, CTT). ``legend_shown`` collects the legend names already shown, so each appears once.

    With ``level`` (a prompt condition in words, e.g. 'English') each trace is named
    'model (level)', for figures that draw two levels of a condition (``dashboard.overlay``);
    ``hollow`` draws open markers (the symbol's '-open' variant in the series' colour) in a
    legend group of their own, so the overlay's markers toggle apart from the series' filled
    ones and curve. ``ranks``: the legend rank per model (pairs a model's two levels)."""
    styles = styles or series_styles(points["model"].unique())
    traces = []
    for model, group in points.groupby("model", sort=True):
        colour, symbol = styles[model]
        name = model if level is None else f"{model} ({level})"
        marker = ({"color": with_alpha(colour, 0.9), "symbol": f"{symbol}-open",
                   "size": size + 1, "line": {"color": with_alpha(colour, 0.9), "width": 1.5}}
                  if hollow else
                  {"color": with_alpha(colour, 0.75), "symbol": symbol, "size": size,
                   "line": {"color": "white", "width": 0.5}})
        rank = {} if ranks is None else {"legendrank": ranks[model] * 2 + int(hollow) + 1}
        traces.append(go.Scatter(
            x=group[x], y=group[y], mode="markers", name=name,
            legendgroup=name if hollow else model, showlegend=name not in legend_shown,
            marker=marker,
            text=_point_words(group),
            # Numbers only: they travel as one typed array, where a mixed column of words
            # and numbers made every value a JSON item the browser walked through. Points
            # read before l_z* was kept lack it: NaN shows as such in the hover.
            customdata=group.reindex(columns=list(_POINT_NUMBERS)).to_numpy(float),
            hovertemplate=_POINT_HOVER, **rank,
        ))
        legend_shown.add(name)
    return traces


def _point_words(points: pd.DataFrame) -> list[str]:
    """Each model point's words for its hover: '<b>model</b><br>run id · language, shots'."""
    return [f"<b>{model}</b><br>run {run} · {language}, {shots_words(shots)}"
            for model, run, language, shots in zip(points["model"], points["run_id"],
                                                   points["prompt_language"], points["shots"],
                                                   strict=True)]


def region_trace(region: DensityRegion, model: str, colour: str,
                 dash: str = "solid") -> go.Scatter | None:
    """The curve of one model's region: the HDR contour line (in the series' ``dash``, unset
    when solid; no hover, so the markers beneath keep theirs), the fallback hull as a dashed
    closed line (the series dashes leave plain "dash" to it), or None."""
    if region.kind == "kde" and region.curve_x is not None and len(region.curve_x):
        line = {"color": colour, "width": 2} | ({} if dash == "solid" else {"dash": dash})
        return go.Scatter(
            x=region.curve_x, y=region.curve_y, mode="lines", legendgroup=model,
            showlegend=False, line=line, hoverinfo="skip",
            name=f"{model}: {region.coverage:.0%} highest-density region",
            meta={"hdr_level": region.level},
        )
    if region.kind == "hull":
        return go.Scatter(
            x=region.curve_x, y=region.curve_y, mode="lines", legendgroup=model,
            showlegend=False, line={"color": colour, "width": 2, "dash": "dash"},
            name=f"{model}: hull of the central {region.coverage:.0%} ({region.reason})",
            hoverinfo="name",
        )
    return None


def model_regions(points: pd.DataFrame, x: str, y: str,
                  coverage: float = COVERAGE) -> dict[str, DensityRegion]:
    """Each model's region (:func:`analytics.contours.density_region`) of columns ``x``, ``y``."""
    return {model: density_region(group[x], group[y], coverage)
            for model, group in points.groupby("model", sort=True)}


def model_region_traces(points: pd.DataFrame, x: str, y: str,
                        styles: dict[str, tuple[str, str]] | None = None,
                        coverage: float = COVERAGE,
                        regions: dict[str, DensityRegion] | None = None,
                        dashes: dict[str, str] | None = None) -> list:
    """The curve around each model's points: the contour of the highest-density region holding
    ``coverage`` of them, or its fallback (see :func:`region_trace`); ``dashes``: the line dash
    per series (:func:`series_dashes`; solid when missing)."""
    styles = styles or series_styles(points["model"].unique())
    regions = regions if regions is not None else model_regions(points, x, y, coverage)
    traces = []
    for model, region in regions.items():
        trace = region_trace(region, model, styles[model][0], (dashes or {}).get(model, "solid"))
        if trace is not None:
            traces.append(trace)
    return traces


def region_fallback_notes(regions: dict[tuple[str, str], DensityRegion]) -> list[str]:
    """'model (area): reason' for every region that is not a density contour."""
    return [f"{model} ({area}): {region.reason}"
            for (area, model), region in regions.items() if region.kind != "kde"]


def plotly_config(file_stem: str, image_format: str = "png") -> dict:
    """Chart toolbar settings: the camera icon saves ``file_stem`` as PNG (2×) or SVG."""
    return {
        "displaylogo": False,
        "toImageButtonOptions": {"format": image_format, "filename": file_stem, "scale": 2},
    }


def show_figure(figure: go.Figure, *, key: str, caption: str,
                data: pd.DataFrame | Callable[[], pd.DataFrame],
                file_stem: str, image_format: str = "png", on_select: bool = False
                ) -> PlotlyState | DeltaGenerator:
    """Draw a chart with its caption and downloads; returns the selection event if asked.

    The HTML is self-contained (plotly.js inlined) and only built when its button is clicked;
    ``data`` (the CSV's rows) may be a function returning them, called only on a click.
    """
    config = plotly_config(file_stem, image_format)
    presize_margins(figure)
    # Streamlit returns the selection state with on_select, else the chart's element.
    event: PlotlyState | DeltaGenerator
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
    csv_download(data, label="Numbers (CSV)", file_stem=file_stem, key=f"{key}.csv",
                 where=right, icon=":material/table:")
    return event


def empty_panel(figure: go.Figure, row: int, col: int, message: str, y: float = 0.5) -> None:
    """Write a short message across a subplot, at height ``y`` of its domain (the middle).

    On a subplot that holds no trace yet the note is placed in page coordinates from the
    subplot's domain: plotly.js puts a note that refers to a trace-less axis's domain at the
    wrong height (it landed on Home's model lanes for a year without candidates)."""
    font = {"size": 12, "color": "#555555"}
    subplot = figure.get_subplot(row, col)
    x_name = subplot.xaxis.plotly_name.replace("axis", "")
    y_name = subplot.yaxis.plotly_name.replace("axis", "")
    if any((getattr(trace, "xaxis", None) or "x") == x_name
           and (getattr(trace, "yaxis", None) or "y") == y_name for trace in figure.data):
        figure.add_annotation(text=message, showarrow=False, font=font, xref="x domain",
                              yref="y domain", x=0.5, y=y, row=row, col=col)
        return
    (x0, x1), (y0, y1) = subplot.xaxis.domain, subplot.yaxis.domain
    figure.add_annotation(text=message, showarrow=False, font=font, xref="paper", yref="paper",
                          x=(x0 + x1) / 2, y=y0 + y * (y1 - y0))



def reference_line(figure: go.Figure, row: int, col: int, *, line: dict,
                   x: float | None = None, y: float | None = None, label: str = "") -> None:
    """A line across one subplot, vertical at ``x`` or horizontal at ``y``, with an optional
    label inside the panel on a white backing, readable over dense data (right of a vertical
    line at its top, under a horizontal one at its left end; at the right end it met the next
    column's axis title on narrow screens). Plotly's ``add_vline``/``add_hline`` look through every
    trace of the figure for empty subplots first, which is slow on figures of many traces."""
    shape = reference_line_shape(figure, row, col, line=line, x=x, y=y)
    figure.add_shape(shape)
    if label:
        where = ({"x": x, "xref": shape["xref"], "y": 1, "yref": shape["yref"]} if x is not None
                 else {"x": 0, "xref": shape["xref"], "y": y, "yref": shape["yref"]})
        figure.add_annotation(text=label, showarrow=False, xanchor="left", yanchor="top",
                              bgcolor="rgba(255, 255, 255, 0.85)", **where)


def reference_line_shape(figure: go.Figure, row: int, col: int, *, line: dict,
                         x: float | None = None, y: float | None = None) -> dict:
    """The shape of :func:`reference_line` without a label, as a dict: a figure of many panels
    adds them all at once (``add_shapes``), since each ``add_shape`` validates every shape
    the figure already has again."""
    if (x is None) == (y is None):
        raise ValueError("give exactly one of x (vertical line) or y (horizontal line)")
    subplot = figure.get_subplot(row, col)
    x_ref = subplot.xaxis.plotly_name.replace("axis", "")
    y_ref = subplot.yaxis.plotly_name.replace("axis", "")
    if x is not None:
        return {"type": "line", "x0": x, "x1": x, "xref": x_ref, "y0": 0, "y1": 1,
                "yref": f"{y_ref} domain", "line": line}
    return {"type": "line", "x0": 0, "x1": 1, "xref": f"{x_ref} domain", "y0": y, "y1": y,
            "yref": y_ref, "line": line}


def add_shapes(figure: go.Figure, shapes: list[dict]) -> None:
    """Append ``shapes`` to the figure's in one assignment (validated once)."""
    figure.layout.shapes = (*figure.layout.shapes, *shapes)


def humans_and_models_grid(
    areas: Sequence[str], densities: dict[str, pd.DataFrame], points: pd.DataFrame,
    y: str, y_bin: str, y_width: float, y_title: str, y_label: str,
    coverage: float = COVERAGE, catalogue: Iterable[str] | None = None,
    overlay: pd.DataFrame | None = None, levels: tuple[str, str] | None = None,
) -> go.Figure:
    """The paper's layout: one panel per area with θ on x and ``y`` (CTT or l_z) on y; humans
    as a density (``densities[area]`` with theta_bin, ``y_bin``, n), models as markers plus the
    contour of the highest-density region holding ``coverage`` of each model's markers; with
    ``overlay``, a second level's markers (see :func:`humans_and_models_figure`)."""
    return humans_and_models_figure(areas, densities, points, y, y_bin, y_width, y_title,
                                    y_label, coverage, catalogue, overlay, levels)[0]


def humans_and_models_figure(
    areas: Sequence[str], densities: dict[str, pd.DataFrame], points: pd.DataFrame,
    y: str, y_bin: str, y_width: float, y_title: str, y_label: str,
    coverage: float = COVERAGE, catalogue: Iterable[str] | None = None,
    overlay: pd.DataFrame | None = None, levels: tuple[str, str] | None = None,
) -> tuple[go.Figure, list[str]]:
    """:func:`humans_and_models_grid` and the notes of the regions drawn otherwise than as a
    density contour ('model (area): reason', see :func:`region_fallback_notes`).

    ``catalogue``: the database's series labels in order, for :func:`series_styles`.
    ``overlay``: the patterns of the same runs at a second level of one prompt condition
    (``points``' columns, one row per pattern; ``dashboard.overlay``), drawn over each panel as
    open markers of the series' colour and symbol, without a curve (the curve's dash is the
    run's, so a second curve of one series could not be told apart). ``levels``: (the
    ``points``' level, the overlay's) in words; with an overlay every legend entry names its
    level ('model (English)') and a series' two entries sit together. Without an overlay the
    figure is what it was before overlays existed."""
    if overlay is not None and levels is None:
        raise ValueError("an overlay needs the words of both levels")
    figure = area_grid(areas, columns=2)
    catalogue = list(catalogue) if catalogue is not None else None
    drawn = points if overlay is None else pd.concat([points, overlay], ignore_index=True)
    series = drawn["model"].unique() if len(drawn) else []
    styles = series_styles(series, catalogue) if len(series) else {}
    dashes = series_dashes(series, catalogue) if len(series) else {}
    ranks = None if overlay is None else {name: rank for rank, name in
                                          enumerate(sorted(str(s) for s in series))}
    first, second = levels if levels is not None else (None, None)
    legend_shown: set[str] = set()
    regions: dict[tuple[str, str], DensityRegion] = {}
    for index, area in enumerate(areas):
        row, col = panel(index, 2)
        density = densities.get(area, pd.DataFrame())
        if len(density):
            figure.add_trace(human_density(density, "theta_bin", y_bin, 0.1, y_width, y_label,
                                           show_scale=index == 0), row=row, col=col)
        in_area = points[points["area"] == area] if len(points) else points
        if len(in_area):
            area_regions = model_regions(in_area, "theta", y, coverage)
            regions.update({(area, model): region for model, region in area_regions.items()})
            for trace in model_region_traces(in_area, "theta", y, styles, coverage,
                                             area_regions, dashes):
                figure.add_trace(trace, row=row, col=col)
            for trace in model_point_traces(in_area, "theta", y, legend_shown, styles,
                                            level=first, ranks=ranks):
                figure.add_trace(trace, row=row, col=col)
        in_overlay = (overlay[overlay["area"] == area] if overlay is not None and len(overlay)
                      else pd.DataFrame())
        # Drawn after the filled markers so that the open rings stay visible over them.
        if len(in_overlay):
            for trace in model_point_traces(in_overlay, "theta", y, legend_shown, styles,
                                            level=second, hollow=True, ranks=ranks):
                figure.add_trace(trace, row=row, col=col)
        if not len(density) and not len(in_area) and not len(in_overlay):
            empty_panel(figure, row, col, f"nothing to show for {area}")
        figure.update_xaxes(title_text=THETA_TITLE, row=row, col=col)
        figure.update_yaxes(title_text=y_title, row=row, col=col)
    return figure, region_fallback_notes(regions)
