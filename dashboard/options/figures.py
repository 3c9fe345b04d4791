"""The figures of the Options and traps page: distractor agreement, position bias, accuracy by
difficulty band and correctness by the key's shown position (per item, and its dependence
against b). Humans are grey; each series keeps its colour (``series_styles``)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from analytics.options import DISTRACTOR_CHANCE, N_OPTIONS
from dashboard.figures import (
    area_grid,
    area_title,
    empty_panel,
    legend_above,
    panel,
)
from dashboard.options.data import BAND_NAMES, HUMANS
from dashboard.palette import (
    HUMAN_COLOUR,
    REFERENCE_COLOUR,
    bar_pattern,
    symbol_dash,
    symbol_pattern,
    with_alpha,
)
from enem.areas import OPTION_LETTERS

_HEIGHT = 420
_PLOT_HEIGHT = 300
_MARGIN = {"t": 90, "b": 50, "l": 60, "r": 20}
#: Small multiples of the correct rate by key position: panels per row, each row's height and
#: the gap between rows, which holds the lower panel's title (the letters stand under the
#: lowest panel of each column only).
KEY_PANELS_PER_ROW = 9
_KEY_ROW_PX = 120
_KEY_ROW_GAP_PX = 46
#: Gap between two columns of panels, as a share of the figure's width.
_KEY_COLUMN_GAP = 0.012
_KEY_LINE = {"color": REFERENCE_COLOUR, "dash": "dot", "width": 1}
#: A panel's height in data units (a share of 1 with a little room above 100%), its y ticks and
#: its bars' width (of the 1 unit between letters, as a category axis's bargap of 0.15 left).
_KEY_TOP = 1.05
_KEY_Y_TICKS = (0.0, 0.5, 1.0)
_KEY_BAR_WIDTH = 0.85
#: Behind each bar of the correct rate: the key was shown at that position.
_KEY_SHOWN_COLOUR = "#E4E4E4"


#: Room above the tallest bar of a share axis, as a share of its height: the bar's top stays
#: visibly inside the plot instead of ending on the frame.
SHARE_HEADROOM = 0.12


def share_axis_range(tallest: float, at_least: float = 0.0) -> list[float]:
    """The [0, top] range of an axis of shares whose tallest bar is ``tallest``: headroom
    above it (and above ``at_least``, e.g. a reference line), never past 110%."""
    top = max(float(tallest) if np.isfinite(tallest) else 0.0, at_least, 0.05)
    return [0.0, min(top * (1 + SHARE_HEADROOM), 1.1)]


def _layout(figure: go.Figure, y_title: str, x_title: str) -> go.Figure:
    figure.update_layout(height=_HEIGHT, margin=_MARGIN, legend=legend_above(_PLOT_HEIGHT),
                         barmode="group")
    figure.update_yaxes(title_text=y_title)
    figure.update_xaxes(title_text=x_title)
    return figure


def p_text(p_value: float) -> str:
    """A p-value for labels: 'p < 0.001', 'p = 0.042', or '—' when undefined."""
    if not np.isfinite(p_value):
        return "—"
    return "p < 0.001" if p_value < 0.001 else f"p = {p_value:.3f}"


def distractor_figure(table: pd.DataFrame, styles: dict[str, tuple[str, str]]) -> go.Figure:
    """One horizontal bar per series: the share of its wrong answers that chose the humans' most
    chosen distractor, labelled with the count and the binomial test's p; a dashed line at
    chance (1/4)."""
    figure = go.Figure()
    for row in table.itertuples():
        colour = styles[row.series][0]
        figure.add_trace(go.Bar(
            y=[row.series], x=[row.share], name=row.series, orientation="h",
            marker_color=with_alpha(colour, 0.8),
            text=[f"{row.agreed}/{row.wrong_answers} · {p_text(row.p_value)}"],
            textposition="outside", cliponaxis=False, showlegend=False,
            hovertemplate=(f"{row.series}<br>{row.agreed} of {row.wrong_answers} wrong answers "
                           f"chose the humans' distractor ({row.share:.1%})<br>binomial test "
                           f"against 1/4: {p_text(row.p_value)}<extra></extra>")))
    figure.add_vline(x=DISTRACTOR_CHANCE, line={"color": REFERENCE_COLOUR, "dash": "dash",
                                                "width": 1},
                     annotation_text="chance (1/4)", annotation_position="top")
    # Room right of the longest bar for its label (about 0.3 of the axis), ticks to 100% only.
    longest = float(table["share"].max()) if len(table) else 0.0
    figure.update_xaxes(range=[0, max(1.0, longest + 0.3)], tickformat=".0%",
                        tickvals=[0, 0.2, 0.4, 0.6, 0.8, 1.0],
                        title_text="wrong answers choosing the humans' most chosen distractor")
    figure.update_yaxes(autorange="reversed", automargin=True)
    figure.update_layout(height=120 + 44 * len(table), margin={"t": 40, "b": 50, "l": 20,
                                                                "r": 20})
    return figure


def position_figure(long: pd.DataFrame, tests: pd.DataFrame,
                    styles: dict[str, tuple[str, str]]) -> go.Figure:
    """Grouped bars: per shown position A–E, each series' share of answers that chose the option
    shown there; the legend gives each series' χ² p against uniform; a dashed line at 1/5."""
    figure = go.Figure()
    p_of = dict(zip(tests["series"], tests["p_value"], strict=True))
    for series, group in long.groupby("series", sort=False):
        colour, symbol = styles[series]
        # Runs of one model share its colour; their bars differ by hatching.
        figure.add_trace(go.Bar(
            x=group["position"], y=group["share"], name=f"{series} (χ² {p_text(p_of[series])})",
            marker={"color": with_alpha(colour, 0.8),
                    "pattern": bar_pattern(symbol_pattern(symbol))},
            customdata=np.column_stack([group["chosen"], group["key"]]),
            hovertemplate=(f"{series}<br>shown as %{{x}}: %{{customdata[0]}} answers "
                           "(%{y:.1%})<br>key shown as %{x}: %{customdata[1]}<extra></extra>")))
    figure.add_hline(y=1 / N_OPTIONS, line={"color": REFERENCE_COLOUR, "dash": "dash",
                                            "width": 1},
                     # Right of the plot, where no bar can cover it.
                     annotation_text="uniform<br>(1/5)", annotation_position="right",
                     annotation_font_size=11)
    tallest = float(long["share"].max()) if len(long) else 0.0
    figure.update_yaxes(range=share_axis_range(tallest, 1 / N_OPTIONS), tickformat=".0%")
    _layout(figure, "answers choosing the option shown there",
            "position the chosen option was shown at")
    return figure.update_layout(margin={**_MARGIN, "r": 70})


def band_figure(bands: pd.DataFrame, styles: dict[str, tuple[str, str]]) -> go.Figure:
    """Accuracy per difficulty band, one line per series and a grey one for humans (left out,
    legend entry included, when no band has a human accuracy: a year without candidates)."""
    figure = go.Figure()
    for series, group in bands.groupby("series", sort=False):
        if group["accuracy"].isna().all():
            continue
        colour = HUMAN_COLOUR if series == HUMANS else styles[series][0]
        symbol = "square" if series == HUMANS else styles[series][1]
        figure.add_trace(go.Scatter(
            x=group["band"], y=group["accuracy"], name=series, mode="lines+markers",
            line={"color": colour, "width": 3 if series == HUMANS else 2,
                  "dash": "solid" if series == HUMANS else symbol_dash(symbol)},
            marker={"color": colour, "symbol": symbol, "size": 9},
            customdata=group["items"],
            hovertemplate=(f"{series}<br>%{{x}} items (%{{customdata}}): accuracy "
                           "%{y:.1%}<extra></extra>")))
    figure.update_xaxes(categoryorder="array", categoryarray=list(BAND_NAMES))
    # A little past 100%, so a band answered every time keeps its whole marker.
    figure.update_yaxes(range=[0, 1.05], tickvals=[0, 0.2, 0.4, 0.6, 0.8, 1.0],
                        tickformat=".0%")
    return _layout(figure, "accuracy (mean share correct per item)",
                   "difficulty band (thirds of each area's items by b)")


def key_position_figure(counts: pd.DataFrame, area: str, colour: str,
                        columns: int = KEY_PANELS_PER_ROW) -> go.Figure:
    """Small multiples, one bar chart per item of one series in one area, in booklet order:
    the share of its answers that were correct when the key was shown at each position A–E,
    drawn over a light full-height bar at each position that held the key (none where it never
    did), and a dotted line at the item's accuracy over every position. ``counts``: rows of
    :func:`workflows.key_positions.key_position_counts` for that series and area.

    The panels share one pair of axes, each panel a window of the plane (``KEY_PANEL_WIDTH``
    letters wide, [0, 1.05] high, at the same gaps a grid of subplots had): a browser draws
    plotly.js subplots one by one, and four areas × 45 items of them took about 3 s to draw
    (issue 26). Four traces draw every item: the grey bars, the shares correct (its
    ``customdata`` rows are [place in the booklet, item_id, letter, correct, answers,
    accuracy], its ``meta`` says so), the dotted lines (segments split by gaps) and the panel
    titles (a text trace: annotations are slower to draw). The y ticks (0, 50%, 100% of each
    row) are labelled in the first column, the letters under the lowest panel of each column
    (a second, overlaid x axis at the height of a column that ends a row early). Built from one
    dictionary, unvalidated (tests validate the figure)."""
    items = counts.drop_duplicates("item_id")["item_id"].to_numpy()
    n_items = len(items)
    rows = max(1, math.ceil(n_items / columns))
    plot_height = rows * _KEY_ROW_PX + (rows - 1) * _KEY_ROW_GAP_PX
    panel_share = (1 - _KEY_COLUMN_GAP * (columns - 1)) / columns
    # Panel pitch in data units: a panel is N_OPTIONS letters wide and _KEY_TOP high, the gaps
    # keep their share of the width and their pixels of the height.
    pitch_x = N_OPTIONS * (1 + _KEY_COLUMN_GAP / panel_share)
    pitch_y = _KEY_TOP * (1 + _KEY_ROW_GAP_PX / _KEY_ROW_PX)
    top = (rows - 1) * pitch_y + _KEY_TOP
    index = np.arange(n_items)
    left = (index % columns) * pitch_x
    base = (rows - 1 - index // columns) * pitch_y
    shown = counts[counts["answers"] > 0]
    at = pd.Index(items).get_indexer(shown["item_id"])
    letter = pd.Index(list(OPTION_LETTERS)).get_indexer(shown["key_position"])
    x = left[at] + letter
    first = shown.drop_duplicates("item_id").set_index("item_id").reindex(items)
    place = first["position"].to_numpy().astype(np.int64)
    b = first["b"].to_numpy(np.float64)
    hover = {"customdata": [
        [int(place[i]), int(items[i]), code, int(right), int(asked), float(share)]
        for i, code, right, asked, share in zip(at, shown["key_position"], shown["correct"],
                                                shown["answers"], shown["accuracy"], strict=True)],
             "hovertemplate": ("Q%{customdata[0]} · item %{customdata[1]}<br>key shown as "
                               "%{customdata[2]}: %{customdata[3]} of %{customdata[4]} correct "
                               "(%{customdata[5]:.0%})<extra></extra>")}
    bars = {"type": "bar", "x": x, "base": base[at], "width": _KEY_BAR_WIDTH,
            "showlegend": False, **hover}
    totals = shown.groupby(at)[["correct", "answers"]].sum()
    overall = (totals["correct"] / totals["answers"]).reindex(index).to_numpy(np.float64)
    # One dotted segment per panel, NaN between panels (plotly leaves the gaps undrawn).
    line_x = np.column_stack([left - 0.5, left + N_OPTIONS - 0.5, np.full(n_items, np.nan)])
    line_y = np.column_stack([base + overall, base + overall, np.full(n_items, np.nan)])
    titles = [f"Q{q} · " + (f"b {value:.2f}" if np.isfinite(value) else "no b")
              for q, value in zip(place, b, strict=True)]
    # Letters under the lowest panel of each column: the last row's on the x axis, any other
    # on an x axis of their own at that panel's foot.
    lowest = index[index + columns >= n_items]
    in_last_row = lowest[lowest // columns == rows - 1]
    ending_early = lowest[lowest // columns < rows - 1]
    letter_ticks = {"tickfont": {"size": 9}, "showgrid": False, "zeroline": False,
                    "range": [-0.5, (columns - 1) * pitch_x + N_OPTIONS - 0.5]}

    def letters_under(panels: np.ndarray) -> dict[str, object]:
        return {**letter_ticks, "tickmode": "array",
                "tickvals": (left[panels][:, None] + np.arange(N_OPTIONS)).ravel(),
                "ticktext": list(OPTION_LETTERS) * len(panels)}

    first_column = index[index % columns == 0]
    layout: dict[str, object] = {
        "xaxis": letters_under(in_last_row),
        "yaxis": {"range": [0, top], "tickmode": "array", "zeroline": False,
                  "tickvals": (base[first_column][:, None] + np.array(_KEY_Y_TICKS)).ravel(),
                  "ticktext": [f"{tick:.0%}" for tick in _KEY_Y_TICKS] * len(first_column),
                  "tickfont": {"size": 9}}}
    traces: list[dict[str, object]] = []
    if len(ending_early):
        layout["xaxis2"] = {**letters_under(ending_early), "overlaying": "x", "matches": "x",
                            "anchor": "free", "position": float(base[ending_early[0]] / top)}
        # plotly.js draws an axis only where a trace uses it: an empty one does.
        traces.append({"type": "scatter", "x": [], "y": [], "xaxis": "x2", "showlegend": False,
                       "hoverinfo": "skip"})
    traces += [
        {**bars, "y": np.ones(len(x)), "marker": {"color": _KEY_SHOWN_COLOUR}},
        {**bars, "y": shown["accuracy"].to_numpy(np.float64),
         "marker": {"color": with_alpha(colour, 0.85)},
         "meta": {"trace": "share correct", "customdata": [
             "position", "item_id", "key_position", "correct", "answers", "accuracy"]}},
        {"type": "scatter", "mode": "lines", "x": line_x.ravel(), "y": line_y.ravel(),
         "line": _KEY_LINE, "hoverinfo": "skip", "showlegend": False},
        {"type": "scatter", "mode": "text", "x": left + (N_OPTIONS - 1) / 2,
         "y": base + _KEY_TOP, "text": titles, "textposition": "top center",
         "textfont": {"size": 10}, "hoverinfo": "skip", "showlegend": False,
         "cliponaxis": False}]
    return go.Figure({"data": traces, "layout": {
        **layout, "height": plot_height + 110,
        "margin": {"t": 70, "b": 40, "l": 50, "r": 10}, "barmode": "overlay",
        "title": {"text": f"{area_title(area)}: share correct by the letter the key was shown "
                          "under (grey: the key was shown there; dotted: the item over every "
                          "position)",
                  "font": {"size": 13}, "x": 0, "xanchor": "left"},
        "meta": {"figure": "key-positions", "area": area}}}, _validate=False)


#: Per measure of :data:`workflows.key_positions.MEASURES`: the y axis's title, its name in the
#: hover text, and what an empty panel says.
MEASURE_TEXTS = {
    "dependence": ("χ² of correct × key position", "χ²",
                   "no item whose key was shown at two positions"),
    "uniformity": ("most − fewest correct over the 5 positions", "uniformity",
                   "no item asked under all 120 option orders"),
}


def key_dependence_figure(dependence: pd.DataFrame, correlations: pd.DataFrame,
                          areas: list[str], colour: str, symbol: str,
                          measure: str = "dependence") -> go.Figure:
    """One panel per area: each item's dependence of correctness on the key's position (the
    ``measure``: χ² of correct × key position, or the paper's uniformity) against its b, the
    least-squares line, and Pearson's r, p and the items in the panel's title. ``dependence``
    and ``correlations`` are one series' rows of
    :func:`workflows.key_positions.key_dependence` and ``dependence_correlations`` (of that
    measure)."""
    axis_title, short, nothing = MEASURE_TEXTS[measure]
    figure = area_grid(areas, columns=2, row_height=300)
    titles = {area: area_title(area) for area in areas}
    for index, area in enumerate(areas):
        row, col = panel(index, 2)
        group = dependence[(dependence["area"] == area) & dependence[measure].notna()
                           & dependence["b"].notna()]
        found = correlations[correlations["area"] == area]
        if group.empty or found.empty:
            empty_panel(figure, row, col, nothing)
            continue
        fit = found.iloc[0]
        titles[area] += (f" · r = {fit['r']:.2f}, {p_text(fit['p_value'])} (n = {fit['items']})"
                         if np.isfinite(fit["r"]) else f" · r undefined (n = {fit['items']})")
        figure.add_trace(go.Scatter(
            x=group["b"], y=group[measure], mode="markers", showlegend=False,
            marker={"color": with_alpha(colour, 0.8), "symbol": symbol, "size": 8},
            customdata=np.column_stack([group["position"], group["item_id"], group["accuracy"],
                                        group["answers"], group["key_positions"]]),
            hovertemplate=("Q%{customdata[0]} · item %{customdata[1]}<br>b = %{x:.2f}, "
                           f"{short} = " + "%{y:.2f}<br>%{customdata[3]} answers over "
                           "%{customdata[4]} "
                           "key positions, accuracy %{customdata[2]:.0%}<extra></extra>")),
            row=row, col=col)
        if np.isfinite(fit["slope"]):
            ends = np.array([group["b"].min(), group["b"].max()])
            figure.add_trace(go.Scatter(
                x=ends, y=fit["intercept"] + fit["slope"] * ends, mode="lines", showlegend=False,
                line={"color": REFERENCE_COLOUR, "width": 1, "dash": "dash"}, hoverinfo="skip"),
                row=row, col=col)
        figure.update_xaxes(title_text="item difficulty b", row=row, col=col)
        figure.update_yaxes(title_text=axis_title, rangemode="tozero", row=row, col=col)
    figure.for_each_annotation(lambda a: a.update(text=titles.get(_area_of(a.text), a.text)))
    figure.update_layout(meta={"figure": "key-dependence"})
    return figure


def _area_of(title: str) -> str:
    """The area code an :func:`dashboard.figures.area_title` starts with ('CN — …' → 'CN')."""
    return title.split(" — ")[0]
