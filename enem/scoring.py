"""Score candidates of one booklet form: the glue between response matrices and ``analytics``.

Humans (ingest), single patterns (``score-patterns``) and model runs all come through here, so a
θ means the same thing wherever it is shown.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from analytics.ability import make_estimator
from analytics.irt import ItemBank
from analytics.scales import enem_nota, paper_scale
from analytics.scoring import score_responses
from enem.items import BookletForm

SCALES = ("enem", "paper")


@dataclass(frozen=True)
class ScoringOptions:
    """How to score: estimator settings, the constant D and the reporting scale.

    Defaults are INEP's: EAP on 40 points over [−4, 4], D = 1, the ENEM nota.
    """

    method: str = "eap"
    n_quadrature: int = 40
    theta_range: tuple[float, float] = (-4.0, 4.0)
    scaling: float = 1.0
    scale: str = "enem"

    def estimator(self):
        return make_estimator(self.method, n_quadrature=self.n_quadrature,
                              theta_range=self.theta_range)


DEFAULT_OPTIONS = ScoringOptions()


def form_bank(form: BookletForm, scaling: float) -> ItemBank:
    """The form's item bank with the requested scaling constant D."""
    if scaling == form.bank.scaling:
        return form.bank
    return ItemBank.from_arrays(form.bank.a, form.bank.b, form.bank.c, scaling=scaling)


def score_form(
    responses: np.ndarray,
    form: BookletForm,
    options: ScoringOptions = DEFAULT_OPTIONS,
    blank: np.ndarray | None = None,
    estimator=None,
) -> dict[str, np.ndarray]:
    """θ, SE, l_z, l_z*, CTT, items scored and nota for candidates of one form.

    ``responses`` is (n, form.n_items) with 1/0/NaN; ``blank`` (n,) marks tests left entirely
    blank, whose nota is 0 (θ is still the all-wrong EAP). Returns arrays of shape (n,).
    """
    estimator = estimator or options.estimator()
    scores = score_responses(responses, form_bank(form, options.scaling), estimator)
    if options.scale == "enem":
        nota = enem_nota(scores.theta, form.area, blank=blank)
    elif options.scale == "paper":
        nota = paper_scale(scores.theta)
        if blank is not None:
            nota = np.where(blank, 0.0, nota)
    else:
        raise ValueError(f"unknown scale {options.scale!r}; expected one of {', '.join(SCALES)}")
    return {
        "theta": scores.theta,
        "theta_se": scores.theta_se,
        "lz": scores.lz,
        "lz_star": scores.lz_star,
        "ctt": scores.ctt,
        "n_scored": scores.n_scored,
        "nota": nota,
    }
