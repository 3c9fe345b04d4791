"""Model backends behind one interface (:class:`~inference.backends.base.LetterScorer`).

Adding a backend = one new module in this package with a class implementing the interface, and
one line in :data:`BACKENDS`. Modules are imported only when their backend is made, so importing
this package never loads torch or the OpenAI client.
"""

from __future__ import annotations

import importlib
from typing import Any

from inference.backends.base import (
    NO_CHOICE,
    ItemScores,
    LetterScorer,
    LetterScores,
    ScoreRequest,
    ScoringError,
)

#: Registry: backend name -> "module:Class".
BACKENDS: dict[str, str] = {
    "transformers": "inference.backends.transformers_backend:TransformersScorer",
    "openai": "inference.backends.openai_backend:OpenAIScorer",
    "random": "inference.backends.random_backend:RandomScorer",
}


def available_backends() -> tuple[str, ...]:
    """Registered backend names."""
    return tuple(BACKENDS)


def make_scorer(backend: str, **options: Any) -> LetterScorer:
    """Build the named backend with its keyword options (see each backend's class)."""
    try:
        target = BACKENDS[backend]
    except KeyError:
        raise ValueError(
            f"unknown backend {backend!r}; available: {', '.join(BACKENDS)}"
        ) from None
    module_name, class_name = target.split(":")
    cls = getattr(importlib.import_module(module_name), class_name)
    return cls(**options)


__all__ = [
    "BACKENDS",
    "NO_CHOICE",
    "ItemScores",
    "LetterScorer",
    "LetterScores",
    "ScoreRequest",
    "ScoringError",
    "available_backends",
    "make_scorer",
]
