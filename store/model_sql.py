"""The SQL that selects model runs, shared by every read-only query on the runs' scores and
answers (``store.model_queries`` and the feature modules: ``option_queries``,
``population_queries``, ``pattern_queries``, …): a run's label, the series a row belongs to, the
one-booklet rule and the filter itself, with its bound parameters (:func:`model_params`).

Conventions for the filter arguments (the sidebar's selection):

- ``booklet``: a ``CO_PROVA`` or None for every booklet of the area. Humans are those who
  took that booklet; model runs are those that took it *or any booklet of the year holding the
  same items* (booklets of one area differ only in the order of their items, so a model's
  answers and θ carry over through the item ids);
- ``group_kind`` / ``group_value``: ``'all'/'all'``, ``'state'/'SP'`` or ``'school_type'/'2'``,
  the subgroups the humans' histograms were built for (``store.human_queries``);
- ``models``: the selected runs, as a list of run labels (``model_runs.label``, e.g.
  ``llama2-13b · few-shot · 30 seeds``; the model id for runs stored without one). Labels are
  unique per run (``store.model_runs``), so pages compare runs and never pool two silently. An
  empty list selects none;
- ``pooled``: False, each run is its own series (named by its label); True, the selected runs
  of one model form one series named by the model id (only on request: the sidebar's pool
  switch, whose captions say what was pooled);
- ``language``: the prompt language of model runs ('pt' or 'en'), None for both;
- ``shots``: 0, 1 or 4, :data:`UNCOUNTED_SHOTS` for the runs whose prompt type names no count
  (imported as the paper's ``few-shot``, stored with no shots: they match this setting and no
  other), None for every run whatever its shots.
"""

from __future__ import annotations

from collections.abc import Sequence

#: A run's label (model · prompt type · repetitions), unique per run: what the sidebar selects.
RUN_LABEL = "coalesce(r.label, r.model_id)"

#: The backend of the random-choice baseline (``inference/backends``): a run made with it is a
#: baseline, not a model. It is the one rule every page and command applies: a baseline series
#: (:func:`store.model_queries.baseline_series`) is never pooled with the models, ranked among
#: them, bolded as their best, or given a model's trust verdict.
BASELINE_BACKEND = "random"


#: The series a row of a selected run belongs to: its run (its label), or its model when the
#: selection pools the runs of each model (``$pooled``, bound by :func:`model_params`).
SERIES = f"CASE WHEN $pooled THEN r.model_id ELSE {RUN_LABEL} END"


#: The prompt variant a run recorded (``inference.prompt_variants``), NULL for runs that
#: recorded none (made before variants existed, or imported): they used the base prompt.
PROMPT_VARIANT = "json_extract_string(r.options, '$.prompt_variant.name')"


#: The shots setting of runs whose prompt type names no count (the paper's ``few-shot``; their
#: rows have shots NULL): a filter value of its own, so they are never shown as 0-shot.
UNCOUNTED_SHOTS = -1


#: The booklets of year ``$year`` holding the same items as booklet ``$booklet`` (its colour
#: variants: other orders of one item set), itself included.
SAME_ITEMS_BOOKLETS = """
        SELECT booklet_id FROM items WHERE year = $year AND position IS NOT NULL
        GROUP BY booklet_id
        HAVING list_sort(list(DISTINCT item_id)) = (
            SELECT list_sort(list(DISTINCT item_id)) FROM items
            WHERE year = $year AND booklet_id = $booklet AND position IS NOT NULL)"""


#: Model-run filter shared by every query on ``model_scores`` / ``model_responses`` (alias m).
MODEL_FILTER = """
    m.year = $year
    AND ($area IS NULL OR m.area = $area)
    AND ($booklet IS NULL OR m.booklet_id IN (""" + SAME_ITEMS_BOOKLETS + """))
    AND ($language IS NULL OR m.prompt_language = $language)
    AND ($shots IS NULL OR coalesce(m.shots, """ + str(UNCOUNTED_SHOTS) + """) = $shots)
    AND list_contains($models, """ + RUN_LABEL + ")\n"


#: Joins a response row (m) to the scored pattern (s) it belongs to. An LC pattern's language
#: is the pattern's; a response row may carry it or leave it empty on the common items.
PATTERN_JOIN = """
    s.run_id = m.run_id AND s.year = m.year AND s.area = m.area AND s.booklet_id = m.booklet_id
    AND s.prompt_language = m.prompt_language AND s.shots IS NOT DISTINCT FROM m.shots
    AND s.shuffle = m.shuffle
    AND (m.item_language IS NULL OR s.item_language IS NULL
         OR m.item_language = s.item_language)
"""


def model_params(
    year: int, area: str | None, booklet: int | None, language: str | None, shots: int | None,
    models: Sequence[str], pooled: bool | None = None,
) -> dict:
    """The bound parameters of :data:`MODEL_FILTER` (None: no restriction), and of
    :data:`SERIES` when ``pooled`` is given (queries that do not name the series leave it out:
    DuckDB refuses a parameter the query does not use)."""
    params = {"year": int(year), "area": area,
              "booklet": None if booklet is None else int(booklet), "language": language,
              "shots": None if shots is None else int(shots), "models": [str(m) for m in models]}
    if pooled is not None:
        params["pooled"] = bool(pooled)
    return params
