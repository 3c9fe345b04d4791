"""The Years page's figures: each series' mean θ and mean percent correct per exam year (a
column per area), and percent correct per difficulty band, a column per area: up to
:data:`ROW_PER_YEAR_MAX` years a row per year with the thirds on x, beyond that a row per third
with the years on x. Humans are a grey dashed line; every model series keeps its colour and
marker of every page."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from dashboard.figures import (
    ROW_GAP_PX,
    add_shapes,
    area_title,
    empty_panel,
    legend_above,
    reference_line,
    reference_line_shape,
)
from dashboard.palette import HUMAN_COLOUR, model_styles
from dashboard.years.data import BAND_NAMES, HUMANS

#: Plotting height of one row of panels (px): the year figure's, the band figure's.
YEAR_ROW_PX, BAND_ROW_PX = 280, 210
#: The gap between the year figure's θ row and its percent row (px): the θ row has no x-axis
#: title and the percent row no panel titles, so only tick labels stand between them.
YEAR_GAP_PX = 50
#: Percent correct of a test taker who picks one of the five options at random.
CHANCE_PERCENT = 20.0
#: The band figure's x tick labels (the caption names the bands in full).
BAND_TICKS: tuple[str, ...] = ("easiest", "middle", "hardest")
#: Up to this many years the band figure draws a row per year (the thirds on x, so each
#: year's drop from easy to hard items is one line); beyond it a row per third with the years
#: on x, three rows whatever the number of years (ten years were 40 panels: slow to draw and
#: to read).
ROW_PER_YEAR_MAX = 3
_CHANCE_LINE = {"color": "#999999", "width": 1, "dash": "dot"}
#: Percent axes: a little beyond 0–100 so markers at the ends are drawn whole.
_PERCENT_AXIS = {"range": [-4, 106], "tickvals": [0, 20, 40, 60, 80, 100]}
_MARGIN = {"t": 70, "b": 60, "l": 70, "r": 20}


def _grid(rows: int, columns: int, titles: list[str], row_px: int,
          gap_px: int = ROW_GAP_PX) -> go.Figure:
    """``rows`` × ``columns`` panels of ``row_px`` px each, ``gap_px`` apart (room for a row's
    x-axis title and the next row's panel titles), y axes shared along each row, the legend
    above (as ``dashboard.figures.area_grid`` lays out)."""
    plot_height = row_px * rows + gap_px * (rows - 1)
    figure = make_subplots(rows=rows, cols=columns, subplot_titles=titles, shared_yaxes=True,
                           horizontal_spacing=0.03 if columns > 2 else 0.06,
                           vertical_spacing=gap_px / plot_height if rows > 1 else 0.0)
    figure.update_layout(height=plot_height + _MARGIN["t"] + _MARGIN["b"], margin=_MARGIN,
                         legend=legend_above(plot_height))
    return figure


def _styles(series: Sequence[str], catalogue: Iterable[str] | None
            ) -> dict[str, tuple[str, str, str]]:
    """(colour, symbol, dash) per series: the humans grey, square and dashed; models as on
    every page (``dashboard.palette.model_styles``), solid."""
    models = [s for s in series if s != HUMANS]
    styles = {s: (colour, symbol, "solid")
              for s, (colour, symbol) in model_styles(models, catalogue).items()}
    return {**styles, HUMANS: (HUMAN_COLOUR, "square", "dash")}


def _bars(rows: pd.DataFrame, colour: str) -> dict:
    """Vertical error bars from each mean to its interval's ends (none where there is no
    interval: the humans' bands, a single repetition)."""
    mean = rows["mean"].to_numpy(float)
    high = rows["ci_high"].to_numpy(float) - mean
    low = mean - rows["ci_low"].to_numpy(float)
    visible = bool(np.isfinite(high).any())
    return {"type": "data", "symmetric": False, "visible": visible, "color": colour,
            "array": np.nan_to_num(high), "arrayminus": np.nan_to_num(low), "thickness": 1.2,
            "width": 3}


def _series_trace(rows: pd.DataFrame, x: Sequence[str], name: str, rank: int,
                  style: tuple[str, str, str], shown: bool, hover: str,
                  custom: list[str]) -> go.Scatter:
    """One series' line in one panel; ``rank`` orders the legend as the series are given
    (traces are added panel by panel, and a series may be missing from the first).

    ``custom``: the numeric columns the ``hover`` template reads as ``customdata``; its
    ``{n_of}`` is what the series' n counts (one word per series: plain numbers keep the trace
    cheap to build, a column of words made Plotly check every cell)."""
    colour, symbol, dash = style
    return go.Scatter(
        x=list(x), y=rows["mean"].to_numpy(float), mode="lines+markers", name=name,
        legendgroup=name, legendrank=rank, showlegend=shown, offsetgroup=name,
        line={"color": colour, "dash": dash, "width": 1.5},
        marker={"color": colour, "symbol": symbol, "size": 8}, error_y=_bars(rows, colour),
        customdata=rows[custom].to_numpy(float),
        hovertemplate=hover.replace("{n_of}", str(rows["n_of"].iloc[0])))


_YEAR_HOVER = ("<b>%{fullData.name}</b><br>%{x}: %{y:.3f} (95% CI %{customdata[0]:.3f} to "
               "%{customdata[1]:.3f})<br>n = %{customdata[2]} {n_of}<extra></extra>")
_YEAR_CUSTOM = ["ci_low", "ci_high", "n"]
_BAND_HOVER = ("<b>%{fullData.name}</b><br>%{x} (b %{customdata[3]:.2f} to "
               "%{customdata[4]:.2f}, %{customdata[5]} items): %{y:.1f}%"
               "<br>95% CI %{customdata[0]:.1f} to %{customdata[1]:.1f}, n = %{customdata[2]} "
               "{n_of}<extra></extra>")
#: The humans' band values have no interval: each item's share is over every candidate.
_HUMAN_BAND_HOVER = ("<b>%{fullData.name}</b><br>%{x} (b %{customdata[3]:.2f} to "
                     "%{customdata[4]:.2f}): %{y:.1f}%, mean over %{customdata[2]} items"
                     "<extra></extra>")
_BAND_CUSTOM = ["ci_low", "ci_high", "n", "b_min", "b_max", "items"]


def year_figure(means: pd.DataFrame, areas: list[str], series: list[str], years: list[int],
                catalogue: Iterable[str] | None = None) -> go.Figure:
    """Mean θ (top row) and mean percent correct (bottom row) per exam year, a column per
    area, a line per series with its 95% interval. ``means``: rows of
    ``dashboard.years.data.year_means``; ``years``: the x categories, oldest first."""
    titles = [area_title(a) for a in areas] + [""] * len(areas)
    figure = _grid(2, len(areas), titles, YEAR_ROW_PX, YEAR_GAP_PX)
    styles = _styles(series, catalogue)
    categories = [str(y) for y in years]
    legend_done: set[str] = set()
    for col, area in enumerate(areas, start=1):
        for row, statistic in ((1, "θ"), (2, "% correct")):
            shown = means[(means["area"] == area) & (means["statistic"] == statistic)]
            for rank, name in enumerate(series):
                rows = shown[shown["series"] == name].sort_values("year")
                if rows.empty:
                    continue
                figure.add_trace(_series_trace(
                    rows, rows["year"].astype(str), name, rank, styles[name],
                    name not in legend_done, _YEAR_HOVER, _YEAR_CUSTOM), row=row, col=col)
                legend_done.add(name)
            if shown.empty:
                empty_panel(figure, row, col, "no humans or runs in this area")
        reference_line(figure, 2, col, y=CHANCE_PERCENT, line=_CHANCE_LINE,
                       label="chance (1 in 5)" if col == 1 else "")
    figure.update_xaxes(type="category", categoryorder="array", categoryarray=categories)
    figure.update_xaxes(title_text="exam year", row=2)
    figure.update_yaxes(title_text="mean θ (logits)", row=1, col=1)
    figure.update_yaxes(_PERCENT_AXIS, row=2)
    figure.update_yaxes(title_text="mean % correct", row=2, col=1)
    figure.update_layout(scattermode="group", scattergap=0.6, meta={"figure": "year-means"})
    return figure


def band_figure(bands: pd.DataFrame, areas: list[str], series: list[str], years: list[int],
                catalogue: Iterable[str] | None = None) -> go.Figure:
    """Percent correct per difficulty band (the easiest, middle and hardest third of the year's
    items), a column per area, a line per series with its 95% interval: a row per exam year
    (oldest first) with the thirds on x for up to :data:`ROW_PER_YEAR_MAX` years, else a row
    per third with the years on x. ``bands``: rows of ``dashboard.years.data.band_means``."""
    if thirds_in_rows(years):
        return _bands_across_years(bands, areas, series, years, catalogue)
    titles = [f"{year} · {area_title(area)}" for year in years for area in areas]
    panels = [(year, area) for year in years for area in areas]
    figure = _band_panels(bands, ["year", "area"], panels, len(areas), titles, series,
                          catalogue, x_of=lambda rows: [BAND_NAMES[b] for b in rows["band"]],
                          empty="no humans or runs in this year and area")
    figure.update_xaxes(type="category", categoryorder="array", categoryarray=list(BAND_NAMES),
                        tickvals=list(BAND_NAMES), ticktext=list(BAND_TICKS))
    figure.update_xaxes(title_text="difficulty third (by b)", row=len(years))
    figure.update_layout(meta={"figure": "year-bands"})
    return figure


def thirds_in_rows(years: Sequence[int]) -> bool:
    """Whether the band figure of ``years`` draws a row per third (years on x)."""
    return len(years) > ROW_PER_YEAR_MAX


def _bands_across_years(bands: pd.DataFrame, areas: list[str], series: list[str],
                        years: list[int], catalogue: Iterable[str] | None) -> go.Figure:
    """:func:`band_figure` with a row per third and the exam years on x."""
    # Short titles ('CN · easiest third'): the area's full name and the third overflow a
    # quarter of the width.
    titles = [f"{area} · {name}" for name in BAND_NAMES for area in areas]
    panels = [(band, area) for band in range(len(BAND_NAMES)) for area in areas]
    figure = _band_panels(bands, ["band", "area"], panels, len(areas), titles, series,
                          catalogue, x_of=lambda rows: rows["year"].astype(str).tolist(),
                          empty="no humans or runs in this area")
    figure.update_xaxes(type="category", categoryorder="array",
                        categoryarray=[str(year) for year in years])
    figure.update_xaxes(title_text="exam year", row=len(BAND_NAMES))
    figure.update_layout(meta={"figure": "year-bands", "rows": "difficulty thirds"})
    return figure


def _band_panels(bands: pd.DataFrame, panel_columns: list[str], panels: list[tuple],
                 columns: int, titles: list[str], series: list[str],
                 catalogue: Iterable[str] | None,
                 x_of: Callable[[pd.DataFrame], list[str]], empty: str) -> go.Figure:
    """The band figure's grid: ``panels`` (values of ``panel_columns``, row by row, ``columns``
    to a row), in each a line per series through its rows of ``bands`` ordered by year and
    band, at x ``x_of(rows)``, and the chance line; ``empty`` written across a panel without
    rows."""
    rows_count = len(panels) // columns
    figure = _grid(rows_count, columns, titles, BAND_ROW_PX)
    styles = _styles(series, catalogue)
    legend_done: set[str] = set()
    chance_lines = []
    # One pass over the rows instead of a filter per panel and series (hundreds of panels ×
    # series on a store of many years).
    by_panel = {key: rows for key, rows in bands.sort_values(["year", "band"]).groupby(
        [*panel_columns, "series"], sort=False)}
    filled = {key[:-1] for key in by_panel}
    for index, panel in enumerate(panels):
        row, col = divmod(index, columns)
        for rank, name in enumerate(series):
            rows = by_panel.get((*panel, name))
            if rows is None or rows.empty:
                continue
            figure.add_trace(_series_trace(
                rows, x_of(rows), name, rank, styles[name], name not in legend_done,
                _HUMAN_BAND_HOVER if name == HUMANS else _BAND_HOVER, _BAND_CUSTOM),
                row=row + 1, col=col + 1)
            legend_done.add(name)
        if panel not in filled:
            empty_panel(figure, row + 1, col + 1, empty)
        chance_lines.append(reference_line_shape(figure, row + 1, col + 1, y=CHANCE_PERCENT,
                                                 line=_CHANCE_LINE))
    add_shapes(figure, chance_lines)
    figure.update_yaxes(_PERCENT_AXIS)
    figure.update_yaxes(title_text="% correct", col=1)
    figure.update_layout(scattermode="group", scattergap=0.6)
    return figure
