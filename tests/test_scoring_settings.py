"""Scoring settings chosen at ingest are used, stored and shown; the items-only ingest."""

from __future__ import annotations

import json

import numpy as np

from cli.main import main
from enem.areas import OPTION_LETTERS
from store.connection import open_reader
from store.layout import copy_store


def _brute_force_eap(correct: np.ndarray, a, b, c, grid: np.ndarray) -> float:
    """EAP of one 0/1 pattern under the 3PL (D = 1) and a N(0, 1) prior, item by item."""
    posterior = np.exp(-grid ** 2 / 2)
    for u, ai, bi, ci in zip(correct, a, b, c, strict=True):
        p = ci + (1 - ci) / (1 + np.exp(-ai * (grid - bi)))
        posterior = posterior * (p if u else 1 - p)
    return float((grid * posterior).sum() / posterior.sum())


def test_ingest_with_the_papers_grid_scores_stores_and_prints_it(tmp_path, demo_files_2023,
                                                                 capsys):
    db = tmp_path / "paper_grid.duckdb"
    code = main(["ingest-enem", "--db", str(db), "--year", "2023", "--quiet",
                 "--microdata", str(demo_files_2023.microdata),
                 "--items", str(demo_files_2023.items),
                 "--grid-points", "121", "--grid-range", "-6", "6"])
    assert code == 0
    assert "scoring: EAP, 121 points on [-6, 6], D = 1, ENEM nota" in capsys.readouterr().out
    con = open_reader(db)
    stored = json.loads(con.execute("SELECT scoring FROM ingests").fetchone()[0])
    assert stored == {"method": "eap", "n_quadrature": 121, "theta_range": [-6.0, 6.0],
                      "scaling": 1.0, "scale": "enem"}
    sample = con.execute(
        """SELECT s.booklet_id, e.responses_cn, s.theta FROM scores s
           JOIN examinees e USING (year, examinee_id)
           WHERE s.area = 'CN' AND NOT s.blank ORDER BY s.examinee_id LIMIT 25""").fetchall()
    grid = np.linspace(-6, 6, 121)
    for booklet, responses, theta in sample:
        items = con.execute(
            """SELECT key, a, b, c FROM items WHERE year = 2023 AND booklet_id = ?
               ORDER BY co_posicao""", [booklet]).fetchall()
        scored = [(mark == key, a, b, c)
                  for mark, (key, a, b, c) in zip(responses, items, strict=True)
                  if a is not None and key in OPTION_LETTERS]
        u, a, b, c = (np.array(column, dtype=float) for column in zip(*scored, strict=True))
        assert abs(theta - _brute_force_eap(u, a, b, c, grid)) < 1e-9
    con.close()


def test_items_only_ingest_refuses_a_year_with_candidates(tmp_path, ingested_2023,
                                                          demo_files_2023, capsys):
    db = tmp_path / "with_candidates.duckdb"
    copy_store(ingested_2023[0], db)
    before = open_reader(db).execute(
        "SELECT count(*) FROM scores").fetchone()[0]
    code = main(["ingest-items", "--db", str(db), "--year", "2023",
                 "--items", str(demo_files_2023.items)])
    assert code != 0
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: year 2023 already holds candidates")
    con = open_reader(db)
    assert con.execute("SELECT count(*) FROM scores").fetchone()[0] == before
    con.close()
