"""analytics.scoring.score_responses: the one entry point for humans and models."""

from __future__ import annotations

import numpy as np
import pytest

from analytics.ability import INEP_GRID, AbilityEstimator, EAPEstimator, MAPEstimator, MLEstimator
from analytics.irt import ItemBank, probability
from analytics.person_fit import lz, lz_star
from analytics.scoring import PatternScores, score_responses


def _setup(n: int = 50, seed: int = 0):
    rng = np.random.default_rng(seed)
    a = rng.lognormal(0.6, 0.3, 20)
    b = rng.normal(0.5, 1.0, 20)
    c = rng.uniform(0.05, 0.25, 20)
    responses = (rng.random((n, 20)) < probability(rng.normal(size=n),
                                                   ItemBank.from_arrays(a, b, c))).astype(float)
    responses[rng.random(responses.shape) < 0.05] = np.nan
    a[[3, 11]] = np.nan
    b[[3, 11]] = np.nan
    c[[3, 11]] = np.nan
    return responses, ItemBank.from_arrays(a, b, c)


def test_default_is_inep_eap_with_person_fit_at_that_theta():
    responses, bank = _setup()
    got = score_responses(responses, bank)
    assert isinstance(got, PatternScores)
    want = EAPEstimator(grid=INEP_GRID).estimate(responses, bank)
    np.testing.assert_array_equal(got.theta, want.theta)
    np.testing.assert_array_equal(got.theta_se, want.se)
    np.testing.assert_allclose(got.lz, lz(responses, want.theta, bank), rtol=1e-14)
    np.testing.assert_allclose(got.lz_star, lz_star(responses, want.theta, bank, 0.0, 1.0),
                               rtol=1e-14)


def test_ctt_and_n_scored_skip_missing_responses_and_abandoned_items():
    responses, bank = _setup()
    responses[:, 3] = 1.0  # answers to abandoned items must not count
    got = score_responses(responses, bank)
    usable = np.isfinite(bank.a)
    counted = np.isfinite(responses) & usable
    np.testing.assert_array_equal(got.n_scored, counted.sum(axis=1))
    assert got.n_scored.dtype.kind == "i"
    np.testing.assert_array_equal(got.ctt, np.where(counted, responses, 0).sum(axis=1))


def test_ml_estimator_uses_the_ml_correction():
    responses, bank = _setup(seed=1)
    got = score_responses(responses, bank, MLEstimator())
    theta = MLEstimator().estimate(responses, bank).theta
    np.testing.assert_array_equal(got.theta, theta)
    np.testing.assert_allclose(got.lz_star, lz_star(responses, theta, bank), rtol=1e-14)


def test_map_estimator_uses_its_prior_for_lz_star():
    responses, bank = _setup(seed=2)
    estimator = MAPEstimator(prior_mean=0.5, prior_sd=2.0)
    got = score_responses(responses, bank, estimator)
    theta = MAPEstimator(prior_mean=0.5, prior_sd=2.0).estimate(responses, bank).theta
    np.testing.assert_array_equal(got.theta, theta)
    np.testing.assert_allclose(got.lz_star, lz_star(responses, theta, bank, 0.5, 2.0),
                               rtol=1e-14)


def test_any_estimator_subclass_works():
    responses, bank = _setup(seed=3)

    class Fixed(AbilityEstimator):
        name = "fixed"
        prior_mean = 0.0
        prior_sd = None

        def _estimate_counted(self, data):
            return EAPEstimator()._estimate_counted(data)

    np.testing.assert_array_equal(score_responses(responses, bank, Fixed()).theta,
                                  EAPEstimator().estimate(responses, bank).theta)


def test_threaded_blocks_give_the_same_numbers(monkeypatch):
    from analytics import irt

    responses, bank = _setup(n=3 * irt.ROW_BLOCK + 17, seed=4)
    monkeypatch.setattr(irt, "MAX_THREADS", 1)
    alone = [score_responses(responses, bank, estimator)
             for estimator in (MLEstimator(), MAPEstimator())] + [score_responses(responses, bank)]
    monkeypatch.setattr(irt, "MAX_THREADS", 3)
    shared = [score_responses(responses, bank, estimator)
              for estimator in (MLEstimator(), MAPEstimator())] + [score_responses(responses, bank)]
    for one, many in zip(alone, shared, strict=True):
        for field in ("theta", "theta_se", "lz", "lz_star", "ctt", "n_scored"):
            np.testing.assert_array_equal(getattr(one, field), getattr(many, field))


def test_examinee_with_nothing_counted():
    bank = ItemBank.from_arrays([1.0, 1.2], [0.0, 1.0], [0.2, 0.1])
    got = score_responses(np.array([[np.nan, np.nan], [1.0, 0.0]]), bank)
    assert got.n_scored.tolist() == [0, 2]
    assert got.ctt.tolist() == [0.0, 1.0]
    assert got.theta[0] == pytest.approx(0.0, abs=1e-14)
    assert np.isnan(got.lz[0]) and np.isnan(got.lz_star[0])
