"""An LC booklet is two forms, one per foreign language: the θ moments behind its reliability
and the prior of its S-X² item fit are those of one language's takers, counted directly."""

from __future__ import annotations

import numpy as np
import pytest

from analytics.irt import ItemBank
from store import item_queries
from store.connection import open_reader
from store.model_runs import year_scoring_options
from workflows.items.fit import human_item_fit
from workflows.items.form_fit import form_item_fit


@pytest.fixture(scope="module")
def lc_store(ingested_2023):
    con = open_reader(ingested_2023[0])
    booklet = con.execute(
        "SELECT booklet_id FROM scores WHERE year = 2023 AND area = 'LC' "
        "AND item_language IS NOT NULL GROUP BY booklet_id "
        "HAVING count(DISTINCT item_language) = 2 ORDER BY count(*) DESC LIMIT 1").fetchone()[0]
    yield con, int(booklet)
    con.close()


def _direct(con, booklet: int, language: int | None) -> tuple[int, float, float, float]:
    """Count, mean, sample variance and mean SE² of the form's takers, in numpy."""
    where = "" if language is None else f"AND item_language = {language}"
    theta, se = np.array(con.execute(
        "SELECT theta, theta_se FROM scores WHERE year = 2023 AND area = 'LC' AND "
        f"booklet_id = ? AND NOT coalesce(blank, false) AND isfinite(theta) {where}",
        [booklet]).fetchall()).T
    return len(theta), float(theta.mean()), float(theta.var(ddof=1)), float(np.mean(se ** 2))


@pytest.mark.parametrize("language", [0, 1])
def test_lc_moments_are_one_languages_takers(lc_store, language):
    con, booklet = lc_store
    moments = item_queries.booklet_theta_moments(con, 2023, "LC", booklet, language)
    n, mean, variance, mean_se2 = _direct(con, booklet, language)
    assert moments.candidates == n
    assert moments.mean == pytest.approx(mean, abs=1e-12)
    assert moments.variance == pytest.approx(variance, rel=1e-9)
    assert moments.mean_se2 == pytest.approx(mean_se2, rel=1e-9)
    # Fewer than the booklet's takers: the other language's are not in it.
    assert n < _direct(con, booklet, None)[0]


def test_an_lc_form_needs_its_language(lc_store):
    con, booklet = lc_store
    with pytest.raises(ValueError, match="one form per language"):
        item_queries.booklet_theta_moments(con, 2023, "LC", booklet, None)


def test_the_fit_prior_of_an_lc_form_is_its_own_languages(lc_store):
    con, booklet = lc_store
    for language in (0, 1):
        fit = form_item_fit(con, 2023, "LC", booklet, language)
        ids, counts, by_score = item_queries.score_tables(con, 2023, "LC", booklet, language)
        form = item_queries.form_items(con, 2023, booklet, language)
        params = form.drop_duplicates("item_id").set_index("item_id").reindex(ids)
        bank = ItemBank(params["a"], params["b"], params["c"],
                        scaling=year_scoring_options(con, 2023).scaling)
        _, mean, variance, mean_se2 = _direct(con, booklet, language)
        own = human_item_fit(ids, params["co_posicao"].to_numpy(), bank, counts, by_score,
                             prior_mean=mean, prior_sd=float(np.sqrt(variance + mean_se2)))
        np.testing.assert_allclose(fit["sx2"], own["sx2"], rtol=1e-9, equal_nan=True)
        _, pooled_mean, pooled_variance, pooled_se2 = _direct(con, booklet, None)
        pooled = human_item_fit(ids, params["co_posicao"].to_numpy(), bank, counts, by_score,
                                prior_mean=pooled_mean,
                                prior_sd=float(np.sqrt(pooled_variance + pooled_se2)))
        assert not np.allclose(fit["sx2"], pooled["sx2"], rtol=1e-6, equal_nan=True)
