"""Which choice a tool's answer chose.

* Log-likelihood answers (lm-eval ``multiple_choice``, lighteval's log-likelihood metrics): the
  choice with the highest log-likelihood, as lm-eval's ``acc`` and lighteval's unnormalised
  ``LogLikelihoodAccMetric`` pick it. lm-eval's ``acc_norm`` divides each log-likelihood by the
  number of characters of its choice (``lm_eval/api/task.py``,
  ``ConfigurableTask.process_results``: ``completion_len = len(choice)`` for each choice of
  ``doc_to_choice``, without the target delimiter); :attr:`ReadAnswer.norm_index` says which
  choice that rule would pick, so an import can count where the two differ. The import always
  stores the unnormalised choice.
* Generated answers: the tool's own extracted answer when it is a bare letter A–E (lm-eval's
  filter output), else the letter the project's patterns read from the generated text
  (:func:`inference.answer_methods.parse_letter`); no letter is an unparsed answer.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from enem.areas import OPTION_LETTERS
from inference.answer_methods import UNPARSED, parse_letter
from inference.harness.records import ToolAnswer

#: How each kind of answer is read (stored with the run's settings).
CHOICE_RULES = {
    "loglikelihood": "the choice with the highest log-likelihood, unnormalised (lm-eval's acc)",
    "generated": "the tool's extracted letter when it is a bare letter A-E, else the project's "
                 "letter patterns on the generated text (docs/answer_methods.md)",
    "letter": "the letter the file records, which names the option wherever it was shown",
}


@dataclass(frozen=True)
class ReadAnswer:
    """The choice read from one answer.

    ``index``: the chosen choice, a position in the tool's choice order (the displayed letter
    for letter choices); None when a generated text shows no letter. ``probs``: the choices'
    log-likelihoods made probabilities (softmax over the choices), None for generated answers.
    ``letter_mass``: the total probability of the choices when they are the bare letters A–E
    (the next-token mass on the letters), else None. ``norm_index``: the choice of the
    per-character rule (lm-eval's acc_norm), None when it does not apply. ``text``: the
    generated text kept with the answer. ``rule``: a key of :data:`CHOICE_RULES`.
    """

    index: int | None
    rule: str
    probs: tuple[float, ...] | None = None
    letter_mass: float | None = None
    norm_index: int | None = None
    text: str | None = None


def read_answer(answer: ToolAnswer, delimiter: str = " ") -> ReadAnswer:
    """The choice of ``answer``; ``delimiter`` is what the tool put before each choice in its
    continuation (lm-eval's ``target_delimiter``, " " by default), left out of its length."""
    if answer.loglikelihoods is not None:
        return _from_loglikelihoods(answer.loglikelihoods, answer.choices, delimiter)
    return _from_text(answer.extracted, answer.generated)


def _from_loglikelihoods(lls: tuple[float, ...], choices: tuple[str, ...],
                         delimiter: str) -> ReadAnswer:
    values = np.asarray(lls, dtype=float)
    best = float(values.max())
    # A choice with -inf log-likelihood has probability 0; all -inf leaves no information.
    weights = np.exp(values - best) if math.isfinite(best) else np.ones_like(values)
    probs = tuple(float(w) for w in weights / weights.sum())
    letters = [c.strip() for c in choices]
    letter_mass = (float(np.exp(values).sum())
                   if len(letters) == len(values) and all(c in OPTION_LETTERS and len(c) == 1
                                                          for c in letters) else None)
    return ReadAnswer(int(values.argmax()), "loglikelihood", probs, letter_mass,
                      _norm_choice(values, choices, delimiter))


def _norm_choice(values: np.ndarray, choices: tuple[str, ...], delimiter: str) -> int | None:
    """The choice with the highest log-likelihood per character, None when a length is
    unknown or zero."""
    if len(choices) != len(values):
        return None
    lengths = np.array([len(c[len(delimiter):] if delimiter and c.startswith(delimiter) else c)
                        for c in choices], dtype=float)
    if (lengths <= 0).any():
        return None
    return int((values / lengths).argmax())


def _from_text(extracted: str | None, generated: str | None) -> ReadAnswer:
    text = generated if generated is not None else extracted
    own = (extracted or "").strip()
    if len(own) == 1 and own in OPTION_LETTERS:
        return ReadAnswer(OPTION_LETTERS.index(own), "generated", text=text)
    letter = parse_letter(text or "")
    return ReadAnswer(None if letter == UNPARSED else letter, "generated", text=text)
