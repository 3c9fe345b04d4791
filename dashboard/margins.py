"""Margins wide enough before plotly.js draws, so its automargin has nothing to widen.

Every axis of the dashboard's figures has plotly's ``automargin`` (the default template's), so
a tick label, axis title, legend or colour bar that does not fit the figure's margins makes
plotly.js widen them and draw the whole figure a second time. In Chromium that second pass
doubled the drawing time of Home's and Person fit's lane figures (about 0.47 s → 0.25 s once
the margin was wide enough, issue 26), and almost every figure paid it. :func:`presize_margins`
estimates from the figure's own text what each side will need and widens the margins to that
before the figure is sent: an estimate a little too wide costs a few pixels of white space, one
too narrow costs what automargin always cost (it still widens), never a cut label.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import plotly.graph_objects as go

#: The key of ``layout.meta`` that keeps the margins a figure had before they were widened.
PAGE_MARGIN_KEY = "margin_before_presize"
#: Pixels per character of tick labels and legend entries at the dashboard's 12 px sans font:
#: enough for model names (digits and capitals, ~6.5 px) with padding; long mixed text averages
#: nearer 5 px, so its margin comes out up to ~15% wide.
CHAR_PX = 6.0
#: What plotly.js takes for a margin a figure leaves unset.
PLOTLY_DEFAULT = {"l": 80, "r": 80, "t": 100, "b": 80}
#: Beside the axis line: tick marks, padding, and an axis title's line with its standoff.
TICK_PAD_PX, TITLE_PX, TICK_LABEL_HEIGHT_PX = 14, 26, 20
#: Numeric tick labels ("−0.25", "100k") at about this many characters, rounded up.
NUMBER_CHARS = 7.5
#: A vertical legend's symbol and padding, and a colour bar's width with its tick labels.
LEGEND_PAD_PX, COLORBAR_PX = 60, 100
#: A panel title over the top row (its line and the gap under it).
TOP_TITLE_PX = 80
#: A horizontal legend: an entry's symbol and gap, a row's height, and the width it wraps at
#: (a chart of the main column at 1440 px with the sidebar open: a narrower screen wraps more
#: rows and automargin adds them).
ENTRY_PAD_PX, LEGEND_ROW_PX, LEGEND_WRAP_PX = 60, 24, 700


def presize_margins(figure: go.Figure) -> None:
    """Widen ``figure``'s margins (in place) to what its tick labels, axis titles, vertical
    legend and colour bars are estimated to need; never narrows one."""
    need = {"l": _left_px(figure), "r": _right_px(figure), "b": _bottom_px(figure),
            "t": _top_px(figure)}
    margin = figure.layout.margin
    wider = {}
    for side, pixels in need.items():
        current = getattr(margin, side)
        current = PLOTLY_DEFAULT[side] if current is None else current
        if pixels > current:
            wider[side] = round(pixels)
    if not wider:
        return
    # The margins as the figure's builder set them, for a slide (dashboard.presentation):
    # there the fonts grow and the figure is squeezed to the screen, where these estimates
    # scaled up would take room the panels need; the slide lets automargin size them.
    meta = figure.layout.meta
    if meta is None or isinstance(meta, dict):
        set_sides = {side: getattr(margin, side) for side in ("l", "r", "t", "b")
                     if getattr(margin, side) is not None}
        figure.update_layout(meta={**(meta or {}), PAGE_MARGIN_KEY: set_sides})
    figure.update_layout(margin=wider)


def _axes(figure: go.Figure, letter: str) -> list[tuple[str, go.layout.XAxis | go.layout.YAxis]]:
    """(trace reference such as 'y2', axis) of every ``letter`` axis of the layout."""
    found = []
    for name in figure.layout:
        if name.startswith(f"{letter}axis") and figure.layout[name] is not None:
            suffix = name[len(letter) + 4:]
            found.append((letter + suffix, figure.layout[name]))
    return found


def _longest(labels: Iterable[object]) -> int:
    """Characters of the longest line among ``labels`` (``<br>`` breaks a line)."""
    return max((len(line) for label in labels if label is not None
                for line in str(label).split("<br>")), default=0)


def _tick_chars(figure: go.Figure, reference: str, axis) -> float:
    """Characters of the widest tick label of a y axis: its ``ticktext``, else the text values
    its traces put on it (a category axis), else a number's."""
    if axis.showticklabels is False or axis.visible is False:
        return 0
    if axis.ticktext:
        return _longest(axis.ticktext)
    texts = [value for trace in figure.data
             if (getattr(trace, "yaxis", None) or "y") == reference
             for value in _text_values(getattr(trace, "y", None))]
    return _longest(texts) if texts else NUMBER_CHARS


def _text_values(values: object) -> list[str]:
    """The text entries of a trace's coordinate array (none of a numeric array)."""
    if values is None or (isinstance(values, np.ndarray) and values.dtype.kind in "biufcM"):
        return []
    if isinstance(values, str):
        return [values]
    return [value for value in values if isinstance(value, str)]  # type: ignore[attr-defined]


def _at_edge(figure: go.Figure, axis, side: str) -> bool:
    """Whether a y axis sits at the figure's ``side`` edge (its x axis's domain reaches it),
    where its labels take margin; an inner column's labels sit between the panels."""
    anchor = axis.anchor if axis.anchor and axis.anchor != "free" else "x"
    x_axis = figure.layout["xaxis" + anchor[1:]]
    low, high = (x_axis.domain if x_axis is not None and x_axis.domain else (0.0, 1.0))
    return low <= 0.01 if side == "left" else high >= 0.99


def _side_px(figure: go.Figure, side: str) -> float:
    """Pixels the y axes drawn on ``side`` ('left' or 'right') need beside the plot."""
    widest = 0.0
    for reference, axis in _axes(figure, "y"):
        if (axis.side or "left") != side or axis.overlaying or not _at_edge(figure, axis, side):
            continue
        title = axis.title.text if axis.title else None
        pixels = _tick_chars(figure, reference, axis) * CHAR_PX + TICK_PAD_PX
        widest = max(widest, pixels + (TITLE_PX if title else 0))
    return widest


def _left_px(figure: go.Figure) -> float:
    return _side_px(figure, "left")


def _right_px(figure: go.Figure) -> float:
    """The right axes, a vertical legend at the right, or a colour bar, whichever is widest."""
    pixels = _side_px(figure, "right")
    legend = figure.layout.legend
    shown = [trace.name for trace in figure.data
             if trace.name and trace.showlegend is not False]
    if shown and figure.layout.showlegend is not False and legend.orientation != "h" \
            and (legend.x is None or legend.x >= 1.0):
        pixels = max(pixels, _longest(shown) * CHAR_PX + LEGEND_PAD_PX)
    if any(getattr(trace, "showscale", None) and _colour_bar_outside(trace)
           for trace in figure.data):
        pixels = max(pixels, COLORBAR_PX)
    return pixels


def _top_px(figure: go.Figure) -> float:
    """A horizontal legend above the plot: its offset and its rows (0 for any other legend)."""
    legend = figure.layout.legend
    shown = [trace.name for trace in figure.data
             if trace.name and trace.showlegend is not False]
    # A title over the top row of panels (make_subplots' annotations at the top edge).
    titled = any(note.yref == "paper" and note.y is not None and note.y >= 0.999
                 and note.yanchor == "bottom" for note in figure.layout.annotations)
    floor = TOP_TITLE_PX if titled else 0.0
    if (not shown or figure.layout.showlegend is False or legend.orientation != "h"
            or legend.y is None or legend.y < 1.0 or legend.yanchor != "bottom"
            or not figure.layout.height):
        return floor
    widths = [len(name) * CHAR_PX + ENTRY_PAD_PX for name in dict.fromkeys(shown)]
    rows, used = 1, 0.0
    for width in widths:
        if used and used + width > LEGEND_WRAP_PX:
            rows, used = rows + 1, 0.0
        used += width
    margin = figure.layout.margin
    plot_px = figure.layout.height - (margin.t or PLOTLY_DEFAULT["t"]) - (
        margin.b or PLOTLY_DEFAULT["b"])
    return max(floor, (legend.y - 1.0) * plot_px + rows * LEGEND_ROW_PX + 8)


def _colour_bar_outside(trace) -> bool:
    """Whether a trace's colour bar stands right of the plot (plotly's default place)."""
    bar = getattr(trace, "colorbar", None)
    return bar is None or bar.x is None or bar.x >= 1.0


def _bottom_px(figure: go.Figure) -> float:
    """A bottom x axis's tick labels and, when it has one, its title."""
    titled = any(axis.title and axis.title.text for _, axis in _axes(figure, "x")
                 if (axis.side or "bottom") == "bottom" and axis.visible is not False)
    return TICK_LABEL_HEIGHT_PX + TICK_PAD_PX + (TITLE_PX + 16 if titled else 0)
