"""The Conditions page's figures: each series' mean under every level, and the difference
between two levels, one panel per area (and one over the areas), series down the y axis."""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go

from dashboard.figures import area_grid, area_title, empty_panel, panel
from dashboard.palette import MODEL_COLOURS, REFERENCE_COLOUR, SYMBOLS

#: Panels per row.
COLUMNS = 2
#: Plot height per series (px) of one panel, and the least a panel gets.
ROW_PX_PER_SERIES, MIN_ROW_PX = 46, 200


def _panel_title(area: str) -> str:
    return area if area not in {"CH", "CN", "LC", "MT"} else area_title(area)


def _grid(areas: list[str], series: list[str]) -> go.Figure:
    height = max(MIN_ROW_PX, ROW_PX_PER_SERIES * len(series))
    figure = area_grid(areas, columns=COLUMNS, row_height=height)
    for annotation, area in zip(figure.layout.annotations, areas, strict=True):
        annotation.text = _panel_title(area)
    return figure


def _series_axis(figure: go.Figure, series: list[str], panels: int) -> None:
    # Top to bottom in the given order; labels wrap at the model/prompt separator and stand
    # on the first column only (every row of panels lists the same series).
    figure.update_yaxes(type="category", categoryorder="array",
                        categoryarray=list(reversed(series)),
                        ticktext=[s.replace(" · ", "<br>") for s in reversed(series)],
                        tickvals=list(reversed(series)), tickfont={"size": 11})
    for index in range(panels):
        row, col = panel(index, COLUMNS)
        if col > 1:
            figure.update_yaxes(showticklabels=False, row=row, col=col)


def _interval_bars(estimate: pd.Series, low: pd.Series, high: pd.Series, colour: str) -> dict:
    """Horizontal error bars from each estimate to its interval's ends."""
    return {"type": "data", "symmetric": False, "array": high - estimate,
            "arrayminus": estimate - low, "color": colour}


def level_figure(levels: pd.DataFrame, areas: list[str], series: list[str],
                 level_order: list[str], value_title: str) -> go.Figure:
    """Means with their 95% intervals: per area a panel, per series a row, per level a colour
    and marker side by side. ``levels``: rows of ``dashboard.conditions.data.level_table``."""
    figure = _grid(areas, series)
    styles = {level: (MODEL_COLOURS[i % len(MODEL_COLOURS)], SYMBOLS[i % len(SYMBOLS)])
              for i, level in enumerate(level_order)}
    for index, area in enumerate(areas):
        row, col = panel(index, COLUMNS)
        shown = levels[levels["area"] == area]
        if shown.empty:
            empty_panel(figure, row, col, "no pattern under these conditions")
            continue
        for level in level_order:
            group = shown[shown["level"] == level]
            if group.empty:
                continue
            colour, symbol = styles[level]
            figure.add_trace(go.Scatter(
                x=group["mean"], y=group["series"], mode="markers", name=level, orientation="h",
                legendgroup=level, showlegend=index == 0, offsetgroup=level,
                marker={"color": colour, "symbol": symbol, "size": 9},
                error_x=_interval_bars(group["mean"], group["ci_low"], group["ci_high"], colour),
                customdata=group[["n", "ci_low", "ci_high"]].to_numpy(),
                hovertemplate=(f"{level}<br>%{{y}}<br>mean %{{x:.3f}} "
                               "(95% CI %{customdata[1]:.3f} to %{customdata[2]:.3f}), "
                               "n = %{customdata[0]}<extra></extra>")), row=row, col=col)
        figure.update_xaxes(title_text=value_title, row=row, col=col)
    _series_axis(figure, series, len(areas))
    figure.update_layout(scattermode="group", scattergap=0.5,
                         meta={"figure": "condition-levels"})
    return figure


def difference_figure(differences: pd.DataFrame, areas: list[str], series: list[str],
                      first: str, second: str, value_title: str) -> go.Figure:
    """second − first per series with its 95% t interval, a line at no difference, per area
    a panel. ``differences``: rows of ``dashboard.conditions.data.difference_table``."""
    figure = _grid(areas, series)
    for index, area in enumerate(areas):
        row, col = panel(index, COLUMNS)
        shown = differences[differences["area"] == area]
        if shown.empty:
            empty_panel(figure, row, col, "no series answered under both levels")
            continue
        figure.add_trace(go.Scatter(
            x=shown["difference"], y=shown["series"], mode="markers", showlegend=False,
            marker={"color": REFERENCE_COLOUR, "symbol": "diamond", "size": 9},
            error_x=_interval_bars(shown["difference"], shown["ci_low"], shown["ci_high"],
                                   REFERENCE_COLOUR),
            customdata=shown[["ci_low", "ci_high", "p"]].to_numpy(),
            hovertemplate=("%{y}<br>difference %{x:.3f} (95% CI %{customdata[0]:.3f} to "
                           "%{customdata[1]:.3f}), p = %{customdata[2]:.2g}<extra></extra>")),
            row=row, col=col)
        figure.add_vline(x=0, line={"color": "#999999", "width": 1}, row=row, col=col)
        figure.update_xaxes(title_text=f"{value_title}: {second} − {first}", row=row, col=col)
    _series_axis(figure, series, len(areas))
    figure.update_layout(meta={"figure": "condition-differences"})
    return figure
