"""The multinomial model's numba kernels against the NumPy formulas they replaced.

The reference below is the model's former NumPy code (log-softmax by SciPy's logsumexp, the
residuals ``1[y = k] - p_k``, the Hessian block by block), kept here as the oracle. The
predictors reach |eta| = 30, with ties for the largest among them; K = 2, 3 and 7 classes;
the features are stored in float64 and float32. "Equal to rounding": within 1e-12 of the
largest entry (NumPy's ``eta_y - logsumexp`` itself errs by a few ulp of |eta| where a
probability is near 1), and in float32 within half a float32 ulp of the float64 reference.
"""

import numpy as np
import pytest
import scipy.special

from skcoreset.models import CustomModel, MultinomialModel
from skcoreset.models import _multinomial_kernels as MK
from skcoreset.projection import Projection

ETA_MAX = 30.0
RTOL = 1e-12


# -- the NumPy reference (the model's former formulas) ------------------------------------
def ref_log_proba(thetas, Xd, K1):
    S, Q = thetas.shape[0], Xd.shape[1]
    E = (Xd @ thetas.reshape(S * K1, Q).T).reshape(Xd.shape[0], S, K1).transpose(1, 0, 2)
    full = np.concatenate([np.zeros(E.shape[:-1] + (1,)), E], axis=-1)
    return full - scipy.special.logsumexp(full, axis=-1, keepdims=True)  # (S, n, K)


def ref_loglik(thetas, Xd, y, K1):
    logp = ref_log_proba(thetas, Xd, K1)
    return np.take_along_axis(logp, y.astype(np.intp)[None, :, None], axis=2)[:, :, 0]


def ref_residuals(thetas, Xd, y, K1):
    r = -np.exp(ref_log_proba(thetas, Xd, K1)[:, :, 1:])
    codes = y.astype(np.intp)
    rows = np.flatnonzero(codes > 0)
    r[:, rows, codes[rows] - 1] += 1.0
    return r  # (S, n, K - 1)


def ref_grad(thetas, Xd, y, K1):
    r = ref_residuals(thetas, Xd, y, K1)
    S, n, _ = r.shape
    return (r[:, :, :, None] * Xd[None, :, None, :]).reshape(S, n, K1 * Xd.shape[1])


def ref_chains(thetas, Xd, y, w, K1):
    ll = ref_loglik(thetas, Xd, y, K1) @ w
    r = ref_residuals(thetas, Xd, y, K1)
    grad = np.matmul((r * w[None, :, None]).transpose(0, 2, 1), Xd)
    return ll, grad.reshape(thetas.shape[0], -1)


def ref_hessian(theta, Xd, y, w, K1):
    p = np.exp(ref_log_proba(theta[None], Xd, K1)[0, :, 1:])
    Q = Xd.shape[1]
    H = np.empty((K1, Q, K1, Q))
    for a in range(K1):
        for b in range(a, K1):
            c = w * p[:, a] * ((a == b) - p[:, b])
            block = Xd.T @ (Xd * c[:, None])
            H[a, :, b, :] = block
            H[b, :, a, :] = block.T
    return H.reshape(K1 * Q, K1 * Q)


def exact_hessian(theta, Xd, w, K1):
    """The Hessian in extended precision, ``1 - p_a`` as the other classes' share (no
    cancellation where p_a is near 1): the accuracy the kernel keeps."""
    L = np.longdouble
    Xl, Q = Xd.astype(L), Xd.shape[1]
    E = Xl @ theta.reshape(K1, Q).T.astype(L)
    full = np.column_stack([np.zeros(Xd.shape[0], dtype=L), E])
    e = np.exp(full - full.max(axis=1, keepdims=True))
    S = e.sum(axis=1)
    H = np.empty((K1, Q, K1, Q), dtype=L)
    for a in range(K1):
        for b in range(K1):
            if a == b:  # 1 - p_a: the sum of the others, not S - e_a
                others = np.delete(e, a + 1, axis=1).sum(axis=1) / S
                c = w * (e[:, a + 1] / S) * others
            else:
                c = -w * (e[:, a + 1] / S) * (e[:, b + 1] / S)
            H[a, :, b, :] = Xl.T @ (Xl * c[:, None])
    return H.reshape(K1 * Q, K1 * Q).astype(np.float64)


def ref_loglik_features(thetas, Xd, y, K1):
    ll = ref_loglik(thetas, Xd, y, K1).T
    return (ll - ll.mean(axis=1, keepdims=True)) / np.sqrt(thetas.shape[0])


def ref_fisher_features(thetas, Xd, y, coords, K1):
    J, P = thetas.shape
    picked = ref_grad(thetas, Xd, y, K1)[np.arange(J), :, coords]
    return np.sqrt(P / J) * picked.T


# -- the problems --------------------------------------------------------------------------
def _problem(n_classes, n=300, J=37, Q=4, seed=0):
    """Rows (n not a multiple of the kernels' blocks), draws whose predictors span
    [-30, 30], among them one with every class tied (all zero) and one with two classes tied
    for the largest predictor on about half the rows."""
    rng = np.random.default_rng(seed + n_classes)
    K1 = n_classes - 1
    Xd = np.column_stack([rng.standard_normal((n, Q - 1)), np.ones(n)])
    thetas = rng.standard_normal((J, K1 * Q))
    E = np.einsum("nq,jkq->jnk", Xd, thetas.reshape(J, K1, Q))
    thetas *= ETA_MAX / np.abs(E).max(axis=(1, 2))[:, None]  # each draw reaches |eta| = 30
    thetas[0] = 0.0
    if K1 >= 2:  # classes 1 and 2 tied, the others behind, wherever eta_1 > 0
        thetas[1, Q : 2 * Q] = thetas[1, :Q]
        for k in range(2, K1):
            thetas[1, k * Q : (k + 1) * Q] = -thetas[1, :Q]
    y = rng.integers(0, n_classes, n).astype(float)
    return Xd, y, thetas, K1


def _close(got, ref):
    np.testing.assert_allclose(got, ref, rtol=RTOL, atol=RTOL * np.abs(ref).max())


def _close32(got, ref):
    assert got.dtype == np.float32
    # float32 storage of the float64 value: half an ulp of float32, plus the float64 error
    np.testing.assert_allclose(got, ref, rtol=2.0**-24 + RTOL, atol=RTOL * np.abs(ref).max())


def _largest_predictor(Xd, thetas, K1):
    S, Q = thetas.shape[0], Xd.shape[1]
    return np.abs(Xd @ thetas.reshape(S * K1, Q).T).max()


CLASSES = [2, 3, 7]
# design widths: the kernels take the columns four at a time after a first group of Q % 4
COLUMNS = [1, 4, 6, 9]


@pytest.mark.parametrize("n_classes", CLASSES)
def test_problem_reaches_the_range(n_classes):
    Xd, y, thetas, K1 = _problem(n_classes)
    assert _largest_predictor(Xd, thetas, K1) == pytest.approx(ETA_MAX)
    assert set(np.unique(y)) == set(range(n_classes))


@pytest.mark.parametrize("n_classes", CLASSES)
@pytest.mark.parametrize("Q", COLUMNS)
@pytest.mark.parametrize("center", [False, True])
def test_loglik_matrix_kernel(n_classes, Q, center):
    Xd, y, thetas, K1 = _problem(n_classes, Q=Q)
    thetas_t = np.ascontiguousarray(thetas.T)
    ref = ref_loglik(thetas, Xd, y, K1).T
    scale = 1.0
    if center:
        ref = ref_loglik_features(thetas, Xd, y, K1)
        scale = 1.0 / np.sqrt(thetas.shape[0])
    out = np.empty(ref.shape)
    MK.loglik_matrix(Xd, thetas_t, y, scale, center, out)
    _close(out, ref)
    out32 = np.empty(ref.shape, dtype=np.float32)
    MK.loglik_matrix(Xd, thetas_t, y, scale, center, out32)
    _close32(out32, ref)


@pytest.mark.parametrize("n_classes", CLASSES)
@pytest.mark.parametrize("Q", COLUMNS)
def test_fisher_kernel(n_classes, Q):
    Xd, y, thetas, K1 = _problem(n_classes, Q=Q)
    J, P = thetas.shape
    coords = np.random.default_rng(1).integers(0, P, J)
    ref = ref_fisher_features(thetas, Xd, y, coords, K1)
    scale = np.sqrt(P / J)
    for dtype, close in ((np.float64, _close), (np.float32, _close32)):
        out = np.empty(ref.shape, dtype=dtype)
        MK.fisher_features(Xd, np.ascontiguousarray(thetas.T), y, coords, scale, out)
        close(out, ref)


@pytest.mark.parametrize("n_classes", CLASSES)
@pytest.mark.parametrize("Q", COLUMNS)
def test_chains_kernel(n_classes, Q):
    Xd, y, thetas, K1 = _problem(n_classes, n=1000, Q=Q)  # several blocks of rows
    w = np.random.default_rng(2).random(Xd.shape[0]) * 3
    ref_ll, ref_g = ref_chains(thetas, Xd, y, w, K1)
    ll, g = np.empty(thetas.shape[0]), np.empty(thetas.shape)
    MK.weighted_loglik_grad_chains(thetas, Xd, y, w, ll, g)
    _close(ll, ref_ll)
    _close(g, ref_g)
    # a chain's result does not depend on the batch it is evaluated in, bit for bit
    ll1, g1 = np.empty(1), np.empty((1, thetas.shape[1]))
    MK.weighted_loglik_grad_chains(thetas[5:6], Xd, y, w, ll1, g1)
    assert ll1[0] == ll[5] and np.array_equal(g1[0], g[5])


@pytest.mark.parametrize("n_classes", CLASSES)
@pytest.mark.parametrize("Q", COLUMNS)
def test_hessian_kernel(n_classes, Q):
    Xd, y, thetas, K1 = _problem(n_classes, Q=Q)
    w = np.random.default_rng(3).random(Xd.shape[0])
    # the former formula's 1 - p errs by an ulp of 1 per row where p is near 1
    xx = np.abs(Xd).T @ (np.abs(Xd) * w[:, None])
    cancel = 8 * np.finfo(float).eps * np.kron(np.eye(K1), xx)
    for theta in thetas[:4]:
        H = MK.weighted_hessian(np.ascontiguousarray(theta), Xd, w)
        ref = ref_hessian(theta, Xd, y, w, K1)
        assert np.all(np.abs(H - ref) <= RTOL * np.abs(ref).max() + cancel)
        _close(H, exact_hessian(theta, Xd, w, K1))
        assert np.array_equal(H, H.T)


def test_one_minus_p_keeps_its_relative_accuracy_near_zero():
    # the observed class far ahead: its gradient 1 - p and Hessian p (1 - p), to the last bits
    Xd, y, w = np.array([[1.0]]), np.array([1.0]), np.array([1.0])
    for gap in (5.0, 20.0, 30.0):
        theta = np.array([gap, 0.0, gap - 3.0])  # K = 4, predictors (0, gap, 0, gap - 3)
        rest = 2.0 * np.exp(-gap) + np.exp(-3.0)
        one_minus_p = rest / (1.0 + rest)
        ll, g = np.empty(1), np.empty((1, 3))
        MK.weighted_loglik_grad_chains(theta[None], Xd, y, w, ll, g)
        assert g[0, 0] == pytest.approx(one_minus_p, rel=1e-15)
        out = np.empty((1, 1))
        MK.fisher_features(Xd, theta[:, None].copy(), y, np.array([0]), 1.0, out)
        assert out[0, 0] == pytest.approx(one_minus_p, rel=1e-15)
        H = MK.weighted_hessian(theta, Xd, w)
        assert H[0, 0] == pytest.approx(one_minus_p / (1.0 + rest), rel=1e-15)


def test_loglik_keeps_its_relative_accuracy_near_zero():
    # the observed class far ahead: l = -log1p(sum of e^(eta_k - eta_y)), to the last bits
    Xd = np.array([[1.0]])
    for gap in (5.0, 20.0, 30.0, 600.0):
        thetas = np.array([[gap, 0.0, gap - 3.0]])  # K = 4, predictors (0, gap, 0, gap - 3)
        out = np.empty((1, 1))
        MK.loglik_matrix(Xd, np.ascontiguousarray(thetas.T), np.array([1.0]), 1.0, False, out)
        exact = -np.log1p(2.0 * np.exp(-gap) + np.exp(-3.0))
        assert out[0, 0] == pytest.approx(exact, rel=1e-15)
        thetas = np.array([[gap, 0.0, -1.0]])  # only the reference and class 2 behind
        MK.loglik_matrix(Xd, np.ascontiguousarray(thetas.T), np.array([1.0]), 1.0, False, out)
        exact = -np.log1p(np.exp(-gap) + np.exp(-gap - 1.0) + np.exp(-gap))
        assert out[0, 0] == pytest.approx(exact, rel=1e-15)


# -- through the model and the projections -----------------------------------------------
@pytest.mark.parametrize("n_classes", CLASSES)
def test_model_methods_match_the_reference(n_classes):
    Xd, y, thetas, K1 = _problem(n_classes)
    model = MultinomialModel(n_classes=n_classes)
    w = np.random.default_rng(4).random(Xd.shape[0])
    Xf = np.asfortranarray(Xd)  # any layout: the model hands the kernels C-contiguous copies
    _close(model.loglik_draws(thetas, Xf, y), ref_loglik(thetas, Xd, y, K1))
    _close(model.loglik_matrix(Xf, y, thetas), ref_loglik(thetas, Xd, y, K1).T)
    ll, g = model.weighted_loglik_chains(thetas, Xf, y, w)
    ref_ll, ref_g = ref_chains(thetas, Xd, y, w, K1)
    _close(ll, ref_ll)
    _close(g, ref_g)
    value, grad = model.weighted_loglik(thetas[3], Xd, y, w)
    _close(value, ref_ll[3])
    _close(grad, ref_g[3])
    _close(model.weighted_loglik_hessian(thetas[3], Xf, y, w), ref_hessian(thetas[3], Xd, y, w, K1))
    _close(model.grad_draws(thetas, Xd, y), ref_grad(thetas, Xd, y, K1))


def test_model_checks_the_shapes():
    Xd, y, thetas, _ = _problem(3)
    model = MultinomialModel(n_classes=3)
    with pytest.raises(ValueError, match="parameters per draw"):
        model.loglik_matrix(Xd, y, thetas[:, :-1])
    with pytest.raises(ValueError, match="targets"):
        model.weighted_loglik_chains(thetas, Xd, y[:-1], np.ones(Xd.shape[0]))
    with pytest.raises(ValueError, match="weights"):
        model.weighted_loglik_chains(thetas, Xd, y, np.ones(3))
    for bad in (3.0, -1.0, 0.5):
        codes = y.copy()
        codes[7] = bad
        with pytest.raises(ValueError, match="class codes 0 to 2"):
            model.loglik_draws(thetas, Xd, codes)
    with pytest.raises(ValueError, match="coords"):
        out = np.empty((Xd.shape[0], thetas.shape[0]))
        coords = np.full(thetas.shape[0], thetas.shape[1])
        model.projection_features("fisher", Xd, y, thetas.T, coords, 1.0, out)


@pytest.mark.parametrize("n_classes", CLASSES)
@pytest.mark.parametrize("kind", ["loglik", "fisher"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_projection_matches_the_numpy_route(n_classes, kind, dtype):
    # the fused kernels (MultinomialModel.projection_features) against the generic route of
    # a model of draws, here a CustomModel of the NumPy reference: the same draws and
    # coordinates, transform and summarize
    Xd, y, thetas, K1 = _problem(n_classes)
    J, P = thetas.shape
    coords = np.random.default_rng(5).integers(0, P, J) if kind == "fisher" else None
    numpy_model = CustomModel(
        lambda th, X, yy: ref_loglik(th, X, yy, K1),
        lambda th, X, yy: ref_grad(th, X, yy, K1),
        n_params=P,
    )
    thetas_t = np.ascontiguousarray(thetas.T)
    fast = Projection(MultinomialModel(n_classes=n_classes), kind, thetas_t, coords, dtype)
    slow = Projection(numpy_model, kind, thetas_t, coords, dtype)
    ref = slow.transform(Xd, y)
    got = fast.transform(Xd, y)
    assert got.dtype == ref.dtype == dtype
    if dtype == np.float64:
        _close(got, ref)
    else:  # both stored from float64 features
        _close32(got, slow._general_features(Xd, y))
    sw = np.random.default_rng(6).random(Xd.shape[0])
    total, norms = fast.summarize(Xd, y, sw)
    ref_total, ref_norms = slow.summarize(Xd, y, sw)
    _close(total, ref_total)
    _close(norms, ref_norms)
