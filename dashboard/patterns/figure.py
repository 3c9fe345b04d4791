"""The Response patterns figure of one area: the b curve on top, the heatmap of share correct
below (rows top to bottom, items by difficulty left to right), each row's l_z at the right.

The heatmap is the first subplot (x, y), so clicks on its cells are the figure's first plotting
area; invisible square markers over the cells carry the hover and the clicks (one trace per
series, named by the series). :func:`pattern_figure` builds it in named steps: the geometry
(pixel heights from the number of rows), the grid, the heatmap, the hover and l_z traces per
series, the b curve, the axes, the rules between groups of rows and the title.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from dashboard.figures import area_title
from dashboard.item_fit import MARK
from dashboard.palette import CORRECT_SCALE, REFERENCE_COLOUR
from dashboard.patterns.data import HUMAN_ROW, PatternPanel

#: Colour-bar title and hover name of a cell's value.
SHARE_TITLE = "share<br>correct"
#: Background shown where a row has no answer to an item (and between cells).
MISSING_COLOUR = "#D9D9D9"
#: Pixel heights: the b curve, a row of the heatmap (pooled; expanded; many expanded rows).
CURVE_PX = 130
ROW_PX = 24
REPETITION_ROW_PX = 13
DENSE_ROW_PX = 5
#: Expanded figures with more rows than this get the dense row height and group labels.
DENSE_ROWS = 120
_MARGIN = {"t": 60, "b": 50, "l": 10, "r": 90}
_GAP_PX = 14
#: The colour of the marks under the items whose 3PL curve misfits the humans.
MISFIT_COLOUR = "#C0392B"
#: The rule drawn under the human row and between model × language groups.
_RULE = {"color": "#7F7F7F", "width": 1.5}


@dataclass(frozen=True)
class _Geometry:
    """What the figure's size follows from: the item categories ``x`` (item ids as text), the
    row categories ``y`` (the human row first when drawn), the heatmap values ``z``
    ((len(y), len(x)), share correct), whether the rows are ``dense`` (too many to label one by
    one), the pixels of one row, of the heatmap and of the whole plotting area."""

    x: list[str]
    y: list[str]
    z: np.ndarray
    dense: bool
    row_px: int
    heat_px: int
    plot_px: int

    @property
    def height(self) -> int:
        """The figure's height in px, margins included."""
        return self.plot_px + _MARGIN["t"] + _MARGIN["b"]


def _lz_text(mean: float, sd: float, count: int, per_repetition: bool) -> str:
    """A row's l_z as written at its right: 'mean (SD)', one repetition's value, or '—'."""
    if count == 0 or not np.isfinite(mean):
        return "—"
    if per_repetition and count == 1:
        return f"{mean:.2f}"
    return f"{mean:.2f} ({sd:.2f})" if np.isfinite(sd) else f"{mean:.2f} (—)"


def _fmt(value: float, pattern: str = "{:.2f}") -> str:
    """``value`` in ``pattern``, '—' when missing or not finite."""
    return pattern.format(value) if value is not None and np.isfinite(value) else "—"


def _middle_label(rows: pd.DataFrame, group: str) -> str:
    """The label of the middle row of one model × language group (where its name is written)."""
    labels = rows.loc[rows["group"] == group, "label"].tolist()
    return labels[len(labels) // 2]


def _group_lz(panel: PatternPanel, group: str) -> tuple[float, float, int]:
    """Mean, SD and count of the finite per-repetition l_z of one model × language group."""
    values = panel.rows.loc[panel.rows["group"] == group, "lz_mean"].astype(float)
    values = values[np.isfinite(values)]
    return (float(values.mean()) if len(values) else np.nan,
            float(values.std(ddof=1)) if len(values) > 1 else np.nan, len(values))


def _geometry(panel: PatternPanel) -> _Geometry:
    """Categories, values and pixel sizes of ``panel``'s figure."""
    x = panel.items["item_id"].astype("int64").astype(str).tolist()
    y = ([HUMAN_ROW] if panel.human is not None else []) + panel.rows["label"].tolist()
    z = panel.share if panel.human is None else np.vstack([panel.human, panel.share])
    dense = panel.per_repetition and len(y) > DENSE_ROWS
    row_px = (DENSE_ROW_PX if dense else REPETITION_ROW_PX) if panel.per_repetition else ROW_PX
    heat_px = max(len(y) * row_px, 3 * ROW_PX)
    return _Geometry(x, y, z, dense, row_px, heat_px, heat_px + _GAP_PX + CURVE_PX)


def _grid(geometry: _Geometry) -> go.Figure:
    """Heatmap (row 1, col 1) with the l_z column beside it and the b curve above, sharing x."""
    return make_subplots(
        rows=2, cols=2, start_cell="bottom-left", shared_xaxes=True, shared_yaxes=True,
        column_widths=[0.86, 0.14],
        row_heights=[geometry.heat_px / geometry.plot_px, CURVE_PX / geometry.plot_px],
        horizontal_spacing=0.01, vertical_spacing=_GAP_PX / geometry.plot_px,
        specs=[[{}, {}], [{}, None]],
    )


def _add_heatmap(figure: go.Figure, geometry: _Geometry) -> None:
    """The share-correct cells on a grey layer that shows where a row never answered an item
    (NaN cells), with the fixed 0–1 colour bar beside the heatmap."""
    x, y, z, dense, heat_px = geometry.x, geometry.y, geometry.z, geometry.dense, geometry.heat_px
    figure.add_trace(go.Heatmap(
        z=np.zeros(z.shape), x=x, y=y, colorscale=[[0, MISSING_COLOUR], [1, MISSING_COLOUR]],
        showscale=False, hoverinfo="skip", xgap=1, ygap=0 if dense else 1, name="not answered",
    ), row=1, col=1)
    figure.add_trace(go.Heatmap(
        z=z, x=x, y=y, zmin=0.0, zmax=1.0, colorscale=CORRECT_SCALE, showscale=True,
        xgap=1, ygap=0 if dense else 1, hoverinfo="skip", name="share correct",
        colorbar={"title": {"text": SHARE_TITLE, "side": "top"},
                  "tickvals": [0, 0.25, 0.5, 0.75, 1],
                  "ticktext": ["0", "0.25", "0.5", "0.75", "1"], "lenmode": "pixels",
                  "len": min(max(heat_px, 140), 320), "yanchor": "top",
                  "y": heat_px / geometry.plot_px, "x": 1.01, "thickness": 14,
                  "outlinewidth": 1, "outlinecolor": "#555555"},
    ), row=1, col=1)


def _cell_marker(geometry: _Geometry) -> dict:
    """The invisible square over each cell that carries its hover and clicks."""
    return {"symbol": "square", "size": max(4, min(geometry.row_px - 2, 12)),
            "color": "rgba(0,0,0,0)"}


def _item_info(panel: PatternPanel, x: list[str]) -> list[tuple[str, int, float]]:
    """(item id, question number in the panel's booklet or −1, b) per column."""
    positions = panel.items["co_posicao"].to_numpy()
    b = panel.items["b"].to_numpy(dtype=float)
    return [(item, int(p) if pd.notna(p) else -1, bv)
            for item, p, bv in zip(x, positions, b, strict=True)]


def _human_hover(panel: PatternPanel, human: np.ndarray, geometry: _Geometry,
                 item_info: list[tuple[str, int, float]]) -> go.Scatter:
    """The human row's hover: item, question number, b, share (``human``, per column) and count
    of candidates."""
    x = geometry.x
    return go.Scatter(
        x=x, y=[HUMAN_ROW] * len(x), mode="markers", name="Humans", showlegend=False,
        marker=_cell_marker(geometry),
        customdata=[(item, pos, _fmt(bv), _fmt(h, "{:.1%}"), int(n), _misfit_note(panel, item))
                    for (item, pos, bv), h, n in zip(item_info, human, panel.items["humans"],
                                                     strict=True)],
        hovertemplate=("<b>Humans</b> · item %{customdata[0]} (question %{customdata[1]} of "
                       f"booklet {panel.booklet})<br>b = %{{customdata[2]}}<br>"
                       "%{customdata[3]} of %{customdata[4]:,} candidates correct"
                       "%{customdata[5]}<extra></extra>"),
    )


def _misfit_note(panel: PatternPanel, item: str) -> str:
    """The hover line of a column whose item misfits the humans ('' for the others)."""
    flagged = panel.misfit is not None and int(item) in panel.misfit
    return f"<br>{MARK} the 3PL curve misfits the humans (S-X²)" if flagged else ""


def _series_hover(panel: PatternPanel, geometry: _Geometry, model: str, group: pd.DataFrame,
                  item_info: list[tuple[str, int, float]]) -> go.Scatter:
    """One series' cells' hover and clicks: item, question number, b, share correct, answers."""
    labels = panel.rows["label"].tolist()
    cell_x, cell_y, data = [], [], []
    for i in group.index:
        for j, (item, pos, bv) in enumerate(item_info):
            cell_x.append(item)
            cell_y.append(labels[i])
            share = panel.share[i, j]
            data.append((item, pos, _fmt(bv), _fmt(share, "{:.0%}"), int(panel.answers[i, j])))
    return go.Scatter(
        x=cell_x, y=cell_y, mode="markers", name=str(model), legendgroup=str(model),
        showlegend=False, marker=_cell_marker(geometry), customdata=data,
        hovertemplate=("<b>%{y}</b> · item %{customdata[0]} (question %{customdata[1]} of "
                       f"booklet {panel.booklet})<br>b = %{{customdata[2]}}<br>correct in "
                       "%{customdata[3]} of %{customdata[4]} answers<extra></extra>"),
    )


def _series_lz(panel: PatternPanel, geometry: _Geometry, model: str,
               group: pd.DataFrame) -> go.Scatter:
    """One series' l_z texts in the right column: per row, or per model × language group at
    its middle row when the rows are dense."""
    rows, dense = panel.rows, geometry.dense
    text_rows = group if not dense else group.drop_duplicates("group")
    text_y = text_rows["label"].tolist() if not dense else [
        _middle_label(rows, g) for g in text_rows["group"]]
    if dense:
        texts = [_lz_text(*_group_lz(panel, g), False) for g in text_rows["group"]]
    else:
        texts = [_lz_text(r.lz_mean, r.lz_sd, r.lz_n, panel.per_repetition)
                 for r in text_rows.itertuples()]
    return go.Scatter(
        x=[0.04] * len(texts), y=text_y, mode="text", text=texts, name=str(model),
        legendgroup=str(model), showlegend=False, textposition="middle right",
        textfont={"size": 11 if not panel.per_repetition else 9, "color": REFERENCE_COLOUR},
        hovertemplate=f"<b>%{{y}}</b><br>l_z: %{{text}}<extra>{model}</extra>",
    )


def _add_rows(figure: go.Figure, panel: PatternPanel, geometry: _Geometry) -> list:
    """The human row's hover, then per series its cells' hover and its l_z texts; returns the
    columns' (item, question, b) for the b curve."""
    item_info = _item_info(panel, geometry.x)
    if panel.human is not None:
        figure.add_trace(_human_hover(panel, panel.human, geometry, item_info), row=1, col=1)
    for model, group in panel.rows.groupby("model", sort=False):
        figure.add_trace(_series_hover(panel, geometry, model, group, item_info), row=1, col=1)
        figure.add_trace(_series_lz(panel, geometry, model, group), row=1, col=2)
    return item_info


def _add_difficulty_curve(figure: go.Figure, panel: PatternPanel, geometry: _Geometry,
                          item_info: list[tuple[str, int, float]]) -> None:
    """Each column's IRT difficulty b as a curve above the heatmap (gaps where b is missing)."""
    figure.add_trace(go.Scatter(
        x=geometry.x, y=panel.items["b"].to_numpy(dtype=float), mode="lines+markers",
        name="b (difficulty)", showlegend=False,
        line={"color": REFERENCE_COLOUR, "width": 1.5}, marker={"size": 5},
        customdata=[(item, pos, _misfit_note(panel, item)) for item, pos, _ in item_info],
        connectgaps=False,
        hovertemplate=("item %{customdata[0]} (question %{customdata[1]} of booklet "
                       f"{panel.booklet})<br>b = %{{y:.2f}}%{{customdata[2]}}<extra></extra>"),
    ), row=2, col=1)


def _style_axes(figure: go.Figure, panel: PatternPanel, geometry: _Geometry) -> None:
    """The shared item axis, the l_z column's axis, the row axis and the b axis."""
    x, y = geometry.x, geometry.y
    category = {"type": "category", "categoryorder": "array", "categoryarray": x,
                "range": [-0.5, len(x) - 0.5]}
    figure.update_xaxes(**category, showgrid=False, ticks="", row=1, col=1,
                        title_text="items sorted by difficulty b: easiest (left) → hardest (right)",
                        **_misfit_ticks(panel, x))
    figure.update_xaxes(**category, showticklabels=False, showgrid=False, row=2, col=1)
    figure.update_xaxes(range=[0, 1], showticklabels=False, showgrid=False, zeroline=False,
                        row=1, col=2, title_text="mean l_z (SD)" if not panel.per_repetition
                        else "l_z")
    # The rows fill the heatmap exactly, first row on top. Autorange would pad the shared axis
    # for the l_z text column by about 5% of the rows at each end: with 30 repetitions per
    # series that is a band of empty rows above and below the cells.
    y_axis = {"type": "category", "categoryorder": "array", "categoryarray": y,
              "range": [len(y) - 0.5, -0.5], "showgrid": False, "automargin": True}
    if geometry.dense:
        rows = panel.rows
        groups = list(dict.fromkeys(rows["group"]))
        y_axis.update(tickmode="array",
                      tickvals=([HUMAN_ROW] if panel.human is not None else [])
                      + [_middle_label(rows, g) for g in groups],
                      ticktext=([HUMAN_ROW] if panel.human is not None else []) + groups)
    figure.update_yaxes(**y_axis, row=1, col=1)
    _add_rules(figure, panel)
    figure.update_yaxes(showticklabels=False, showgrid=False, row=1, col=2)
    figure.update_yaxes(title_text="b (difficulty)", zeroline=True, zerolinecolor="#AAAAAA",
                        gridcolor="#F0F0F0", row=2, col=1)


def _misfit_ticks(panel: PatternPanel, x: list[str]) -> dict:
    """The item axis's tick labels: a mark under each item that misfits the humans, no label
    under the others (the items are too many to name)."""
    flagged = [item for item in x if panel.misfit is not None and int(item) in panel.misfit]
    if not flagged:
        return {"showticklabels": False}
    return {"showticklabels": True, "tickmode": "array", "tickvals": flagged,
            "ticktext": [MARK] * len(flagged),
            "tickfont": {"color": MISFIT_COLOUR, "size": 14}}


def _add_rules(figure: go.Figure, panel: PatternPanel) -> None:
    """Rules under the human row and, per repetition, between model × language groups."""
    rows = panel.rows
    offset = 1 if panel.human is not None else 0
    starts = [offset + i for i in range(1, len(rows))
              if panel.per_repetition and rows["group"].iat[i] != rows["group"].iat[i - 1]]
    for start in ([offset] if offset and len(rows) else []) + starts:
        figure.add_shape(type="line", xref="x domain", yref="y", x0=0, x1=1, y0=start - 0.5,
                         y1=start - 0.5, line=dict(_RULE), row=1, col=1)


def _finish_layout(figure: go.Figure, panel: PatternPanel, geometry: _Geometry) -> None:
    """The title (area and the booklet whose items are the columns), size and background."""
    booklet_words = f"booklet {panel.booklet}" + (f" ({panel.colour})" if panel.colour else "")
    figure.update_layout(
        title={"text": f"{area_title(panel.area)} · items of {booklet_words}", "x": 0.0,
               "xanchor": "left"},
        height=geometry.height, margin=dict(_MARGIN), plot_bgcolor="white",
        hovermode="closest", showlegend=False,
    )


def pattern_figure(panel: PatternPanel) -> go.Figure:
    """The figure of one area: b curve on top, heatmap below, l_z column at the right.

    The heatmap is the first subplot (x, y), so clicks on its cells are the figure's first
    plotting area; invisible square markers over the cells carry the hover and the clicks
    (one trace per series, named by the series).
    """
    geometry = _geometry(panel)
    figure = _grid(geometry)
    _add_heatmap(figure, geometry)
    item_info = _add_rows(figure, panel, geometry)
    _add_difficulty_curve(figure, panel, geometry, item_info)
    _style_axes(figure, panel, geometry)
    _finish_layout(figure, panel, geometry)
    return figure
