"""The ``skcoreset`` command line.

The subcommands run as subprocesses (``python -m skcoreset``), as a user runs them: the demo at
its reduced size, and ``build`` on each input format with each output format, its output
checked against the estimator run in this process with the same settings. User errors are
checked in this process through :func:`skcoreset.cli.main` (each subprocess spends seconds
importing scikit-learn), and a few of them again as subprocesses: each exits non-zero with one
line on standard error and no traceback.
"""

import importlib.util
import os
import re
import stat
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import skcoreset
from skcoreset.cli import main, make_parser
from skcoreset.cli._algorithms import MULTILEVEL
from skcoreset.cli._demo import _both_classes
from skcoreset.cli._demo_settings import COLUMNS
from skcoreset.cli._tables import open_table, write_coreset
from skcoreset.coreset import (
    GIGACoreset,
    IHTCoreset,
    OMPCoreset,
    QuasiNewtonCoreset,
    SensitivityCoreset,
)
from skcoreset.coreset._registry import ALGORITHMS, COMMAND_LINE_DEFAULT, RECOMMENDED
from skcoreset.datasets import load_phishing
from skcoreset.models import Multilevel

N_ROWS = 1500
FEATURES = [f"f{j}" for j in range(10)]
HAS_PANDAS = importlib.util.find_spec("pandas") is not None
HAS_PYARROW = HAS_PANDAS and importlib.util.find_spec("pyarrow") is not None


def run(*args, cwd=None):
    """``python -m skcoreset *args`` with this checkout's package first on the path."""
    root = str(Path(skcoreset.__file__).resolve().parents[1])
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([root, env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    return subprocess.run(
        [sys.executable, "-m", "skcoreset", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env,
        timeout=300,
    )


@pytest.fixture(scope="module")
def data():
    """The first rows of Phishing."""
    X, y = load_phishing(return_X_y=True)
    return X[:N_ROWS], y[:N_ROWS]


def frame(X, y):
    pd = pytest.importorskip("pandas")
    df = pd.DataFrame(X, columns=FEATURES)
    df["legit"] = y
    return df


@pytest.fixture(scope="module")
def files(data, tmp_path_factory):
    """The data as .npz, .csv and .parquet (the label 'y' or 'legit')."""
    X, y = data
    folder = tmp_path_factory.mktemp("data")
    np.savez(folder / "phish.npz", X=X, y=y)
    paths = {"npz": folder / "phish.npz"}
    if HAS_PANDAS:
        frame(X, y).to_csv(folder / "phish.csv", index=False)
        paths["csv"] = folder / "phish.csv"
    if HAS_PYARROW:
        frame(X, y).to_parquet(folder / "phish.parquet", index=False)
        paths["parquet"] = folder / "phish.parquet"
    return paths


def read_output(path):
    """(rows, weights) of a written coreset."""
    if path.suffix == ".npz":
        with np.load(path) as f:
            return f["row"], f["weight"]
    pd = pytest.importorskip("pandas")
    df = pd.read_csv(path) if path.suffix == ".csv" else pd.read_parquet(path)
    assert list(df.columns) == ["row", "weight"]
    return df["row"].to_numpy(), df["weight"].to_numpy()


def input_path(files, fmt):
    if fmt not in files:
        pytest.skip(f"writing .{fmt} test data needs pandas and pyarrow")
    return files[fmt]


# -- build --------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "source, output, algorithm, estimator",
    [
        ("npz", "csv", "omp", OMPCoreset(40, model="logistic", random_state=3)),
        ("csv", "parquet", "sensitivity", SensitivityCoreset(40, random_state=3)),
        (
            "parquet",
            "npz",
            "a-iht-ii",
            IHTCoreset(40, debias=True, model="logistic", random_state=3),
        ),
        ("npz", "npz", "qnc", QuasiNewtonCoreset(40, model="logistic", random_state=3)),
    ],
)
def test_build_matches_the_estimator(files, data, tmp_path, source, output, algorithm, estimator):
    """One chunk: the rows and weights written are those of the estimator's fit on all rows."""
    if output == "parquet":
        pytest.importorskip("pyarrow")
    out = tmp_path / f"coreset.{output}"
    label = [] if source == "npz" else ["--label", "legit"]
    result = run(
        "build", input_path(files, source), *label, "--model", "logistic",
        "--algorithm", algorithm, "--n-points", 40, "--random-state", 3, "-o", out,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    rows, weights = read_output(out)
    assert rows.dtype.kind == "i" and np.all(np.diff(rows) > 0)
    assert 0 <= rows.min() and rows.max() < N_ROWS
    assert np.all(np.isfinite(weights)) and np.all(weights > 0)
    expected = estimator.fit(*data)
    np.testing.assert_array_equal(rows, expected.sample_indices_)
    np.testing.assert_allclose(weights, expected.sample_weight_, rtol=1e-12)
    # the summary: size, the Laplace KL every coreset reports with its target, and the
    # projection's error where there is one
    assert f"{len(rows)} rows, weights summing to" in result.stdout
    hilbert = re.search(r"hilbert error (\S+):", result.stdout)
    laplace_kl = re.search(r"laplace KL (\S+):.*(within|ABOVE) the target", result.stdout)
    assert float(laplace_kl.group(1)) == pytest.approx(expected.laplace_kl_, rel=1e-2)
    assert "no fidelity measure" not in result.stdout
    if algorithm in ("sensitivity", "qnc"):  # no projection
        assert hilbert is None
    else:
        assert float(hilbert.group(1)) == pytest.approx(expected.hilbert_error_, rel=1e-2)


def test_build_in_chunks_is_partial_fit(files, data, tmp_path):
    """Several chunks: the coreset is that of partial_fit over the same chunks."""
    X, y = data
    out = tmp_path / "coreset.npz"
    result = run(
        "build", input_path(files, "csv"), "--label", "legit", "--model", "logistic",
        "--algorithm", "giga", "--n-points", 30, "--chunk-rows", 400, "-o", out,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "read in 4 chunks of up to 400 rows" in result.stdout
    expected = GIGACoreset(30, model="logistic", random_state=0)
    for start in range(0, N_ROWS, 400):
        expected.partial_fit(X[start : start + 400], y[start : start + 400], classes=[0, 1])
    rows, weights = read_output(out)
    np.testing.assert_array_equal(rows, expected.sample_indices_)
    np.testing.assert_allclose(weights, expected.sample_weight_, rtol=1e-12)


@pytest.mark.parametrize("fmt", ["npz", "npz-compressed", "csv", "csv.gz", "parquet"])
def test_tables_are_read_in_chunks(data, tmp_path, fmt):
    """Every reader gives back the rows of the file, in chunks of the asked size."""
    X, y = data
    path = tmp_path / f"d.{fmt.replace('-compressed', '')}"
    if fmt == "npz":
        np.savez(path, X=X, y=y)
    elif fmt == "npz-compressed":
        np.savez_compressed(path, X=X, y=y)
    elif fmt == "parquet":
        pytest.importorskip("pyarrow")
        frame(X, y).to_parquet(path, index=False)
    else:
        frame(X, y).to_csv(path, index=False)
    table = open_table(path, None if fmt.startswith("npz") else "legit")
    chunks = list(table.chunks(600))
    assert [start for start, _, _ in chunks] == [0, 600, 1200]
    assert [len(c[1]) for c in chunks] == [600, 600, 300]
    np.testing.assert_array_equal(np.concatenate([c[1] for c in chunks]), X)
    np.testing.assert_array_equal(np.concatenate([c[2] for c in chunks]), y)
    np.testing.assert_array_equal(table.label_values(600), [0, 1])


# -- demo ---------------------------------------------------------------------------------
def parse_table(stdout):
    """The demo's table: algorithm -> its rows, each a dict of the printed values."""
    table = {}
    keys = ("size", "kl", "shift", "lpd", "seconds", "speedup")
    for line in stdout.splitlines():
        parts = line.rstrip(" *").rsplit(maxsplit=6)
        if len(parts) != 7 or not parts[-1].endswith("x") or not parts[1].isdigit():
            continue
        row = {"kl_text": parts[2]}
        for key, text in zip(keys, parts[1:]):
            row[key] = float("nan") if text == "-" else float(text.rstrip("x"))
        table.setdefault(parts[0], []).append(row)
    return table


def test_demo_quick(tmp_path):
    """The reduced demo: a row per algorithm and size, OMP far closer than uniform, a plot."""
    plot = tmp_path / "demo.png"
    result = run(
        "demo", "--quick", "--sizes", 30, 8, "--rows", 10_000, "--plot", plot, cwd=tmp_path
    )
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    assert "warning" not in result.stderr  # what the fits find is in the table
    table = parse_table(result.stdout)
    names = ["full data", "uniform", "importance", "Frank-Wolfe", "GIGA", "A-IHT", "A-IHT II"]
    assert list(table) == [*names, "OMP", "sensitivity", "QNC", "SparseVI", "Coreset MCMC"]
    for name, rows in table.items():
        if name == "full data":
            continue
        assert [r["size"] <= m for r, m in zip(rows, [8, 30])] == [True, True]
        assert all(r["kl"] >= 0 and r["shift"] >= 0 and r["seconds"] > 0 for r in rows)
    full = table["full data"][0]
    # speed-up = full-data seconds / seconds, all printed to two decimals
    for rows in table.values():
        for r in rows:
            assert_printed_ratio(r["speedup"], full["seconds"], 0.005, r["seconds"], 0.005)
    # the finding: at 30 points OMP's posterior is far closer than a uniform subsample's
    omp, uniform = table["OMP"][1], table["uniform"][1]
    assert omp["kl"] < uniform["kl"] / 10 and omp["shift"] < uniform["shift"] / 10
    assert abs(omp["lpd"] - full["lpd"]) < abs(uniform["lpd"] - full["lpd"])
    # the sentence names the closest algorithm at the largest size, with its printed KL
    best = min((n for n in table if n != "full data"), key=lambda n: table[n][1]["kl"])
    sentence = next(line for line in result.stdout.splitlines() if line.startswith("At 30"))
    assert f"{best} comes closest" in sentence
    assert f"KL {table[best][1]['kl_text']} nats" in sentence
    # every column is explained under the table; the plot is written
    for name, _ in COLUMNS[1:]:
        assert any(line.startswith(f"{name}: ") for line in result.stdout.splitlines())
    assert f"plot: {plot.resolve()}" in result.stdout
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # the large part: the two pipelines' posteriors within a few Monte Carlo errors of the
    # full data's, far closer than a uniform subsample's, their speed-ups the printed ratios;
    # the sentence names the faster pipeline
    large = parse_large(result.stdout)
    assert list(large) == [*LARGE_ROWS]
    full, omp, qnc, uniform = large.values()
    assert full["size"] == 10_000 and omp["size"] == uniform["size"] < 1000
    assert qnc["size"] <= omp["size"]
    floor = float(re.search(r"about ([\d.]+) sd", result.stdout).group(1))
    for r in (omp, qnc):
        assert r["shift"] < 5 * floor < uniform["shift"]
        assert 0.8 < r["sd_lo"] <= r["sd_hi"] < 1.2
    # the projected full-data seconds are printed to one decimal (below 100), the others to two
    full_half_step = 0.05 if full["seconds"] < 100 else 0.5
    for r in (omp, qnc, uniform):
        assert_printed_ratio(r["speedup"], full["seconds"], full_half_step, r["seconds"], 0.005)
    assert "projected from two short runs on all rows" in result.stdout
    fastest = min(omp["seconds"], qnc["seconds"])  # either, when the printed seconds tie
    named = {"OMP + MALA (default)": omp, "QNC + MALA": qnc}
    assert any(
        f"The faster pipeline here, {name}, is " in result.stdout
        for name, r in named.items()
        if r["seconds"] == fastest
    )


LARGE_ROWS = ("MALA on all rows", "OMP + MALA (default)", "QNC + MALA", "uniform + MALA")


def assert_printed_ratio(ratio, num, num_half_step, den, den_half_step):
    """A printed ratio (to 0.05) lies within num / den over the roundings of the printed
    ``num`` and ``den`` (each within half its printed step of its true value)."""
    lo = (num - num_half_step) / (den + den_half_step) - 0.05
    hi = (num + num_half_step) / max(den - den_half_step, 1e-9) + 0.05
    assert lo <= ratio <= hi, (ratio, num, den)


def test_demo_projection_is_never_below_its_longer_run():
    from skcoreset.cli._demo_large import _SHORT, projected_seconds

    steps = 2000
    # the extra steps' cost, extrapolated: 2 x 15 steps took 0.3 s more
    assert projected_seconds([1.0, 1.3], steps) == pytest.approx(
        1.3 + 0.3 / (2 * (_SHORT[1] - _SHORT[0])) * (steps - 2 * _SHORT[1])
    )
    # timing noise larger than the difference: the longer run's time, not a negative projection
    assert projected_seconds([0.031, 0.030], steps) == 0.030


def parse_large(stdout):
    """The large part's table: method -> its printed values, in the printed order."""
    table = {}
    pattern = re.compile(
        r"^(.+?) +(\d+) +~?([\d.]+) +([\d.]+)x +(\S+) +(\S+) +(\S+)( \*)?$", re.MULTILINE
    )
    for m in pattern.finditer(stdout):
        name, size, seconds, speedup, shift, ratio, kl, _ = m.groups()
        if name.strip() not in LARGE_ROWS:
            continue
        lo, hi = ratio.split("-") if ratio != "-" else ("nan", "nan")
        table[name.strip()] = {
            "size": int(size),
            "seconds": float(seconds),
            "speedup": float(speedup),
            "shift": float(shift) if shift != "-" else float("nan"),
            "sd_lo": float(lo),
            "sd_hi": float(hi),
        }
    return table


# -- the command line itself ----------------------------------------------------------------
def test_version_and_help():
    result = run("--version")
    assert result.returncode == 0 and result.stdout.strip() == f"skcoreset {skcoreset.__version__}"
    # every option of every command is explained, and the demo's help explains every column
    parser = make_parser()
    commands = next(a for a in parser._actions if a.dest == "command").choices
    for command in commands.values():
        for action in command._actions:
            assert action.help, f"{command.prog} {action.option_strings} has no help"
    demo_help = commands["demo"].format_help()
    for name, _ in COLUMNS:
        assert f"\n  {name} " in demo_help


def fails(argv, capsys):
    """(exit status, stderr) of a command that must fail before writing to standard output."""
    try:
        status = main([str(a) for a in argv])
    except SystemExit as exc:  # argparse's errors
        status = exc.code
    out, err = capsys.readouterr()
    assert status != 0
    assert err.count("\n") == 1 and err.endswith("\n"), err
    assert "Traceback" not in err
    assert out == ""
    return status, err


@pytest.fixture(scope="module")
def bad_files(data, tmp_path_factory):
    """Data files with one problem each."""
    X, y = data
    folder = tmp_path_factory.mktemp("bad")
    np.savez(folder / "no_y.npz", X=X, labels=y)
    np.savez(folder / "strings.npz", X=X.astype(str), y=y)
    paths = {"no_y.npz": folder / "no_y.npz", "strings.npz": folder / "strings.npz"}
    pd = pytest.importorskip("pandas")
    df = frame(X, y)
    variants = {
        "city.csv": df.assign(city="Paris"),
        "nan.csv": df.assign(f3=np.where(np.arange(N_ROWS) == 17, np.nan, df["f3"])),
        "nolabel.csv": df.assign(legit=np.where(np.arange(N_ROWS) == 5, np.nan, df["legit"])),
        "three.csv": df.assign(legit=np.arange(N_ROWS) % 3),
        "negative.csv": df.assign(legit=-df["legit"]),
        "words.csv": df.assign(legit=np.where(df["legit"] > 0, "yes", "no")),
        "empty.csv": df.iloc[:0],
    }
    for name, variant in variants.items():
        variant.to_csv(folder / name, index=False)
        paths[name] = folder / name
    if HAS_PYARROW:
        df.assign(city=pd.Categorical(["a"] * N_ROWS)).to_parquet(folder / "city.parquet")
        paths["city.parquet"] = folder / "city.parquet"
    return paths


def build_args(data, *extra, model="logistic", algorithm="omp", n_points=10, out="out.npz"):
    return ["build", data, "--model", model, "--algorithm", algorithm, "--n-points", n_points,
            "-o", out, *extra]  # fmt: skip


@pytest.mark.parametrize(
    "case, status, message",
    [
        (lambda f, t: build_args(t / "missing.csv", "--label", "legit"), 1, "no such file"),
        (lambda f, t: build_args(f["csv"], "--label", "nope"), 1, "has no column 'nope'"),
        (lambda f, t: build_args(f["parquet"], "--label", "nope"), 1, "has no column 'nope'"),
        (lambda f, t: build_args(f["csv"]), 1, "--label is required"),
        (lambda f, t: build_args(f["npz"], "--label", "z"), 1, "has no array 'z'"),
        (lambda f, t: build_args(f["npz"], out=t / "out.txt"), 1, "unknown extension"),
        (lambda f, t: build_args(t / "d.json"), 1, "unknown extension"),
        (lambda f, t: build_args(f["npz"], out=t / "no" / "o.csv"), 1, "does not exist"),
        (lambda f, t: build_args(f["npz"], n_points=0), 2, "--n-points: expected a positive"),
        (lambda f, t: build_args(f["npz"], n_points="ten"), 2, "--n-points: expected a positive"),
        (lambda f, t: build_args(f["npz"], algorithm="best"), 2, "invalid choice: 'best'"),
        (lambda f, t: build_args(f["npz"], model="probit"), 2, "invalid choice: 'probit'"),
        (
            lambda f, t: build_args(f["npz"], model="poisson", algorithm="sensitivity"),
            1,
            "sensitivity (--algorithm sensitivity) is for the logistic model only",
        ),
        (
            lambda f, t: build_args(f["npz"], "--n-projections", 50, algorithm="sensitivity"),
            1,
            "--n-projections does not apply",
        ),
        (lambda f, t: ["demo", "--sizes", 0], 2, "--sizes: expected a positive integer"),
        (lambda f, t: ["demo", "--rows", 500], 2, "--rows: expected 0 or at least 10000"),
        (lambda f, t: ["demo", "--sizes", 20000], 1, "--sizes must be below"),
        (lambda f, t: ["demo", "--plot", t / "plot.xyz"], 1, "unknown image format"),
        (lambda f, t: ["sample"], 2, "invalid choice: 'sample'"),
        (lambda f, t: [], 2, "choose a command"),
    ],
)
def test_usage_errors(files, tmp_path, capsys, monkeypatch, case, status, message):
    monkeypatch.chdir(tmp_path)
    try:
        argv = case(files, tmp_path)
    except KeyError:
        pytest.skip("needs pandas and pyarrow")
    code, err = fails(argv, capsys)
    assert code == status
    assert message in err
    assert not (tmp_path / "out.npz").exists()


@pytest.mark.parametrize(
    "name, extra, message",
    [
        ("no_y.npz", [], "has no array 'y' (it has: 'X', 'labels')"),
        ("strings.npz", [], "'X' holds <U"),
        ("city.csv", ["--label", "legit"], "non-numeric feature column 'city'"),
        ("city.parquet", ["--label", "legit"], "non-numeric feature column 'city'"),
        ("nan.csv", ["--label", "legit"], "feature 'f3' is missing in row 17"),
        ("nolabel.csv", ["--label", "legit"], "the label 'legit' is missing in row 5"),
        ("three.csv", ["--label", "legit"], "the label 'legit' has 3"),
        ("empty.csv", ["--label", "legit"], "has no data rows"),
        # a model named: the header's empty columns were read as text ("non-numeric feature
        # columns ... in rows 0 to -1")
        ("empty.csv", ["--label", "legit", "--model", "poisson"], "has no data rows"),
    ],
)
def test_data_errors(bad_files, tmp_path, capsys, name, extra, message):
    if name not in bad_files:
        pytest.skip("needs pyarrow")
    code, err = fails(build_args(bad_files[name], *extra, out=tmp_path / "o.npz"), capsys)
    assert code == 1
    assert message in err
    assert not (tmp_path / "o.npz").exists()


@pytest.mark.parametrize(
    "name, model, message",
    [
        ("negative.csv", "poisson", "rows 0 to 1499, label 'legit': The Poisson model needs"),
        ("words.csv", "gaussian", "label 'legit': Unknown label type"),
    ],
)
def test_labels_the_model_cannot_take(bad_files, tmp_path, capsys, name, model, message):
    argv = build_args(bad_files[name], "--label", "legit", model=model, out=tmp_path / "o.npz")
    code, err = fails(argv, capsys)
    assert code == 1 and message in err


@pytest.mark.parametrize(
    "module, argv, message",
    [
        ("pandas", ["--label", "legit"], "reading .csv files needs pandas: pip install"),
        ("matplotlib", None, "the demo's plot (or pass --plot none) needs matplotlib"),
    ],
)
def test_missing_optional_dependency(files, tmp_path, capsys, monkeypatch, module, argv, message):
    monkeypatch.setitem(sys.modules, module, None)  # makes `import module` fail
    if argv is None:
        argv = ["demo", "--plot", tmp_path / "p.png"]
    else:
        argv = build_args(input_path(files, "csv"), *argv, out=tmp_path / "o.npz")
    code, err = fails(argv, capsys)
    assert code == 1 and message in err and "skcoreset[cli]" in err


@pytest.mark.parametrize(
    "argv, status, message",
    [
        (
            [
                "build",
                "data.csv",
                "--model",
                "logistic",
                "--algorithm",
                "omp",
                "--n-points",
                "-3",
                "-o",
                "o.npz",
            ],
            2,
            "--n-points: expected a positive integer",
        ),  # fmt: skip
        (
            [
                "build",
                "nowhere.npz",
                "--model",
                "logistic",
                "--algorithm",
                "omp",
                "--n-points",
                "5",
                "-o",
                "o.npz",
            ],
            1,
            "no such file: 'nowhere.npz'",
        ),  # fmt: skip
    ],
)
def test_errors_in_a_subprocess(tmp_path, argv, status, message):
    """As the user sees them: one line on standard error, no traceback, the exit status."""
    result = run(*argv, cwd=tmp_path)
    assert result.returncode == status
    assert result.stderr.count("\n") == 1 and message in result.stderr, result.stderr
    assert result.stdout == ""


def test_help_and_version_do_not_load_the_numerical_stack():
    # the package root, the models' names and the parser import no scikit-learn, SciPy or
    # numba: `skcoreset --help` and `--version` answer at once, not after a second or two
    code = (
        "import sys; from skcoreset.cli import make_parser; make_parser(); "
        "print(sorted(m for m in ('sklearn', 'scipy', 'numba') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
    version = subprocess.run(
        [sys.executable, "-m", "skcoreset", "--version"], capture_output=True, text=True
    )
    assert version.returncode == 0 and version.stdout.startswith("skcoreset ")


@pytest.mark.parametrize("model", ["negative_binomial", "gamma", "multinomial", "student_t"])
def test_build_takes_every_registered_model(tmp_path, model):
    """The command line takes the models of the registry, as the estimators do: the rows and
    weights written are those of OMPCoreset(model=...) on the same data."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((3000, 3))
    mu = np.exp(X @ [0.4, -0.2, 0.1] + 1.0)
    y = {
        "negative_binomial": lambda: rng.negative_binomial(2.0, 2.0 / (2.0 + mu)),
        "gamma": lambda: rng.gamma(2.0, mu),
        "multinomial": lambda: np.argmax(
            X @ rng.normal(size=(3, 3)) + rng.gumbel(size=(3000, 3)), 1
        ),
        "student_t": lambda: X @ [0.4, -0.2, 0.1] + rng.standard_t(3, 3000),
    }[model]()
    np.savez(tmp_path / "data.npz", X=X, y=y.astype(float))
    out = tmp_path / "coreset.npz"
    result = run(
        "build", tmp_path / "data.npz", "--model", model, "--algorithm", "omp",
        "--n-points", 40, "--random-state", 3, "-o", out,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    if model == "multinomial":
        assert "(classes 0.0, 1.0 and 2.0)" in result.stdout
    rows, weights = read_output(out)
    expected = OMPCoreset(40, model=model, random_state=3).fit(X, y.astype(float))
    np.testing.assert_array_equal(rows, expected.sample_indices_)
    np.testing.assert_allclose(weights, expected.sample_weight_, rtol=1e-12)


# -- what build must not do to its user -----------------------------------------------------
@pytest.mark.parametrize("spelling", ["same", "other path", "symbolic link"])
def test_build_refuses_to_overwrite_its_data(files, tmp_path, capsys, monkeypatch, spelling):
    """-o naming the data file, by any path, is refused before anything is written."""
    monkeypatch.chdir(tmp_path)
    data = tmp_path / "phish.npz"
    data.write_bytes(files["npz"].read_bytes())
    before = data.read_bytes()
    (tmp_path / "sub").mkdir()
    (tmp_path / "alias.npz").symlink_to(data)
    out = {
        "same": "phish.npz",
        "other path": tmp_path / "sub" / ".." / "phish.npz",
        "symbolic link": "alias.npz",
    }[spelling]
    code, err = fails(build_args("phish.npz", out=out), capsys)
    assert code == 1 and "is the data file" in err
    assert data.read_bytes() == before


def test_an_interrupted_write_leaves_the_earlier_coreset(tmp_path, monkeypatch):
    out = tmp_path / "coreset.npz"
    write_coreset(out, "npz", [1, 5], [2.0, 3.0])
    before = out.read_bytes()

    def interrupted(f, **arrays):
        f.write(b"PK\x03\x04 the first bytes of an archive")
        raise KeyboardInterrupt

    monkeypatch.setattr(np, "savez", interrupted)
    with pytest.raises(KeyboardInterrupt):
        write_coreset(out, "npz", [0, 1, 2], [1.0, 1.0, 1.0])
    assert out.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["coreset.npz"]  # no temporary file left


def test_the_coreset_file_has_the_permissions_of_a_file_written_in_place(tmp_path):
    """The temporary file's private mode is not left on the output: a new file gets what
    open() gives (the umask), a replaced one keeps its own."""
    new, reference = tmp_path / "new.csv", tmp_path / "reference"
    write_coreset(new, "csv", [4], [1.5])
    reference.write_text("")
    assert stat.S_IMODE(new.stat().st_mode) == stat.S_IMODE(reference.stat().st_mode)
    old = tmp_path / "old.csv"
    old.write_text("row,weight\n")
    old.chmod(0o640)
    write_coreset(old, "csv", [4], [1.5])
    assert stat.S_IMODE(old.stat().st_mode) == 0o640
    rows, weights = read_output(old)
    assert rows.tolist() == [4] and weights.tolist() == [1.5]


@pytest.mark.parametrize("seed", ["-1", str(2**32), "1.5"])
def test_a_bad_seed_is_refused_before_any_file_is_read(tmp_path, capsys, monkeypatch, seed):
    """The parser refuses a seed NumPy cannot take: status 2, though the data file does not
    even exist (reading it would fail with 1)."""
    monkeypatch.chdir(tmp_path)
    for argv in (
        build_args("nowhere.npz", "--random-state", seed),
        ["demo", "--random-state", seed],
    ):
        code, err = fails(argv, capsys)
        assert code == 2
        assert f"--random-state: expected an integer from 0 to {2**32 - 1}, got '{seed}'" in err
    parser = make_parser()
    largest = parser.parse_args(map(str, build_args("d.npz", "--random-state", 2**32 - 1)))
    assert largest.random_state == 2**32 - 1


def test_build_defaults_are_the_estimators(files, data, tmp_path, capsys):
    """Without --model and --algorithm, build is QuasiNewtonCoreset() (model='auto'), and its
    help says so."""
    out = tmp_path / "coreset.npz"
    argv = ["build", files["npz"], "--n-points", 40, "--random-state", 3, "-o", out]
    assert main([str(a) for a in argv]) == 0
    stdout = capsys.readouterr().out
    assert "QNC coreset for the logistic model (the model the labels call for)" in stdout
    expected = QuasiNewtonCoreset(40, random_state=3).fit(*data)
    rows, weights = read_output(out)
    np.testing.assert_array_equal(rows, expected.sample_indices_)
    np.testing.assert_allclose(weights, expected.sample_weight_, rtol=1e-12)
    commands = next(a for a in make_parser()._actions if a.dest == "command").choices
    text = " ".join(commands["build"].format_help().split())
    assert "default: auto, the model the labels call for" in text
    assert f"(see below; default: {COMMAND_LINE_DEFAULT})" in text
    qnc = "qnc quasi-Newton steps on the KL, from the OMP coreset (Naik et al. 2022)"
    assert COMMAND_LINE_DEFAULT == "qnc" and f"{qnc} (the default)" in text


def test_auto_settles_the_model_on_the_whole_label_column(tmp_path, capsys):
    """The first chunk's two label values would read as two classes; the column holds real
    values, so the model is Gaussian, and the coreset that of partial_fit with it."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((1200, 5))
    y = X @ [0.5, -0.2, 0.1, 0.0, 0.3] + rng.standard_normal(1200)
    y[:400] = np.where(y[:400] > 0, 1.5, 0.5)
    assert OMPCoreset(30).partial_fit(X[:400], y[:400]).model_ == "logistic"
    np.savez(tmp_path / "d.npz", X=X, y=y)
    out = tmp_path / "coreset.npz"
    argv = ["build", tmp_path / "d.npz", "--n-points", 30, "--chunk-rows", 400, "-o", out]
    assert main([str(a) for a in argv]) == 0
    assert "QNC coreset for the gaussian model" in capsys.readouterr().out
    expected = QuasiNewtonCoreset(30, model="gaussian", random_state=0)
    for start in range(0, 1200, 400):
        expected.partial_fit(X[start : start + 400], y[start : start + 400])
    rows, weights = read_output(out)
    np.testing.assert_array_equal(rows, expected.sample_indices_)
    np.testing.assert_allclose(weights, expected.sample_weight_, rtol=1e-12)


def test_auto_asks_which_model_integer_labels_are(tmp_path, capsys):
    rng = np.random.default_rng(0)
    np.savez(tmp_path / "d.npz", X=rng.standard_normal((300, 2)), y=rng.integers(0, 5, 300))
    code, err = fails(["build", tmp_path / "d.npz", "--n-points", 10, "-o", "o.npz"], capsys)
    assert code == 1 and "d.npz, label 'y': y holds 5 distinct integer values" in err
    # in the command line's words: the option, not the estimators' parameter
    assert "--model multinomial, --model poisson or --model gaussian" in err
    assert "model='" not in err


def test_messages_name_classes_by_the_users_labels(data, tmp_path, capsys):
    """A first chunk without a class names it as the file writes it (not by its code)."""
    X, y = data
    order = np.argsort(y, kind="stable")
    words = np.where(y[order] > 0, "yes", "no")
    np.savez(tmp_path / "sorted.npz", X=X[order], y=words)
    out = tmp_path / "coreset.npz"
    argv = build_args(tmp_path / "sorted.npz", "--chunk-rows", 400, n_points=20, out=out)
    assert main([str(a) for a in argv]) == 0
    captured = capsys.readouterr()
    assert "the first chunk (sorted.npz, rows 0 to 399) has no row of the class 'yes'" in (
        captured.err
    )
    assert "(classes 'no' and 'yes')" in captured.out


def test_demo_completes_a_coreset_of_one_class_with_the_data_labels():
    """The row the demo adds for a class a coreset misses carries the data's label."""
    X, y, w = np.ones((2, 3)), np.array(["spam", "spam"]), np.array([2.0, 3.0])
    X2, y2, w2 = _both_classes(X, y, w, np.array(["ham", "spam"]))
    assert y2.tolist() == ["spam", "spam", "ham"]
    assert w2.tolist() == [2.0, 3.0, 1e-12] and not X2[2].any()
    assert _both_classes(X, y, w, np.array(["spam"]))[1] is y


# -- build --groups: a multilevel coreset ---------------------------------------------------
@pytest.fixture(scope="module")
def grouped(tmp_path_factory):
    """Grouped logistic data: 2400 rows in 12 schools of uneven sizes (one of 12 rows, kept
    whole), the school a text column of the csv between the features."""
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(7)
    sizes = np.array([12, 60, 90, 120, 150, 180, 200, 210, 250, 300, 380, 448])
    codes = np.repeat(np.arange(12), sizes)
    rng.shuffle(codes)
    X = rng.standard_normal((codes.size, 3))
    eta = X @ [0.8, -0.5, 0.3] - 0.2 + rng.normal(0, 0.7, 12)[codes]
    y = (rng.random(codes.size) < 1 / (1 + np.exp(-eta))).astype(int)
    schools = np.array([f"school {k:02d}" for k in range(12)])[codes]
    df = pd.DataFrame({"a": X[:, 0], "school": schools, "b": X[:, 1], "c": X[:, 2], "y": y})
    path = tmp_path_factory.mktemp("grouped") / "schools.csv"
    df.to_csv(path, index=False)
    return path, X, y, schools


def read_grouped_output(path):
    """(rows, weights, groups) of a written multilevel coreset."""
    if path.suffix == ".npz":
        with np.load(path) as f:
            assert f.files == ["row", "weight", "group"]
            return f["row"], f["weight"], f["group"]
    pd = pytest.importorskip("pandas")
    df = pd.read_csv(path) if path.suffix == ".csv" else pd.read_parquet(path)
    assert list(df.columns) == ["row", "weight", "group"]
    return df["row"].to_numpy(), df["weight"].to_numpy(), df["group"].to_numpy().astype(str)


@pytest.mark.parametrize(
    "output, extra, estimator",
    [
        # no --algorithm: OMP (the command line's default, QNC, builds no multilevel coreset)
        ("csv", [], OMPCoreset(300, model=Multilevel("logistic"), random_state=3)),
        (
            "npz",
            ["--algorithm", "giga", "--model", "logistic", "--slopes", "b", "--chunk-rows", 500],
            GIGACoreset(300, model=Multilevel("logistic", slopes=[1]), random_state=3),
        ),
    ],
)
def test_build_groups_is_the_multilevel_fit(grouped, tmp_path, capsys, output, extra, estimator):
    """--groups: the rows, weights and groups written are those of the estimator's
    fit(X, y, groups=...) with model=Multilevel(...), the group column not a feature."""
    path, X, y, schools = grouped
    out = tmp_path / f"coreset.{output}"
    argv = ["build", path, "--label", "y", "--groups", "school", "--n-points", 300,
            "--random-state", 3, "-o", out, *extra]  # fmt: skip
    assert main([str(a) for a in argv]) == 0
    stdout = capsys.readouterr().out
    expected = estimator.fit(X, y, groups=schools)
    rows, weights, groups = read_grouped_output(out)
    np.testing.assert_array_equal(rows, expected.sample_indices_)
    np.testing.assert_allclose(weights, expected.sample_weight_, rtol=1e-12)
    np.testing.assert_array_equal(groups, schools[rows])
    np.testing.assert_array_equal(groups, expected.sample_groups_)
    assert len(rows) < len(y) / 4 and np.all(weights > 0)
    # the school of 12 rows is kept whole: every row, weight 1
    small = schools == "school 00"
    np.testing.assert_array_equal(rows[groups == "school 00"], np.flatnonzero(small))
    np.testing.assert_array_equal(weights[groups == "school 00"], 1.0)
    assert "3 features, label 'y' (classes 0 and 1), 12 groups in 'school'" in stdout
    assert f"{len(rows)} rows, weights summing to" in stdout
    assert f"groups: 12; {expected.n_groups_kept_whole_} kept whole" in stdout
    assert expected.n_groups_kept_whole_ >= 1
    assert "'weight' and 'group'" in stdout
    if extra:
        assert (
            "GIGA coreset for the multilevel logistic model, a random intercept per group "
            "and random slopes on 'b'" in stdout
        )
        assert "read whole in 5 chunks of up to 500 rows" in stdout
    else:
        assert (
            "OMP coreset for the multilevel logistic model (the model the labels call for)"
            in stdout
        )
        assert "read whole in 1 chunk" in stdout


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--groups", "district"], "schools.csv has no column 'district' (it has: 'a', 'school'"),
        (["--groups", "y"], "--groups names the label 'y'"),
        (["--slopes", "b"], "--slopes needs --groups"),
        (["--groups", "school", "--slopes", "school"], "has no feature column 'school'"),
        (
            ["--groups", "school", "--algorithm", "sensitivity"],
            "(--algorithm sensitivity) does not build coresets of multilevel models (--groups); "
            "choose one of: uniform, importance, frank-wolfe, giga, a-iht, a-iht-ii, omp, qnc, "
            "sparse-vi, coreset-mcmc",
        ),
        (
            ["--groups", "school", "--model", "multinomial"],
            "--groups with the multinomial model: Multilevel needs a single-index base model",
        ),
    ],
)
def test_build_groups_errors(grouped, tmp_path, capsys, extra, message):
    argv = ["build", grouped[0], "--label", "y", "--n-points", 300, "-o", tmp_path / "o.csv",
            *extra]  # fmt: skip
    code, err = fails(argv, capsys)
    assert code == 1 and message in err
    assert not (tmp_path / "o.csv").exists()


def test_build_groups_refuses_a_row_without_its_group(grouped, tmp_path, capsys):
    pd = pytest.importorskip("pandas")
    df = pd.read_csv(grouped[0])
    df.loc[17, "school"] = None
    df.to_csv(tmp_path / "gap.csv", index=False)
    argv = ["build", tmp_path / "gap.csv", "--label", "y", "--groups", "school",
            "--n-points", 300, "-o", tmp_path / "o.csv"]  # fmt: skip
    code, err = fails(argv, capsys)
    assert code == 1 and "gap.csv: the group 'school' is missing in row 17" in err


def test_the_multilevel_algorithms_are_the_librarys():
    """The algorithms --groups takes are those whose estimators fit a multilevel model; the
    others' fit raises the TypeError the command line reports before reading any row."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((240, 2))
    groups = np.repeat(np.arange(4), 60)
    y = (rng.random(240) < 0.5).astype(int)
    assert RECOMMENDED in MULTILEVEL
    for algorithm in ALGORITHMS:
        if algorithm.model is not None:  # no model parameter: no multilevel model either
            assert algorithm.name not in MULTILEVEL
            continue
        estimator = algorithm.make(60, model=Multilevel("logistic"), random_state=0)
        if algorithm.name in MULTILEVEL:
            assert estimator.fit(X, y, groups=groups).n_points_ > 0
        else:
            with pytest.raises(TypeError, match="does not build coresets of multilevel"):
                estimator.fit(X, y, groups=groups)


def test_build_help_says_groups_read_the_file_whole():
    commands = next(a for a in make_parser()._actions if a.dest == "command").choices
    text = " ".join(commands["build"].format_help().split())
    assert "the file is read whole and must fit in memory" in text
    assert "with --groups one of uniform, importance" in text and "(default: omp)" in text
    assert "'group', the row's group label" in text


@pytest.mark.parametrize("fmt", ["csv", "npz", "parquet"])
def test_group_labels_are_written_as_read(tmp_path, fmt):
    """Text labels with a comma or a quote survive the csv; numbers stay numbers."""
    if fmt == "parquet":
        pytest.importorskip("pyarrow")
    for labels in (np.array(['a, "b"', "plain", "é"]), np.array([3, 10, 7])):
        out = tmp_path / f"c.{fmt}"
        write_coreset(out, fmt, [2, 5, 9], [1.5, 0.25, 3.0], groups=labels)
        rows, weights, groups = read_grouped_output(out)
        assert rows.tolist() == [2, 5, 9] and weights.tolist() == [1.5, 0.25, 3.0]
        assert groups.astype(labels.dtype).tolist() == labels.tolist()
