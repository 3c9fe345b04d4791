"""The diagnostic report by skill (the CAT paper's Table 1 / Fig. 5), in two parts.

**Levels** (the paper's report): for each model series, θ̂ per group of ENEM skills
(``CO_HABILIDADE``; by default the Matriz de Referência's competências, since a booklet holds
only one to three items per skill), beside the mean θ̂ per group of the top 20% ("High") and
the top 50% ("Mid") of a seeded sample of the area's candidates, with a rank line. Every θ̂ here
is an EAP (N(0, 1) prior, the year's grid and D) from one response pattern's answers to the
group's items only: for a model, the mean over its response patterns (shuffles, prompt variants,
runs of the series); for a human level, the mean over the sampled candidates whose full-test θ
is at or above the sample's 80th (High) or 50th (Mid) percentile. A θ̂ from five items is pulled
toward the prior mean; humans and models are pulled alike, so the comparison is like for like.

**Accuracy against expectation**: for a model (a run series) on an area, over the items it
answered that have parameters and a skill, per skill:

- observed: the mean over the skill's items of the model's fraction correct on the item (over
  all its answers: shuffles, prompt variants, runs of the series);
- expected: the mean over the skill's items of P_j(θ), θ the model's mean θ over its scored
  patterns of the area, P the 3PL with the year's D;
- humans: the mean over the skill's items of n_correct / n of the humans in the item's θ bin
  (``item_icc``, bins of width ICC_BIN_WIDTH) holding θ; items without humans in that bin are
  left out of the mean (``humans_n`` counts the humans behind it).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from analytics.ability import AbilityEstimate, EAPEstimator, QuadratureGrid
from analytics.irt import FloatArray, ItemBank, probability
from enem.areas import check_area
from enem.item_statistics import ICC_BIN_WIDTH
from enem.items import stored_item_bank
from enem.scoring import DEFAULT_OPTIONS, ScoringOptions
from store.cat_queries import area_bank_items
from store.connection import connected
from workflows.cat.posthoc import candidate_answers, load_candidates

#: Columns of the report, in order.
SKILL_COLUMNS = ["model", "skill", "n_items", "theta", "observed", "expected", "humans",
                 "humans_n", "observed_minus_expected"]


def bin_index(theta: np.ndarray, width: float = ICC_BIN_WIDTH) -> np.ndarray:
    """The index k of the θ bin [k·width, (k + 1)·width) holding each θ (integers, shape of
    ``theta``)."""
    return np.floor(np.asarray(theta, dtype=np.float64) / width).astype(np.int64)


def item_rows(answers: pd.DataFrame, theta: pd.DataFrame, items: pd.DataFrame) -> pd.DataFrame:
    """One row per (model, item) the model answered, with its fraction correct, the model's θ
    and the item's skill and parameters (items without either left out)."""
    rows = answers.merge(theta[["model", "theta"]], on="model")
    rows = rows.merge(items[["item_id", "skill", "a", "b", "c"]], on="item_id")
    rows = rows.dropna(subset=["skill", "a", "b", "c", "theta"])
    rows = rows.assign(observed=rows["correct"] / rows["answers"],
                       skill=rows["skill"].astype(int))
    # A fixed order: the means below then add the same numbers in the same order whatever order
    # the store returned the answers in (float sums differ in the last bit otherwise).
    return rows.sort_values(["model", "skill", "item_id"], ignore_index=True)


def expected_at_theta(rows: pd.DataFrame, scaling: float) -> np.ndarray:
    """P_j(θ) of each row's item at the row's θ, shape (rows,)."""
    expected = np.empty(len(rows))
    for theta, index in rows.groupby("theta").indices.items():
        part = rows.iloc[index]
        bank = stored_item_bank(part, scaling=scaling)
        expected[index] = probability(float(theta), bank)[0]
    return expected


def humans_at_theta(rows: pd.DataFrame, icc: pd.DataFrame) -> pd.DataFrame:
    """Each row's humans in the item's θ bin holding the row's θ: columns humans (fraction
    correct, NaN without humans there) and humans_n."""
    table = icc.assign(bin=np.rint(icc["theta_bin"] / ICC_BIN_WIDTH).astype(np.int64))
    wanted = pd.DataFrame({"item_id": rows["item_id"].to_numpy(),
                           "bin": bin_index(rows["theta"].to_numpy())})
    found = wanted.merge(table[["item_id", "bin", "n", "n_correct"]], on=["item_id", "bin"],
                         how="left")
    n = found["n"].fillna(0).to_numpy(np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        fraction = np.where(n > 0, found["n_correct"].to_numpy(np.float64) / n, np.nan)
    return pd.DataFrame({"humans": fraction, "humans_n": n.astype(np.int64)}, index=rows.index)


def skill_diagnostics(answers: pd.DataFrame, theta: pd.DataFrame, items: pd.DataFrame,
                      icc: pd.DataFrame, scaling: float = 1.0) -> pd.DataFrame:
    """The report (SKILL_COLUMNS), one row per model and skill, by model then skill.

    ``answers``: model, item_id, answers, correct (``model_item_correct``); ``theta``: model,
    theta (its mean θ on the area); ``items``: the area's distinct items with item_id, skill,
    a, b, c; ``icc``: item_id, theta_bin, n, n_correct (``area_item_icc``).
    """
    rows = item_rows(answers, theta, items)
    if rows.empty:
        return pd.DataFrame(columns=SKILL_COLUMNS)
    rows["expected"] = expected_at_theta(rows, scaling)
    rows[["humans", "humans_n"]] = humans_at_theta(rows, icc)
    report = rows.groupby(["model", "skill"], as_index=False).agg(
        n_items=("item_id", "nunique"), theta=("theta", "first"),
        observed=("observed", "mean"), expected=("expected", "mean"),
        humans=("humans", "mean"), humans_n=("humans_n", "sum"))
    report["observed_minus_expected"] = report["observed"] - report["expected"]
    return report[SKILL_COLUMNS].sort_values(["model", "skill"], ignore_index=True)


def mean_theta(points: pd.DataFrame) -> pd.DataFrame:
    """Each model's mean θ over its scored patterns (``model_points`` rows): model, theta."""
    finite = points[np.isfinite(points["theta"].to_numpy(np.float64))]
    return finite.groupby("model", as_index=False)["theta"].mean()


# --- Levels: θ̂ per group of skills, models beside the top 20% and 50% of humans --------------

#: ENEM's Matriz de Referência (INEP, 2009; the matrix of every exam since): each area's
#: competências de área as the (first, last) CO_HABILIDADE they hold. Competência k is "Ck".
COMPETENCIES: dict[str, tuple[tuple[int, int], ...]] = {
    "CH": ((1, 5), (6, 10), (11, 15), (16, 20), (21, 25), (26, 30)),
    "CN": ((1, 4), (5, 7), (8, 12), (13, 16), (17, 19), (20, 23), (24, 27), (28, 30)),
    "LC": ((1, 4), (5, 8), (9, 11), (12, 14), (15, 17), (18, 20), (21, 24), (25, 27), (28, 30)),
    "MT": ((1, 5), (6, 9), (10, 14), (15, 18), (19, 23), (24, 26), (27, 30)),
}
#: How skills are grouped: by competência (the default: 3–7 items per group on a booklet) or
#: one skill each (1–3 items: mostly the prior).
GROUPINGS = ("competency", "skill")
#: Candidates sampled for the human levels.
HUMAN_SAMPLE = 2000
#: The human levels, as the CAT paper names them, and the share of candidates at the top.
HUMAN_LEVELS: dict[str, float] = {"High": 0.2, "Mid": 0.5}
#: Adjacent entries of the rank line differ (">") when their mean difference over the groups is
#: at least this many standard errors of that mean; otherwise they are level ("≈").
RANK_Z = 2.0
#: Columns of the models' and of the humans' levels.
MODEL_LEVEL_COLUMNS = ["model", "group", "n_items", "patterns", "theta", "se"]
HUMAN_LEVEL_COLUMNS = ["level", "group", "theta", "people", "threshold"]


def skill_groups(area: str, skills: np.ndarray, grouping: str = "competency") -> np.ndarray:
    """The group label of each skill (``CO_HABILIDADE`` 1–30), shape of ``skills``: ``C<k>``
    (its competência) or ``H<n>`` (the skill itself); "" for a missing or unknown skill."""
    if grouping not in GROUPINGS:
        raise ValueError(f"grouping must be one of {GROUPINGS}; got {grouping!r}")
    values = pd.to_numeric(pd.Series(np.asarray(skills).ravel()), errors="coerce").to_numpy()
    labels = np.full(values.shape, "", dtype=object)
    known = np.isfinite(values)
    if grouping == "skill":
        labels[known] = [f"H{int(v)}" for v in values[known]]
        return labels.reshape(np.shape(skills))
    for number, (low, high) in enumerate(COMPETENCIES[check_area(area)], start=1):
        labels[known & (values >= low) & (values <= high)] = f"C{number}"
    return labels.reshape(np.shape(skills))


def group_number(group: str) -> int:
    """The number of a group label (``C3`` → 3, ``H12`` → 12), for sorting."""
    return int(group[1:])


def group_title(area: str, group: str) -> str:
    """A group's label with its skills, e.g. ``C1 (H1–H4)``; a skill's label as it is."""
    if not group.startswith("C"):
        return group
    low, high = COMPETENCIES[check_area(area)][group_number(group) - 1]
    return f"{group} (H{low}–H{high})"


def group_estimator(options: ScoringOptions = DEFAULT_OPTIONS) -> EAPEstimator:
    """The EAP of the levels: a N(0, 1) prior on the year's grid (INEP's: 40 points on
    [−4, 4]), whatever the year's method; an ML would sit at its bound for any group a pattern
    answered all right or all wrong."""
    return EAPEstimator(grid=QuadratureGrid(options.n_quadrature, options.theta_range))


def group_estimates(responses: FloatArray, bank: ItemBank, labels: np.ndarray,
                    estimator: EAPEstimator) -> dict[str, AbilityEstimate]:
    """θ̂ and SE of every row from its answers to each group's items alone.

    Parameters
    ----------
    responses : array of shape (n, J)
        1.0 / 0.0 / NaN (not answered), columns the items of ``bank``.
    bank : ItemBank
        J items; items without parameters drop out.
    labels : array of shape (J,)
        Each item's group ("" for none: left out).
    estimator : EAPEstimator

    Returns
    -------
    dict
        Group (in group order) → θ̂ and SE of shape (n,), NaN for a row that answered no usable
        item of the group.
    """
    responses = np.asarray(responses, dtype=np.float64)
    counted = np.isfinite(responses) & bank.usable[None, :]
    out = {}
    for group in sorted({g for g in labels if g}, key=group_number):
        columns = np.flatnonzero(labels == group)
        estimate = estimator.estimate(responses[:, columns], bank.subset(columns))
        seen = counted[:, columns].any(axis=1)
        out[group] = AbilityEstimate(theta=np.where(seen, estimate.theta, np.nan),
                                     se=np.where(seen, estimate.se, np.nan))
    return out


def model_group_theta(patterns: pd.DataFrame, items: pd.DataFrame, area: str,
                      grouping: str = "competency",
                      options: ScoringOptions = DEFAULT_OPTIONS) -> pd.DataFrame:
    """Each model series' θ̂ per group of skills (MODEL_LEVEL_COLUMNS, by model then group).

    ``patterns``: one row per (pattern, item) with pattern, model, item_id, correct
    (``model_pattern_matrix``); ``items``: the area's distinct items with item_id, key, skill,
    a, b, c, abandoned (``area_items``). θ̂ of a group is the mean over the series' patterns of
    each pattern's EAP from its answers to the group's usable items; ``se`` the mean posterior
    SD; ``patterns`` how many patterns answered one of them; ``n_items`` how many of the
    group's items the series answered.
    """
    usable = items.dropna(subset=["a", "b", "c", "skill"])
    usable = usable[~usable["abandoned"].fillna(False).astype(bool)
                    & (usable["key"].fillna("") != "X")].drop_duplicates("item_id")
    rows = patterns[patterns["item_id"].isin(usable["item_id"])]
    if rows.empty:
        return pd.DataFrame(columns=MODEL_LEVEL_COLUMNS)
    wide = rows.pivot_table(index="pattern", columns="item_id", values="correct",
                            aggfunc="first")
    model = rows.drop_duplicates("pattern").set_index("pattern")["model"].reindex(wide.index)
    usable = usable.set_index("item_id").loc[wide.columns]
    bank = stored_item_bank(usable, scaling=options.scaling)
    labels = skill_groups(area, usable["skill"].to_numpy(), grouping)
    # Which of each group's items each series answered at all.
    answered = wide.notna().groupby(model.to_numpy()).any()
    records = []
    for group, estimate in group_estimates(wide.to_numpy(np.float64), bank, labels,
                                           group_estimator(options)).items():
        part = pd.DataFrame({"model": model.to_numpy(), "theta": estimate.theta,
                             "se": estimate.se}).dropna(subset=["theta"])
        n_items = answered.loc[:, labels == group].sum(axis=1)
        for name, chosen in part.groupby("model", sort=True):
            records.append({"model": name, "group": group, "n_items": int(n_items[name]),
                            "patterns": len(chosen), "theta": chosen["theta"].mean(),
                            "se": chosen["se"].mean()})
    report = pd.DataFrame(records, columns=MODEL_LEVEL_COLUMNS)
    return report.sort_values(["model", "group"], key=_group_sort_key, ignore_index=True)


def _group_sort_key(column: pd.Series) -> pd.Series:
    """Sort key of a frame's columns: group labels by their number, other columns as they
    are."""
    return column.map(group_number) if column.name == "group" else column


@dataclass(frozen=True, eq=False)
class HumanLevels:
    """The human levels: ``frame`` (HUMAN_LEVEL_COLUMNS: level, group, the mean θ̂ of the
    level's sampled candidates on the group, how many of them answered it, and the full-test θ
    at or above which a candidate belongs to the level) and a ``description``."""

    frame: pd.DataFrame
    description: str


def human_group_levels(db_path: Path, year: int, area: str, grouping: str = "competency", *,
                       n_candidates: int = HUMAN_SAMPLE, seed: int = 0) -> HumanLevels:
    """The mean θ̂ per group of the top 20% (High) and top 50% (Mid) of a seeded sample of
    ``n_candidates`` scored candidates of ``area`` (``workflows.cat.posthoc.load_candidates``):
    each candidate's θ̂ per group from their answers to their own booklet form's items of the
    group, by the levels' EAP; a level holds the sampled candidates whose stored full-test θ is
    at or above the sample's 80th (50th) percentile. ValueError without scored candidates."""
    area = check_area(area)
    sample, forms, options = load_candidates(db_path, year, area, n_candidates, seed)
    with connected(Path(db_path), read_only=True) as con:
        skills = area_bank_items(con, area, [year]).set_index("item_id")["skill"]
    estimator = group_estimator(options)
    parts = []
    for index, rows in sample.groupby("form", sort=True):
        form = forms[index]
        labels = skill_groups(area, skills.reindex(form.item_ids).to_numpy(), grouping)
        estimates = group_estimates(candidate_answers(rows, form),
                                    options.item_bank(form.bank), labels, estimator)
        parts.append(pd.DataFrame({group: estimate.theta
                                   for group, estimate in estimates.items()}, index=rows.index))
    per_person = pd.concat(parts).reindex(sample.index)
    full = sample["theta"].to_numpy(np.float64)
    records = []
    for level, share in HUMAN_LEVELS.items():
        threshold = float(np.quantile(full, 1.0 - share))
        members = per_person[full >= threshold]
        for group in sorted(members.columns, key=group_number):
            values = members[group].dropna()
            if len(values):
                records.append({"level": level, "group": group, "theta": values.mean(),
                                "people": len(values), "threshold": threshold})
    description = (f"{area} {year}: {len(sample):,} sampled candidates (seed {seed}); High: "
                   "full-test θ at or above the sample's 80th percentile, Mid: its 50th; θ̂ by "
                   f"EAP on {options.n_quadrature} points over [{options.theta_range[0]:g}, "
                   f"{options.theta_range[1]:g}], D = {options.scaling:g}")
    return HumanLevels(pd.DataFrame(records, columns=HUMAN_LEVEL_COLUMNS), description)


def level_table(models: pd.DataFrame, humans: pd.DataFrame | None = None,
                model_order: Sequence[str] | None = None,
                baselines: Collection[str] = ()) -> pd.DataFrame:
    """θ̂ by group (rows, in group order) and entry (columns: the human levels present, then
    the models in ``model_order`` or by name, then the baseline series among them, in the
    same order: ``baselines`` names them)."""
    columns = {}
    if humans is not None and not humans.empty:
        wide = humans.pivot(index="group", columns="level", values="theta")
        columns.update({level: wide[level] for level in HUMAN_LEVELS if level in wide})
    if not models.empty:
        wide = models.pivot(index="group", columns="model", values="theta")
        names = [m for m in (model_order or []) if m in wide] + sorted(
            m for m in wide if m not in set(model_order or []))
        names = ([m for m in names if m not in baselines]
                 + [m for m in names if m in baselines])
        columns.update({name: wide[name] for name in names})
    table = pd.DataFrame(columns)
    return table.loc[sorted(table.index, key=group_number)] if len(table) else table


def rank_line(table: pd.DataFrame, z: float = RANK_Z, baselines: Collection[str] = ()) -> str:
    """The entries (columns of a :func:`level_table`) from the highest mean θ̂ over the groups
    they all have to the lowest, ``>`` between neighbours whose paired mean difference is at
    least ``z`` standard errors (SD of the differences / √groups), ``≈`` otherwise, e.g.
    ``High > model A ≈ Mid > model B``. A baseline (``baselines``) is no model and is not
    ranked: its column is left out."""
    shared = table[[name for name in table.columns if name not in baselines]].dropna()
    if shared.empty or shared.shape[1] == 0:
        return ""
    means = shared.mean()
    order = sorted(shared.columns, key=lambda name: -means[name])  # stable: ties keep order
    words = [str(order[0])]
    for upper, lower in itertools.pairwise(order):
        difference = (shared[upper] - shared[lower]).to_numpy(np.float64)
        mean = float(difference.mean())
        error = (float(difference.std(ddof=1)) / math.sqrt(difference.size)
                 if difference.size > 1 else 0.0)
        words += [">" if mean > 0 and mean >= z * error else "≈", str(lower)]
    return " ".join(words)


def marked_cells(table: pd.DataFrame, baselines: Collection[str] = ()) -> pd.DataFrame:
    """The :func:`level_table` as text: θ̂ to two decimals, the best model of each group in
    bold (``**0.42**``), ``†`` where a model is above the Mid level and ``‡`` where it is above
    the High level (strictly), "—" where a value is missing. A baseline (``baselines``) is no
    model: its θ̂ is shown plain, never bold nor marked, and it is never the best."""
    humans = [level for level in HUMAN_LEVELS if level in table.columns]
    models = [name for name in table.columns if name not in humans and name not in baselines]
    cells = pd.DataFrame("—", index=table.index, columns=table.columns, dtype=object)
    for group, row in table.iterrows():
        values = row[models].astype(float)
        best = values.idxmax() if values.notna().any() else None
        for name in table.columns:
            value = row[name]
            if pd.isna(value):
                continue
            text = f"{value:.2f}"
            if name in models:
                if name == best:
                    text = f"**{text}**"
                if "High" in humans and pd.notna(row["High"]) and value > row["High"]:
                    text += " ‡"
                elif "Mid" in humans and pd.notna(row["Mid"]) and value > row["Mid"]:
                    text += " †"
            cells.loc[group, name] = text
    return cells


def markdown_table(cells: pd.DataFrame, area: str, titles: dict[str, str] | None = None) -> str:
    """:func:`marked_cells` as a Markdown table, groups as rows with their skills."""
    def escape(text: str) -> str:
        return str(text).replace("|", "\\|")

    titles = titles or {}
    header = ["group"] + [escape(titles.get(name, name)) for name in cells.columns]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for group, row in cells.iterrows():
        lines.append("| " + " | ".join([group_title(area, str(group)),
                                          *map(escape, row.tolist())]) + " |")
    return "\n".join(lines)
