"""Model backends behind one interface (:class:`~inference.backends.base.LetterScorer`).

Adding a backend = one new module in this package with a class implementing the interface, and
one line in :data:`BACKENDS`. Modules are imported only when their backend is made, so importing
this package never loads torch or the OpenAI client.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any

from inference.backends import openai_key
from inference.backends.base import (
    NO_CHOICE,
    BackendSettingsError,
    ItemScores,
    LetterScorer,
    LetterScores,
    ScoreRequest,
    ScoringError,
)

#: Registry: backend name -> "module:Class" (or a function building one; the transformers entry
#: picks the class of its ``answer_method`` option).
BACKENDS: dict[str, str] = {
    "transformers": "inference.backends.transformers_answers:transformers_scorer",
    "openai": "inference.backends.openai_backend:OpenAIScorer",
    "random": "inference.backends.random_backend:RandomScorer",
}


#: Checks of a backend's settings that need no import of the backend itself (no torch, no
#: client library), run before a run writes or sends anything. Backend name -> check(options).
PREFLIGHT: dict[str, Callable[[Mapping[str, Any]], Any]] = {
    "openai": lambda options: openai_key.api_key(options.get("base_url")),
}


def available_backends() -> tuple[str, ...]:
    """Registered backend names."""
    return tuple(BACKENDS)


def check_backend(backend: str, options: Mapping[str, Any]) -> None:
    """Raise BackendSettingsError when ``backend`` with ``options`` cannot work (an unknown
    backend, no API key for a remote endpoint), without loading the backend."""
    if backend not in BACKENDS:
        raise BackendSettingsError(
            f"unknown backend {backend!r}; available: {', '.join(BACKENDS)}")
    check = PREFLIGHT.get(backend)
    if check is not None:
        check(options)


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
    "PREFLIGHT",
    "BackendSettingsError",
    "ItemScores",
    "LetterScorer",
    "LetterScores",
    "ScoreRequest",
    "ScoringError",
    "available_backends",
    "check_backend",
    "make_scorer",
]
