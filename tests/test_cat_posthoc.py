"""Post-hoc CAT on the small demo year's candidates: replayed answers, full-test θ, items needed."""

from __future__ import annotations

import numpy as np
import pandas as pd

from analytics import EAPEstimator
from analytics.cat import FixedLength, LockstepCat
from cli.main import main
from enem.responses import correctness, strings_to_chars
from store.cat_queries import candidate_sample
from store.connection import connected
from store.model_runs import load_form, year_scoring_options
from workflows.cat.posthoc import posthoc_cat, year_cat_settings


def test_replay_ends_at_the_stored_theta_and_counts_items_by_brute_force(ingested_2023):
    db = ingested_2023[0]
    result = posthoc_cat(db, 2023, "MT", n_candidates=150, seed=3)
    frame = result.frame
    assert len(frame) == 150 and frame["examinee_id"].is_unique
    # After every usable item the CAT's EAP is the stored full-test θ.
    np.testing.assert_allclose(frame["final_cat_theta"], frame["full_theta"], atol=1e-9)
    assert frame["items_needed"].between(1, frame["n_items"]).all()

    # Brute force for one booklet's first candidates: replay one candidate at a time and score
    # every prefix with analytics.ability's EAP on the full response matrix.
    with connected(db, read_only=True) as con:
        sample = candidate_sample(con, 2023, "MT", 150, 3)
        options = year_scoring_options(con, 2023)
        booklet = int(sample["booklet_id"].iloc[0])
        form = load_form(con, 2023, booklet, None)
    rows = sample[sample["booklet_id"] == booklet].head(5)
    usable = form.bank.usable
    bank = form.bank.subset(usable)
    answers = correctness(strings_to_chars(rows["responses"].tolist(), form.n_items),
                          form.keys)[:, usable]
    settings = year_cat_settings(options)
    reference = EAPEstimator()
    for k, (_, row) in enumerate(rows.iterrows()):
        cat = LockstepCat(bank, 1, settings.make_selector(), settings.make_estimator(),
                          FixedLength(bank.n_items))
        while not cat.finished:
            _, items = cat.next_items()
            cat.answer(answers[k, items] == 1.0)
        order = cat.items[0]
        thetas = []
        for step in range(1, bank.n_items + 1):
            matrix = np.full((1, bank.n_items), np.nan)
            matrix[0, order[:step]] = answers[k, order[:step]]
            thetas.append(reference.estimate(matrix, bank).theta[0])
        inside = np.abs(np.array(thetas) - row["theta"]) <= row["theta_se"]
        expected = next(t + 1 for t in range(bank.n_items) if inside[t:].all())
        got = frame.loc[frame["examinee_id"] == row["examinee_id"], "items_needed"].item()
        assert got == expected
    assert "items needed to stay within" in result.lines()[1]


def test_cat_posthoc_prints_the_distribution_of_items_needed(ingested_2023, tmp_path, capsys):
    db = str(ingested_2023[0])
    output = tmp_path / "posthoc.csv"
    assert main(["cat-posthoc", "--db", db, "--year", "2023", "--area", "CH",
                 "--candidates", "120", "--seed", "4", "--output", str(output)]) == 0
    out = capsys.readouterr().out
    frame = posthoc_cat(ingested_2023[0], 2023, "CH", n_candidates=120, seed=4).frame
    saved = pd.read_csv(output)
    assert saved["examinee_id"].astype(str).tolist() == frame["examinee_id"].tolist()
    # The printed table: items needed, candidates, %, cumulative %; counted here by hand.
    rows = [line.split() for line in out.splitlines()]
    printed = [[int(r[0]), int(r[1]), float(r[2]), float(r[3])]
               for r in rows if len(r) == 4 and r[0].isdigit()]
    needed = frame["items_needed"].tolist()
    running = 0
    for items, count, percent, cumulative in printed:
        running += needed.count(items)
        assert count == needed.count(items)
        assert percent == round(100 * count / 120, 1)
        assert cumulative == round(100 * running / 120, 1)
    assert sum(row[1] for row in printed) == 120 and printed[-1][3] == 100.0
    assert "items needed to stay within" in out
    assert main(["cat-posthoc", "--db", db, "--year", "1999", "--area", "CH"]) == 2
    assert capsys.readouterr().err.strip() == "error: no scored CH candidates in 1999"
