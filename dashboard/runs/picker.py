"""Words for the sidebar's run picker and for pooled series (pure pandas, no Streamlit).

A run is what the sidebar selects. Its stored label (``model · prompt type · repetitions``) is
unique and names its series on every page, the picker included (runs grouped by model).
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from store.model_sql import UNCOUNTED_SHOTS

#: The prompt type named for a shots setting without a count when no run says otherwise.
UNCOUNTED_PROMPT_TYPE = "few-shot"


def shots_words(shots, prompt_types: str = UNCOUNTED_PROMPT_TYPE) -> str:
    """A shots setting in words: '4-shot'; for runs whose prompt type gives no count (shots
    :data:`UNCOUNTED_SHOTS`, None or NaN) their prompt type, '``prompt_types`` (no count
    given)', e.g. 'few-shot (no count given)'."""
    if shots is None or pd.isna(shots) or int(shots) == UNCOUNTED_SHOTS:
        return f"{prompt_types or UNCOUNTED_PROMPT_TYPE} (no count given)"
    return f"{int(shots)}-shot"

def run_choice_labels(catalogue: pd.DataFrame) -> dict[str, str]:
    """Picker text per run label, in picker order (family, model, then the run label).

    ``catalogue``: ``store.catalogue_queries.model_catalogue`` rows (one per run label). The
    text is the run's stored label itself (``gpt-3.5-turbo-0613 · few-shot · 30 seeds``): the
    name its series has in every legend, lane and caption, so what is picked reads as what is
    drawn. Stored labels are unique (``store.model_runs`` adds a seed or the end of the run id
    when two runs would read alike), so no further words are needed to tell runs apart.
    """
    if catalogue.empty:
        return {}
    ordered = catalogue.sort_values(["family", "model_id", "model"], kind="stable")
    return {str(label): str(label) for label in ordered["model"]}


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
