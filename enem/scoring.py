"""Score candidates of one booklet form: the glue between response matrices and ``analytics``.

Humans (ingest), single patterns (``score-patterns``), model runs and the demo generator all come
through here, so a θ means the same thing wherever it is shown. INEP's official recipe is written
once, as the defaults of :class:`ScoringOptions`; see docs/methods.md, ENEM conventions.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import cast

import numpy as np
from numpy.typing import ArrayLike

from analytics.ability import INEP_GRID, AbilityEstimator, make_estimator
from analytics.irt import FloatArray, ItemBank
from analytics.scales import enem_nota, paper_scale
from analytics.scoring import score_responses
from enem.items import PUBLISHED_SCALING, BookletForm

SCALES = ("enem", "paper")


@dataclass(frozen=True)
class ScoringOptions:
    """How to score: estimator settings, the constant D and the reporting scale.

    The defaults are INEP's official recipe: EAP with a N(0, 1) prior on 40 equally spaced points
    over [−4, 4] (``analytics.ability.INEP_GRID``), D = 1, and the ENEM nota round(k·θ + d, 1).

    Parameters
    ----------
    method : {"eap", "map", "ml"}, default "eap"
    n_quadrature : int, default 40
        EAP grid points.
    theta_range : (float, float), default (−4, 4)
        EAP grid range, or the MAP/ML search bounds (see ``analytics.ability.make_estimator``).
    scaling : float, default ``enem.items.PUBLISHED_SCALING`` (1.0, INEP's D)
        The constant D given to every item bank scored with these options.
    scale : {"enem", "paper"}, default "enem"
        Reporting scale of the nota: ENEM's per-area round(k·θ + d, 1), or 100·θ + 500.
    """

    method: str = "eap"
    n_quadrature: int = INEP_GRID.n_quadrature
    theta_range: tuple[float, float] = INEP_GRID.theta_range
    scaling: float = PUBLISHED_SCALING
    scale: str = "enem"

    def as_dict(self) -> dict:
        """The settings as plain JSON-ready values (stored beside every scored year and run)."""
        return {"method": self.method, "n_quadrature": self.n_quadrature,
                "theta_range": list(self.theta_range), "scaling": self.scaling,
                "scale": self.scale}

    @classmethod
    def from_dict(cls, values: dict) -> ScoringOptions:
        """The inverse of :meth:`as_dict`."""
        return cls(method=values["method"], n_quadrature=int(values["n_quadrature"]),
                   # The stored pair, written by as_dict from the (low, high) field, as floats.
                   theta_range=cast("tuple[float, float]",
                                    tuple(float(v) for v in values["theta_range"])),
                   scaling=float(values["scaling"]), scale=values["scale"])

    @classmethod
    def from_stored(cls, stored: object) -> ScoringOptions:
        """The settings stored with a year, run or ingest: the JSON text of :meth:`as_dict`.

        INEP's recipe (``ScoringOptions()``) when nothing was stored: None or an empty string
        from the store, NaN from a pandas column (files made before settings were stored).
        Every reader of a ``scoring`` column goes through here.
        """
        if isinstance(stored, str) and stored:
            return cls.from_dict(json.loads(stored))
        return cls()

    def describe(self) -> str:
        """One line for captions: ``EAP, 40 points on [−4, 4], D = 1, ENEM nota``."""
        low, high = self.theta_range
        how = (f"{self.method.upper()}, {self.n_quadrature} points on [{low:g}, {high:g}]"
               if self.method == "eap" else f"{self.method.upper()} within [{low:g}, {high:g}]")
        scale = "ENEM nota" if self.scale == "enem" else "100·θ + 500"
        return f"{how}, D = {self.scaling:g}, {scale}"

    def same_theta(self, other: ScoringOptions) -> bool:
        """Whether ``other`` gives every pattern the same θ (estimator, grid or bounds, D);
        the reporting scale may differ."""
        return (self.method, self.n_quadrature, tuple(self.theta_range), self.scaling) == (
            other.method, other.n_quadrature, tuple(other.theta_range), other.scaling)

    def estimator(self) -> AbilityEstimator:
        """The θ estimator these options describe."""
        return make_estimator(self.method, n_quadrature=self.n_quadrature,
                              theta_range=self.theta_range)

    def item_bank(self, bank: ItemBank) -> ItemBank:
        """``bank`` with these options' scaling constant D (``bank`` itself when it has it)."""
        if self.scaling == bank.scaling:
            return bank
        return ItemBank.from_arrays(bank.a, bank.b, bank.c, scaling=self.scaling)

    def nota(self, theta: ArrayLike, area: str, blank: ArrayLike | None = None) -> FloatArray:
        """θ (n,) on the reporting scale, shape (n,); a test left entirely blank (``blank``
        True) gets 0.

        Raises
        ------
        ValueError
            If ``scale`` is not one of ``SCALES`` (or, for "enem", ``area`` is unknown).
        """
        if self.scale == "enem":
            return enem_nota(theta, area, blank=blank)
        if self.scale == "paper":
            nota = paper_scale(theta)
            return nota if blank is None else np.where(blank, 0.0, nota)
        raise ValueError(f"unknown scale {self.scale!r}; expected one of {', '.join(SCALES)}")


DEFAULT_OPTIONS = ScoringOptions()


def score_form(
    responses: np.ndarray,
    form: BookletForm,
    options: ScoringOptions = DEFAULT_OPTIONS,
    blank: np.ndarray | None = None,
    estimator: AbilityEstimator | None = None,
) -> dict[str, np.ndarray]:
    """θ, SE, l_z, l_z*, CTT, items scored and nota for candidates of one form.

    Parameters
    ----------
    responses : array of shape (n, form.n_items)
        1.0 / 0.0 / NaN.
    form : BookletForm
    options : ScoringOptions, default INEP's recipe
    blank : bool array of shape (n,), optional
        Tests left entirely blank, whose nota is 0 (θ is still the all-wrong EAP).
    estimator : AbilityEstimator, optional
        ``options.estimator()`` already built, to reuse one across forms.

    Returns
    -------
    dict of arrays of shape (n,)
        "theta", "theta_se", "lz", "lz_star", "ctt", "n_scored" and "nota".
    """
    estimator = estimator or options.estimator()
    scores = score_responses(responses, options.item_bank(form.bank), estimator)
    return {
        "theta": scores.theta,
        "theta_se": scores.theta_se,
        "lz": scores.lz,
        "lz_star": scores.lz_star,
        "ctt": scores.ctt,
        "n_scored": scores.n_scored,
        "nota": options.nota(scores.theta, form.area, blank),
    }


def inep_nota(
    responses: np.ndarray,
    form: BookletForm,
    theta: ArrayLike,
    options: ScoringOptions = DEFAULT_OPTIONS,
    blank: np.ndarray | None = None,
) -> FloatArray:
    """The nota INEP's official recipe (``DEFAULT_OPTIONS``) gives each pattern, whatever
    ``options`` the store displays: what the booklet audit compares with ``NU_NOTA``.

    Parameters
    ----------
    responses : array of shape (n, form.n_items)
        1.0 / 0.0 / NaN, as given to :func:`score_form`.
    form : BookletForm
    theta : array of shape (n,)
        The patterns' θ under ``options``; reused when ``options`` estimate θ as INEP does (a
        different scale alone), else θ is estimated again by INEP's recipe.
    options : ScoringOptions, default INEP's recipe
        The settings that produced ``theta``.
    blank : bool array of shape (n,), optional
        Tests left entirely blank, whose nota is 0.

    Returns
    -------
    ndarray of shape (n,)
    """
    if options.same_theta(DEFAULT_OPTIONS):
        return DEFAULT_OPTIONS.nota(theta, form.area, blank)
    return nota_only(responses, form.bank, form.area, blank)


def nota_only(
    responses: ArrayLike,
    bank: ItemBank,
    area: str,
    blank: ArrayLike | None = None,
    options: ScoringOptions = DEFAULT_OPTIONS,
) -> FloatArray:
    """The nota of each response pattern, by INEP's recipe unless ``options`` say otherwise.

    The same θ and nota as :func:`score_form`, without person fit or CTT: for callers (the demo
    generator) that publish only ``NU_NOTA``.

    Parameters
    ----------
    responses : array of shape (n, bank.n_items)
        1.0 / 0.0 / NaN.
    bank : ItemBank
        Its D is replaced by ``options.scaling``.
    area : {"CH", "CN", "LC", "MT"}
    blank : bool array of shape (n,), optional
        Tests left entirely blank, whose nota is 0.
    options : ScoringOptions, default INEP's recipe

    Returns
    -------
    ndarray of shape (n,)
    """
    theta = options.estimator().estimate(responses, options.item_bank(bank)).theta
    return options.nota(theta, area, blank)
