"""The trust table's two uses of a booklet's items, the exam's SE at the model's θ and the θ of
random answerers, both use the year's constant D: a year stored with ``--scaling 1.7`` must not
get an SE computed with D = 1 beside random θ scored with D = 1.7."""

from __future__ import annotations

import json
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from analytics.irt import ItemBank, standard_error_curve
from dashboard import trust_table
from enem.items import stored_item_bank
from enem.scoring import DEFAULT_OPTIONS, ScoringOptions

YEAR, BOOKLET = 2023, 1234


def _items(n_items: int = 45) -> pd.DataFrame:
    rng = np.random.default_rng(7)
    items = pd.DataFrame({"a": rng.uniform(0.8, 3.0, n_items), "b": rng.normal(0.5, 1.0, n_items),
                          "c": rng.uniform(0.05, 0.25, n_items)})
    items.loc[3, ["a", "b", "c"]] = np.nan  # an abandoned item stays in the form, unusable
    return items


@pytest.fixture()
def table_inputs(monkeypatch):
    items = _items()
    monkeypatch.setattr(trust_table.queries, "form_items", lambda year, booklet, language: items)
    monkeypatch.setattr(trust_table.queries, "human_theta_se",
                        lambda *args: pd.DataFrame(columns=["theta_bin", "mean_se"]))
    monkeypatch.setattr(trust_table, "information_booklet", lambda filters, area: BOOKLET)
    trust_table.cached_random_theta.clear()
    points = pd.DataFrame({"model": "m", "area": "MT", "theta": [0.4, 0.6, 0.5],
                           "theta_se": [0.3, 0.3, 0.3], "lz": [0.1, -0.2, 0.0],
                           "item_language": np.nan})
    yield items, points
    trust_table.cached_random_theta.clear()


@pytest.mark.parametrize("scaling", [1.0, 1.7])
def test_exam_se_and_random_theta_use_the_years_d(table_inputs, scaling):
    items, points = table_inputs
    options = ScoringOptions(scaling=scaling)
    filters = SimpleNamespace(year=YEAR, profile={"scoring": json.dumps(options.as_dict())},
                              human_args=lambda area: (YEAR, area))
    row = trust_table.trust_table(filters, points, {"MT": -1.0}).iloc[0]
    bank = ItemBank.from_arrays(items["a"], items["b"], items["c"], scaling=scaling)
    assert row["exam_se"] == pytest.approx(standard_error_curve([0.5], bank)[0], rel=1e-12)
    random_theta = trust_table.cached_random_theta(YEAR, BOOKLET, None,
                                                   filters.profile["scoring"])
    np.testing.assert_allclose(random_theta, trust_table.random_answer_theta(bank, options),
                               rtol=0, atol=0)
    if scaling != 1.0:  # with D = 1 the SE would be another number
        unscaled = ItemBank.from_arrays(items["a"], items["b"], items["c"])
        assert abs(row["exam_se"] - standard_error_curve([0.5], unscaled)[0]) > 1e-3


def test_a_form_bank_carries_the_stored_d():
    items = _items()
    assert stored_item_bank(items, scaling=1.7).scaling == 1.7
    bank = stored_item_bank(items, scaling=DEFAULT_OPTIONS.scaling)
    assert DEFAULT_OPTIONS.item_bank(bank) is bank  # INEP's D already: nothing to replace
    np.testing.assert_array_equal(bank.usable, np.arange(45) != 3)
