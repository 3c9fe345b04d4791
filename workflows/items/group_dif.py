"""DIF between two groups of human candidates of one booklet form (sex, school type, state),
matched on the number-correct score: the control beside the DIF between humans and machines
(``workflows.items.dif``).

With hundreds of thousands of candidates per form, the Mantel–Haenszel χ² between two human
groups flags many items however small their difference; the ETS classes (an effect size with
its own test) say how large the DIF between real groups of candidates is, so a reader can judge
whether the machines' B and C items stand out.

The groups' tables are built exactly as the stored ``item_score_counts``
(``enem.score_tables.form_score_counts`` over the form's counted items, the same candidates:
present, scored on the form, not all blank), one table per value of the grouping column. Only
candidates with a value in the contrasted groups take part: one without (no sex, no school type
recorded) or of another value (school type 1 "not answered" or 4 "abroad" when public and
private are compared) is in neither group. The tables of every value plus those without one add
up to the stored tables of the form.

Which group is which (:data:`DEFAULT_GROUPS`): the reference group is the larger group of ENEM's
candidates, as the humans are in the human–machine DIF, the focal group the other:

    sex           reference F (female)          focal M (male)
    school type   reference 2 (public school)   focal 3 (private school)
    state         reference every other state   focal the chosen state (default: the form's
                                                largest)

Δ = −2.35 ln α_MH < 0 (α > 1): the item is harder for the focal group than for reference
candidates of the same score, i.e. it favours the reference group; Δ > 0 favours the focal one.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import duckdb
import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
from threadpoolctl import threadpool_limits

from analytics.items.dif import mantel_haenszel
from analytics.multiple_testing import benjamini_hochberg
from enem.codebook import SCHOOL_TYPES, SEX
from enem.item_statistics import CHUNK_ROWS
from enem.items import BookletForm
from enem.responses import select_language_block, string_lengths, strings_to_chars
from enem.score_tables import form_score_counts
from store.item_queries import DIF_GROUP_COLUMNS, form_group_responses
from store.model_runs import load_form
from workflows.items.selection import ItemSelection

#: The groupings a human-group DIF compares, in the order the page and the CLI offer them.
GROUPINGS: tuple[str, ...] = tuple(DIF_GROUP_COLUMNS)
#: (reference, focal) codes of the groupings with fixed groups; ``state`` contrasts one state
#: (focal) with every other (reference).
DEFAULT_GROUPS: dict[str, tuple[str, str]] = {"sex": ("F", "M"), "school_type": ("2", "3")}
#: The reference group of the ``state`` grouping when none is named.
OTHER_STATES = "other states"
#: Candidates read from the store at a time: a few MB of answer strings per batch.
BATCH_ROWS = 200_000

GROUP_DIF_COLUMNS = ["item_id", "position", "mh_odds_ratio", "mh_delta", "mh_delta_se",
                     "mh_chi2", "mh_p", "mh_q", "ets_class", "favours", "reference_rate",
                     "focal_rate"]

#: One group's tables: (score_counts (k + 1,), correct_by_score (k, k + 1)), int64.
ScoreTables = tuple[np.ndarray, np.ndarray]


@dataclass(frozen=True, eq=False)
class FormGroupTables:
    """One form's score tables per value of one grouping.

    ``item_ids``, ``positions`` (k,): the counted items in booklet order (CO_ITEM, CO_POSICAO);
    ``tables``: value (as text, e.g. 'F', '2', 'SP'; None for candidates without one) →
    (score_counts (k + 1,), correct_by_score (k, k + 1)), as ``enem.score_tables``.
    """

    grouping: str
    item_ids: np.ndarray
    positions: np.ndarray
    tables: dict[str | None, ScoreTables]

    def candidates(self, value: str | None) -> int:
        """The candidates of one value (0 when none has it)."""
        found = self.tables.get(value)
        return 0 if found is None else int(found[0].sum())

    def values(self) -> list[str]:
        """The values held by some candidate, the most candidates first (ties by value)."""
        held = [value for value in self.tables if value is not None and self.candidates(value)]
        return sorted(held, key=lambda value: (-self.candidates(value), value))

    def pooled(self, values: Sequence[str]) -> ScoreTables:
        """The tables of ``values`` added up (zeros when none has candidates)."""
        n_items = len(self.item_ids)
        counts = np.zeros(n_items + 1, np.int64)
        correct = np.zeros((n_items, n_items + 1), np.int64)
        for value in values:
            if value in self.tables:
                counts += self.tables[value][0]
                correct += self.tables[value][1]
        return counts, correct


@dataclass(frozen=True)
class GroupContrast:
    """The two groups compared: the codes pooled into each and their words."""

    grouping: str
    reference: tuple[str, ...]
    focal: tuple[str, ...]
    reference_label: str
    focal_label: str


@dataclass(frozen=True, eq=False)
class GroupDIF:
    """The DIF of one form's items between two groups of its candidates.

    ``table``: one row per counted item in booklet order (:data:`GROUP_DIF_COLUMNS`): the MH
    statistics as in ``workflows.items.dif.DIF_COLUMNS``, ``favours`` the label of the group
    the item favours (reference where Δ < 0, focal where Δ > 0), ``reference_rate`` and
    ``focal_rate`` each group's share right (not matched on the score).
    ``outside``: the form's candidates in neither group (no value, or another one).
    """

    contrast: GroupContrast
    table: pd.DataFrame
    reference_candidates: int
    focal_candidates: int
    outside: int

    @property
    def classes(self) -> dict[str, int]:
        """Items per ETS class: {'A': …, 'B': …, 'C': …}."""
        return ets_counts(self.table)

    @property
    def flagged_favouring(self) -> dict[str, int]:
        """B and C items per group they favour: {reference label: …, focal label: …}."""
        counts = flagged_by_group(self.table)
        return {label: counts.get(label, 0)
                for label in (self.contrast.reference_label, self.contrast.focal_label)}


def ets_counts(table: pd.DataFrame) -> dict[str, int]:
    """Items per ETS class of a DIF table (``ets_class`` column; '' items not counted)."""
    classes = table["ets_class"] if len(table) else pd.Series(dtype=object)
    return {name: int((classes == name).sum()) for name in ("A", "B", "C")}


def flagged_by_group(table: pd.DataFrame) -> dict[str, int]:
    """Items of class B or C of a DIF table per value of its ``favours`` column."""
    if table.empty:
        return {}
    flagged = table[table["ets_class"].isin(["B", "C"])]
    return {str(key): int(count) for key, count in flagged["favours"].value_counts().items()}


def group_label(grouping: str, value: str) -> str:
    """A value of a grouping in words ('female', 'public school', 'SP')."""
    if grouping == "sex":
        return SEX.get(value, value)
    if grouping == "school_type":
        return f"{SCHOOL_TYPES.get(value, value)} school"
    return value


def group_contrast(tables: FormGroupTables, *, reference: str | None = None,
                   focal: str | None = None) -> GroupContrast:
    """The contrast of ``tables.grouping``: :data:`DEFAULT_GROUPS` unless ``focal`` or
    ``reference`` (codes as text) say otherwise. ``state``: ``focal`` defaults to the state with
    the most candidates of the form, ``reference`` to every other state.

    Raises ValueError when the two groups are the same or the state grouping has no state.
    """
    grouping = tables.grouping
    if grouping == "state":
        states = tables.values()
        focal = focal if focal is not None else (states[0] if states else None)
        if focal is None:
            raise ValueError("no candidate of the form has a state")
        if reference is None:
            others = tuple(state for state in states if state != focal)
            contrast = GroupContrast(grouping, others, (focal,), OTHER_STATES, focal)
        else:
            contrast = GroupContrast(grouping, (reference,), (focal,), reference, focal)
    else:
        default_reference, default_focal = DEFAULT_GROUPS[grouping]
        reference = default_reference if reference is None else reference
        focal = default_focal if focal is None else focal
        contrast = GroupContrast(grouping, (reference,), (focal,),
                                 group_label(grouping, reference), group_label(grouping, focal))
    if set(contrast.reference) & set(contrast.focal):
        raise ValueError(f"the reference and focal groups of {grouping} must differ")
    return contrast


def group_dif_table(item_ids: np.ndarray, positions: np.ndarray, reference: ScoreTables,
                    focal: ScoreTables, labels: tuple[str, str]) -> pd.DataFrame:
    """Mantel–Haenszel DIF per item between two groups given as score tables.

    ``reference`` and ``focal``: (score_counts (k + 1,), correct_by_score (k, k + 1)) over the
    same k items (``item_ids``, ``positions``); ``labels``: (reference, focal) words for
    ``favours``. Returns one row per item, :data:`GROUP_DIF_COLUMNS`, q by Benjamini–Hochberg
    over the items.
    """
    ref_counts, ref_right = (np.asarray(x, dtype=np.float64) for x in reference)
    focal_counts, focal_right = (np.asarray(x, dtype=np.float64) for x in focal)
    ref_wrong = ref_counts[None, :] - ref_right
    focal_wrong = focal_counts[None, :] - focal_right
    mh = mantel_haenszel(ref_right, ref_wrong, focal_right, focal_wrong)
    favours = np.where(mh.delta < 0, labels[0], np.where(mh.delta > 0, labels[1], ""))
    with np.errstate(invalid="ignore", divide="ignore"):
        ref_rate = ref_right.sum(axis=1) / ref_counts.sum()
        focal_rate = focal_right.sum(axis=1) / focal_counts.sum()
    return pd.DataFrame({
        "item_id": np.asarray(item_ids, dtype=np.int64), "position": positions,
        "mh_odds_ratio": mh.common_odds_ratio, "mh_delta": mh.delta,
        "mh_delta_se": mh.delta_se, "mh_chi2": mh.chi2, "mh_p": mh.p_value,
        "mh_q": benjamini_hochberg(mh.p_value), "ets_class": mh.ets_class, "favours": favours,
        "reference_rate": ref_rate, "focal_rate": focal_rate})[GROUP_DIF_COLUMNS]


def group_dif(tables: FormGroupTables, *, reference: str | None = None,
              focal: str | None = None) -> GroupDIF:
    """The DIF between two groups of ``tables`` (:func:`group_contrast` picks them); only the
    candidates of those two groups take part.

    Raises ValueError when either group has no candidate on the form.
    """
    contrast = group_contrast(tables, reference=reference, focal=focal)
    ref, foc = tables.pooled(contrast.reference), tables.pooled(contrast.focal)
    for label, counts in ((contrast.reference_label, ref[0]), (contrast.focal_label, foc[0])):
        if not counts.sum():
            raise ValueError(f"no candidate of the booklet form is in the group {label!r} "
                             f"({tables.grouping})")
    table = group_dif_table(tables.item_ids, tables.positions, ref, foc,
                            (contrast.reference_label, contrast.focal_label))
    everyone = sum(tables.candidates(value) for value in tables.tables)
    n_ref, n_focal = int(ref[0].sum()), int(foc[0].sum())
    return GroupDIF(contrast, table, n_ref, n_focal, everyone - n_ref - n_focal)


def human_group_dif(con: duckdb.DuckDBPyConnection, selection: ItemSelection, grouping: str,
                    reference: str | None = None, focal: str | None = None) -> GroupDIF:
    """DIF between two groups of the candidates of ``selection``'s booklet form (its year,
    area, booklet and item_language; the runs are not read).

    ``grouping``: one of :data:`GROUPINGS`; ``reference``, ``focal``: codes as text (module
    docstring for the defaults). Only candidates with a value in one of the two groups take
    part; see :class:`GroupDIF` for the table.
    """
    return group_dif(form_group_tables(con, selection, grouping), reference=reference,
                     focal=focal)


def form_group_tables(con: duckdb.DuckDBPyConnection, selection: ItemSelection, grouping: str,
                      batch_rows: int = BATCH_ROWS) -> FormGroupTables:
    """The score tables of every value of ``grouping`` on ``selection``'s booklet form, read
    from the store ``batch_rows`` candidates at a time.

    Raises ValueError for an unknown grouping, a selection without a booklet, or an LC
    booklet with languages and no item_language.
    """
    if grouping not in GROUPINGS:
        raise ValueError(f"unknown grouping {grouping!r}: one of {', '.join(GROUPINGS)}")
    if selection.booklet is None:
        raise ValueError("a DIF between human groups needs a booklet")
    form = load_form(con, selection.year, selection.booklet, selection.item_language)
    counted = form.bank.usable
    reader = form_group_responses(con, selection.year, selection.area, selection.booklet,
                                  selection.item_language, grouping, batch_rows)
    n_items = int(counted.sum())
    totals: dict[str | None, ScoreTables] = {}
    # DuckDB's threads read the next batches while numpy counts this one: BLAS threads of its
    # own would fight them for the cores (2 OpenBLAS threads made the counting 5–10× slower on
    # a busy 2-core machine), and the products here are small.
    with threadpool_limits(1, user_api="blas"):
        for chars, values in _form_pieces(reader, form):
            for value, rows in _value_rows(values):
                counts, correct = form_score_counts([chars[rows]], form.keys, counted,
                                                    CHUNK_ROWS)
                before = totals.get(value, (np.zeros(n_items + 1, np.int64),
                                            np.zeros((n_items, n_items + 1), np.int64)))
                totals[value] = (before[0] + counts, before[1] + correct)
    return FormGroupTables(grouping, form.item_ids[counted], form.positions[counted], totals)


def _form_pieces(reader: pa.RecordBatchReader, form: BookletForm
                 ) -> Iterator[tuple[np.ndarray, pa.Array]]:
    """(chars (n, form.n_items) uint8 in form order, group values (n,)) per batch and string
    width: a 50-character LC string keeps its candidate's language block, as at ingest."""
    widths = [form.n_items]
    if form.language is not None and form.language_items:
        widths.append(form.n_items + form.language_items)
    for batch in reader:
        strings = batch.column("responses")
        lengths = string_lengths(strings)
        # The scored candidates' strings have one of these widths (the ingest rejected the
        # others), so nothing is left out here.
        for width in widths:
            fits = lengths == width
            if not fits.any():
                continue
            # A batch of one width (the usual case) is read as it is, without a copy.
            part = batch if fits.all() else batch.filter(pa.array(fits))
            chars = strings_to_chars(part.column("responses"), width)
            if width > form.n_items:
                language = part.column("language").to_numpy(zero_copy_only=False)
                chars = select_language_block(chars, language, form.language_items)
            yield chars, part.column("group_value")


def _value_rows(values: pa.Array) -> Iterator[tuple[str | None, np.ndarray]]:
    """(value, its row indices) for each value of ``values`` (None: the nulls)."""
    encoded = pc.dictionary_encode(values)
    codes = encoded.indices.fill_null(-1).to_numpy(zero_copy_only=False)
    for code, value in enumerate(encoded.dictionary.to_pylist()):
        yield value, np.flatnonzero(codes == code)
    missing = np.flatnonzero(codes < 0)
    if missing.size:
        yield None, missing
