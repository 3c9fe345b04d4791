"""The paper's published runs on a store, for the dashboard tests: the real 2019–2022 item
files (``real_items_db``) with both results files of the paper imported on the paper's θ grid,
and the 2022 texts, as a new user would load them.

- ``paper_db``: that store, built once per test module that uses it (module scope); treat it as
  read-only. tests/conftest.py registers this module as a plugin, so any test names it without
  an import (tests/test_paper_results.py and tests/test_paper_tables_page.py define their own
  ``paper_db``, which their tests get instead).
- ``SEED_SERIES`` and ``SHUFFLE_SERIES``: the labels of its nine series (five models over 30
  seeds, four over 30 shuffles); ``RESULT_FILES``, the two results files; ``PAPER_GRID``, the
  θ grid the paper scored them on.
"""

from __future__ import annotations

import pytest

from enem.scoring import ScoringOptions
from store.connection import connected
from store.layout import copy_store
from workflows.question_import import import_questions
from workflows.results_io import import_results_summary

PAPER_GRID = ScoringOptions(n_quadrature=121, theta_range=(-6.0, 6.0))
RESULT_FILES = ("enem-experiments-results-processed-with-irt-lz.parquet",
                "enem-experiments-results-shuffle-processed-with-irt-lz.parquet")
SEED_SERIES = [f"{model} · few-shot · 30 seeds" for model in
               ("gpt-3.5-turbo-0613", "llama2-13b", "llama2-7b", "mistral-7b", "mistral-8x7b")]
SHUFFLE_SERIES = [f"{model} · few-shot · 30 shuffles" for model in
                  ("gpt-3.5-turbo-0613", "llama2-13b", "llama2-7b", "mistral-7b")]


@pytest.fixture(scope="module")
def paper_db(tmp_path_factory, real_items_db, real_data):
    path = tmp_path_factory.mktemp("paper_dashboard") / "paper.duckdb"
    copy_store(real_items_db, path)
    with connected(path) as con:
        for name in RESULT_FILES:
            import_results_summary(con, real_data / "paper-results" / name, PAPER_GRID)
    import_questions(path, real_data / "paper-questions-2022", "paper-csv")
    return path
