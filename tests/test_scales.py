"""analytics.scales: the ENEM nota and the paper's scale."""

from __future__ import annotations

import numpy as np
import pytest

from analytics.scales import ENEM_SCALE, enem_nota, paper_scale


def test_enem_constants():
    assert ENEM_SCALE == {"CH": (112.310, 501.489), "CN": (113.102, 501.144),
                          "LC": (108.086, 499.978), "MT": (129.646, 500.020)}


def test_enem_nota_by_hand():
    # MT, θ = 1: 129.646 + 500.020 = 629.666 → 629.7. CH, θ = 0: 501.489 → 501.5.
    # CN, θ = −1: 501.144 − 113.102 = 388.042 → 388.0. LC, θ = 2: 216.172 + 499.978 = 716.15.
    assert enem_nota([1.0], "MT")[0] == pytest.approx(629.7, abs=1e-9)
    assert enem_nota([0.0], "CH")[0] == pytest.approx(501.5, abs=1e-9)
    assert enem_nota([-1.0], "CN")[0] == pytest.approx(388.0, abs=1e-9)
    assert enem_nota([2.0], "LC")[0] == pytest.approx(np.round(716.15, 1), abs=1e-9)


def test_enem_nota_blank_is_zero():
    got = enem_nota([1.0, -0.5, 0.2], "MT", blank=[False, True, False])
    np.testing.assert_allclose(got, [629.7, 0.0, np.round(129.646 * 0.2 + 500.020, 1)])


def test_enem_nota_unknown_area_lists_the_valid_ones():
    with pytest.raises(ValueError, match="CH, CN, LC, MT"):
        enem_nota([0.0], "XX")


def test_paper_scale():
    np.testing.assert_allclose(paper_scale([-1.0, 0.0, 0.1234]), [400.0, 500.0, 512.34])
