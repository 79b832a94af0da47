"""What a fit compiles: one build of each kernel it calls, and a pass gives the same bits on
one thread and on several (Python threads around that build: numba's threaded builds compile
in about twice the time, and none is left).

numba compiles a kernel once per signature and per build, in seconds: a kernel called with two
layouts or an integer literal, or a threaded build of a small problem, is time a fresh
install spends before its first fit (benchmarks/bench_first_fit.py).
"""

import json
import os
import subprocess
import sys

import numba
import numpy as np
import pytest
from scipy.special import gammaln

from skcoreset._parallel_kernels import (
    MAX_TASKS,
    PARALLEL_MIN_ENTRIES,
    TASK_ROWS,
    THREADED_ROWS,
    RowTaskKernel,
    row_tasks,
    wide_row_tasks,
)
from skcoreset.hilbert import _kernels as HK
from skcoreset.models import _glm_kernels as GK
from skcoreset.models import get_model
from skcoreset.projection import _projection_kernels as PK

# A pipeline on 3000 rows (1.5e6 projected entries, MALA on 60 points), then every kernel's
# builds: the number of signatures of each dispatcher defined in a kernel module.
_FIT_THEN_COUNT = r"""
import importlib, json, pkgutil, warnings
import numba
from sklearn.preprocessing import StandardScaler
import skcoreset
from skcoreset import BayesianLogisticRegression, OMPCoreset
from skcoreset._parallel_kernels import RowTaskKernel
from skcoreset.datasets import load_phishing
from skcoreset.pipeline import make_pipeline

X, y = load_phishing(return_X_y=True)
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    make_pipeline(
        StandardScaler(),
        OMPCoreset(n_points=60, random_state=0),
        BayesianLogisticRegression(n_samples=50, n_warmup=50, random_state=0),
    ).fit(X[:3000], y[:3000])
builds = {}
names = [m.name for m in pkgutil.walk_packages(skcoreset.__path__, "skcoreset.")]
for name in [n for n in names if n.endswith("_kernels")]:
    for attr, obj in vars(importlib.import_module(name)).items():
        if isinstance(obj, RowTaskKernel) and obj.serial.py_func.__module__ == name:
            builds[f"{name}.{attr}"] = len(obj.serial.signatures)  # its one build
        elif isinstance(obj, numba.core.registry.CPUDispatcher):
            if obj.py_func.__module__ == name:
                builds[f"{name}.{attr}"] = len(obj.signatures)
print(json.dumps(builds))
"""


def test_a_small_fit_builds_each_kernel_once_and_no_thread(tmp_path):
    # on an empty cache: a kernel loaded from the cache brings the kernels it calls with it,
    # which then show no build of their own
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path)}
    out = subprocess.run(
        [sys.executable, "-c", _FIT_THEN_COUNT], capture_output=True, text=True, check=True, env=env
    )
    builds = json.loads(out.stdout.splitlines()[-1])
    several = {name: n for name, n in builds.items() if n > 1}
    assert not several, f"kernels compiled more than once: {several}"
    # the fit went through the kernels counted here
    for name in (
        "skcoreset.models._glm_kernels.loglik_matrix",
        "skcoreset.models._glm_kernels.weighted_loglik_grad_chains",
        "skcoreset.sampler._mala_kernels.mala_run",
        "skcoreset.hilbert._kernels._top_tasks",
        "skcoreset.hilbert._kernels._merge_tasks",
        "skcoreset.hilbert._kernels._norms_and_sum_tasks",
        "skcoreset.models._glm_kernels._hessian_tasks",
    ):
        assert builds[name] == 1, name
    # nothing compiled that the call does not need: its pool is drawn by the rows' spreads
    # and projected whole at the end (no projected sums of every row, by either kernel), and
    # a small block's second-order sums come from NumPy, not from the fused kernel
    assert builds["skcoreset.projection._projection_kernels.add_rows"] == 0
    assert builds["skcoreset.projection._projection_kernels.feature_stats"] == 0
    assert builds["skcoreset.coreset._taylor_kernels.summary_tasks"] == 0


def test_builds_by_size():
    # the Hilbert passes: on Python threads from PARALLEL_MIN_ENTRIES entries
    kernel = HK.matvec
    assert isinstance(kernel, RowTaskKernel)
    assert kernel.for_size(PARALLEL_MIN_ENTRIES - 1) is kernel.serial
    expected = kernel.threaded if numba.get_num_threads() > 1 else kernel.serial
    assert kernel.for_size(PARALLEL_MIN_ENTRIES) == expected
    # the (N, J) passes: from their own threshold
    features = GK.loglik_matrix
    assert isinstance(features, RowTaskKernel)
    assert features.min_entries == GK.FEATURES_MIN_ENTRIES
    assert features.for_size(GK.FEATURES_MIN_ENTRIES - 1) is features.serial
    expected = features.threaded if numba.get_num_threads() > 1 else features.serial
    assert features.for_size(GK.FEATURES_MIN_ENTRIES) == expected


def _both(kernel, *args):
    """``(returned, arguments after the call)`` of the serial and of the threaded build, each
    on fresh copies of the array arguments (the outputs among them)."""
    results = []
    for build in (kernel.serial, kernel.threaded):
        a = [x.copy() if isinstance(x, np.ndarray) else x for x in args]
        results.append((build(*a), a))
    return results


def _same(runs, ulps=0):
    """The two builds' results and outputs equal: bit for bit, or (``ulps``) to rounding, a
    few units in the last place of the largest magnitude, times the terms of a sum (64)."""
    (ret0, args0), (ret1, args1) = runs
    ret0, ret1 = (r if isinstance(r, tuple) else (r,) for r in (ret0, ret1))
    for a, b in zip(ret0 + tuple(args0), ret1 + tuple(args1)):
        if not (isinstance(a, np.ndarray) or np.isscalar(a)):
            continue
        if ulps:  # rounding: a few ulps of the largest magnitude (dot products cancel)
            scale = float(np.max(np.abs(b), initial=1.0))
            np.testing.assert_allclose(
                a, b, rtol=0, atol=ulps * np.finfo(np.float64).eps * scale * 64
            )
        else:
            assert np.array_equal(a, b)


# numba 0.60 (the oldest supported) may compile the loops of the two Hilbert builds
# differently (with and without fused multiply-adds): CI runs at the floors saw the row norms
# differ by one unit in the last place (8.9e-16) and the matrix-vector products by rounding
# (768 ulps of a product near 0), depending on what the process had compiled before.
# The newest numba gives the same bits, which is what is checked there.
_HILBERT_ULPS = 0 if tuple(map(int, numba.__version__.split(".")[:2])) > (0, 60) else 2


@pytest.mark.parametrize("fisher, per_draw", [(False, False), (True, True)])
def test_feature_kernels_same_bits_either_build(fisher, per_draw):
    """The fused (N, J) kernels, serial and threaded: the same bits, without and with the
    per-draw extra parameter and the Fisher coordinates (compile-time cases of their own)."""
    rng = np.random.default_rng(3)
    model = get_model("gaussian", extra=0.7)
    N, P, J = 1000, 4, 40
    X = np.ascontiguousarray(np.column_stack([rng.standard_normal((N, P - 1)), np.ones(N)]))
    y = X @ rng.standard_normal(P) + 0.7 * rng.standard_normal(N)
    thetas_t = np.ascontiguousarray(rng.standard_normal((P, J)))
    extras = rng.uniform(0.5, 1.0, J) if per_draw else None
    coords = rng.integers(0, P + per_draw, J) if fisher else None
    w = rng.uniform(0.5, 2.0, N)
    stats = np.zeros((4, J)), np.empty(N)
    _same(
        _both(
            PK.feature_stats, model.family, X, thetas_t, y, w, 0.7, extras, coords, 0.3, 250, *stats
        )
    )
    if fisher:
        kernel, args = PK.fisher_features, (extras, coords, 0.3, np.empty((N, J)))
    else:
        kernel, args = GK.loglik_matrix, (extras, 0.3, True, np.empty((N, J)))
    runs = _both(kernel, model.family, X, thetas_t, y, 0.7, *args)
    _same(runs)
    assert np.all(np.isfinite(runs[0][1][-1]))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_hilbert_passes_same_results_either_build(dtype):
    rng = np.random.default_rng(4)
    N, J = 3000, 30
    V = rng.standard_normal((N, J)).astype(dtype)
    nch = wide_row_tasks(N, ())[1].shape[0]
    x, d, lw = rng.standard_normal((3, J))
    scale = rng.uniform(0.0, 1.0, N)
    for tasks in (nch, 7):  # 7 tasks: ranges of unequal lengths on the threads
        size = -(-N // tasks)
        runs = _both(HK._norms_and_sum_tasks, V, size, np.empty(N), np.zeros((tasks, J)))
        _same(runs, _HILBERT_ULPS)
        best = np.zeros((tasks, 3)), np.empty((tasks, 3), dtype=np.int64)
        runs = _both(HK._top_tasks, V, scale, x, 0.0, size, *best)
        _same(runs, _HILBERT_ULPS)
        best_val, best_at = runs[1][1][-2:]
        assert np.all((0 <= best_at) & (best_at < size))  # offsets within each task
        assert np.all(np.diff(best_val, axis=1) <= 0)  # each task's best first
        size = -(-size // 4) * 4  # GIGA's tasks: whole groups of four rows
        best = np.zeros(tasks), np.empty(tasks, dtype=np.int64)
        _same(_both(HK._giga_tasks, V, scale, d, lw, 1.3, size, *best), _HILBERT_ULPS)
    # the whole: NumPy's values, its first argmax
    sigma, y = HK.norms_and_sum(V)
    np.testing.assert_allclose(sigma, np.linalg.norm(V.astype(np.float64), axis=1), rtol=1e-6)
    np.testing.assert_allclose(y, V.astype(np.float64).sum(axis=0), rtol=1e-6, atol=1e-9)
    scores = scale * (V.astype(np.float64) @ x)
    scale[np.argmax(scores)] = 0.0  # skipped: the runner-up is found
    index, value = HK.argmax_scaled_dot(V, scale, x)
    assert index == np.argmax(np.where(scale == 0, -np.inf, scores))
    assert np.isclose(value, scores[index], rtol=1e-6)
    assert HK.argmax_scaled_dot(V, np.zeros(N), x)[0] == -1  # every row skipped
    # the k best: NumPy's order (largest first, the first row on ties), skipped rows left out
    ranked = np.lexsort((np.arange(N), -np.where(scale == 0, -np.inf, scores)))
    rows, values = HK.top_scaled_dots(V, scale, x, 5)
    np.testing.assert_array_equal(rows, ranked[:5])
    np.testing.assert_allclose(values, scores[rows], rtol=1e-6)
    only = np.zeros(N)
    only[[7, 2900]] = 1.0  # fewer rows count than asked for
    assert sorted(HK.top_scaled_dots(V, only, x, 5)[0]) == [7, 2900]
    tied = V.copy()
    tied[[40, 1200, 1500, 2999]] = 10 * V[0]  # the four best, equal, in three tasks
    ones = np.ones(N)
    assert HK.top_scaled_dots(tied, ones, V[0].astype(np.float64), 2)[0].tolist() == [40, 1200]
    assert HK.argmax_scaled_dot(tied, ones, V[0].astype(np.float64))[0] == 40
    # GIGA's score, from its formula: cos(d, d_n) = <l_n, d> / (|d| sqrt(1 - <l_n, l(w)>^2))
    p, q = (V.astype(np.float64) @ np.column_stack([d, lw])).T * scale
    lw *= 0.9 / np.max(np.abs(q))  # |<l_n, l(w)>| < 1 on every row: the score is defined
    q *= 0.9 / np.max(np.abs(q))
    score = np.where(scale == 0, -np.inf, p / (1.3 * np.sqrt(1 - q * q)))
    index, value = HK.giga_select(V, scale, d, lw, 1.3)
    assert index == np.argmax(score) and np.isclose(value, score[index], rtol=1e-6)
    _same(_both(HK.matvec, V, x, np.empty(N)), _HILBERT_ULPS)
    out = np.empty(N)
    HK.matvec(V, x, out)
    np.testing.assert_allclose(out, V.astype(np.float64) @ x, rtol=1e-6, atol=1e-9)
    rows = np.array([5, 17, 2999, 0])
    out = np.empty(4)
    HK.matvec_rows(V, rows, x, out)
    np.testing.assert_allclose(out, V[rows].astype(np.float64) @ x, rtol=1e-6, atol=1e-9)


def test_quantized_search_within_its_rounding():
    """int16 rows: each entry within half a step of the row's largest / 32767. The search's
    values are within the rounding's bound of float64 products (Cauchy-Schwarz on the rows'
    errors, plus float32 sums of J terms); its rows are the best by its own values; both
    builds give the same bits."""
    rng = np.random.default_rng(5)
    N, J = 3000, 200
    V = (rng.standard_t(3, (N, J)) * rng.lognormal(0, 2, (N, 1))).astype(np.float32)
    V[5] = 0.0
    Q, step = HK.quantize_rows(V)
    assert Q.dtype == np.int16 and np.all(np.delete(np.abs(Q).max(axis=1), 5) == 32767)
    assert step[5] == 1.0 and not Q[5].any()
    err = V.astype(np.float64) - step[:, None] * Q
    # half a step, and float32's rounding of quotients up to 32767 (2^15 units of 2^-24)
    assert np.all(np.abs(err) <= (0.5 + 2.0**-8) * step[:, None])
    scale = rng.uniform(0.5, 2.0, N)
    scale[::7] = 0.0  # skipped
    x = rng.standard_normal(J)
    rows, values = HK.top_quantized_dots(Q, scale * step, x, 10)
    exact = scale * (V.astype(np.float64) @ x)
    sums = step * (np.abs(Q) @ np.abs(x))  # float32 sums: (J + 2) units of their terms' sum
    bound = scale * (np.linalg.norm(err, axis=1) * np.linalg.norm(x) + (J + 2) * 2.0**-24 * sums)
    assert np.all(np.abs(values - exact[rows]) <= bound[rows])
    assert np.all(scale[rows] > 0)
    own = np.where(scale > 0, scale * step * (Q @ x.astype(np.float32).astype(np.float64)), -np.inf)
    slack = (J + 2) * 2.0**-24 * (scale * sums)
    others = np.delete(own, rows)
    assert values[-1] >= others.max() - slack.max()
    nch = wide_row_tasks(N, ())[1].shape[0]
    size = -(-N // nch)
    best = np.zeros((nch, 3)), np.empty((nch, 3), dtype=np.int64)
    x32 = x.astype(np.float32)
    _same(_both(HK._top_tasks, Q, scale * step, x32, np.float32(0.0), size, *best))


def test_glm_hessian_same_bits_either_build():
    rng = np.random.default_rng(5)
    model = get_model("poisson")
    N, P = 5000, 4
    X = np.ascontiguousarray(np.column_stack([rng.standard_normal((N, P - 1)), np.ones(N)]))
    y = rng.poisson(2.0, N).astype(float)
    theta, w = 0.3 * rng.standard_normal(P), rng.uniform(0.5, 2.0, N)
    parts, sums = np.zeros((2, P, P)), np.zeros((2, P + 1))
    _same(_both(GK._hessian_tasks, model.family, theta, X, y, w, 1.0, N // 2, parts))
    args = model.family, theta, X, y, w, 1.0, N // 2, parts, sums
    _same(_both(GK._loglik_grad_hessian_tasks, *args))
    # and the whole, its partial sums added in order, is the Hessian (NumPy)
    H = GK.weighted_hessian(model.family, theta, X, y, w, 1.0)
    expected = (X * (w * np.exp(X @ theta))[:, None]).T @ X
    np.testing.assert_allclose(H, expected, rtol=1e-12)
    # the fused pass: the same Hessian, bit for bit, and the log-likelihood pass's values
    grad, fused_grad = np.empty(P), np.empty(P)
    ll = GK.weighted_loglik_grad(model.family, theta, X, y, w, 1.0, grad)
    fused_ll, fused_H = GK.weighted_loglik_grad_hessian(
        model.family, theta, X, y, w, 1.0, fused_grad
    )
    np.testing.assert_array_equal(fused_H, H)
    np.testing.assert_allclose(fused_grad, grad, rtol=1e-12, atol=1e-12 * np.abs(grad).max())
    assert fused_ll == pytest.approx(ll, rel=1e-13)
    # the log-likelihood and gradient pass, likewise
    parts = np.zeros((2, P + 1))
    _same(_both(GK._loglik_grad_tasks, model.family, theta, X, y, w, 1.0, N // 2, parts))
    grad = np.empty(P)
    ll = GK.weighted_loglik_grad(model.family, theta, X, y, w, 1.0, grad)
    mu = np.exp(X @ theta)
    np.testing.assert_allclose(grad, X.T @ (w * (y - mu)), rtol=1e-12)
    assert ll == pytest.approx(np.sum(w * (y * (X @ theta) - mu)) - np.sum(w * gammaln(y + 1)))


@pytest.mark.parametrize("task_rows, max_tasks", [(TASK_ROWS, MAX_TASKS), (256, 64)])
def test_row_tasks_cover_every_row_once(task_rows, max_tasks):
    # the Newton passes' rule and the projection statistics': the tasks, fixed by the row
    # count, hold every row once, at least task_rows each (but the last), at most max_tasks
    for n in (1, 255, 256, 257, 4095, 4096, 10_001, 16_385, 1_000_003):
        size, parts = row_tasks(n, (3,), task_rows, max_tasks)
        tasks = parts.shape[0]
        assert 1 <= tasks <= max_tasks and parts.shape[1:] == (3,) and not parts.any()
        rows = [min(n, (c + 1) * size) - min(n, c * size) for c in range(tasks)]
        assert sum(rows) == n and rows[0] == size
        assert size >= min(n, task_rows), (n, size)


@pytest.mark.parametrize("n_tasks", [1, 2, 3, 7, 16])
def test_row_tasks_on_threads_same_bits_as_one_call(monkeypatch, n_tasks):
    """A row-task kernel's threaded run splits its tasks into one contiguous range per thread
    (uneven when they do not divide), each run on its rows and partial sums as views: every
    task sums the same rows in the same order as one call does, so the same bits; the
    caller's arrays other than the outputs are left alone."""
    rng = np.random.default_rng(8)
    model = get_model("logistic")
    N, P = 1001, 5
    X = np.ascontiguousarray(np.column_stack([rng.standard_normal((N, P - 1)), np.ones(N)]))
    y = (rng.random(N) < 0.5).astype(float)
    theta, w = 0.3 * rng.standard_normal(P), rng.uniform(0.5, 2.0, N)
    size = -(-N // n_tasks)
    kernel = GK._loglik_grad_hessian_tasks
    assert isinstance(kernel, RowTaskKernel)
    inputs = X.copy(), y.copy(), w.copy()
    for threads in (2, 3):
        monkeypatch.setattr(numba, "get_num_threads", lambda t=threads: t)
        args = model.family, theta, X, y, w, 1.0, size
        outputs = np.zeros((n_tasks, P, P)), np.zeros((n_tasks, P + 1))
        _same(_both(kernel, *args, *outputs))
        threaded = [np.zeros_like(a) for a in outputs]
        kernel.for_size(THREADED_ROWS)(*args, *threaded)
        assert kernel.for_size(THREADED_ROWS - 1) is kernel.serial
        assert all(np.any(t != 0) for t in threaded[0])  # every task summed its rows
        for got, name in zip((X, y, w), "Xyw"):
            np.testing.assert_array_equal(got, inputs["Xyw".index(name)])


def _threaded_hessian_in_child(queue):
    queue.put(_threaded_hessian())


def _threaded_hessian():
    rng = np.random.default_rng(11)
    N, P = 3000, 4
    X = np.ascontiguousarray(np.column_stack([rng.standard_normal((N, P - 1)), np.ones(N)]))
    y, w = (rng.random(N) < 0.5).astype(float), rng.uniform(0.5, 2.0, N)
    parts = np.zeros((6, P, P))
    GK._hessian_tasks.threaded(get_model("logistic").family, 0.1 * X[0], X, y, w, 1.0, 500, parts)
    return parts


@pytest.mark.skipif(not hasattr(os, "fork"), reason="fork: POSIX only")
def test_threaded_pass_in_a_forked_child():
    """A process forked after a threaded pass made the threads runs its own passes (the
    parent's threads do not exist in the child: its pool starts afresh) to the same bits."""
    import multiprocessing

    expected = _threaded_hessian()  # the parent's pool exists now
    ctx = multiprocessing.get_context("fork")
    queue = ctx.Queue()
    child = ctx.Process(target=_threaded_hessian_in_child, args=(queue,))
    child.start()
    got = queue.get(timeout=120)
    child.join(timeout=60)
    assert child.exitcode == 0
    np.testing.assert_array_equal(got, expected)


def test_ranges_within_a_range_run_on_its_thread():
    """in_ranges called from a range on the pool's thread runs its own ranges there (queued
    behind that thread, they would wait for it forever); from the calling thread, on the
    pool as usual. Every task is run once, whatever the nesting."""
    import threading

    from skcoreset._parallel_kernels import in_ranges

    if numba.config.NUMBA_NUM_THREADS < 2:
        pytest.skip("one thread: no pool")
    done, names, outer_names = np.zeros((4, 6), dtype=int), {}, {}

    def outer(a, b):
        for i in range(a, b):
            outer_names[i] = threading.current_thread().name

            def inner(c, d, i=i):
                names.setdefault(i, set()).add(threading.current_thread().name)
                done[i, c:d] += 1

            in_ranges(inner, 6)

    previous = numba.get_num_threads()
    numba.set_num_threads(2)
    result = []
    worker = threading.Thread(target=lambda: result.append(in_ranges(outer, 4)), daemon=True)
    try:
        worker.start()
        worker.join(timeout=60)
    finally:
        numba.set_num_threads(previous)
    assert not worker.is_alive(), "nested ranges deadlocked"
    assert np.all(done == 1)
    # the ranges of an outer range on the pool's thread stayed on it; the calling thread's
    # went to the pool too
    on_pool = [i for i, n in outer_names.items() if n.startswith("skcoreset-rows")]
    assert on_pool and all(names[i] == {outer_names[i]} for i in on_pool)
    assert any(len(names[i]) == 2 for i in outer_names if i not in on_pool)


def test_unit_weights_view_needs_no_build_of_its_own():
    """Unit weights arrive as a read-only view of one number (stride 0): the Newton passes
    give the kernels a contiguous copy, not a layout numba would compile them for again."""
    rng = np.random.default_rng(10)
    model = get_model("logistic")
    N, P = 500, 3
    X = np.ascontiguousarray(np.column_stack([rng.standard_normal((N, P - 1)), np.ones(N)]))
    y = (rng.random(N) < 0.5).astype(float)
    theta = 0.2 * rng.standard_normal(P)
    kernels = (GK._loglik_grad_tasks, GK._hessian_tasks, GK._loglik_grad_hessian_tasks)
    ones, view = np.ones(N), np.broadcast_to(np.float64(1.0), (N,))
    results = []
    for w in (ones, view):
        grad = np.empty(P)
        ll = GK.weighted_loglik_grad(model.family, theta, X, y, w, 1.0, grad)
        H = GK.weighted_hessian(model.family, theta, X, y, w, 1.0)
        fused = GK.weighted_loglik_grad_hessian(model.family, theta, X, y, w, 1.0, np.empty(P))
        results.append((ll, grad, H, fused[0], fused[1]))
        if w is ones:
            built = [set(k.serial.signatures) for k in kernels]
    assert [set(k.serial.signatures) for k in kernels] == built
    for a, b in zip(*results):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("threads", [2, 3, 7])
def test_independent_rows_on_threads_same_bits_as_one_call(monkeypatch, threads):
    """An (N, J) pass of independent rows split at any row (here not at its chunks of 256
    rows) computes every row as one call does: the same bits."""
    rng = np.random.default_rng(9)
    model = get_model("poisson")
    N, P, J = 1001, 4, 30
    X = np.ascontiguousarray(np.column_stack([rng.standard_normal((N, P - 1)), np.ones(N)]))
    y = rng.poisson(2.0, N).astype(float)
    thetas_t = np.ascontiguousarray(0.3 * rng.standard_normal((P, J)))
    monkeypatch.setattr(numba, "get_num_threads", lambda: threads)
    for out in (np.empty((N, J)), np.empty((N, J), dtype=np.float32)):
        runs = _both(GK.loglik_matrix, model.family, X, thetas_t, y, 1.0, None, 0.5, True, out)
        _same(runs)
        assert np.all(np.isfinite(runs[1][1][-1]))


def test_moments_same_bits_either_build_and_numpys_values():
    """The data's moments: each build gives the same partial sums, and the means and sds
    are NumPy's weighted ones, also for float32 X, large offsets and a zero weight (float32
    data without the offset: at 1e6 its resolution, 1/16, exceeds that column's sd)."""
    from skcoreset.models._prior import Moments
    from skcoreset.models._prior_kernels import moment_tasks

    rng = np.random.default_rng(6)
    N, D = 5000, 3
    X = rng.standard_normal((N, D)) * [1.0, 1e-3, 10.0] + [0.0, 1e6, -5.0]
    y, w = rng.poisson(3.0, N).astype(float), rng.uniform(0.5, 2.0, N)
    w[7] = 0.0
    parts = np.zeros((2, 2 * D + 3))
    _same(_both(moment_tasks, X, y, w, X[0].copy(), y[0], N // 2, parts))
    for Xs in (X, (X - [0.0, 1e6, 0.0]).astype(np.float32)):
        Xv = Xs.astype(float)
        mean, sd = np.average(Xv, axis=0, weights=w), None
        sd = np.sqrt(np.average((Xv - mean) ** 2, axis=0, weights=w))
        y_mean = np.average(y, weights=w)
        y_sd = np.sqrt(np.average((y - y_mean) ** 2, weights=w))
        # in two blocks (the sums moved to the first block's shift) and in one
        two = Moments(D).add(Xs[:1234], y[:1234], w[:1234])
        two += Moments.of(Xs[1234:], y[1234:], w[1234:])
        for moments in (Moments.of(Xs, y, w), two):
            got = moments.mean_and_sd()
            np.testing.assert_allclose(got[0], mean, rtol=1e-13, atol=1e-12 * sd.max())
            np.testing.assert_allclose(got[1], sd, rtol=1e-9)  # 1e-3 sd about 1e6: cancellation
            assert got[2] == pytest.approx(y_mean, rel=1e-13)
            assert got[3] == pytest.approx(y_sd, rel=1e-12)


def test_glm_fuses_the_newton_pass_from_fused_min_rows():
    """Below FUSED_MIN_ROWS rows a GLM evaluates a block in two passes, from it in one:
    the same values either way, to rounding."""
    rng = np.random.default_rng(7)
    model = get_model("logistic")
    N = GK.FUSED_MIN_ROWS
    Xd = model.design(rng.standard_normal((N, 3)))
    y = (rng.random(N) < 0.4).astype(float)
    theta, w = 0.2 * rng.standard_normal(4), rng.uniform(0.5, 2.0, N)
    fused = model.weighted_loglik_grad_hessian(theta, Xd, y, w)
    small = [
        model.weighted_loglik_grad_hessian(
            theta, Xd[a : a + N // 2], y[a : a + N // 2], w[a : a + N // 2]
        )
        for a in (0, N // 2)
    ]
    two_pass = [sum(part) for part in zip(*small)]  # each half below the threshold
    ll, grad = model.weighted_loglik(theta, Xd, y, w)
    assert fused[0] == pytest.approx(ll, rel=1e-12) == two_pass[0]
    np.testing.assert_allclose(fused[1], grad, rtol=1e-10)
    np.testing.assert_allclose(two_pass[1], grad, rtol=1e-10)
    H = model.weighted_loglik_hessian(theta, Xd, y, w)
    np.testing.assert_array_equal(fused[2], H)
    np.testing.assert_allclose(two_pass[2], H, rtol=1e-12)


@pytest.mark.parametrize("name", ["logistic", "poisson", "gaussian", "negative_binomial", "gamma"])
def test_fused_pass_vectorised_by_groups_keeps_the_hessians_bits(name):
    """The fused Newton pass computes each group's predictors, terms and curvatures as loops
    over its rows that vectorise; weighted_hessian row by row: the same Hessian, bit for bit
    (neither contracts), and the log-likelihood and gradient to rounding, for every family
    and a row count that leaves a partial group."""
    rng = np.random.default_rng(7)
    N, P = 3001, 5
    X = np.ascontiguousarray(np.column_stack([rng.standard_normal((N, P - 1)), np.ones(N)]))
    eta = X @ (0.2 * rng.standard_normal(P))
    y = {
        "logistic": (rng.random(N) < 1 / (1 + np.exp(-eta))).astype(float),
        "poisson": rng.poisson(np.exp(eta)).astype(float),
        "gaussian": eta + rng.standard_normal(N),
        "negative_binomial": rng.poisson(np.exp(eta) * rng.gamma(2.0, 0.5, N)).astype(float),
        "gamma": rng.gamma(2.0, np.exp(eta) / 2.0),
    }[name]
    model = get_model(name, extra=None if name in ("logistic", "poisson") else 0.7)
    theta, w = 0.1 * rng.standard_normal(P), rng.uniform(0.0, 2.0, N)
    grad, fused_grad = np.empty(P), np.empty(P)
    ll = GK.weighted_loglik_grad(model.family, theta, X, y, w, model.extra_value, grad)
    H = GK.weighted_hessian(model.family, theta, X, y, w, model.extra_value)
    fused_ll, fused_H = GK.weighted_loglik_grad_hessian(
        model.family, theta, X, y, w, model.extra_value, fused_grad
    )
    np.testing.assert_array_equal(fused_H, H)
    np.testing.assert_allclose(fused_grad, grad, rtol=1e-12, atol=1e-12 * np.abs(grad).max())
    assert fused_ll == pytest.approx(ll, rel=1e-13)
