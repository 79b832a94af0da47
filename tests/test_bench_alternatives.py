"""The accuracy measures of benchmarks/bench_alternatives.py (the benchmark itself is not run)."""

import numpy as np
import pytest

from benchmarks.bench_alternatives import accuracy, mc_floor, reaches


def test_accuracy_of_a_shifted_and_scaled_sample():
    # draws a * d + b against d: z = b / sd(d), sd ratios = a, and the KL of the moment fits
    # is that of N(m + b, a^2 S) against N(m, S)
    rng = np.random.default_rng(0)
    ref = rng.standard_normal((4000, 3)) @ np.array([[1.0, 0.3, 0.0], [0, 2.0, 0.5], [0, 0, 0.5]])
    ref -= ref.mean(axis=0)  # so that a * ref + b has mean b
    a, b = 1.3, np.array([0.1, -0.2, 0.05])
    acc = accuracy(a * ref + b, ref)
    sd = ref.std(axis=0, ddof=1)
    assert acc["mean_abs_z"] == pytest.approx(np.mean(np.abs(b) / sd), rel=1e-12)
    np.testing.assert_allclose(acc["sd_ratio"], a, rtol=1e-12)
    S = np.cov(ref, rowvar=False)
    P = 3
    maha = b @ np.linalg.solve(S, b)
    assert acc["kl_forward"] == pytest.approx(
        0.5 * (P / a**2 + maha / a**2 - P + 2 * P * np.log(a)), rel=1e-10
    )
    assert acc["kl_reverse"] == pytest.approx(
        0.5 * (P * a**2 + maha - P - 2 * P * np.log(a)), rel=1e-10
    )
    same = accuracy(ref, ref)
    assert same["mean_abs_z"] == 0.0 and same["kl_forward"] == 0.0
    np.testing.assert_allclose(same["sd_ratio"], 1.0, rtol=1e-12)


def test_reaches_needs_both_the_mean_and_every_sd():
    acc = {"mean_abs_z": 0.03, "sd_ratio": [1.0, 0.9, 1.1]}
    assert reaches(acc, 0.015)
    assert not reaches(acc, 0.0149)
    assert not reaches(acc | {"sd_ratio": [1.0, 0.84, 1.1]}, 0.015)
    assert not reaches(acc | {"sd_ratio": [1.0, 0.9, 1.16]}, 0.015)


def test_mc_floor_of_independent_draws():
    # C chains of n independent N(0, 1) draws: the pooled mean's error is N(0, 1 / (C n)), so
    # the MCSE floor estimates sqrt(2 / pi) / sqrt(C n), and the two halves (C n / 2 draws
    # each) differ by N(0, 4 / (C n)): twice that. The MCSE floor averages P estimates of
    # 1 / sqrt(ESS) (a few per cent each); the halves' floor is a mean of P half-normals
    # (relative sd sqrt(pi / 2 - 1) / sqrt(P) = 5.3% at P = 200): tolerances of about 4 sd.
    C, n, P = 2, 2000, 200
    draws = np.random.default_rng(1).standard_normal((C, n, P))
    expected = np.sqrt(2 / np.pi) / np.sqrt(C * n)
    halves, mcse = mc_floor(draws)
    assert mcse == pytest.approx(expected, rel=0.04)
    assert halves == pytest.approx(2 * expected, rel=4 * np.sqrt(np.pi / 2 - 1) / np.sqrt(P))
    # autocorrelated chains (AR(1), rho = 0.8: ESS = C n (1 - rho) / (1 + rho)) raise the floor
    rho, e = 0.8, np.random.default_rng(2).standard_normal((C, n, P))
    ar = np.empty_like(e)
    ar[:, 0] = e[:, 0]
    for t in range(1, n):
        ar[:, t] = rho * ar[:, t - 1] + np.sqrt(1 - rho**2) * e[:, t]
    halves, mcse = mc_floor(ar)
    inflation = np.sqrt((1 + rho) / (1 - rho))
    assert mcse == pytest.approx(expected * inflation, rel=0.1)
    assert halves == pytest.approx(2 * expected * inflation, rel=0.25)


def test_mc_floor_needs_two_chains():
    with pytest.raises(ValueError, match="n_chains >= 2"):
        mc_floor(np.zeros((1, 100, 3)))


def test_skip_reason_projects_time_and_memory_linearly():
    """A method is not run at a size where its previous process, scaled by the rows, would
    exceed the time budget or the machine's memory; the reason says which and by how much."""
    from benchmarks.bench_alternatives import skip_reason

    previous = (10**6, 100.0, 3000.0)  # 100 s and 3000 MB at 10^6 rows
    assert skip_reason(previous, 10**6, budget=1800, available=20_000) is None
    assert skip_reason(previous, 10**7, budget=1800, available=40_000) is None
    over_time = skip_reason(previous, 10**7, budget=900, available=40_000)
    assert over_time.startswith("projected 17 min") and "x 10" in over_time
    over_memory = skip_reason(previous, 10**7, budget=1800, available=20_000)
    assert over_memory.startswith("projected peak 29 GB, 20 GB available")
