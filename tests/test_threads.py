"""The BLAS guard of skcoreset._threads: one BLAS thread while a fit runs, the caller's
setting back afterwards, also when fits on several threads overlap."""

import threading

import numpy as np
from threadpoolctl import threadpool_info, threadpool_limits

from skcoreset import QuasiNewtonCoreset, _threads
from skcoreset.coreset import _preparation


def _blas_threads():
    return {info["num_threads"] for info in threadpool_info() if info["user_api"] == "blas"}


def test_a_fit_runs_the_blas_on_one_thread_and_restores_it(monkeypatch):
    seen = []
    sizes = _preparation.set_sizes

    def spy(*args):
        seen.append(_blas_threads())
        return sizes(*args)

    monkeypatch.setattr(_preparation, "set_sizes", spy)
    rng = np.random.default_rng(0)
    X = rng.standard_normal((400, 3))
    y = (X[:, 0] + rng.logistic(size=400) > 0).astype(int)
    with threadpool_limits(2, user_api="blas"):
        QuasiNewtonCoreset(20, n_draws=100, random_state=0).fit(X, y)
        assert seen == [{1}]
        assert _blas_threads() == {2}


def test_a_bayesian_fit_runs_the_blas_on_one_thread_and_restores_it(monkeypatch):
    # its diagnostics run on the fit's threads, which OpenBLAS's spinning threads would take
    from skcoreset import BayesianLogisticRegression
    from skcoreset.linear_model import _base as linear_base

    seen = []
    diagnostics = linear_base.diagnostics

    def spy(draws):
        seen.append(_blas_threads())
        return diagnostics(draws)

    monkeypatch.setattr(linear_base, "diagnostics", spy)
    rng = np.random.default_rng(0)
    X = rng.standard_normal((200, 3))
    y = (X[:, 0] + rng.logistic(size=200) > 0).astype(int)
    with threadpool_limits(2, user_api="blas"):
        BayesianLogisticRegression(n_samples=100, n_warmup=100, random_state=0).fit(X, y)
        assert seen == [{1}]
        assert _blas_threads() == {2}


class _FakeBLAS:
    """A controller whose limit is one Python value (how a BLAS library takes a thread
    count set from another thread differs between versions: not what is tested here)."""

    def __init__(self):
        self.threads = 2

    def limit(self, limits, user_api):
        original, self.threads = self.threads, limits
        fake = self

        class Limiter:
            def restore_original_limits(self):
                fake.threads = original

        return Limiter()


def test_overlapping_guards_restore_at_the_last_exit(monkeypatch):
    # thread A enters, B enters, A leaves (B still limited), B leaves (restored)
    blas = _FakeBLAS()
    monkeypatch.setattr(_threads, "_blas", lambda: blas)
    a_in, b_in, a_out = threading.Event(), threading.Event(), threading.Event()
    during = {}

    def first():
        with _threads.one_blas_thread():
            a_in.set()
            b_in.wait(10)
        a_out.set()

    def second():
        a_in.wait(10)
        with _threads.one_blas_thread():
            b_in.set()
            a_out.wait(10)
            during["after A left"] = blas.threads

    threads = [threading.Thread(target=first), threading.Thread(target=second)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(20)
    assert during["after A left"] == 1
    assert blas.threads == 2
    with _threads.one_blas_thread(), _threads.one_blas_thread():  # nested in one thread too
        assert blas.threads == 1
    assert blas.threads == 2
