"""Min-K% Prob exactly as *Beyond accuracy*'s Eq. 4 and the implementation it cites:
MIN-K% PROB(x) = −(1/E) Σ log p(x_i) over the E tokens with the lowest K% log-probabilities
(the negated mean), computed here by hand for tiny texts; and stored values of the older sign
(the mean without the minus) brought to it."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from inference.min_k import min_k_count, min_k_from_logprobs, signed_as_eq4
from store.connection import insert_rows, open_reader, writing


def test_min_k_is_the_negated_mean_of_the_lowest_k_percent_by_hand():
    # Ten tokens with probabilities 0.9, 0.8, …, 0.05: K = 20 keeps the two least likely,
    # p = 0.1 and p = 0.05, so MIN-K% PROB = −(log 0.1 + log 0.05) / 2 ≈ 2.6492.
    probabilities = [0.9, 0.8, 0.7, 0.6, 0.5, 0.4, 0.3, 0.2, 0.1, 0.05]
    logprobs = np.log(probabilities)
    assert min_k_count(10, 20) == 2
    expected = -(math.log(0.1) + math.log(0.05)) / 2
    assert expected == pytest.approx(2.649158683274018, abs=1e-15)
    assert min_k_from_logprobs(logprobs, 20) == pytest.approx(expected, abs=1e-15)
    # A text whose every token is certain (p = 1) gets 0; less likely tokens give more.
    assert min_k_from_logprobs(np.zeros(7), 20) == 0.0
    assert min_k_from_logprobs(np.log([0.5, 0.5, 0.5, 0.5, 0.5]), 20) == pytest.approx(math.log(2))
    # Four tokens: floor(4 · 20 / 100) = 0, at least one is kept: the least likely one.
    assert min_k_from_logprobs(np.log([0.9, 0.25, 0.6, 0.7]), 20) == pytest.approx(math.log(4))
    assert math.isnan(min_k_from_logprobs(np.array([]), 20))


def test_values_of_the_older_sign_are_brought_to_eq4():
    assert signed_as_eq4(pd.Series([-2.5, 0.0, 1.25])).tolist() == [2.5, 0.0, 1.25]


def test_the_store_turns_older_values_round_on_its_next_write(tmp_path):
    path = tmp_path / "old.duckdb"
    with writing(path) as con:
        insert_rows(con, "min_k_prob", pd.DataFrame({
            "model_id": "m", "year": 2023, "item_id": [1, 2, 3], "language": "pt",
            "k_percent": 20.0, "value": [-3.5, 0.0, np.nan]}))
    with writing(path) as con:  # any writer brings the file up to date
        pass
    con = open_reader(path)
    values = [row[0] for row in con.execute(
        "SELECT value FROM min_k_prob ORDER BY item_id").fetchall()]
    con.close()
    assert values == [3.5, 0.0, None]  # a missing value stays missing
