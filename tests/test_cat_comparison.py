"""A live CAT against the same model's full exam: a hand-worked case, and the demo's random
baseline (its full runs and a live CAT) checked by brute force from the stored rows."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from cli.main import main
from store.connection import connected
from store.layout import copy_store
from workflows.cat.comparison import compare_with_full_exam, load_comparison


def _steps(run: str, model: str, thetas: list[float], path: int = 0) -> pd.DataFrame:
    return pd.DataFrame({
        "run_id": run, "label": f"{model} · CAT", "model_id": model, "area": "MT",
        "prompt_language": "pt", "shots": 0, "path": path,
        "step": np.arange(1, len(thetas) + 1), "theta": thetas,
        "theta_se": np.linspace(0.9, 0.5, len(thetas)), "year": 2023,
    })


def test_hand_worked_paths_against_full_exams():
    steps = pd.concat([
        # Full θ 0.5 ± 0.2: inside at steps 2, 4, 5 -> stays inside from step 4.
        _steps("cat-a", "m", [0.0, 0.6, 0.2, 0.45, 0.55], path=0),
        # A shorter path (it stopped at step 3): inside at 1 and 3 -> from step 3.
        _steps("cat-a", "m", [0.4, 0.8, 0.65], path=1),
        # Ends outside: never stays inside.
        _steps("cat-b", "m", [0.5, 0.5, 0.9]),
        # No full exam of this model.
        _steps("cat-c", "other", [0.1, 0.2]),
    ], ignore_index=True)
    full = pd.DataFrame({
        "model_id": ["m", "m", "m"], "area": ["MT", "MT", "MT"],
        "prompt_language": ["pt", "en", "pt"], "shots": [0.0, 0.0, np.nan],
        "theta": [0.5, -3.0, 3.0], "theta_se": [0.2, 0.1, 0.1], "n_patterns": [30, 30, 5],
        "runs": ["m · full", "m · full en", "m · imported"],
    })
    table = compare_with_full_exam(steps, full).set_index(["run_id", "path"])
    assert len(table) == 4
    assert table.loc[("cat-a", 0), "items_needed"] == 4
    assert table.loc[("cat-a", 1), "items_needed"] == 3
    assert pd.isna(table.loc[("cat-b", 0), "items_needed"])
    assert pd.isna(table.loc[("cat-c", 0), "items_needed"])
    assert pd.isna(table.loc[("cat-c", 0), "full_theta"])
    # The final step's θ̂ and SE, the matching full exam (pt, 0-shot) only.
    row = table.loc[("cat-a", 1)]
    assert (row["items"], row["cat_theta"], row["full_theta"], row["full_se"]) == (3, 0.65, 0.5,
                                                                                   0.2)
    assert row["cat_se"] == pytest.approx(0.5)
    assert row["difference"] == pytest.approx(0.15) and bool(row["within_se"])
    assert not table.loc[("cat-b", 0), "within_se"]
    assert row["full_runs"] == "m · full" and row["full_patterns"] == 30


def test_random_baseline_cat_against_its_stored_full_exam(tmp_path, pages_demo_db, capsys):
    db = tmp_path / "compare.duckdb"
    copy_store(pages_demo_db, db)
    code = main(["cat-run", "--db", str(db), "--backend", "random", "--year", "2023",
                 "--areas", "CN", "MT", "--paths", "2", "--estimator", "eap",
                 "--runs-dir", str(tmp_path / "runs"), "--quiet"])
    assert code == 0
    out = capsys.readouterr().out
    assert "against the full exam" in out and "items needed" in out
    with connected(db, read_only=True) as con:
        steps = con.execute("SELECT * FROM cat_paths").df()
        patterns = con.execute(
            "SELECT m.area, m.theta, m.theta_se FROM model_scores m JOIN model_runs r "
            "USING (run_id) WHERE r.model_id = 'random-baseline' AND m.year = 2023 "
            "AND m.prompt_language = 'pt' AND m.shots = 0").df()
    table = load_comparison(db, steps)
    # The printed table: area, path, then the numbers (one line per path).
    printed = {(words[0], int(words[1])): words[2:] for words in map(str.split, out.splitlines())
               if len(words) == 9 and words[0] in ("CN", "MT") and words[1].isdigit()}
    assert len(printed) == 4
    assert len(table) == 4
    for row in table.itertuples():
        mine = patterns[patterns["area"] == row.area]
        assert len(mine) == row.full_patterns == 30
        assert row.full_theta == pytest.approx(mine["theta"].mean(), abs=1e-12)
        assert row.full_se == pytest.approx(mine["theta_se"].mean(), abs=1e-12)
        path = steps[(steps["area"] == row.area) & (steps["path"] == row.path)]
        thetas = path.sort_values("step")["theta"].to_numpy()
        assert row.items == len(thetas) and row.cat_theta == thetas[-1]
        assert row.within_se == (abs(thetas[-1] - mine["theta"].mean())
                                 <= mine["theta_se"].mean())
        # Brute force: the first step after which every later θ̂ is within the full SE.
        inside = [abs(t - row.full_theta) <= row.full_se for t in thetas]
        expected = next((t + 1 for t in range(len(thetas)) if all(inside[t:])), None)
        assert (None if pd.isna(row.items_needed) else row.items_needed) == expected
        needed = "—" if expected is None else str(expected)
        assert printed[(row.area, row.path)] == [
            str(row.items), f"{row.cat_theta:.3f}", f"{row.cat_se:.3f}",
            f"{row.full_theta:.3f}", f"{row.full_se:.3f}", "yes" if row.within_se else "no",
            needed]
