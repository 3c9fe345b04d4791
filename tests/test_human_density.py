"""The humans' 2-D histogram drawn under the models: every count lands in its own cell, empty
cells are blank, colour is log10 of the count."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from dashboard.figures import human_density


def test_counts_land_in_their_cells_with_gaps_filled_and_duplicates_summed():
    rng = np.random.default_rng(5)
    theta = np.round(rng.integers(-30, 25, 400) * 0.1, 1)
    ctt = rng.integers(0, 46, 400).astype(float)
    frame = pd.DataFrame({"theta_bin": theta, "ctt": ctt, "n": rng.integers(1, 50, 400)})
    trace = human_density(frame, "theta_bin", "ctt", 0.1, 1.0, "CTT")
    # Slow reference: a full pivot over every bin between the extremes.
    x_edges = np.round(np.arange(theta.min(), theta.max() + 0.05, 0.1), 6)
    y_edges = np.arange(ctt.min(), ctt.max() + 0.5, 1.0)
    expected = (frame.pivot_table(index="ctt", columns="theta_bin", values="n", aggfunc="sum",
                                  fill_value=0)
                .reindex(index=y_edges, columns=x_edges, fill_value=0).to_numpy(float))
    np.testing.assert_array_equal(trace.customdata, expected)
    np.testing.assert_allclose(trace.x, x_edges + 0.05)
    np.testing.assert_allclose(trace.y, y_edges)  # whole-number bins are centred on the value
    z = np.asarray(trace.z, float)
    assert np.isnan(z[expected == 0]).all()
    np.testing.assert_allclose(z[expected > 0], np.log10(expected[expected > 0]))


def test_no_rows_give_an_empty_heatmap():
    trace = human_density(pd.DataFrame({"theta_bin": [], "lz_bin": [], "n": []}), "theta_bin",
                          "lz_bin", 0.1, 0.1, "l_z")
    assert np.asarray(trace.z).size == 0


def test_the_colour_bar_spans_at_least_one_decade():
    """A small group whose every cell holds one candidate: the colour bar still runs from 1 to
    10 (two ticks), not from 1 to 1; a crowded one runs to its largest count."""
    sparse = pd.DataFrame({"theta_bin": [-1.0, 0.0, 1.0], "ctt": [5.0, 9.0, 20.0], "n": 1})
    trace = human_density(sparse, "theta_bin", "ctt", 0.1, 1.0, "CTT", show_scale=True)
    assert (trace.zmin, trace.zmax) == (0.0, 1.0)
    shown = [t for t in trace.colorbar.tickvals if trace.zmin <= t <= trace.zmax]
    assert [trace.colorbar.ticktext[t] for t in shown] == ["1", "10"]
    crowded = sparse.assign(n=[3, 2_000, 70])
    trace = human_density(crowded, "theta_bin", "ctt", 0.1, 1.0, "CTT", show_scale=True)
    assert trace.zmax == pytest.approx(np.log10(2_000))
    empty = human_density(sparse.iloc[:0], "theta_bin", "ctt", 0.1, 1.0, "CTT")
    assert empty.zmax == 1.0
