"""Normal approximation for BI-AWGN (qdecode.sims.finite_length) against an independent table.

The table is the Polyanskiy-Poor-Verdu normal approximation (doi:10.1109/TIT.2010.2043769),
computed independently with 200-point Gauss-Hermite quadrature.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.integrate import quad

from qdecode.sims.finite_length import biawgn_capacity_dispersion, na_bler, na_ebn0

# independently computed NA BLER at Eb/N0 = 1.0, 1.5, ..., 5.0 dB (None = not tabulated)
TABLE = {
    (127, 64): [1.06e-1, 3.39e-2, 7.31e-3, 9.63e-4, 6.76e-5, 2.09e-6, 2.2e-8, None, None],
    (128, 64): [1.03e-1, 3.24e-2, 6.90e-3, 8.95e-4, 6.17e-5, 1.88e-6, 1.9e-8, None, None],
    (64, 22): [7.79e-2, 3.84e-2, 1.61e-2, 5.60e-3, 1.53e-3, 3.09e-4, 4.28e-5, 3.62e-6, 1.6e-7],
    (32, 16): [1.61e-1, 9.94e-2, 5.48e-2, 2.61e-2, 1.04e-2, 3.23e-3, 7.29e-4, 1.06e-4, 8.29e-6],
}
# Eb/N0 (dB) for NA BLER 1e-2 / 1e-3 / 1e-4 / 1e-5
INVERSE = {
    (127, 64): [1.91, 2.49, 2.93, 3.29],
    (128, 64): [1.89, 2.48, 2.92, 3.28],
    (64, 22): [2.24, 3.14, 3.80, 4.31],
    (32, 16): [3.02, 3.90, 4.51, 4.97],
}


def test_capacity_and_dispersion_at_unit_noise():
    c, v = biawgn_capacity_dispersion(1.0)
    assert round(c, 5) == 0.48594
    assert round(v, 5) == 0.65968


@pytest.mark.parametrize("sigma2", [0.2, 1.0, 4.0])
def test_quadrature_matches_adaptive_integration(sigma2):
    s = math.sqrt(sigma2)

    def dens(z):
        llr = 2 / sigma2 + 2 / s * z
        return 1 - np.logaddexp(0, -llr) / math.log(2)

    phi = lambda z: math.exp(-z * z / 2) / math.sqrt(2 * math.pi)  # noqa: E731
    c_ref = quad(lambda z: dens(z) * phi(z), -40, 40, limit=200)[0]
    v_ref = quad(lambda z: (dens(z) - c_ref) ** 2 * phi(z), -40, 40, limit=200)[0]
    c, v = biawgn_capacity_dispersion(sigma2)
    assert c == pytest.approx(c_ref, abs=1e-9) and v == pytest.approx(v_ref, abs=1e-8)


@pytest.mark.parametrize("nk", sorted(TABLE))
def test_na_bler_table(nk):
    ebn0 = np.arange(1.0, 5.01, 0.5)
    got = na_bler(*nk, ebn0)
    assert got.shape == ebn0.shape
    for g, ref in zip(got, TABLE[nk]):
        if ref is not None:
            # table entries have 2-3 significant figures
            assert g == pytest.approx(ref, rel=0.006 if ref > 1e-7 else 0.05)
    assert np.all(np.diff(got) < 0)
    assert isinstance(na_bler(*nk, 2.0), float)


@pytest.mark.parametrize("nk", sorted(INVERSE))
def test_na_ebn0_inverse(nk):
    for bler, ref in zip((1e-2, 1e-3, 1e-4, 1e-5), INVERSE[nk]):
        e = na_ebn0(*nk, bler)
        assert round(e, 2) == pytest.approx(ref, abs=0.0051)
        assert na_bler(*nk, e) == pytest.approx(bler, rel=1e-8)


def test_bad_input():
    with pytest.raises(ValueError, match="k must not exceed n"):
        na_bler(64, 128, 2.0)
    with pytest.raises(ValueError, match="positive integers"):
        na_bler(0, 0, 2.0)
    with pytest.raises(ValueError, match="ebn0_db must be finite"):
        na_bler(127, 64, float("nan"))
    with pytest.raises(ValueError, match="ebn0_db must be finite"):
        na_bler(127, 64, [1.0, float("inf")])
    with pytest.raises(ValueError, match="bler must be in"):
        na_ebn0(127, 64, 0.0)
    with pytest.raises(ValueError, match="not reached"):
        na_ebn0(127, 64, 1e-3, lo=5.0, hi=6.0)
    with pytest.raises(ValueError, match="sigma2"):
        biawgn_capacity_dispersion(-1.0)
    with pytest.raises(ValueError, match="sigma2"):
        biawgn_capacity_dispersion(float("nan"))
