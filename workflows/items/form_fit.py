"""The humans' item fit (S-X², :func:`workflows.items.fit.human_item_fit`) of one booklet form
read from the store on its own, for the pages that mark the misfitting items of a form (the
Item explorer, Response patterns) without running every item-level check of
:mod:`workflows.items.checks`.

The inputs are the ones ``item_checks`` gives the fit: the form's stored score tables, its
items' a, b, c in booklet order, the form's candidates' θ moments as the prior (in LC, those
of the form's language only) and the year's scaling D, so both produce the same table for the
same form.
"""

from __future__ import annotations

import duckdb
import numpy as np
import pandas as pd

from analytics.irt import ItemBank
from analytics.items.fit import DEFAULT_POOLING
from store import item_queries
from store.model_runs import year_scoring_options
from workflows.items.fit import FIT_COLUMNS, human_item_fit


def form_item_fit(con: duckdb.DuckDBPyConnection, year: int, area: str, booklet: int,
                  item_language: int | None, scaling: float | None = None,
                  pooling: str = DEFAULT_POOLING) -> pd.DataFrame:
    """The human item-fit table (:data:`~workflows.items.fit.FIT_COLUMNS`, booklet order) of
    one form: ``booklet`` and, in LC, ``item_language`` (0 English, 1 Spanish; ignored
    elsewhere). ``scaling``: D of the items (default the year's); ``pooling``: S-X²'s pooling
    rule (mirt's by default; ``analytics.items.fit.POOLING_RULES``).

    Empty (with those columns) when the store holds no score tables of the form: a year
    stored from its item file alone, or ingested before the tables existed.

    Raises
    ------
    ValueError
        If the booklet has one form per language and ``item_language`` is None.
    """
    ids, counts, by_score = item_queries.score_tables(con, year, area, booklet, item_language)
    if not len(ids) or counts.sum() == 0:
        return pd.DataFrame({column: [] for column in FIT_COLUMNS})
    if scaling is None:
        scaling = year_scoring_options(con, year).scaling
    form = item_queries.form_items(con, year, booklet, item_language)
    params = form.drop_duplicates("item_id").set_index("item_id").reindex(ids)
    moments = item_queries.booklet_theta_moments(con, year, area, booklet,
                                                 item_language if area == "LC" else None)
    mean, sd = moments.mean, moments.latent_sd
    bank = ItemBank(params["a"], params["b"], params["c"], scaling=scaling)
    # A booklet without scored candidates has NaN moments: the standard normal prior then, as
    # in item_checks.
    return human_item_fit(ids, params["co_posicao"].to_numpy(), bank, counts, by_score,
                          prior_mean=mean if np.isfinite(mean) else 0.0,
                          prior_sd=sd if np.isfinite(sd) and sd > 0 else 1.0, pooling=pooling)


def misfitting_items(fit: pd.DataFrame) -> frozenset[int]:
    """The item ids ``fit`` (a :func:`form_item_fit` table) flags."""
    return frozenset(int(item) for item in fit.loc[fit["misfit"].astype(bool), "item_id"])
