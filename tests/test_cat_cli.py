"""``enem-llm cat-simulate`` on the small demo year: the study on the area's stored items."""

from __future__ import annotations

import numpy as np
import pandas as pd

from analytics import ItemBank, QuadratureGrid
from analytics.cat import (
    CatEAP,
    FixedLength,
    MaxInformation,
    RandomItems,
    mse_by_step,
    simulate_cat,
)
from cli.main import main
from store.connection import connected


def _bank_from_items_table(db) -> tuple[ItemBank, np.ndarray]:
    with connected(db, read_only=True) as con:
        rows = con.execute("SELECT item_id, a, b, c, abandoned FROM items WHERE area = 'CN'").df()
    rows = rows[~rows["abandoned"].fillna(False) & rows["a"].notna()]
    rows = rows.drop_duplicates("item_id").sort_values("item_id")
    return ItemBank.from_arrays(rows["a"], rows["b"], rows["c"]), rows["item_id"].to_numpy()


def test_cat_simulate_prints_and_writes_the_study(ingested_2023, tmp_path, capsys):
    db = ingested_2023[0]
    output = tmp_path / "mse.csv"
    code = main(["cat-simulate", "--db", str(db), "--area", "CN", "--simulees", "300",
                 "--estimator", "eap", "--grid-points", "61", "--max-items", "12",
                 "--random-items", "30", "--seed", "5", "--output", str(output)])
    assert code == 0
    printed = capsys.readouterr().out
    assert "CN:" in printed and "After its 12 items the CAT's MSE is" in printed
    table = pd.read_csv(output)
    assert table.columns.tolist() == ["items", "mse_cat", "mse_random"]
    assert table["items"].tolist() == list(range(1, 31))

    bank, _ = _bank_from_items_table(db)
    theta0 = np.random.default_rng([5, 1]).normal(0.0, 1.0, 300)
    estimator = CatEAP(grid=QuadratureGrid(61, (-6.0, 6.0)))
    cat = simulate_cat(bank, theta0, MaxInformation(), estimator, FixedLength(12), seed=5)
    rnd = simulate_cat(bank, theta0, RandomItems(), estimator, FixedLength(30), seed=5)
    np.testing.assert_allclose(table["mse_cat"][:12], mse_by_step(cat.theta, theta0)[1:])
    assert table["mse_cat"][12:].isna().all()
    np.testing.assert_allclose(table["mse_random"], mse_by_step(rnd.theta, theta0)[1:])


def test_cat_simulate_bad_input_is_one_error_line(ingested_2023, capsys):
    db = str(ingested_2023[0])
    assert main(["cat-simulate", "--db", db, "--area", "CN", "--years", "1999"]) == 2
    assert capsys.readouterr().err.strip() == "error: no CN items with parameters in year 1999"
    assert main(["cat-simulate", "--db", db, "--area", "CN", "--slip", "-0.1"]) == 2
    assert capsys.readouterr().err.count("\n") == 1
    assert main(["cat-simulate", "--db", db, "--area", "CN", "--theta-range", "2", "1"]) == 2
    assert "--theta-range" in capsys.readouterr().err


def test_cat_run_with_the_random_backend_prints_and_stores_paths(demo_db, tmp_path, capsys):
    code = main(["cat-run", "--db", str(demo_db), "--backend", "random", "--year", "2023",
                 "--areas", "CN", "--paths", "2", "--max-items", "7", "--estimator", "map",
                 "--runs-dir", str(tmp_path / "runs"), "--quiet"])
    assert code == 0
    out = capsys.readouterr().out
    with connected(demo_db, read_only=True) as con:
        stored = con.execute("SELECT path, count(*) FROM cat_paths GROUP BY path "
                             "ORDER BY path").fetchall()
    assert stored == [(0, 7), (1, 7)]
    assert "max-info · map · 7 items" in out and "paths stored in cat_paths" in out
    assert main(["cat-run", "--db", str(demo_db), "--year", "2023"]) == 2
    assert capsys.readouterr().err.strip() == ("error: --model is required for the "
                                               "transformers backend")
