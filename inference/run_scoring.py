"""A run's answers and scores: letter probabilities → chosen letters → scored response patterns.

``score_units`` asks a backend every shuffle of a batch of work units and maps the displayed
letters back to the original ones; ``score_patterns`` turns a run's answers into one response
pattern per (area, prompt variant, shuffle) and scores it with the same code as the humans.

An answer without a letter A–E is one of: a ``letter-prob`` answer whose backend saw no letter
at all (an API's top-k without one), stored as the choice ``.`` and scored wrong, like a blank;
a ``full-answer-prob`` answer whose five option texts all had probability 0 (every score -inf;
otherwise this method always picks an option), stored and scored the same way; a ``generate``
answer whose letter cannot be read, stored as ``?`` with its text and left out of the scores
(:func:`unparsed_count` counts them). A few are a model's odd answers; many mean the run
measures the endpoint or the prompt format, not the model. ``check_answer_letters`` refuses to
publish a run where more than ``NO_LETTER_LIMIT`` (10%) of the answers have no letter, with the
share in its message; :func:`no_letter_warning` words the warning for a run with some, within
the limit.
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
#: The largest share of a run's answers that may have no letter A–E (any answer method: see the
#: module docstring) for the run to be published. Each such answer is an item not measured as the
#: model would answer it: scored wrong as a blank, or left out of its pattern. At 10%, 4 or 5
#: items of a 45-item pattern, blanks already lower θ by about one standard error for a model
#: that answers 60–80% right (0.22–0.38 in θ, 25–47 nota points, SE 0.25–0.30; demo 2023 items,
#: INEP's recipe, 2,000 random patterns per area), and left-out items move θ by about 0.1; beyond
#: it a pattern measures the endpoint's or the prompt's failures more than the model. Below it a
#: model's occasional odd reply (a chat model that opens a few answers with "The", a reply cut
#: short by --max-new-tokens) does not cost a whole run: it is published with a warning.
NO_LETTER_LIMIT = 0.10
#: Answers a run in progress needs before it is stopped early because more than
#: ``NO_LETTER_EARLY_SHARE`` of them had no letter: an endpoint that evidently does not answer
#: with letters is not asked the whole exam. (A run is also stopped as soon as its answers
#: without a letter exceed ``NO_LETTER_LIMIT`` of all the answers it will have, since it can no
#: longer be published; and the whole run is checked before it is published.)
NO_LETTER_EARLY_ANSWERS = 100
NO_LETTER_EARLY_SHARE = 0.5


class NoLetterError(ScoringError):
    """Too many of a run's answers had no letter A–E: the run is not fit to publish."""


def no_letter_counts(responses: pd.DataFrame) -> tuple[int, int]:
    """(answers without a letter, answers) among a run's rows (``score_units`` output): the
    answers stored as ``.`` (no letter seen) or ``?`` (a generated reply not read)."""
    if responses.empty:
        return 0, 0
    return int(responses["choice"].isin((NO_LETTER, UNPARSED_MARK)).sum()), len(responses)


def no_letter_share(missing: int, answers: int) -> str:
    """``"52.0% of 1,350 answers had no letter A–E (limit 10%)"``."""
    return (f"{missing / answers:.1%} of {answers:,} answers had no letter A–E "
            f"(limit {NO_LETTER_LIMIT:.0%})")


def no_letter_warning(missing: int, answers: int, run_id: str,
                      method: str | None = None) -> str | None:
    """The warning for run ``run_id``, published with some answers without a letter, within
    the limit (None: it has none). ``method``: its answer method (None: ``letter-prob``)."""
    if not answers or not missing:
        return None
    fate = ("left out of their response patterns" if method == "generate"
            else "scored wrong, like blanks")
    return (f"warning: run {run_id}: {no_letter_share(missing, answers)}; published, those "
            f"answers {fate}")


def unparsed_count(responses: pd.DataFrame) -> int:
    """Generated answers of a run (``score_units`` output) whose letter could not be read."""
    return 0 if responses.empty else int((responses["choice"] == UNPARSED_MARK).sum())


def check_answer_letters(missing: int, answers: int, top_k: int | None = None,
                         method: str | None = None, total: int | None = None) -> None:
    """Raise NoLetterError when more than ``NO_LETTER_LIMIT`` of ``answers`` had no letter; the
    message gives the share and names the likely causes for the answer ``method``
    (``letter-prob`` when None). ``top_k``: how many tokens the backend saw.

    ``total``: for a run still in progress, the answers it will have in all. It is then
    refused only when it can no longer be published (more than ``NO_LETTER_LIMIT`` of
    ``total`` already lack a letter) or evidently fails (more than ``NO_LETTER_EARLY_SHARE``
    of at least ``NO_LETTER_EARLY_ANSWERS`` answers)."""
    if not answers:
        return
    if total is None:
        refused = missing / answers > NO_LETTER_LIMIT
    else:
        refused = missing > NO_LETTER_LIMIT * total or (
            answers >= NO_LETTER_EARLY_ANSWERS and missing / answers > NO_LETTER_EARLY_SHARE)
    if not refused:
        return
    stopped = ("" if total is None or answers >= total
               else f"; the run was stopped after {answers:,} of its {total:,} answers")
    raise NoLetterError(f"{no_letter_share(missing, answers)}; not published{stopped}. "
                        f"{_no_letter_causes(method, top_k)}")


def _no_letter_causes(method: str | None, top_k: int | None) -> str:
    """What an answer without a letter means for ``method``, and its likely causes."""
    if method == "generate":
        return ("Those are replies that matched no letter pattern (docs/answer_methods.md). "
                "Likely causes: the model does not answer with a letter, --max-new-tokens cuts "
                "its replies before the letter, or the prompt format does not suit it (a chat "
                "model given a plain-text prompt, or the reverse).")
    if method == "full-answer-prob":
        return ("Those are answers whose five option texts all had probability 0 (log-"
                "probability -inf): the endpoint's prompt log-probabilities are not usable.")
    seen = f"its top-{top_k}" if top_k else "its top-k"
    return ("Those are answers with no letter among the tokens the backend saw "
            f"({seen}). Likely causes: the model does not answer with a letter (it starts "
            "with words such as 'The answer is'), the prompt format does not suit it (a chat "
            "model given a plain-text prompt, or the reverse), or the top-k is too small to "
            "reach the letters.")


def score_units(spec: RunSpec, units: list[WorkUnit], scorer: LetterScorer) -> pd.DataFrame:
    """Score every shuffle of ``units``; one row per (unit, shuffle) with original letters."""
    permutations = [option_permutations(spec.n_shuffles, spec.seed, item_key=u.item_id)
                    for u in units]
    requests = [build_request(u.question, u.shot_examples, perms, seed=spec.seed,
                              key=f"{u.area}:{u.prompt_language}:{u.shots}:{u.position}",
                              prompt_variant=spec.prompt_variant)
                for u, perms in zip(units, permutations, strict=True)]
    results = scorer.score(requests)
    frames = []
    for unit, perms, result in zip(units, permutations, results, strict=True):
        original = to_original_probs(result.probs, perms)
        choice_index = np.where(result.choice >= 0,
                                perms[np.arange(len(perms)), np.maximum(result.choice, 0)],
                                NO_CHOICE)
        choice = [LETTERS[c] if c >= 0 else NO_LETTER for c in choice_index]
        correct: list[bool | None] = [c == unit.question.key for c in choice]
        if result.texts is not None:  # a generated answer whose letter could not be read
            choice = [UNPARSED_MARK if c == NO_LETTER else c for c in choice]
            correct = [None if c == UNPARSED_MARK else ok
                       for c, ok in zip(choice, correct, strict=True)]
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
