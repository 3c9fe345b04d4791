"""A run's answers and scores: letter probabilities → chosen letters → scored response patterns.

``score_units`` asks a backend every shuffle of a batch of work units and maps the displayed
letters back to the original ones; ``score_patterns`` turns a run's answers into one response
pattern per (area, prompt variant, shuffle) and scores it with the same code as the humans.

An answer whose backend saw no letter A–E at all (an API's top-k without one) is stored as the
choice ``.`` and scored wrong, like a blank. A few are a model's odd answers; when most answers
are like that the run measures the endpoint, not the model, and ``check_answer_letters``
refuses it (more than ``NO_LETTER_LIMIT`` of its answers). A generated answer whose letter
cannot be read is stored as ``?`` with its text and left out of the scores
(:func:`unparsed_count` counts them).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from enem.areas import OPTION_LETTERS as LETTERS
from enem.scoring import DEFAULT_OPTIONS, ScoringOptions, score_form
from inference.backends import LetterScorer, ScoringError
from inference.backends.base import NO_CHOICE
from inference.plan import RunPlan, RunSpec, WorkUnit
from inference.prompts import build_request
from inference.shuffles import option_permutations, to_original_probs

#: The stored choice of an answer in which the backend saw no letter at all.
NO_LETTER = "."
#: The stored choice of a generated answer whose letter matched no pattern
#: (``inference.answer_methods``): kept with its text, counted, and left out of the scores
#: (correct is NULL, so the item drops out of that response pattern), never taken as wrong.
UNPARSED_MARK = "?"
#: A run is refused when more than this share of its answers had no letter.
NO_LETTER_LIMIT = 0.5
#: Answers a run in progress needs before it is stopped early for want of letters (the whole
#: run is always checked before it is published).
NO_LETTER_EARLY_ANSWERS = 100


class NoLetterError(ScoringError):
    """Most of a run's answers had no letter A–E: the run is not fit to publish."""


def no_letter_counts(responses: pd.DataFrame) -> tuple[int, int]:
    """(answers without a letter, answers) among a run's rows (``score_units`` output)."""
    if responses.empty:
        return 0, 0
    return int((responses["choice"] == NO_LETTER).sum()), len(responses)


def unparsed_count(responses: pd.DataFrame) -> int:
    """Generated answers of a run (``score_units`` output) whose letter could not be read."""
    return 0 if responses.empty else int((responses["choice"] == UNPARSED_MARK).sum())


def check_answer_letters(missing: int, answers: int, top_k: int | None = None) -> None:
    """Raise NoLetterError when more than ``NO_LETTER_LIMIT`` of ``answers`` had no letter;
    the message names the likely causes. ``top_k``: how many tokens the backend saw."""
    if not answers or missing / answers <= NO_LETTER_LIMIT:
        return
    seen = f"its top-{top_k}" if top_k else "its top-k"
    raise NoLetterError(
        f"{missing:,} of {answers:,} answers ({missing / answers:.0%}) had no letter A–E among "
        f"the tokens the backend saw ({seen}), so the run is not published. Likely causes: the "
        "model does not answer with a letter (it starts with words such as 'The answer is'), "
        "the prompt format does not suit it (a chat model given a plain-text prompt, or the "
        "reverse), or the top-k is too small to reach the letters.")


def score_units(spec: RunSpec, units: list[WorkUnit], scorer: LetterScorer) -> pd.DataFrame:
    """Score every shuffle of ``units``; one row per (unit, shuffle) with original letters."""
    permutations = [option_permutations(spec.n_shuffles, spec.seed, item_key=u.item_id)
                    for u in units]
    requests = [build_request(u.question, u.shot_examples, perms, seed=spec.seed,
                              key=f"{u.area}:{u.prompt_language}:{u.shots}:{u.position}")
                for u, perms in zip(units, permutations)]
    results = scorer.score(requests)
    frames = []
    for unit, perms, result in zip(units, permutations, results):
        original = to_original_probs(result.probs, perms)
        choice_index = np.where(result.choice >= 0,
                                perms[np.arange(len(perms)), np.maximum(result.choice, 0)],
                                NO_CHOICE)
        choice = [LETTERS[c] if c >= 0 else NO_LETTER for c in choice_index]
        correct = [c == unit.question.key for c in choice]
        if result.texts is not None:  # a generated answer whose letter could not be read
            choice = [UNPARSED_MARK if c == NO_LETTER else c for c in choice]
            correct = [None if c == UNPARSED_MARK else ok for c, ok in zip(choice, correct)]
        frames.append(pd.DataFrame({
            "run_id": spec.run_id, "year": spec.year, "area": unit.area,
            "booklet_id": unit.booklet_id, "item_language": unit.item_language,
            "position": unit.position, "item_id": unit.item_id,
            "prompt_language": unit.prompt_language, "shots": unit.shots,
            "shuffle": np.arange(len(perms)),
            "permutation": ["".join(LETTERS[i] for i in p) for p in perms],
            **{f"prob_{x.lower()}": original[:, i] for i, x in enumerate(LETTERS)},
            "letter_mass": result.letter_mass,
            "choice": choice,
            "correct": correct,
            **({} if result.texts is None else {"answer_text": list(result.texts)}),
        }))
    out = pd.concat(frames, ignore_index=True)
    out["item_language"] = out["item_language"].astype("Int16")
    return out


def score_patterns(responses: pd.DataFrame, plan: RunPlan,
                   options: ScoringOptions = DEFAULT_OPTIONS) -> pd.DataFrame:
    """θ, SE, l_z, l_z*, CTT and nota of every (area, prompt variant, shuffle) pattern.

    Items the run did not ask (no text in that language) are NaN and drop out of the
    likelihood, like abandoned items.
    """
    frames = []
    for (area, language, shots), group in responses.groupby(
            ["area", "prompt_language", "shots"], sort=True, dropna=False):
        form = plan.forms[area]
        shuffles = np.sort(group["shuffle"].unique())
        matrix = np.full((len(shuffles), form.n_items), np.nan)
        row = np.searchsorted(shuffles, group["shuffle"].to_numpy())
        matrix[row, group["position"].to_numpy() - 1] = group["correct"].to_numpy(float)
        result = score_form(matrix, form, options)
        frames.append(pd.DataFrame({
            "run_id": group["run_id"].iloc[0], "year": int(group["year"].iloc[0]),
            "area": area, "booklet_id": form.booklet_id, "item_language": form.language,
            "prompt_language": language, "shots": None if pd.isna(shots) else int(shots),
            "shuffle": shuffles,
            "response_pattern": ["".join("." if np.isnan(v) else str(int(v)) for v in r)
                                 for r in matrix],
            **{k: result[k] for k in ("theta", "theta_se", "lz", "lz_star", "ctt", "n_scored",
                                      "nota")},
        }))
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
