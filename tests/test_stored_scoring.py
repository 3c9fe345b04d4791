"""``ScoringOptions.from_stored``: the one reader of a stored ``scoring`` column."""

from __future__ import annotations

import json

import pytest

from enem.scoring import DEFAULT_OPTIONS, ScoringOptions

PAPER = ScoringOptions(n_quadrature=121, theta_range=(-6.0, 6.0), scale="paper")


@pytest.mark.parametrize("options", [DEFAULT_OPTIONS, PAPER,
                                     ScoringOptions(method="map", scaling=1.7)])
def test_stored_json_reads_back_as_the_same_settings(options):
    assert ScoringOptions.from_stored(json.dumps(options.as_dict())) == options


@pytest.mark.parametrize("stored", [None, "", float("nan")])
def test_nothing_stored_is_inep_recipe(stored):
    assert ScoringOptions.from_stored(stored) == DEFAULT_OPTIONS
