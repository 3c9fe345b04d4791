"""Names for torch, transformers and the modules built on them that import them on first use.

Collecting the test suite imports every test module; a module-level ``import torch`` there
loads about 5,000 modules (seconds, hundreds of MB) even for ``-m "not model"``. A test module
that needs them writes ``torch = lazy_module("torch")`` or
``Scorer, = lazy_names("inference.backends.transformers.answers", "Scorer")`` instead, and
uses the names as before: the import happens when a test first touches one.
"""

from __future__ import annotations

import importlib
from typing import Any


class _Lazy:
    """Stands for ``module`` (or its attribute ``name``) and imports it when first used."""

    def __init__(self, module: str, name: str | None = None) -> None:
        self._module = module
        self._name = name

    def _target(self) -> Any:
        target = importlib.import_module(self._module)
        return target if self._name is None else getattr(target, self._name)

    def __getattr__(self, attribute: str) -> Any:
        if attribute.startswith("_"):
            raise AttributeError(attribute)
        return getattr(self._target(), attribute)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._target()(*args, **kwargs)

    def __repr__(self) -> str:
        return f"<lazy {self._module}{'.' + self._name if self._name else ''}>"


def lazy_module(module: str) -> Any:
    """``module``, imported when an attribute of it is first read."""
    return _Lazy(module)


def lazy_names(module: str, *names: str) -> tuple[Any, ...]:
    """``module``'s ``names`` (classes or functions to call, or read attributes of), imported
    when one is first used. Not for ``isinstance``: import the class in the test for that."""
    return tuple(_Lazy(module, name) for name in names)
