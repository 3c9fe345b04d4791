"""The Response patterns figure (the paper's Fig. 2, *Beyond accuracy*): data, figure, caption.

Per area, one heatmap whose rows are run series × prompt language (or, expanded, one row per
repetition: a shuffle or seed of one run) and whose columns are the items sorted by IRT
difficulty b, easiest left; a cell is the share of the row's repetitions that answered the item
correctly (0–1, a fixed colour scale). Above it, the b of each item as a curve on the same x;
at the right of each row its mean l_z (SD) over the row's repetitions; on top, when the year
has candidates, the humans' share correct per item (``item_stats.p_value``).

Booklet rule (every page): booklets of an area hold the same items in another order, so a
model's answers are placed on any booklet of its area and year through the item ids. The
columns are the items of the sidebar's booklet when it belongs to the area, else of the booklet
the models took (most response patterns); hover positions are that booklet's question numbers.

Layers: the data is read through cached wrappers of :mod:`store.pattern_queries`;
:func:`build_panel` is pure (frames in, :class:`PatternPanel` out) so tests can check it on
frames they query themselves.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from dashboard.figures import area_title
from dashboard.palette import CORRECT_SCALE, REFERENCE_COLOUR
from dashboard.queries import booklet_catalogue, cached_query
from inference.protocol import PROMPT_LANGUAGE_NAMES, PROMPT_LANGUAGES
from store import pattern_queries

pattern_items = cached_query(pattern_queries.pattern_items)
pattern_booklets = cached_query(pattern_queries.pattern_booklets)
pattern_cells = cached_query(pattern_queries.pattern_cells)
pattern_fit = cached_query(pattern_queries.pattern_fit)

#: Label of the human reference row.
HUMAN_ROW = "Humans (share correct)"
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


@dataclass(frozen=True)
class PatternPanel:
    """Everything one area's figure shows.

    - ``items``: the columns in x order (b ascending, items without b last), one row each:
      item_id, item_language, co_posicao (question number in ``booklet``), a, b, abandoned,
      p_value, humans;
    - ``rows``: the model rows top to bottom (the human row is not among them): label, model,
      prompt_language, run_id and shuffle (NaN unless ``per_repetition``), group (the
      model × language label), lz_mean, lz_sd, lz_n (patterns with a finite l_z), patterns;
    - ``share`` and ``answers``: (len(rows), len(items)) arrays; share NaN where the row never
      answered the item;
    - ``human``: (len(items),) humans' share correct, None when the figure has no human row;
    - ``booklet``/``colour``: whose items and positions the columns are; ``model_booklets``
      the booklets the models took (most patterns first); ``dropped`` answered items that are
      not in ``booklet`` (left out).
    """

    area: str
    booklet: int
    colour: str | None
    model_booklets: tuple[int, ...]
    items: pd.DataFrame
    rows: pd.DataFrame
    share: np.ndarray
    answers: np.ndarray
    human: np.ndarray | None
    per_repetition: bool
    dropped: int = 0

    @property
    def languages(self) -> tuple[str, ...]:
        """Prompt languages with at least one row, in the protocol's order."""
        present = set(self.rows["prompt_language"])
        return tuple(lang for lang in _language_order(present) if lang in present)


def _language_order(present: set[str]) -> list[str]:
    return [*PROMPT_LANGUAGES, *sorted(present - set(PROMPT_LANGUAGES))]


def short_labels(models: Sequence[str]) -> tuple[dict[str, str], str]:
    """Row names without the trailing ' · '-separated parts every series shares.

    Returns ({series: short name}, the shared tail, '' when none), e.g. for
    ['SmolLM2 · 0-shot · 30 shuffles', 'random · 0-shot · 30 shuffles'] the names 'SmolLM2' and
    'random' and the tail '0-shot · 30 shuffles'. Distinct series keep distinct names.
    """
    parts = {model: str(model).split(" · ") for model in models}
    if not parts:
        return {}, ""
    shortest = min(len(p) for p in parts.values())
    shared = 0
    while shared < shortest - 1 and len({tuple(p[len(p) - shared - 1:])
                                         for p in parts.values()}) == 1:
        shared += 1
    if shared == 0:
        return {model: str(model) for model in models}, ""
    tail = " · ".join(next(iter(parts.values()))[-shared:])
    return {model: " · ".join(p[:-shared]) for model, p in parts.items()}, tail


def sort_by_difficulty(items: pd.DataFrame) -> pd.DataFrame:
    """``items`` sorted by b ascending (ties by item_id), items without b last."""
    return items.sort_values(["b", "item_id"], na_position="last", kind="stable").reset_index(
        drop=True)


def _fit_rows(fit: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """Mean, SD (n − 1) and count of the finite l_z, and the pattern count, per ``keys``."""
    frame = fit.assign(lz=fit["lz"].astype(float).where(np.isfinite(fit["lz"].astype(float))))
    grouped = frame.groupby(keys, dropna=False)["lz"]
    return pd.DataFrame({"lz_mean": grouped.mean(), "lz_sd": grouped.std(ddof=1),
                         "lz_n": grouped.count(), "patterns": grouped.size()}).reset_index()


def build_panel(
    area: str, booklet: int, colour: str | None, model_booklets: Sequence[int],
    items: pd.DataFrame, cells: pd.DataFrame, fit: pd.DataFrame, *,
    per_repetition: bool = False, with_humans: bool = True,
    names: Mapping[str, str] | None = None, repetition_words: Mapping[str, str] | None = None,
) -> PatternPanel:
    """Assemble one area's figure data from the store's frames (pure).

    ``items``: :func:`store.pattern_queries.pattern_items` of ``booklet``; ``cells``:
    :func:`~store.pattern_queries.pattern_cells` (pooled or ``per_repetition``); ``fit``:
    :func:`~store.pattern_queries.pattern_fit`. ``names`` shortens series names in row labels
    (:func:`short_labels`); ``repetition_words`` names a series' repetition ('shuffle' or
    'seed'). The columns are the booklet's items (in LC the foreign-language block(s) the rows
    answered, and the common items); an item no row answered stays grey.
    """
    names = dict(names or {})
    words = dict(repetition_words or {})
    answered = set(cells["item_id"].astype("int64"))
    in_booklet = items["item_id"].astype("int64").isin(answered)
    # LC: the foreign-language block(s) the rows answered, and the common items.
    languages = set(items.loc[in_booklet, "item_language"].dropna().astype(int))
    kept = items["item_language"].isna() | items["item_language"].isin(languages) | in_booklet
    columns = sort_by_difficulty(items[kept])
    dropped = len(answered - set(items["item_id"].astype("int64")))
    keys = ["model", "prompt_language"] + (["run_id", "shuffle"] if per_repetition else [])

    rows = cells[keys].drop_duplicates()
    rows = rows.assign(_lang=rows["prompt_language"].map(
        {lang: i for i, lang in enumerate(_language_order(set(rows["prompt_language"])))}))
    rows = rows.sort_values(["model", "_lang", *keys[2:]]).drop(columns="_lang")
    rows = rows.reset_index(drop=True)
    rows["group"] = [f"{names.get(m, m)} · {lang}"
                     for m, lang in zip(rows["model"], rows["prompt_language"])]
    if per_repetition:
        runs = rows.groupby("model")["run_id"].transform(
            lambda ids: ids.map({run: i + 1 for i, run in enumerate(sorted(ids.unique()))}))
        several = rows.groupby("model")["run_id"].transform("nunique") > 1
        rows["label"] = [
            f"{group} · {words.get(m, 'repetition')} {int(s)}" + (f" (run {r})" if many else "")
            for group, m, s, r, many in zip(rows["group"], rows["model"], rows["shuffle"], runs,
                                            several)]
    else:
        rows["run_id"] = np.nan
        rows["shuffle"] = np.nan
        rows["label"] = rows["group"]
    fit_keys = ["model", "prompt_language"] + (["run_id", "shuffle"] if per_repetition else [])
    lz = _fit_rows(fit, fit_keys) if len(fit) else pd.DataFrame(
        columns=[*fit_keys, "lz_mean", "lz_sd", "lz_n", "patterns"])
    rows = rows.merge(lz, on=fit_keys, how="left")
    rows["lz_n"] = rows["lz_n"].fillna(0).astype(int)
    rows["patterns"] = rows["patterns"].fillna(0).astype(int)

    position = {int(item): j for j, item in enumerate(columns["item_id"])}
    row_of = {tuple(r): i for i, r in enumerate(rows[keys].itertuples(index=False, name=None))}
    share = np.full((len(rows), len(columns)), np.nan)
    answers = np.zeros((len(rows), len(columns)), dtype=np.int64)
    for record in cells.itertuples(index=False):
        j = position.get(int(record.item_id))
        if j is None:
            continue
        i = row_of[tuple(getattr(record, key) for key in keys)]
        answers[i, j] = int(record.answers)
        share[i, j] = record.correct / record.answers if record.answers else np.nan
    human = None
    if with_humans and columns["p_value"].notna().any():
        human = columns["p_value"].to_numpy(dtype=float)
    return PatternPanel(area=area, booklet=int(booklet), colour=colour,
                        model_booklets=tuple(int(b) for b in model_booklets), items=columns,
                        rows=rows, share=share, answers=answers, human=human,
                        per_repetition=per_repetition, dropped=dropped)


def load_panel(
    year: int, area: str, booklet: int | None, shots: int | None, models: Sequence[str], *,
    pooled: bool = False, per_repetition: bool = False, with_humans: bool = True,
    names: Mapping[str, str] | None = None, repetition_words: Mapping[str, str] | None = None,
) -> PatternPanel | None:
    """One area's panel read through the cached queries; None when no selected run answered
    the area. ``booklet``: the booklet whose items are the columns (None: the models' own);
    ``models`` the selected run labels, ``pooled`` True pools the runs of each model."""
    taken = pattern_booklets(year, area, shots, list(models))
    if taken.empty:
        return None
    shown = int(taken["booklet_id"].iloc[0]) if booklet is None else int(booklet)
    catalogue = booklet_catalogue(year)
    colours = catalogue.loc[catalogue["booklet_id"] == shown, "colour"]
    colour = colours.iloc[0] if len(colours) else None
    items = pattern_items(year, shown)
    cells = pattern_cells(year, area, shots, list(models), per_repetition, pooled)
    fit = pattern_fit(year, area, shots, list(models), pooled)
    return build_panel(area, shown, None if pd.isna(colour) else colour,
                       taken["booklet_id"].astype(int).tolist(), items, cells, fit,
                       per_repetition=per_repetition, with_humans=with_humans, names=names,
                       repetition_words=repetition_words)


def _lz_text(mean: float, sd: float, count: int, per_repetition: bool) -> str:
    if count == 0 or not np.isfinite(mean):
        return "—"
    if per_repetition and count == 1:
        return f"{mean:.2f}"
    return f"{mean:.2f} ({sd:.2f})" if np.isfinite(sd) else f"{mean:.2f} (—)"


def _fmt(value: float, pattern: str = "{:.2f}") -> str:
    return pattern.format(value) if value is not None and np.isfinite(value) else "—"


def pattern_figure(panel: PatternPanel) -> go.Figure:
    """The figure of one area: b curve on top, heatmap below, l_z column at the right.

    The heatmap is the first subplot (x, y), so clicks on its cells are the figure's first
    plotting area; invisible square markers over the cells carry the hover and the clicks
    (one trace per series, named by the series).
    """
    items = panel.items
    x = items["item_id"].astype("int64").astype(str).tolist()
    rows = panel.rows
    labels = rows["label"].tolist()
    y = ([HUMAN_ROW] if panel.human is not None else []) + labels
    z = panel.share if panel.human is None else np.vstack([panel.human, panel.share])
    dense = panel.per_repetition and len(y) > DENSE_ROWS
    row_px = (DENSE_ROW_PX if dense else REPETITION_ROW_PX) if panel.per_repetition else ROW_PX
    heat_px = max(len(y) * row_px, 3 * ROW_PX)
    plot_px = heat_px + _GAP_PX + CURVE_PX
    height = plot_px + _MARGIN["t"] + _MARGIN["b"]
    figure = make_subplots(
        rows=2, cols=2, start_cell="bottom-left", shared_xaxes=True, shared_yaxes=True,
        column_widths=[0.86, 0.14], row_heights=[heat_px / plot_px, CURVE_PX / plot_px],
        horizontal_spacing=0.01, vertical_spacing=_GAP_PX / plot_px,
        specs=[[{}, {}], [{}, None]],
    )
    positions = items["co_posicao"].to_numpy()
    b = items["b"].to_numpy(dtype=float)
    # A grey layer under the cells shows where a row never answered an item (NaN cells).
    figure.add_trace(go.Heatmap(
        z=np.zeros(z.shape), x=x, y=y, colorscale=[[0, MISSING_COLOUR], [1, MISSING_COLOUR]],
        showscale=False, hoverinfo="skip", xgap=1, ygap=0 if dense else 1, name="not answered",
    ), row=1, col=1)
    figure.add_trace(go.Heatmap(
        z=z, x=x, y=y, zmin=0.0, zmax=1.0, colorscale=CORRECT_SCALE, showscale=True,
        xgap=1, ygap=0 if dense else 1, hoverinfo="skip", name="share correct",
        colorbar={"title": {"text": SHARE_TITLE, "side": "top"}, "tickvals": [0, 0.25, 0.5, 0.75, 1],
                  "ticktext": ["0", "0.25", "0.5", "0.75", "1"], "lenmode": "pixels",
                  "len": min(max(heat_px, 140), 320), "yanchor": "top",
                  "y": heat_px / plot_px, "x": 1.01, "thickness": 14, "outlinewidth": 1,
                  "outlinecolor": "#555555"},
    ), row=1, col=1)
    marker = {"symbol": "square", "size": max(4, min(row_px - 2, 12)), "color": "rgba(0,0,0,0)"}
    item_info = [(item, int(p) if pd.notna(p) else -1, bv) for item, p, bv in zip(x, positions, b)]
    if panel.human is not None:
        figure.add_trace(go.Scatter(
            x=x, y=[HUMAN_ROW] * len(x), mode="markers", name="Humans", showlegend=False,
            marker=marker,
            customdata=[(item, pos, _fmt(bv), _fmt(h, "{:.1%}"), int(n))
                        for (item, pos, bv), h, n in zip(item_info, panel.human, items["humans"])],
            hovertemplate=("<b>Humans</b> · item %{customdata[0]} (question %{customdata[1]} of "
                           f"booklet {panel.booklet})<br>b = %{{customdata[2]}}<br>"
                           "%{customdata[3]} of %{customdata[4]:,} candidates correct"
                           "<extra></extra>"),
        ), row=1, col=1)
    for model, group in rows.groupby("model", sort=False):
        cell_x, cell_y, data = [], [], []
        for i in group.index:
            for j, (item, pos, bv) in enumerate(item_info):
                cell_x.append(item)
                cell_y.append(labels[i])
                share = panel.share[i, j]
                data.append((item, pos, _fmt(bv), _fmt(share, "{:.0%}"),
                             int(panel.answers[i, j])))
        figure.add_trace(go.Scatter(
            x=cell_x, y=cell_y, mode="markers", name=str(model), legendgroup=str(model),
            showlegend=False, marker=marker, customdata=data,
            hovertemplate=("<b>%{y}</b> · item %{customdata[0]} (question %{customdata[1]} of "
                           f"booklet {panel.booklet})<br>b = %{{customdata[2]}}<br>correct in "
                           "%{customdata[3]} of %{customdata[4]} answers<extra></extra>"),
        ), row=1, col=1)
        text_rows = group if not dense else group.drop_duplicates("group")
        text_y = text_rows["label"].tolist() if not dense else [
            _middle_label(rows, g) for g in text_rows["group"]]
        if dense:
            texts = [_lz_text(*_group_lz(panel, g), False) for g in text_rows["group"]]
        else:
            texts = [_lz_text(r.lz_mean, r.lz_sd, r.lz_n, panel.per_repetition)
                     for r in text_rows.itertuples()]
        figure.add_trace(go.Scatter(
            x=[0.04] * len(texts), y=text_y, mode="text", text=texts, name=str(model),
            legendgroup=str(model), showlegend=False, textposition="middle right",
            textfont={"size": 11 if not panel.per_repetition else 9, "color": REFERENCE_COLOUR},
            hovertemplate=f"<b>%{{y}}</b><br>l_z: %{{text}}<extra>{model}</extra>",
        ), row=1, col=2)
    figure.add_trace(go.Scatter(
        x=x, y=b, mode="lines+markers", name="b (difficulty)", showlegend=False,
        line={"color": REFERENCE_COLOUR, "width": 1.5}, marker={"size": 5},
        customdata=[(item, pos) for item, pos, _ in item_info], connectgaps=False,
        hovertemplate=("item %{customdata[0]} (question %{customdata[1]} of booklet "
                       f"{panel.booklet})<br>b = %{{y:.2f}}<extra></extra>"),
    ), row=2, col=1)

    category = {"type": "category", "categoryorder": "array", "categoryarray": x,
                "range": [-0.5, len(x) - 0.5]}
    figure.update_xaxes(**category, showticklabels=False, showgrid=False, ticks="", row=1, col=1,
                        title_text="items sorted by difficulty b: easiest (left) → hardest (right)")
    figure.update_xaxes(**category, showticklabels=False, showgrid=False, row=2, col=1)
    figure.update_xaxes(range=[0, 1], showticklabels=False, showgrid=False, zeroline=False,
                        row=1, col=2, title_text="mean l_z (SD)" if not panel.per_repetition
                        else "l_z")
    # The rows fill the heatmap exactly, first row on top. Autorange would pad the shared axis
    # for the l_z text column by about 5% of the rows at each end: with 30 repetitions per
    # series that is a band of empty rows above and below the cells.
    y_axis = {"type": "category", "categoryorder": "array", "categoryarray": y,
              "range": [len(y) - 0.5, -0.5], "showgrid": False, "automargin": True}
    if dense:
        groups = list(dict.fromkeys(rows["group"]))
        y_axis.update(tickmode="array",
                      tickvals=([HUMAN_ROW] if panel.human is not None else [])
                      + [_middle_label(rows, g) for g in groups],
                      ticktext=([HUMAN_ROW] if panel.human is not None else []) + groups)
    figure.update_yaxes(**y_axis, row=1, col=1)
    # Rules under the human row and, per repetition, between model × language groups.
    offset = 1 if panel.human is not None else 0
    starts = [offset + i for i in range(1, len(rows))
              if panel.per_repetition and rows["group"].iat[i] != rows["group"].iat[i - 1]]
    for start in ([offset] if offset and len(rows) else []) + starts:
        figure.add_shape(type="line", xref="x domain", yref="y", x0=0, x1=1, y0=start - 0.5,
                         y1=start - 0.5, line={"color": "#7F7F7F", "width": 1.5}, row=1, col=1)
    figure.update_yaxes(showticklabels=False, showgrid=False, row=1, col=2)
    figure.update_yaxes(title_text="b (difficulty)", zeroline=True, zerolinecolor="#AAAAAA",
                        gridcolor="#F0F0F0", row=2, col=1)
    booklet_words = f"booklet {panel.booklet}" + (f" ({panel.colour})" if panel.colour else "")
    figure.update_layout(
        title={"text": f"{area_title(panel.area)} · items of {booklet_words}", "x": 0.0,
               "xanchor": "left"},
        height=height, margin=dict(_MARGIN), plot_bgcolor="white",
        hovermode="closest", showlegend=False,
    )
    return figure


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


def panel_table(panel: PatternPanel) -> pd.DataFrame:
    """The numbers behind the figure, long: one row per (figure row, item) with row, model,
    prompt_language, run_id, shuffle, item_id, item_language, co_posicao, b, share, answers,
    lz_mean, lz_sd; the human row (when drawn) has model 'humans' and answers = candidates."""
    items = panel.items.reset_index(drop=True)
    pieces = []
    if panel.human is not None:
        pieces.append(pd.DataFrame({
            "row": HUMAN_ROW, "model": "humans", "prompt_language": None, "run_id": None,
            "shuffle": np.nan, "item_id": items["item_id"], "item_language": items["item_language"],
            "co_posicao": items["co_posicao"], "b": items["b"], "share": panel.human,
            "answers": items["humans"], "lz_mean": np.nan, "lz_sd": np.nan}))
    for i, row in panel.rows.iterrows():
        pieces.append(pd.DataFrame({
            "row": row["label"], "model": row["model"], "prompt_language": row["prompt_language"],
            "run_id": row["run_id"], "shuffle": row["shuffle"], "item_id": items["item_id"],
            "item_language": items["item_language"], "co_posicao": items["co_posicao"],
            "b": items["b"], "share": panel.share[i], "answers": panel.answers[i],
            "lz_mean": row["lz_mean"], "lz_sd": row["lz_sd"]}))
    return pd.concat(pieces, ignore_index=True) if pieces else pd.DataFrame()


def booklet_sentence(panel: PatternPanel) -> str:
    """Which booklet the columns follow and, when it differs, which one(s) the models took."""
    shown = f"booklet {panel.booklet}" + (f" ({panel.colour})" if panel.colour else "")
    taken = ", ".join(str(b) for b in panel.model_booklets)
    if set(panel.model_booklets) == {panel.booklet}:
        return f"Positions are those of {shown}, the booklet the models took."
    several = "s" if len(panel.model_booklets) > 1 else ""
    dropped = (f" {panel.dropped} answered item(s) not in {shown} are left out."
               if panel.dropped else "")
    return (f"The models took booklet{several} {taken}; their answers are placed on {shown} "
            f"through the item ids (same items, another order), and positions are {shown}'s."
            + dropped)


def panel_caption(panel: PatternPanel, shots: str, shared_tail: str, provenance: str,
                  humans_note: str = "") -> str:
    """The caption under one area's figure, ending with the page's provenance sentence;
    ``shots`` is the shots setting in words ('0-shot', 'few-shot (no count given)')."""
    languages = " and ".join(PROMPT_LANGUAGE_NAMES.get(lang, lang) for lang in panel.languages)
    tail = f" (every series: {shared_tail})" if shared_tail else ""
    unit = ("Rows: one per repetition (a shuffle or seed of one run); cell black = answered "
            "correctly, white = wrong" if panel.per_repetition else
            "Rows: run series × prompt language; cell = share of the row's repetitions "
            "(shuffles or seeds) that answered the item correctly, 0 white to 1 black")
    lz = ("Right: that repetition's l_z." if panel.per_repetition else
          "Right: mean l_z (SD) over the row's repetitions.")
    humans = (" Top row: the share of the candidates who saw each item that answered it "
              "correctly (every booklet pooled; for the foreign-language items, the candidates "
              "of that language)." if panel.human is not None else humans_note)
    unanswered = " Grey: not answered." if np.isnan(panel.share).any() else ""
    no_b = int(panel.items["b"].isna().sum())
    abandoned = f"; {no_b} without b (abandoned) at the right end" if no_b else ""
    return (f"{panel.area}, {shots}, {languages} prompts{tail}. {unit}. Columns: the "
            f"{len(panel.items)} items of booklet {panel.booklet} sorted by IRT difficulty b "
            f"(curve above), easiest left{abandoned}. {lz}{unanswered}{humans} "
            f"{booklet_sentence(panel)} Click a cell to open its item." + provenance)
