"""Model backends behind one interface (:class:`~inference.backends.base.LetterScorer`).

Adding a backend = one new module in this package (a subpackage named for the backend once it
takes three or more: ``openai/``, ``transformers/``) with a class implementing the interface, and
one line in :data:`BACKENDS`. Modules are imported only when their backend is made, so importing
this package never loads torch or the OpenAI client.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any

from inference.backends.base import (
    NO_CHOICE,
    BackendSettingsError,
    ItemScores,
    LetterScorer,
    LetterScores,
    ScoreRequest,
    ScoringError,
)
from inference.backends.openai.key import api_key

#: Registry: backend name -> "module:Class" (or a function building one; the transformers and
#: openai entries pick the class of their ``answer_method`` option).
BACKENDS: dict[str, str] = {
    "transformers": "inference.backends.transformers.answers:transformers_scorer",
    "openai": "inference.backends.openai.answers:openai_scorer",
    "random": "inference.backends.random_backend:RandomScorer",
}


#: Checks of a backend's settings that need no import of the backend itself (no torch, no
#: client library), run before a run writes or sends anything. Backend name -> check(options).
PREFLIGHT: dict[str, Callable[[Mapping[str, Any]], Any]] = {
    "openai": lambda options: api_key(options.get("base_url")),
}

#: Checks that ask the backend itself what it can do (an endpoint's prompt log-probabilities for
#: ``full-answer-prob``), run after ``PREFLIGHT`` and still before a run writes anything or
#: sends a prompt: backend name -> "module:function(options)", loaded like ``BACKENDS``.
PROBES: dict[str, str] = {
    "openai": "inference.backends.openai.answers:check_endpoint",
}


def available_backends() -> tuple[str, ...]:
    """Registered backend names."""
    return tuple(BACKENDS)


def check_backend(backend: str, options: Mapping[str, Any]) -> None:
    """Raise BackendSettingsError when ``backend`` with ``options`` cannot work: an unknown
    backend, no API key for a remote endpoint (both found without loading the backend), then
    what its ``PROBES`` entry finds (loading it; a server asked, for some settings only)."""
    if backend not in BACKENDS:
        raise BackendSettingsError(
            f"unknown backend {backend!r}; available: {', '.join(BACKENDS)}")
    check = PREFLIGHT.get(backend)
    if check is not None:
        check(options)
    if backend in PROBES:
        _load(PROBES[backend])(options)


def make_scorer(backend: str, **options: Any) -> LetterScorer:
    """Build the named backend with its keyword options (see each backend's class)."""
    try:
        target = BACKENDS[backend]
    except KeyError:
        raise ValueError(
            f"unknown backend {backend!r}; available: {', '.join(BACKENDS)}"
        ) from None
    return _load(target)(**options)


def _load(target: str) -> Callable[..., Any]:
    """The object a ``"module:name"`` entry names, its module imported now."""
    module_name, name = target.split(":")
    return getattr(importlib.import_module(module_name), name)


__all__ = [
    "BACKENDS",
    "NO_CHOICE",
    "PREFLIGHT",
    "PROBES",
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
