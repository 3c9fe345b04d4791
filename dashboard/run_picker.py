"""Words for the sidebar's run picker and for pooled series (pure pandas, no Streamlit).

A run is what the sidebar selects. Its stored label (``model · prompt type · repetitions``) is
unique and names its series on every page; in the picker, runs are grouped by model and each
shows only the settings that tell it apart from the other runs of the same model.
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from store.dashboard_queries import UNCOUNTED_SHOTS

#: The prompt type named for a shots setting without a count when no run says otherwise.
UNCOUNTED_PROMPT_TYPE = "few-shot"


def shots_words(shots, prompt_types: str = UNCOUNTED_PROMPT_TYPE) -> str:
    """A shots setting in words: '4-shot'; for runs whose prompt type gives no count (shots
    :data:`UNCOUNTED_SHOTS`, None or NaN) their prompt type, '``prompt_types`` (no count
    given)', e.g. 'few-shot (no count given)'."""
    if shots is None or pd.isna(shots) or int(shots) == UNCOUNTED_SHOTS:
        return f"{prompt_types or UNCOUNTED_PROMPT_TYPE} (no count given)"
    return f"{int(shots)}-shot"

#: Catalogue columns that can tell two runs of one model apart, in the order they are shown.
DISTINGUISHING: tuple[str, ...] = ("prompt_type", "repetition", "n_shuffles", "seed",
                                   "temperature", "backend", "source", "created_at")


def _setting_words(column: str, value) -> str:
    if column == "n_shuffles":
        return f"{int(value)} repetitions"
    if column == "seed":
        return f"seed {int(value)}"
    if column == "temperature":
        return f"temperature {value:g}"
    if column == "backend":
        return f"{value} backend"
    if column == "created_at":
        return f"made {pd.Timestamp(value):%Y-%m-%d %H:%M}"
    if column == "repetition":
        return f"over {value}s"
    return str(value)


def _present(value) -> bool:
    return not (value is None or (not isinstance(value, (list, tuple)) and pd.isna(value)))


def run_choice_labels(catalogue: pd.DataFrame) -> dict[str, str]:
    """Picker text per run label, in picker order (family, model, then the catalogue's order).

    ``catalogue``: ``store.dashboard_queries.model_catalogue`` rows (one per run label). A model
    with one run shows its model id alone; runs of a model with several show the model id and
    the settings whose values differ between them (``SmolLM2 · 4-shot · seed 7``). Runs that
    differ in none of those settings keep their stored label, which is unique.
    """
    if catalogue.empty:
        return {}
    ordered = catalogue.sort_values(["family", "model_id", "model"], kind="stable")
    labels: dict[str, str] = {}
    for model_id, runs in ordered.groupby("model_id", sort=False):
        if len(runs) == 1:
            labels[runs["model"].iloc[0]] = str(model_id)
            continue
        varying = [c for c in DISTINGUISHING if c in runs
                   and runs[c].map(lambda v: str(v) if _present(v) else "").nunique() > 1]
        for row in runs.itertuples():
            parts = [_setting_words(c, getattr(row, c)) for c in varying
                     if _present(getattr(row, c))]
            text = " · ".join([str(model_id), *parts])
            labels[row.model] = text if parts else str(row.model)
    # Two runs whose differing settings read alike (e.g. the same minute) keep their labels.
    seen: dict[str, int] = {}
    for text in labels.values():
        seen[text] = seen.get(text, 0) + 1
    return {label: (label if seen[text] > 1 else text) for label, text in labels.items()}


def pooled_series(catalogue: pd.DataFrame, labels: Sequence[str]) -> dict[str, list[str]]:
    """Model id → the selected run labels pooled into it (only models with selected runs)."""
    if catalogue.empty:
        return {}
    chosen = catalogue[catalogue["model"].isin(list(labels))]
    return {str(model_id): runs["model"].tolist()
            for model_id, runs in chosen.groupby("model_id", sort=True)}


def pooling_sentence(catalogue: pd.DataFrame, labels: Sequence[str]) -> str:
    """The caption sentence naming what a pooled selection pooled ('' when nothing was)."""
    groups = {model: runs for model, runs in pooled_series(catalogue, labels).items()
              if len(runs) > 1}
    if not groups:
        return ""
    listed = "; ".join(f"{model} = {len(runs)} runs ({', '.join(runs)})"
                       for model, runs in groups.items())
    return f" Runs pooled per model: {listed}."
