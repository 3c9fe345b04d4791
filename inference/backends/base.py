"""The one backend interface: score the five option letters of prompts.

A :class:`ScoreRequest` is one item with all of its option shuffles. Its prompts are
``prefix + stem + option_blocks[s] + suffix`` for shuffle ``s``: ``prefix`` (instructions and
solved examples) is the same for every item of a run, ``stem`` for every shuffle of the item,
and only the options block differs. Backends that can reuse computation across the shared parts
(the transformers backend's KV cache) do so; others simply score the full strings.

A backend returns one :class:`ItemScores` per request, in request order, with per-shuffle
letter probabilities in *displayed* letter order (map them back with
``inference.shuffles.to_original_probs``).

This module imports neither torch nor any client library.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

import numpy as np

from enem.areas import OPTION_LETTERS as LETTERS
from inference.answer_methods import UNPARSED, parse_letter

#: ``ItemScores.choice`` value for "the backend saw no letter at all" (treat as a blank answer).
NO_CHOICE = -1


class ScoringError(RuntimeError):
    """A backend could not score a request; the message names the item and shuffle."""


class ScoringCancelled(Exception):
    """A stop was asked for while a batch was being scored (``enem-llm cancel``, SIGTERM): the
    backend sent no further request and its batch is abandoned unfinished. Not a
    ScoringError: nothing failed, and the run turns it into a cancelled run."""


class BackendSettingsError(ValueError):
    """A backend cannot be used as set up (e.g. no API key for a remote endpoint); raised before
    anything is sent."""


@dataclass(frozen=True)
class ScoreRequest:
    """One item and all of its option shuffles.

    ``option_blocks`` has one rendered options block per shuffle (n_shuffles,). The full prompt of
    shuffle ``s`` is ``prefix + stem + option_blocks[s] + suffix``. ``key`` is an opaque
    identifier echoed back in the result (e.g. the item uid); ``seed`` feeds backends that draw
    random numbers (the random baseline).
    """

    key: str
    prefix: str
    stem: str
    option_blocks: tuple[str, ...]
    suffix: str
    seed: int = 0
    meta: dict[str, Any] = field(default_factory=dict, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "option_blocks", tuple(self.option_blocks))
        if not self.option_blocks:
            raise ValueError(f"request {self.key!r} has no option blocks")

    @property
    def n_shuffles(self) -> int:
        return len(self.option_blocks)

    def prompt(self, shuffle: int) -> str:
        """The exact full prompt text of one shuffle."""
        return self.prefix + self.stem + self.option_blocks[shuffle] + self.suffix

    def prompts(self) -> list[str]:
        """All full prompts, shape (n_shuffles,)."""
        return [self.prompt(s) for s in range(self.n_shuffles)]


@dataclass(frozen=True)
class ItemScores:
    """Letter scores of one request.

    ``probs`` (n_shuffles, 5) float64: next-token probabilities of the displayed letters A–E,
    normalised over the five letters (rows sum to 1).
    ``letter_mass`` (n_shuffles,) float64: total next-token probability the five letters had before
    normalising (NaN when the backend cannot know, e.g. the random baseline).
    ``choice`` (n_shuffles,) int64: the displayed letter index chosen, normally ``argmax(probs)``;
    :data:`NO_CHOICE` (-1) when the backend saw no letter at all (an API top-k without letters).
    ``texts`` (n_shuffles,): the generated answers, for backends that generate (else None).
    """

    key: str
    probs: np.ndarray
    letter_mass: np.ndarray
    choice: np.ndarray
    texts: tuple[str, ...] | None = None

    def __post_init__(self) -> None:
        probs = np.asarray(self.probs, dtype=np.float64)
        mass = np.asarray(self.letter_mass, dtype=np.float64)
        choice = np.asarray(self.choice, dtype=np.int64)
        if probs.ndim != 2 or probs.shape[1] != 5:
            raise ValueError(f"probs must have shape (n_shuffles, 5), got {probs.shape}")
        if mass.shape != probs.shape[:1] or choice.shape != probs.shape[:1]:
            raise ValueError("letter_mass and choice must have shape (n_shuffles,)")
        if not np.allclose(probs.sum(axis=1), 1.0, atol=1e-9):
            raise ValueError(f"probs of {self.key!r} do not sum to 1")
        object.__setattr__(self, "probs", probs)
        object.__setattr__(self, "letter_mass", mass)
        object.__setattr__(self, "choice", choice)

    @classmethod
    def from_letter_probs(
        cls, key: str, letter_probs: np.ndarray, letter_mass: np.ndarray | None = None
    ) -> ItemScores:
        """Normalise unnormalised letter probabilities (S, 5); choice = argmax.

        ``letter_mass`` defaults to the row sums of ``letter_probs``.
        """
        raw = np.asarray(letter_probs, dtype=np.float64)
        total = raw.sum(axis=1)
        mass = total if letter_mass is None else np.asarray(letter_mass, dtype=np.float64)
        return cls(key, raw / total[:, None], mass, raw.argmax(axis=1))

    @classmethod
    def from_option_scores(cls, key: str, scores: np.ndarray) -> ItemScores:
        """``full-answer-prob``: ``scores`` (S, 5) mean log-probabilities of the displayed
        options' texts; probs = their softmax per shuffle, choice = argmax, letter mass NaN.

        A shuffle whose five scores are all -inf (the server gave every option's text
        probability 0) has no answer: probs uniform and choice :data:`NO_CHOICE`, counted like
        a top-k without a letter, rather than a softmax of nothing."""
        scores = np.asarray(scores, dtype=np.float64)
        none = scores.max(axis=1) == -np.inf
        finite = np.where(none[:, None], 0.0, scores)
        probs = np.exp(finite - finite.max(axis=1, keepdims=True))
        probs /= probs.sum(axis=1, keepdims=True)
        return cls(key, probs, np.full(len(scores), np.nan),
                   np.where(none, NO_CHOICE, finite.argmax(axis=1)))

    @classmethod
    def from_generated(cls, key: str, texts: Sequence[str],
                       reasoning: bool = False) -> ItemScores:
        """``generate``: the letter of each completion (S,) read with
        ``inference.answer_methods.parse_letter`` (its last answer when ``reasoning``: a
        chain-of-thought prompt); probs one-hot on it, or uniform with choice
        :data:`NO_CHOICE` when it is unparsed; the texts are kept."""
        texts = tuple(texts)
        letters = np.array([parse_letter(text, reasoning) for text in texts], dtype=np.int64)
        parsed = letters != UNPARSED
        probs = np.full((len(texts), len(LETTERS)), 1.0 / len(LETTERS))
        probs[parsed] = np.eye(len(LETTERS))[letters[parsed]]
        return cls(key, probs, np.full(len(texts), np.nan),
                   np.where(parsed, letters, NO_CHOICE), texts=texts)

    @property
    def n_shuffles(self) -> int:
        return int(self.probs.shape[0])


def displayed_options(req: ScoreRequest) -> tuple[tuple[str, ...], ...]:
    """The five displayed option texts of each shuffle of ``req`` (``meta['options']``, set by
    ``inference.prompts.build_request``), (n_shuffles, 5); ScoringError when it has none."""
    options = req.meta.get("options")
    if options is None or len(options) != req.n_shuffles:
        raise ScoringError(f"{req.key}: the request carries no displayed options "
                           "(build it with inference.prompts.build_request)")
    return tuple(tuple(row) for row in options)


#: What a backend returns: one ItemScores per request, in request order.
LetterScores = list[ItemScores]


@runtime_checkable
class LetterScorer(Protocol):
    """The backend interface. ``name`` is the registry name; ``describe()`` returns the settings
    to store with a run (JSON-serialisable, never secrets)."""

    name: str

    def score(self, requests: Sequence[ScoreRequest]) -> LetterScores:
        """Score every shuffle of every request; one ItemScores per request, in order."""
        ...

    def describe(self) -> dict[str, Any]:
        """Backend settings for the run record."""
        ...
