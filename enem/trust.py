"""Can a model's θ be read like a candidate's? One verdict from four checks (pure, no Streamlit).

A θ is trusted only when all four hold:

1. **Person fit**: fewer than :data:`UNTRUSTED_SHARE` of the model's response patterns have an
   l_z below the humans' 5th percentile (:func:`fit_verdict`).
2. **Precision like a human's**: the model's mean SE(θ) is at most :data:`SE_RATIO_LIMIT` times
   the mean SE of the humans whose θ falls in the same 0.1-wide bin.
3. **Inside the informative band**: at the model's mean θ the exam's SE(θ) = 1/√I(θ) is at most
   :data:`INFORMATIVE_SE` (the default of the Test information page).
4. **Not noise**: the model's θ values over its repetitions differ from those of random
   answering on the same booklet (each item right with probability 1/5, scored the same way):
   two-sided Mann–Whitney U p < :data:`RANDOM_ALPHA` and the model's median above random's.

l_z alone cannot do this: near the bottom of the scale it has little power, so a random
answerer often fits as well as a candidate (check 4 catches it).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike
from scipy.stats import mannwhitneyu

from analytics.irt import ItemBank, standard_error_curve
from analytics.scoring import score_responses
from enem.scoring import ScoringOptions

#: A model's θ is flagged as untrustworthy when at least this share of its response patterns has
#: an l_z below the humans' 5th percentile (i.e. is less coherent than 95% of candidates).
UNTRUSTED_SHARE = 0.5

#: A model's SE(θ) may be at most this many times the humans' mean SE at the same θ.
SE_RATIO_LIMIT = 1.25
#: The exam measures well where SE(θ) = 1/√I(θ) is at most this (I(θ) ≥ 6.25).
INFORMATIVE_SE = 0.4
#: Significance level of the comparison with random answering.
RANDOM_ALPHA = 0.05
#: Random-answer patterns simulated per booklet, and the generator's seed (reproducible).
RANDOM_PATTERNS = 2000
RANDOM_SEED = 20231105
#: Probability that a random choice among ENEM's five options is the key.
RANDOM_CORRECT = 0.2

RULE = (f"θ trusted = all four checks pass: person fit (fewer than {UNTRUSTED_SHARE:.0%} of "
        "the repetitions below the humans' 5th percentile of l_z); SE no more than "
        f"{SE_RATIO_LIMIT:g}× the mean SE of humans in the same 0.1-wide θ bin; the exam's "
        f"SE(θ) = 1/√I(θ) at the model's mean θ at most {INFORMATIVE_SE:g} (the informative "
        "band); and θ distinguishable from random answering on the same booklet (two-sided "
        f"Mann–Whitney p < {RANDOM_ALPHA:g}, median above random's; {RANDOM_PATTERNS:,} "
        "simulated random patterns, each item right with probability 1/5).")


#: The verdict of a baseline series (``store.model_sql.BASELINE_BACKEND``): its answers are random
#: by construction, so the four checks are not asked of it; its row is the yardstick the "not
#: random" check compares the models with.
BASELINE_VERDICT = "baseline: random answers, not a model"


@dataclass(frozen=True)
class FitVerdict:
    """Person-fit summary of one model in one area."""

    share_below: float
    untrusted: bool

    @property
    def decided(self) -> bool:
        """False when there was nothing to compare (no l_z, or no humans to give a percentile)."""
        return bool(np.isfinite(self.share_below))


def fit_verdict(lz_values: ArrayLike, human_p5: float) -> FitVerdict:
    """Share of a model's l_z values below the humans' 5th percentile, and the trust flag."""
    values = np.asarray(lz_values, np.float64)
    values = values[np.isfinite(values)]
    if len(values) == 0 or not np.isfinite(human_p5):
        return FitVerdict(float("nan"), False)
    share = float(np.mean(values < human_p5))
    return FitVerdict(share, share >= UNTRUSTED_SHARE)


@dataclass(frozen=True)
class TrustVerdict:
    """The four checks of one model in one area (NaN: nothing to compare with)."""

    fit: FitVerdict
    #: Model's mean SE(θ) over the humans' mean SE in the bin of the model's mean θ.
    se_ratio: float
    #: The exam's SE(θ) = 1/√I(θ) at the model's mean θ.
    exam_se: float
    #: Mann–Whitney p of the model's θ values against random answering's.
    random_p: float
    above_random: bool

    @property
    def checks(self) -> dict[str, bool | None]:
        """Each check's outcome; None when it could not be made."""
        def known(value: float, passed: bool) -> bool | None:
            return bool(passed) if np.isfinite(value) else None

        return {
            "person fit": (not self.fit.untrusted) if self.fit.decided else None,
            "SE like humans'": known(self.se_ratio, self.se_ratio <= SE_RATIO_LIMIT),
            "informative band": known(self.exam_se, self.exam_se <= INFORMATIVE_SE),
            "not random": known(self.random_p,
                                self.random_p < RANDOM_ALPHA and self.above_random),
        }

    @property
    def trusted(self) -> bool | None:
        """False when any check fails; None when none fails but one could not be made."""
        outcomes = list(self.checks.values())
        if any(outcome is False for outcome in outcomes):
            return False
        return None if any(outcome is None for outcome in outcomes) else True

    @property
    def words(self) -> str:
        """'yes'; 'no: fails <checks>' (and the checks that could not be made, in brackets);
        or 'undecided: cannot check <checks>'."""
        failed = [name for name, outcome in self.checks.items() if outcome is False]
        missing = [name for name, outcome in self.checks.items() if outcome is None]
        unchecked = "cannot check " + ", ".join(missing)
        if failed:
            return "no: fails " + ", ".join(failed) + (f" ({unchecked})" if missing else "")
        return "yes" if not missing else "undecided: " + unchecked


def random_answer_theta(bank: ItemBank, options: ScoringOptions,
                        n_patterns: int = RANDOM_PATTERNS, seed: int = RANDOM_SEED) -> np.ndarray:
    """θ of ``n_patterns`` random answerers on ``bank`` (each item right with probability 1/5),
    scored with ``options``; shape (n_patterns,)."""
    rng = np.random.default_rng(seed)
    responses = (rng.random((n_patterns, bank.n_items)) < RANDOM_CORRECT).astype(np.float64)
    responses[:, ~bank.usable] = np.nan  # items without parameters are not scored
    return score_responses(responses, options.item_bank(bank), options.estimator()).theta


def humans_se_at(human_se: pd.DataFrame, theta: float, bin_width: float) -> float:
    """The humans' mean SE in the θ bin holding ``theta`` (``human_se``: theta_bin lower edges,
    mean_se); NaN when no human fell in that bin."""
    if not np.isfinite(theta) or human_se.empty:
        return float("nan")
    lower = np.floor(np.round(theta / bin_width, 9)) * bin_width
    match = human_se.loc[np.isclose(human_se["theta_bin"], lower), "mean_se"]
    return float(match.iloc[0]) if len(match) else float("nan")


def trust_verdict(theta: ArrayLike, theta_se: ArrayLike, lz: ArrayLike, human_p5_lz: float,
                  human_se: float, bank: ItemBank | None, random_theta: ArrayLike
                  ) -> TrustVerdict:
    """The four checks for one model in one area.

    ``theta``, ``theta_se``, ``lz``: the model's values per repetition, shape (n,);
    ``human_p5_lz``: the humans' 5th percentile of l_z; ``human_se``: the humans' mean SE at the
    model's mean θ (:func:`humans_se_at`); ``bank``: the booklet's scored items (None: unknown);
    ``random_theta``: θ of random answerers on that booklet (:func:`random_answer_theta`).
    """
    thetas = np.asarray(theta, np.float64)
    thetas = thetas[np.isfinite(thetas)]
    mean_theta = float(thetas.mean()) if len(thetas) else float("nan")
    se = np.asarray(theta_se, np.float64)
    se = se[np.isfinite(se)]
    se_ratio = (float(se.mean()) / human_se if len(se) and np.isfinite(human_se) and human_se > 0
                else float("nan"))
    exam_se = (float(standard_error_curve([mean_theta], bank)[0])
               if bank is not None and np.isfinite(mean_theta) else float("nan"))
    randoms = np.asarray(random_theta, np.float64)
    if len(thetas) and len(randoms):
        random_p = float(mannwhitneyu(thetas, randoms, alternative="two-sided").pvalue)
        above = bool(np.median(thetas) > np.median(randoms))
    else:
        random_p, above = float("nan"), False
    return TrustVerdict(fit=fit_verdict(lz, human_p5_lz), se_ratio=se_ratio, exam_se=exam_se,
                        random_p=random_p, above_random=above)
