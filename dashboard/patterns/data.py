"""The Response patterns figure's data: one area's panel (rows, item columns, share correct,
l_z) from the store, and the numbers behind it as a table.

:func:`load_panel` reads through cached wrappers of :mod:`store.pattern_queries`;
:func:`build_panel` is pure (frames in, :class:`PatternPanel` out) so tests can check it on
frames they query themselves. The booklet rule is the package's (:mod:`dashboard.patterns`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from dashboard.item_fit import flagged_items
from dashboard.queries import booklet_catalogue, cached_query
from inference.protocol import PROMPT_LANGUAGES
from store import pattern_queries

pattern_items = cached_query(pattern_queries.pattern_items)
pattern_booklets = cached_query(pattern_queries.pattern_booklets)
pattern_cells = cached_query(pattern_queries.pattern_cells)
pattern_fit = cached_query(pattern_queries.pattern_fit)

#: Label of the human reference row.
HUMAN_ROW = "Humans (share correct)"


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
      not in ``booklet`` (left out);
    - ``misfit``: the columns' items whose 3PL curve misfits the candidates of ``booklet``
      (human item fit, S-X²), None when the store has no item fit of that booklet.
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
    misfit: frozenset[int] | None = None

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
    misfit: frozenset[int] | None = None,
) -> PatternPanel:
    """Assemble one area's figure data from the store's frames (pure).

    ``items``: :func:`store.pattern_queries.pattern_items` of ``booklet``; ``cells``:
    :func:`~store.pattern_queries.pattern_cells` (pooled or ``per_repetition``); ``fit``:
    :func:`~store.pattern_queries.pattern_fit`. ``names`` shortens series names in row labels
    (:func:`short_labels`); ``repetition_words`` names a series' repetition ('shuffle' or
    'seed'); ``misfit`` the booklet's items flagged by the human item fit (None: no fit).
    The columns are the booklet's items (in LC the foreign-language block(s) the rows
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
                     for m, lang in zip(rows["model"], rows["prompt_language"], strict=True)]
    if per_repetition:
        runs = rows.groupby("model")["run_id"].transform(
            lambda ids: ids.map({run: i + 1 for i, run in enumerate(sorted(ids.unique()))}))
        several = rows.groupby("model")["run_id"].transform("nunique") > 1
        rows["label"] = [
            f"{group} · {words.get(m, 'repetition')} {int(s)}" + (f" (run {r})" if many else "")
            for group, m, s, r, many in zip(rows["group"], rows["model"], rows["shuffle"], runs,
                                            several, strict=True)]
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
                        per_repetition=per_repetition, dropped=dropped,
                        misfit=None if misfit is None else misfit & set(position))


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
    panel = build_panel(area, shown, None if pd.isna(colour) else colour,
                        taken["booklet_id"].astype(int).tolist(), items, cells, fit,
                        per_repetition=per_repetition, with_humans=with_humans, names=names,
                        repetition_words=repetition_words)
    if not with_humans:
        return panel
    return replace(panel, misfit=_column_misfit(year, panel))


def _column_misfit(year: int, panel: PatternPanel) -> frozenset[int] | None:
    """The panel's columns flagged by the human item fit of its booklet: in LC on the form of
    each foreign-language block among the columns (English when none is), else on the
    booklet's one form."""
    languages: list[int | None] = [None]
    if panel.area == "LC":
        blocks = panel.items["item_language"].dropna().astype(int)
        languages = [int(language) for language in sorted(set(blocks))] or [0]
    flagged = flagged_items(year, panel.area, panel.booklet, languages)
    return None if flagged is None else flagged & set(panel.items["item_id"].astype(int))


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
