"""Moving model results in and out: the project's run export and the paper's published parquet.

Imported results are re-scored here with the same code and settings as humans, so a run made
elsewhere sits on the same scale as ours; only the raw answers are taken from the file.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from enem.areas import OPTION_LETTERS
from enem.scoring import DEFAULT_OPTIONS, ScoringOptions
from inference.plan import RunPlan, model_slug
from inference.protocol import LANGUAGE_ALIASES
from inference.run_scoring import score_patterns
from store.model_runs import RESPONSE_COLUMNS, booklet_area, load_form, publish_run, stored_run

EXPORT_METADATA_KEY = b"enem_llm_run"
PAPER_COLUMNS = ("MODEL_NAME", "LANGUAGE", "SEED", "CO_PROVA", "EXAM_YEAR", "RESPONSE_PATTERN")


class ResultsFormatError(ValueError):
    """The file is neither a project run export nor the paper's results parquet."""


def export_run(con, run_id: str, path: Path) -> int:
    """Write one run's answers (and how it was made) to a Parquet file; returns rows written."""
    run, model, responses = stored_run(con, run_id)
    meta = {"run": json.loads(run.to_json(orient="records", date_format="iso"))[0],
            "model": json.loads(model.to_json(orient="records"))[0] if len(model) else {}}
    table = pa.Table.from_pandas(responses, preserve_index=False)
    table = table.replace_schema_metadata({EXPORT_METADATA_KEY: json.dumps(meta).encode()})
    pq.write_table(table, path)
    return table.num_rows


def import_results(con, path: Path, options: ScoringOptions = DEFAULT_OPTIONS) -> list[str]:
    """Load a run export or the paper's results parquet; returns the run ids stored."""
    path = Path(path)
    if not path.is_file():
        raise ResultsFormatError(f"{path}: no such file")
    try:
        parquet = pq.ParquetFile(path)
    except Exception as error:  # any unreadable file gets the same clear message
        raise ResultsFormatError(f"{path}: not a Parquet file ({error})") from error
    metadata = parquet.schema_arrow.metadata or {}
    if EXPORT_METADATA_KEY in metadata:
        return [_import_export(con, parquet.read().to_pandas(), json.loads(
            metadata[EXPORT_METADATA_KEY]), options)]
    columns = set(parquet.schema_arrow.names)
    missing = [c for c in PAPER_COLUMNS if c not in columns]
    if missing:
        raise ResultsFormatError(
            f"{path}: not a project run export and missing the paper's column(s) "
            f"{', '.join(missing)}")
    return _import_paper(con, parquet.read().to_pandas(), options)


def _forms_plan(con, responses: pd.DataFrame) -> RunPlan:
    forms = {}
    for (area, year, booklet, language), _ in responses.groupby(
            ["area", "year", "booklet_id", "item_language"], dropna=False):
        lang = None if pd.isna(language) else int(language)
        forms[area] = load_form(con, int(year), int(booklet), lang)
    return RunPlan(units=[], forms=forms, skipped=[], shots_source="imported")


def _import_export(con, responses: pd.DataFrame, meta: dict, options) -> str:
    run, model = meta["run"], meta.get("model") or {"model_id": meta["run"]["model_id"]}
    scores = score_patterns(responses, _forms_plan(con, responses), options)
    record = {**run, "areas": run["areas"].split(","), "languages": run["languages"].split(","),
              "shots": run["shots"].split(","), "origin": run.get("origin") or "imported",
              "options": json.loads(run["options"]) if run.get("options") else {}}
    publish_run(con, record, model, responses[list(RESPONSE_COLUMNS)], scores)
    return run["run_id"]


def _import_paper(con, frame: pd.DataFrame, options) -> list[str]:
    frame = frame.copy()
    frame["prompt_language"] = frame["LANGUAGE"].astype(str).str.lower().map(LANGUAGE_ALIASES)
    unknown = frame["prompt_language"].isna()
    if unknown.any():
        raise ResultsFormatError(
            f"unknown LANGUAGE value(s): {sorted(frame.loc[unknown, 'LANGUAGE'].unique())}")
    group_columns = [c for c in ("MODEL_NAME", "TEMPERATURE", "SYSTEM_PROMPT_TYPE") if c in frame]
    run_ids = []
    for keys, run_rows in frame.groupby(group_columns, dropna=False, sort=True):
        keys = keys if isinstance(keys, tuple) else (keys,)
        described = dict(zip(group_columns, [None if pd.isna(k) else k for k in keys]))
        digest = hashlib.sha256(json.dumps(described, default=str).encode()).hexdigest()[:8]
        run_id = f"paper-{model_slug(str(described['MODEL_NAME']))}-{digest}"
        responses = _paper_responses(con, run_id, run_rows)
        scores = score_patterns(responses, _forms_plan(con, responses), options)
        shots = _shots(described.get("SYSTEM_PROMPT_TYPE"))
        run = {"run_id": run_id, "backend": "imported", "origin": "paper",
               "year": int(run_rows["EXAM_YEAR"].iloc[0]),
               "areas": sorted(responses["area"].unique()),
               "languages": sorted(responses["prompt_language"].unique()),
               "shots": [shots], "n_shuffles": int(responses["shuffle"].max()) + 1,
               "seed": None, "status": "finished", "options": {"published": described}}
        model = {"model_id": str(described["MODEL_NAME"]),
                 "size": str(run_rows["MODEL_SIZE"].iloc[0]) if "MODEL_SIZE" in run_rows else None,
                 "notes": "imported from the paper's published results"}
        publish_run(con, run, model, responses, scores)
        run_ids.append(run_id)
    return run_ids


def _shots(prompt_type) -> int | None:
    match = re.search(r"\d+", str(prompt_type or ""))
    return int(match.group()) if match else None


def _paper_responses(con, run_id: str, rows: pd.DataFrame) -> pd.DataFrame:
    """One model_responses row per (pattern, item) from RESPONSE_PATTERN and TX_RESPOSTAS."""
    frames = []
    for (year, booklet, language), group in rows.groupby(
            ["EXAM_YEAR", "CO_PROVA", "prompt_language"], sort=True):
        area = booklet_area(con, int(year), int(booklet))
        if area is None:
            raise ResultsFormatError(f"booklet {booklet} of {year} is not in the store; "
                                     "ingest that year's ITENS_PROVA first")
        # The paper's LC patterns use the Spanish form.
        form = load_form(con, int(year), int(booklet), 1 if area == "LC" else None)
        group = group.sort_values("SEED", kind="stable")
        for shuffle, (_, row) in enumerate(group.iterrows()):
            pattern = str(row["RESPONSE_PATTERN"])
            if len(pattern) != form.n_items:
                raise ResultsFormatError(
                    f"{row['MODEL_NAME']} booklet {booklet}: RESPONSE_PATTERN has "
                    f"{len(pattern)} characters, the form {form.n_items}")
            letters = str(row.get("TX_RESPOSTAS") or "")
            choice = [c if c in OPTION_LETTERS else "." for c in letters[:form.n_items]]
            choice += ["."] * (form.n_items - len(choice))
            frames.append(pd.DataFrame({
                "run_id": run_id, "year": int(year), "area": area, "booklet_id": int(booklet),
                "item_language": form.language, "position": np.arange(1, form.n_items + 1),
                "item_id": form.item_ids, "prompt_language": language,
                "shots": _shots(row.get("SYSTEM_PROMPT_TYPE")), "shuffle": shuffle,
                "permutation": None, "prob_a": np.nan, "prob_b": np.nan, "prob_c": np.nan,
                "prob_d": np.nan, "prob_e": np.nan, "letter_mass": np.nan, "choice": choice,
                "correct": [ch == "1" for ch in pattern],
            }))
    out = pd.concat(frames, ignore_index=True)
    out["item_language"] = out["item_language"].astype("Int16")
    out["shots"] = out["shots"].astype("Int16")
    return out
