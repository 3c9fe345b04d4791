"""Human populations of a year, pre-aggregated at ingest (the page's queries are in
``store.population_queries``).

A population is every scored candidate of an area sharing one value of a grouping
(:data:`GROUPINGS`: state, school type, the school's administration, sex, colour/race, age
band, family income, father's and mother's education, internet at home) or of the crossing
state × school type, plus everyone ('all'). Per population and area, ``agg_populations``
holds n, mean, SD and SE of the mean of θ, of the nota and of percent correct (and of the
CTT count), and the exact quantiles at 0, 1, …, 100%
(``analytics.populations.QUANTILE_LEVELS``) of θ, nota and percent correct, computed with
numpy's default rule (= DuckDB's ``quantile_cont``).

Why numpy and not ``quantile_cont`` per group in SQL: one full-size year is ~11M scored
records and 12 groupings; holistic quantiles over so many grouping sets cost minutes, while
one sort of θ per area serves every grouping here (``analytics.populations``), and percent
correct and notas (in tenths) are discrete, so their quantiles come exactly from counts.

When some booklets' notas are not reproduced (``booklet_audit``, below
``enem.score_batches.REPRODUCED_SHARE_FLOOR``), a second set of rows (``booklets = 'reproduced'``)
leaves their candidates out, for the sidebar switch that does so on every page.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass

import duckdb
import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from analytics.plausible_means import (
    SCORING_PRIOR_SD,
    PrecisionTable,
    likelihood_precision,
    precision_bins,
    precision_table,
    table_group_means,
)
from analytics.populations import (
    count_moments,
    count_quantiles,
    moments_from_sums,
    sorted_group_quantiles,
)
from enem.areas import AREAS
from enem.score_batches import booklet_flagged
from enem.scoring import ScoringOptions
from store.audit_queries import flagged_booklets
from store.connection import insert_rows
from store.model_runs import year_scoring_options

#: Grouping kind → its ``examinees`` column.
GROUPINGS: dict[str, str] = {
    "state": "state", "school_type": "school_type", "school_admin": "school_admin",
    "sex": "sex", "race": "race", "age_band": "age_band", "income": "income",
    "father_education": "father_education", "mother_education": "mother_education",
    "internet": "internet",
}
#: Crossings of two groupings: kind → (first, second); the value is 'first|second'.
CROSSINGS: dict[str, tuple[str, str]] = {"state_school": ("state", "school_type")}
#: The value of a population whose grouping column is empty.
MISSING = "?"
#: Threads summarising areas (one per core, at most two: each holds an area's records).
WORKERS = max(1, min(2, os.cpu_count() or 1))
#: ``booklets`` of the rows over every scored booklet, and of those leaving flagged ones out.
ALL_BOOKLETS, REPRODUCED_BOOKLETS = "all", "reproduced"


@dataclass(frozen=True)
class _Records:
    """The scored records of one area, one entry each: booklet, θ, nota, CTT, items counted,
    and per grouping its code (0, 1, …; compact) with the value each code stands for."""

    booklet: np.ndarray
    theta: np.ndarray
    theta_se: np.ndarray
    nota: np.ndarray
    ctt: np.ndarray
    n_scored: np.ndarray
    codes: dict[str, np.ndarray]
    labels: dict[str, list[str]]
    #: The SD of the N(0, ·) prior the θ were estimated under (None: ML estimates).
    prior_sd: float | None = SCORING_PRIOR_SD


#: The fields of an ``analytics.plausible_means.PrecisionTable``, summed like the other sums.
_PV_FIELDS = ("n", "precision", "weighted", "weighted_squares")

#: Temporary table of every examinee's join key and grouping codes, made once per build.
_CODES = "population_codes"


def _dictionaries(con: duckdb.DuckDBPyConnection, year: int
                  ) -> tuple[dict[str, list], bool]:
    """The distinct non-empty values of every grouping column in ``year`` (sorted), and
    whether every examinee id is a string of 1 to 18 digits, all of one length (INEP's are):
    distinct ids are then distinct numbers, and an integer join is several times faster than
    one on text."""
    lists = ", ".join(f"list_sort(list(DISTINCT {column}))" for column in GROUPINGS.values())
    row = con.execute(
        f"""SELECT {lists}, bool_and(regexp_full_match(examinee_id, '[0-9]{{1,18}}'))
                           AND min(length(examinee_id)) = max(length(examinee_id))
            FROM examinees WHERE year = ?""", [year]).fetchall()[0]
    values = {kind: [v for v in (found or []) if v is not None]
              for kind, found in zip(GROUPINGS, row[:-1], strict=True)}
    return values, bool(row[-1])


@contextmanager
def _examinee_codes(con: duckdb.DuckDBPyConnection, year: int
                    ) -> Iterator[tuple[str, dict[str, list[str]]]]:
    """Fill the temporary :data:`_CODES` table for ``year`` (the join key k and, per grouping,
    the code 0 for empty or the 1-based place of the value in its sorted distinct values);
    yields (the SQL of a score row's join key, the values of every grouping as text)."""
    values, numeric = _dictionaries(con, year)
    codes = ", ".join(f"coalesce(list_position(${kind}, {column}), 0)::SMALLINT AS {kind}"
                      for kind, column in GROUPINGS.items())
    key = "TRY_CAST(examinee_id AS BIGINT)" if numeric else "examinee_id"
    try:
        con.execute(f"""CREATE OR REPLACE TEMP TABLE {_CODES} AS
                        SELECT {key} AS k, {codes} FROM examinees WHERE year = $year""",
                    {"year": year, **values})
        yield ("TRY_CAST(s.examinee_id AS BIGINT)" if numeric else "s.examinee_id",
               {kind: [str(v) for v in found] for kind, found in values.items()})
    finally:
        con.execute(f"DROP TABLE IF EXISTS {_CODES}")


def _records(con: duckdb.DuckDBPyConnection, year: int, area: str, score_key: str,
             values: dict[str, list[str]], prior_sd: float | None) -> _Records:
    """Every scored record of ``year`` and ``area`` with its examinee's grouping codes."""
    table = con.sql(
        f"""SELECT s.booklet_id, s.theta, s.theta_se, s.nota, s.ctt, s.n_scored,
                   e.* EXCLUDE (k)
            FROM scores s JOIN {_CODES} e ON e.k = {score_key}
            WHERE s.year = $year AND s.area = $area AND NOT isnan(s.theta)
              AND s.n_scored > 0""",
        params={"year": year, "area": area}).to_arrow_table()
    column = {name: table.column(name).to_numpy() for name in table.column_names}
    labels = {kind: [MISSING, *values[kind]] for kind in GROUPINGS}
    codes = {kind: _narrow(column[kind], len(labels[kind])) for kind in GROUPINGS}
    return _Records(
        booklet=column["booklet_id"], theta=column["theta"], theta_se=column["theta_se"],
        nota=column["nota"], ctt=column["ctt"].astype(np.int64),
        n_scored=column["n_scored"].astype(np.int64), codes=codes, labels=labels,
        prior_sd=prior_sd)


def _groupings(records: _Records) -> list[tuple[str, np.ndarray, list[str]]]:
    """(kind, code of each record, value of each code) for 'all', every grouping and every
    crossing."""
    n = records.theta.size
    out = [("all", np.zeros(n, dtype=np.uint8), ["all"])]
    for kind in GROUPINGS:
        out.append((kind, records.codes[kind], records.labels[kind]))
    for kind, (first, second) in CROSSINGS.items():
        left, right = records.labels[first], records.labels[second]
        out.append((kind, _crossing(records, first, second),
                    [f"{a}|{b}" for a in left for b in right]))
    return out


def _crossing(records: _Records, first: str, second: str) -> np.ndarray:
    """Codes of the crossing of two groupings: first × (values of second) + second."""
    width = len(records.labels[second])
    return _narrow(records.codes[first].astype(np.int64) * width + records.codes[second],
                   len(records.labels[first]) * width)


def _narrow(codes: np.ndarray, n_groups: int) -> np.ndarray:
    """``codes`` in the smallest unsigned type holding ``n_groups`` codes: numpy's stable sort
    of 8-bit keys is one radix pass, of 16-bit keys two (the quantiles sort codes per grouping)."""
    return codes.astype(np.uint8 if n_groups <= 1 << 8 else np.uint16 if n_groups <= 1 << 16
                        else np.int64)


@dataclass(frozen=True)
class _Discrete:
    """A discrete measure of one area's records: each record's index into ``values``
    (ascending), and per value a second measure that shares its counts (or None)."""

    index: np.ndarray
    values: np.ndarray
    paired: np.ndarray | None = None

    def table(self, codes: np.ndarray, n_groups: int) -> np.ndarray:
        """(n_groups, m) counts of each group's members per value."""
        m = self.values.size
        return np.bincount(codes * m + self.index, minlength=n_groups * m).reshape(n_groups, m)


def _percent_correct(ctt: np.ndarray, n_scored: np.ndarray) -> _Discrete:
    """Percent correct 100·CTT/items counted, one value per distinct (CTT, items) pair, with
    the CTT count paired to each value."""
    base = int(n_scored.max()) + 1
    pair = ctt * base + n_scored
    used = np.flatnonzero(np.bincount(pair))
    pct = 100.0 * (used // base) / (used % base)
    ascending = np.argsort(pct, kind="stable")
    lookup = np.empty(used[-1] + 1, dtype=np.int64)
    lookup[used[ascending]] = np.arange(used.size)
    return _Discrete(lookup[pair], pct[ascending], (used // base)[ascending].astype(float))


def _tenths(nota: np.ndarray) -> _Discrete | None:
    """Notas as indices into the whole tenths between their extremes, when every nota is a
    whole tenth (ENEM notas are rounded to one decimal; 100·θ + 500 is not), else None."""
    tenths = np.rint(nota * 10.0)
    if not np.array_equal(tenths / 10.0, nota):
        return None
    low = tenths.min()
    return _Discrete((tenths - low).astype(np.int64),
                     (np.arange(tenths.max() - low + 1) + low) / 10.0)


@dataclass(frozen=True)
class _Measures:
    """One area's selected records, prepared once for every grouping: θ in ascending order
    (``order``), θ and nota centred on their means with their squares, and the discrete
    measures (percent correct; notas in tenths, or None when they are not)."""

    order: np.ndarray
    sorted_theta: np.ndarray
    theta: tuple[float, np.ndarray, np.ndarray]
    nota: tuple[float, np.ndarray, np.ndarray]
    nota_values: np.ndarray
    pct: _Discrete
    tenths: _Discrete | None
    #: Each record's likelihood precision λ, λ·m and λ bin (``analytics.plausible_means``).
    likelihood: tuple[np.ndarray, np.ndarray, np.ndarray]

    @classmethod
    def of(cls, records: _Records, keep: slice | np.ndarray) -> _Measures:
        theta, nota = records.theta[keep], records.nota[keep]
        order = np.argsort(theta)
        precision, weighted = likelihood_precision(theta, records.theta_se[keep],
                                                   records.prior_sd)
        # A record without a usable SE adds nothing to the plausible-value means.
        usable = np.isfinite(precision) & np.isfinite(weighted)
        precision, weighted = np.where(usable, precision, 0.0), np.where(usable, weighted, 0.0)

        def centred(values: np.ndarray) -> tuple[float, np.ndarray, np.ndarray]:
            shift = float(values.mean())
            values = values - shift
            return shift, values, values * values

        tenths = _tenths(nota)
        return cls(order, theta[order], centred(theta),
                   centred(nota) if tenths is None else (0.0, nota, nota), nota,
                   _percent_correct(records.ctt[keep], records.n_scored[keep]), tenths,
                   (precision, weighted, precision_bins(precision)))

    def sums(self, codes: np.ndarray, n_groups: int) -> dict[str, np.ndarray]:
        """The additive statistics of each group (first axis n_groups): counts, sums of
        centred θ and nota and of their squares, count tables of the discrete measures."""
        wide = codes.astype(np.intp)
        out = {"n": np.bincount(wide, minlength=n_groups),
               "pct": self.pct.table(wide, n_groups)}
        continuous = [("theta", self.theta)]
        if self.tenths is None:
            continuous.append(("nota", self.nota))
        else:
            out["tenths"] = self.tenths.table(wide, n_groups)
        for name, (_, values, squares) in continuous:
            out[f"{name}_sum"] = np.bincount(wide, values, n_groups)
            out[f"{name}_squares"] = np.bincount(wide, squares, n_groups)
        table = precision_table(*self.likelihood[:2], wide, self.likelihood[2], n_groups)
        out |= {f"pv_{field}": getattr(table, field) for field in _PV_FIELDS}
        return out

    def rows(self, kind: str, codes: np.ndarray, labels: list[str],
             sums: dict[str, np.ndarray]) -> list[dict]:
        """The population rows of one grouping from its sums and its codes (for quantiles)."""
        n_groups, n = len(labels), sums["n"]
        moments = {"theta": moments_from_sums(n, sums["theta_sum"], sums["theta_squares"],
                                              self.theta[0])}
        quantiles = {"theta": sorted_group_quantiles(self.sorted_theta, codes[self.order],
                                                     n_groups)}
        if self.tenths is not None:
            moments["nota"] = count_moments(sums["tenths"], self.tenths.values)
            quantiles["nota"] = count_quantiles(sums["tenths"], self.tenths.values)
        else:
            moments["nota"] = moments_from_sums(n, sums["nota_sum"], sums["nota_squares"],
                                                self.nota[0])
            nota_order = np.argsort(self.nota_values)
            quantiles["nota"] = sorted_group_quantiles(self.nota_values[nota_order],
                                                       codes[nota_order], n_groups)
        latent = table_group_means(PrecisionTable(*(sums[f"pv_{f}"] for f in _PV_FIELDS)))
        moments["pct"] = count_moments(sums["pct"], self.pct.values)
        quantiles["pct"] = count_quantiles(sums["pct"], self.pct.values)
        # _percent_correct always pairs each percentage with its CTT count.
        assert self.pct.paired is not None
        ctt = count_moments(sums["pct"], self.pct.paired)
        rows = []
        for group in np.flatnonzero(n):
            row = {"group_kind": kind, "group_value": labels[group], "n": int(n[group]),
                   "ctt_mean": ctt.mean[group], "ctt_sd": ctt.sd[group],
                   "theta_pv_mean": latent.mean[group], "theta_pv_sd": latent.sd[group],
                   "theta_pv_se": latent.se[group]}
            for name, stats in moments.items():
                row.update({f"{name}_mean": stats.mean[group], f"{name}_sd": stats.sd[group],
                            f"{name}_se": stats.se[group],
                            f"{name}_quantiles": quantiles[name][group].tolist()})
            rows.append(row)
        return rows


def _area_rows(records: _Records, keep: slice | np.ndarray) -> list[dict]:
    """The population rows of the records selected by ``keep`` (a slice, or the indices of
    some records). The additive statistics of a crossing's two groupings and of everyone are
    summed from the crossing's; quantiles come from each grouping's own codes."""
    measures = _Measures.of(records, keep)
    known: dict[str, dict[str, np.ndarray]] = {}
    for kind, (first, second) in CROSSINGS.items():
        codes = _crossing(records, first, second)[keep]
        crossed = measures.sums(codes, len(records.labels[first]) * len(records.labels[second]))
        known[kind] = crossed
        shape = (len(records.labels[first]), len(records.labels[second]))
        known[first] = {k: v.reshape(shape + v.shape[1:]).sum(axis=1) for k, v in crossed.items()}
        known[second] = {k: v.reshape(shape + v.shape[1:]).sum(axis=0)
                         for k, v in crossed.items()}
        known["all"] = {k: v.sum(axis=0, keepdims=True) for k, v in crossed.items()}
    rows = []
    for kind, all_codes, labels in _groupings(records):
        codes = all_codes[keep]
        sums = known.get(kind) or measures.sums(codes, len(labels))
        rows += measures.rows(kind, codes, labels, sums)
    return rows


def reproduced_below_share(audits) -> list[int]:
    """The booklets of ``audits`` (``enem.score_batches.BookletAudit``) that
    ``enem.score_batches.booklet_flagged`` flags, ascending: the ingest's own counts, before
    they are stored (:func:`flagged_booklets` reads the same rule back from the store)."""
    return sorted(a.booklet_id for a in audits if booklet_flagged(a.nota_matched, a.nota_checked))


def _area_population_rows(records: _Records, year: int, area: str,
                          flagged: list[int]) -> list[dict]:
    """Every row of one area: over all booklets and, when some are flagged, without them."""
    variants: list[tuple[str, slice | np.ndarray]] = [(ALL_BOOKLETS, slice(None))]
    kept = np.flatnonzero(~np.isin(records.booklet, flagged)) if flagged else None
    if kept is not None and kept.size:  # an area whose every booklet is flagged has none
        variants.append((REPRODUCED_BOOKLETS, kept))
    return [{"year": year, "area": area, "booklets": booklets, **row}
            for booklets, keep in variants for row in _area_rows(records, keep)]


def population_frame(year: int, area: str, scores: pa.Table, groupings: pa.Table,
                     flagged: list[int], prior_sd: float | None = SCORING_PRIOR_SD
                     ) -> pd.DataFrame | None:
    """The ``agg_populations`` rows of one area, from its score rows (an Arrow table with the
    ``scores`` columns) and, row for row, the grouping columns of their examinees (the
    ``examinees`` columns named in GROUPINGS); ``flagged``: the booklets whose notas are not
    reproduced; ``prior_sd``: the SD of the prior θ was estimated under (:func:`prior_sd_of`).
    The rows :func:`build_populations` derives from the store; None without rows.
    """
    theta = scores.column("theta").to_numpy()
    n_scored = scores.column("n_scored").to_numpy()
    kept = np.flatnonzero(~np.isnan(theta) & (n_scored > 0))
    if not kept.size:
        return None
    codes, labels = {}, {}
    for kind, column in GROUPINGS.items():
        encoded = pc.dictionary_encode(groupings.column(column)).combine_chunks()
        labels[kind] = [MISSING, *(str(v) for v in encoded.dictionary.to_pylist())]
        codes[kind] = _narrow(pc.fill_null(pc.add(encoded.indices.cast(pa.int32()), 1),
                                           0).to_numpy()[kept], len(labels[kind]))
    records = _Records(
        booklet=scores.column("booklet_id").to_numpy()[kept], theta=theta[kept],
        theta_se=scores.column("theta_se").to_numpy()[kept],
        nota=scores.column("nota").to_numpy()[kept],
        ctt=scores.column("ctt").to_numpy()[kept].astype(np.int64),
        n_scored=n_scored[kept].astype(np.int64), codes=codes, labels=labels,
        prior_sd=prior_sd)
    return pd.DataFrame(_area_population_rows(records, year, area, flagged))


def prior_sd_of(options: ScoringOptions) -> float | None:
    """The SD of the N(0, ·) prior of θ estimated with ``options``: None for ML estimates."""
    return None if options.method == "ml" else SCORING_PRIOR_SD


def build_populations(con: duckdb.DuckDBPyConnection, year: int) -> int:
    """Insert the year's ``agg_populations`` rows from ``scores`` and ``examinees`` (the
    caller removed the old ones); returns the rows written. (The ingest builds them area by
    area in its scoring workers with :func:`population_frame`; this rebuilds them from a
    stored year.)

    The areas are summarised in worker threads while this thread reads the next area from
    the store (numpy's sorts, gathers and sums run outside the interpreter lock)."""
    flagged = flagged_booklets(con, year)
    prior_sd = prior_sd_of(year_scoring_options(con, year))
    with _examinee_codes(con, year) as (score_key, values), \
            ThreadPoolExecutor(max_workers=WORKERS) as pool:
        pending = []
        for area in AREAS:
            records = _records(con, year, area, score_key, values, prior_sd)
            if records.theta.size:
                pending.append(pool.submit(_area_population_rows, records, year, area,
                                           flagged))
        rows = [row for done in pending for row in done.result()]
    if rows:
        insert_rows(con, "agg_populations", pd.DataFrame(rows))
    return len(rows)
