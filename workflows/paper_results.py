"""The results published with the paper *Beyond accuracy* (one parquet row per model run of one
exam), imported as runs of this project.

A paper file holds one run per model × prompt type × temperature × kind of repetition (sampling
seeds or option shuffles). Its run ids are derived from the file's content and those keys, so
importing the same file again replaces its runs with identical rows, and another file (another
content) never touches them. The rules are in docs/methods.md, "Published results".
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import NamedTuple

import numpy as np
import pandas as pd

from enem.areas import OPTION_LETTERS
from enem.items import BookletForm
from enem.scoring import ScoringOptions
from inference.plan import model_slug
from inference.protocol import LANGUAGE_ALIASES
from store.model_runs import booklet_area, load_form, publish_run, run_label
from workflows.imported_runs import (
    PATTERN_KEYS,
    PUBLISHED_SCORES,
    ImportedRun,
    ImportSummary,
    ResultsFormatError,
    booklet_count,
    compare_published,
    run_scoring_options,
    run_years,
    score_imported,
)

#: Columns a parquet file needs to be read as the paper's results.
PAPER_COLUMNS = ("MODEL_NAME", "LANGUAGE", "SEED", "CO_PROVA", "EXAM_YEAR", "RESPONSE_PATTERN")
#: What makes two published rows belong to different runs (besides the file they come from).
RUN_KEYS = ["model_id", "prompt_type", "temperature", "repetition"]
#: The paper answered the Spanish LC items (TP_LINGUA 1).
PAPER_LC_LANGUAGE = 1


class _PaperRun(NamedTuple):
    """One published run, built and checked, ready for ``publish_run``."""

    run: dict
    model: dict
    responses: pd.DataFrame
    scores: pd.DataFrame


def import_paper(con, source: str, frame: pd.DataFrame, overrides: dict) -> ImportSummary:
    """Every run of one paper file: all are built (and checked) before any is stored."""
    digest = content_digest(frame)
    rows = _paper_rows(frame)
    several_temperatures = rows["temperature"].nunique(dropna=False) > 1
    built = [_build_paper_run(con, source, digest, dict(zip(RUN_KEYS, keys)), group,
                              overrides, several_temperatures)
             for keys, group in rows.groupby(RUN_KEYS, dropna=False, sort=True)]
    for paper_run in built:
        publish_run(con, *paper_run)
    options = [ScoringOptions.from_dict(b.run["scoring"]) for b in built]
    summary = ImportSummary(
        source, [ImportedRun(b.run["run_id"], b.run["label"], b.run["repetition"], len(b.scores))
                 for b in built],
        run_years(rows), booklet_count(rows), list(dict.fromkeys(options)))
    compare_published(summary, pd.concat([b.scores for b in built], ignore_index=True))
    summary.key_differences = list(dict.fromkeys(
        d for b in built for d in b.run["options"]["key_differences"]))
    return summary


def content_digest(frame: pd.DataFrame) -> str:
    """SHA-256 of a table's content, independent of row and column order, file name and
    Parquet encoding: the identity of a results file in its run ids."""
    columns = sorted(frame.columns)
    cells = frame[columns].astype(object).where(frame[columns].notna(), "")
    digest = hashlib.sha256("\x1f".join(columns).encode())
    for line in sorted("\x1f".join(str(v) for v in row)
                       for row in cells.itertuples(index=False)):
        digest.update(b"\x1e" + line.encode())
    return digest.hexdigest()


def _paper_rows(frame: pd.DataFrame) -> pd.DataFrame:
    """The published rows with the run keys and the place of each row, checked."""
    rows = frame.copy()
    size = rows["MODEL_SIZE"] if "MODEL_SIZE" in rows else pd.Series("", index=rows.index)
    rows["model_id"] = [paper_model_id(name, sz) for name, sz in zip(rows["MODEL_NAME"], size)]
    rows["prompt_type"] = (rows["SYSTEM_PROMPT_TYPE"].fillna("").astype(str)
                           if "SYSTEM_PROMPT_TYPE" in rows else "")
    rows["temperature"] = (pd.to_numeric(rows["TEMPERATURE"], errors="coerce")
                           if "TEMPERATURE" in rows else np.nan)
    rows["repetition"] = _repetition_kinds(rows)
    rows["prompt_language"] = rows["LANGUAGE"].astype(str).str.lower().map(LANGUAGE_ALIASES)
    unknown = rows["prompt_language"].isna()
    if unknown.any():
        raise ResultsFormatError(
            f"unknown LANGUAGE value(s): {sorted(rows.loc[unknown, 'LANGUAGE'].unique())}")
    rows["year"] = pd.to_numeric(rows["EXAM_YEAR"]).astype("int64")
    rows["booklet_id"] = pd.to_numeric(rows["CO_PROVA"]).astype("int64")
    return rows


def paper_model_id(name, size) -> str:
    """MODEL_NAME + MODEL_SIZE: ``llama2-13b``; the name alone when the size is empty."""
    size = "" if size is None or pd.isna(size) else str(size).strip()
    return f"{str(name).strip()}-{size}" if size else str(name).strip()


def _repetition_kinds(rows: pd.DataFrame) -> np.ndarray:
    """'shuffle' for ENEM_EXAM_TYPE ``shuffle-<k>``, 'seed' for ``default`` (or no column)."""
    if "ENEM_EXAM_TYPE" not in rows:
        return np.full(len(rows), "seed")
    kinds = rows["ENEM_EXAM_TYPE"].fillna("default").astype(str).str.strip().str.lower()
    shuffle = kinds.str.fullmatch(r"shuffle-\d+")
    unknown = ~(shuffle | (kinds == "default"))
    if unknown.any():
        raise ResultsFormatError(
            f"unknown ENEM_EXAM_TYPE value(s): {sorted(kinds[unknown].unique())[:5]}; "
            "expected 'default' (sampling seeds) or 'shuffle-<k>'")
    return np.where(shuffle, "shuffle", "seed")


def _repetition_index(rows: pd.DataFrame, kind: str) -> np.ndarray:
    """Shuffle k → k; a sampling seed → its rank among the run's seeds, so one seed has the
    same index in every booklet and language, whatever the order of the file's rows."""
    if kind == "shuffle":
        return rows["ENEM_EXAM_TYPE"].astype(str).str.extract(r"(\d+)\s*$")[0].astype(
            "int64").to_numpy()
    seeds = pd.to_numeric(rows["SEED"], errors="coerce")
    if seeds.isna().any():
        raise ResultsFormatError(f"{int(seeds.isna().sum())} row(s) of a seed run have no SEED")
    distinct = np.sort(seeds.unique())
    return np.searchsorted(distinct, seeds.to_numpy())


def paper_run_id(digest: str, keys: dict) -> str:
    """``paper-<model>-<seed|shuffle>-<10 hex>``: the hex digest covers the file's content and
    the run keys, so it is the same on every import of one file and differs between files."""
    described = json.dumps([digest, *(_plain(keys[k]) for k in RUN_KEYS)])
    short = hashlib.sha256(described.encode()).hexdigest()[:10]
    return f"paper-{model_slug(keys['model_id'])}-{keys['repetition']}-{short}"


def _plain(value):
    """A run key as JSON: NaN (no temperature) is null."""
    return None if isinstance(value, float) and np.isnan(value) else value


def _build_paper_run(con, source: str, digest: str, keys: dict, rows: pd.DataFrame,
                     overrides: dict, several_temperatures: bool) -> _PaperRun:
    """One published run (all rows of one model, prompt type, temperature and repetition
    kind), checked: each row must land once, on a booklet the store holds."""
    run_id = paper_run_id(digest, keys)
    rows = rows.assign(shuffle=_repetition_index(rows, keys["repetition"]))
    clash = rows.duplicated(PATTERN_KEYS, keep=False)
    if clash.any():
        raise ResultsFormatError(
            f"{keys['model_id']} ({keys['repetition']}): {int(clash.sum())} rows share a year, "
            "booklet, language and repetition; each published row must land once")
    shots = _shots(keys["prompt_type"])
    responses, differences = _paper_responses(con, run_id, rows, shots)
    options = run_scoring_options(con, rows["year"].unique(), overrides)
    scores = score_imported(con, responses, options).merge(
        _published_scores(rows), on=PATTERN_KEYS, how="left", validate="one_to_one")
    n_repetitions = int(rows["shuffle"].nunique())
    temperature = _plain(keys["temperature"])
    years = run_years(rows)
    run = {"run_id": run_id, "backend": "imported", "origin": "paper", "year": years[0],
           "years": years, "areas": sorted(responses["area"].unique()),
           "languages": sorted(rows["prompt_language"].unique()),
           "shots": [] if shots is None else [shots], "n_shuffles": n_repetitions, "seed": None,
           "status": "finished", "repetition": keys["repetition"],
           "prompt_type": keys["prompt_type"], "temperature": temperature, "source": source,
           "scoring": options.as_dict(),
           "label": _paper_label(keys, n_repetitions, several_temperatures),
           "options": {"published": {k: _plain(v) for k, v in keys.items()},
                       "content_sha256": digest, "key_differences": differences}}
    return _PaperRun(run, _paper_model(keys["model_id"], rows.iloc[0]), responses, scores)


def _paper_label(keys: dict, n_repetitions: int, several_temperatures: bool) -> str:
    """``llama2-13b · few-shot · 30 seeds``, plus the temperature when the file holds several
    (the only run key a label would otherwise leave out)."""
    label = run_label(keys["model_id"], keys["prompt_type"], n_repetitions, keys["repetition"])
    if several_temperatures:
        temperature = _plain(keys["temperature"])
        label += f" · T {temperature:g}" if temperature is not None else " · T ?"
    return label


def _paper_model(model_id: str, row: pd.Series) -> dict:
    """The ``models`` row of a published model: family MODEL_NAME, size MODEL_SIZE."""
    size = row.get("MODEL_SIZE")
    return {"model_id": model_id, "family": str(row["MODEL_NAME"]),
            "size": None if size is None or pd.isna(size) else str(size),
            "notes": "imported from published results"}


def _shots(prompt_type) -> int | None:
    """The number of solved examples a prompt type names ("4-shot"), None when it names none
    ("few-shot")."""
    match = re.search(r"\d+", str(prompt_type or ""))
    return int(match.group()) if match else None


def _published_scores(rows: pd.DataFrame) -> pd.DataFrame:
    """The sampling seed and the published θ, SE and l_z of every row, keyed like its pattern."""
    out = rows[PATTERN_KEYS].copy()
    out["sampling_seed"] = pd.to_numeric(rows["SEED"], errors="coerce").astype("Int64")
    for column, name in PUBLISHED_SCORES.items():
        out[name] = pd.to_numeric(rows[column], errors="coerce") if column in rows else np.nan
    return out


def _paper_responses(con, run_id: str, rows: pd.DataFrame, shots: int | None
                     ) -> tuple[pd.DataFrame, list[str]]:
    """One model_responses row per (published row, item) of a run, and where the file's
    answer key differs from the stored one."""
    frames, differences = [], []
    for (year, booklet), group in rows.groupby(["year", "booklet_id"], sort=True):
        form = _paper_form(con, int(year), int(booklet), group)
        frames.append(_booklet_responses(run_id, form, group, shots))
        differences += _key_differences(int(year), form, group)
    out = pd.concat(frames, ignore_index=True)
    out["item_language"] = out["item_language"].astype("Int16")
    out["shots"] = out["shots"].astype("Int16")
    return out, differences


def _key_differences(year: int, form: BookletForm, rows: pd.DataFrame) -> list[str]:
    """Scored items whose key in the file's TX_GABARITO is not the stored key.

    Correctness always follows RESPONSE_PATTERN; a difference says the file was scored with
    another key than INEP's item file holds, which the summary reports.
    """
    if "TX_GABARITO" not in rows:
        return []
    stored = [chr(k) if k else "" for k in form.keys]
    found = []
    for key in rows["TX_GABARITO"].dropna().astype(str).unique():
        found += [f"{year} booklet {form.booklet_id} position {i + 1}: file {mine}, "
                  f"store {theirs}"
                  for i, (mine, theirs) in enumerate(zip(key, stored))
                  if theirs in OPTION_LETTERS and mine != theirs
                  and not np.isnan(form.bank.a[i])]
    return found


def _paper_form(con, year: int, booklet: int, rows: pd.DataFrame) -> BookletForm:
    """The stored form a published booklet was answered on (LC: the Spanish one)."""
    area = booklet_area(con, year, booklet)
    if area is None:
        raise ResultsFormatError(f"booklet {booklet} of {year} is not in the store; "
                                 "ingest that year's ITENS_PROVA first (`enem-llm ingest-items`)")
    named = set(rows["EXAM_SUBJECT"].dropna().astype(str)) if "EXAM_SUBJECT" in rows else set()
    if named - {area}:
        raise ResultsFormatError(f"booklet {booklet} of {year} is {area} in the store, the file "
                                 f"says {', '.join(sorted(named))}")
    return load_form(con, year, booklet, PAPER_LC_LANGUAGE if area == "LC" else None)


def _booklet_responses(run_id: str, form: BookletForm, rows: pd.DataFrame,
                       shots: int | None) -> pd.DataFrame:
    """Correctness from RESPONSE_PATTERN (booklet order, abandoned items included) and the
    chosen letter from TX_RESPOSTAS (original letters in both of the paper's files)."""
    n, k = len(rows), form.n_items
    patterns = rows["RESPONSE_PATTERN"].astype(str).tolist()
    wrong = next((p for p in patterns if len(p) != k or set(p) - {"0", "1"}), None)
    if wrong is not None:
        raise ResultsFormatError(
            f"booklet {form.booklet_id}: RESPONSE_PATTERN {wrong!r} is not {k} characters 0/1")
    correct = np.array(list("".join(patterns))).reshape(n, k) == "1"
    letters = rows["TX_RESPOSTAS"].fillna("").astype(str) if "TX_RESPOSTAS" in rows else [""] * n
    letters = np.array(list("".join(s[:k].ljust(k, ".") for s in letters))).reshape(n, k)
    choice = np.where(np.isin(letters, list(OPTION_LETTERS)), letters, ".")
    return pd.DataFrame({
        "run_id": run_id, "year": np.repeat(rows["year"].to_numpy(), k), "area": form.area,
        "booklet_id": form.booklet_id, "item_language": form.language,
        "position": np.tile(np.arange(1, k + 1), n), "item_id": np.tile(form.item_ids, n),
        "prompt_language": np.repeat(rows["prompt_language"].to_numpy(), k), "shots": shots,
        "shuffle": np.repeat(rows["shuffle"].to_numpy(), k), "permutation": None,
        "prob_a": np.nan, "prob_b": np.nan, "prob_c": np.nan, "prob_d": np.nan,
        "prob_e": np.nan, "letter_mass": np.nan, "choice": choice.ravel(),
        "correct": correct.ravel(),
    })
