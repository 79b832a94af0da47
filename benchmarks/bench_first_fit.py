"""First contact: the README's snippet and ``skcoreset demo`` on a fresh install, then warm.

A fresh install has an empty numba cache: its first fit compiles every kernel the fit calls,
later processes load them from the cache. Each run here is a new Python process with
``NUMBA_CACHE_DIR`` set to a directory of its own:

* **cold**: the directory empty, as after ``pip install``;
* **warm**: the same directory again, filled by the cold run.

The README snippet is the ``python`` block under "In a few lines" in ``README.md``, read from
the file and run statement by statement in the child process; its phases are the import
statements, the data, the coreset fit (the statements up to the pipeline) and the pipeline fit
(``make_pipeline(...).fit``, MCMC on the coreset), in wall seconds and CPU seconds of the
child. "end to end" is the wall time of the whole process, interpreter start-up included, as
the parent measures it. The demo is ``skcoreset demo`` (its plot written to a temporary
directory); its phases are those it reports: preparing the numba kernels, and the rest.

The machine is shared (2 cores, other jobs running): compile times are noisy. Each cold
measurement is repeated (``--repeat``) and the table gives the best and the median, and the
median of the warm runs.

``--kernels`` runs the snippet once more on an empty cache with numba's compile events
recorded (``numba.core.event``, apart from the timed runs, whose imports it would shift) and
lists where its compilation goes: each jitted function's builds (one per signature and
options; a function built twice for one use is a duplicate specialisation) and seconds. A
function's seconds exclude those of the functions compiled while numba typed its calls, so
the column adds up to the compilation's total.

Usage::

    python -m benchmarks.bench_first_fit --out benchmarks/results/bench_first_fit.json
    python -m benchmarks.bench_first_fit --quick   # one run each, demo --quick
    python -m benchmarks.bench_first_fit --no-demo --repeat 1 --kernels
"""

import argparse
import ast
import json
import os
import pathlib
import platform
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]

#: The child process of the README snippet: runs the statements of the block given on stdin,
#: timing each, and prints one JSON line (the snippet's own output is kept out of stdout).
_CHILD = r"""
import ast, contextlib, io, json, sys, time
source = sys.stdin.read()
timings = []
namespace = {"__name__": "__main__"}
with contextlib.redirect_stdout(io.StringIO()):
    for node in ast.parse(source).body:
        code = compile(ast.Module([node], []), "<README>", "exec")
        wall, cpu = time.perf_counter(), time.process_time()
        exec(code, namespace)
        timings.append(
            (node.lineno, time.perf_counter() - wall, time.process_time() - cpu)
        )
print(json.dumps(timings))
"""

#: The child process of ``--kernels``: the snippet on stdin, run whole with numba's compile
#: events recorded; prints one JSON line ``[[module, name, builds, seconds], ...]``.
_CHILD_KERNELS = r"""
import contextlib, io, json, sys, time
from numba.core import event

compiles, stack = {}, []  # (module, name) -> [builds, seconds]; [start, nested seconds]


class Compiles(event.Listener):
    def on_start(self, ev):
        stack.append([time.perf_counter(), 0.0])

    def on_end(self, ev):
        start, nested = stack.pop()
        seconds = time.perf_counter() - start
        if stack:  # the caller's typing compiled this one: not the caller's own seconds
            stack[-1][1] += seconds
        fn = ev.data["dispatcher"].py_func
        entry = compiles.setdefault((fn.__module__, fn.__qualname__), [0, 0.0])
        entry[0] += 1
        entry[1] += seconds - nested


source = sys.stdin.read()
with event.install_listener("numba:compile", Compiles()):
    with contextlib.redirect_stdout(io.StringIO()):
        exec(compile(source, "<README>", "exec"), {"__name__": "__main__"})
print(json.dumps([[m, n, b, s] for (m, n), (b, s) in compiles.items()]))
"""


def readme_snippet(readme=ROOT / "README.md"):
    """The python block under the README's "In a few lines" heading."""
    text = readme.read_text()
    section = text.split("## In a few lines", 1)[1]
    return re.search(r"```python\n(.*?)```", section, re.S).group(1)


def snippet_phases(source):
    """``[(phase, [line numbers])]`` of the snippet's top-level statements: the imports, the
    data, the coreset and the pipeline (from the statement that builds it on)."""
    phases = {"imports": [], "data": [], "coreset fit": [], "pipeline fit": []}
    current = "data"
    for node in ast.parse(source).body:
        text = ast.get_source_segment(source, node)
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            phases["imports"].append(node.lineno)
            continue
        if "make_pipeline" in text:
            current = "pipeline fit"
        elif "Coreset" in text and current == "data":
            current = "coreset fit"
        phases[current].append(node.lineno)
    return list(phases.items())


def _child_cpu():
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _snippet_child(code, source, cache_dir):
    """``code`` in a child process on ``cache_dir``, the snippet on its standard input: the
    JSON of its last line of output."""
    out = subprocess.run(
        [sys.executable, "-c", code],
        input=source,
        capture_output=True,
        text=True,
        env={**os.environ, "NUMBA_CACHE_DIR": str(cache_dir)},
        cwd=ROOT,
        check=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def run_snippet(source, cache_dir):
    """One child process on ``cache_dir``: ``{phase: (wall, cpu)}`` plus 'end to end'."""
    cpu0, wall0 = _child_cpu(), time.perf_counter()
    lines = _snippet_child(_CHILD, source, cache_dir)
    wall, cpu = time.perf_counter() - wall0, _child_cpu() - cpu0
    timings = {line: (w, c) for line, w, c in lines}
    result = {}
    for phase, lines in snippet_phases(source):
        result[phase] = [sum(timings[n][k] for n in lines) for k in (0, 1)]
    result["end to end"] = [wall, cpu]
    return result


def compile_profile(source):
    """The snippet in a child process on an empty cache, its compilations recorded:
    ``[{"function", "builds", "seconds"}]``, most seconds first."""
    with tempfile.TemporaryDirectory() as cache:
        compiles = _snippet_child(_CHILD_KERNELS, source, cache)
    rows = [
        {"function": f"{module}.{name}", "builds": builds, "seconds": seconds}
        for module, name, builds, seconds in compiles
    ]
    return sorted(rows, key=lambda r: -r["seconds"])


def kernel_table(rows, most=30):
    """The ``most`` costliest functions, then the rest and the total."""
    total = sum(r["seconds"] for r in rows)
    builds = sum(r["builds"] for r in rows)
    lines = [
        "README snippet's numba compilation on an empty cache, per jitted function (one more "
        "cold run; seconds exclude the functions compiled while typing its calls)",
        f"{'function':<76}{'builds':>7}{'seconds':>9}",
    ]
    for r in rows[:most]:
        name = r["function"].removeprefix("skcoreset.")
        lines.append(f"{name[-76:]:<76}{r['builds']:>7}{r['seconds']:>9.2f}")
    rest = rows[most:]
    if rest:
        label = f"{len(rest)} more functions"
        lines.append(
            f"{label:<76}{sum(r['builds'] for r in rest):>7}{sum(r['seconds'] for r in rest):>9.2f}"
        )
    lines.append(f"{f'total: {len(rows)} functions':<76}{builds:>7}{total:>9.2f}")
    return lines


def run_demo(cache_dir, quick, workdir):
    """``skcoreset demo`` in a child process on ``cache_dir``: its total and kernel seconds."""
    env = {**os.environ, "NUMBA_CACHE_DIR": str(cache_dir)}
    args = ["demo", "--plot", str(pathlib.Path(workdir) / "demo.png")]
    if quick:
        args.append("--quick")
    code = "import sys; from skcoreset.cli import main; sys.exit(main(sys.argv[1:]))"
    cpu0, wall0 = _child_cpu(), time.perf_counter()
    out = subprocess.run(
        [sys.executable, "-c", code, *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=workdir,
        check=True,
    )
    wall, cpu = time.perf_counter() - wall0, _child_cpu() - cpu0
    kernels = float(re.search(r"numba kernels ready in ([\d.]+) s", out.stderr).group(1))
    return {
        "preparing numba kernels": [kernels, None],
        "the rest": [wall - kernels, None],
        "end to end": [wall, cpu],
    }


def measure(repeat, run):
    """``repeat`` pairs of runs (cold, then warm), each pair on an empty cache of its own."""
    cold, warm = [], []
    for _ in range(repeat):
        with tempfile.TemporaryDirectory() as cache, tempfile.TemporaryDirectory() as work:
            cold.append(run(cache, work))
            warm.append(run(cache, work))
    return cold, warm


def summarize(cold, warm):
    """Per phase: best and median cold wall seconds, median cold CPU, median warm wall."""
    rows = []
    for phase in cold[0]:
        walls = [r[phase][0] for r in cold]
        cpus = [r[phase][1] for r in cold if r[phase][1] is not None]
        rows.append(
            {
                "phase": phase,
                "cold_best_s": min(walls),
                "cold_median_s": statistics.median(walls),
                "cold_median_cpu_s": statistics.median(cpus) if cpus else None,
                "warm_median_s": statistics.median(r[phase][0] for r in warm),
            }
        )
    return rows


def table(title, rows):
    lines = [
        title,
        f"{'phase':<26}{'cold best':>10}{'cold median':>13}{'(CPU)':>8}{'warm':>8}",
    ]
    for r in rows:
        cpu = "" if r["cold_median_cpu_s"] is None else f"{r['cold_median_cpu_s']:.1f}"
        lines.append(
            f"{r['phase']:<26}{r['cold_best_s']:>10.1f}{r['cold_median_s']:>13.1f}"
            f"{cpu:>8}{r['warm_median_s']:>8.1f}"
        )
    return lines


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeat", type=int, default=3, help="cold runs (each then run warm)")
    p.add_argument("--quick", action="store_true", help="one run each, and demo --quick")
    p.add_argument("--no-demo", action="store_true", help="the README snippet only")
    p.add_argument(
        "--kernels",
        action="store_true",
        help="also list the snippet's compilation per jitted function (one more cold run)",
    )
    p.add_argument("--out", type=pathlib.Path, default=None, help="write results as JSON")
    args = p.parse_args(argv)
    repeat = 1 if args.quick else args.repeat
    source = readme_snippet()
    results = {
        "platform": platform.platform(),
        "python": platform.python_version(),
        "cpu_count": os.cpu_count(),
        "load_average_at_start": os.getloadavg(),
        "repeat": repeat,
    }
    lines = []

    def emit(block):
        for line in block:
            lines.append(line)
            print(line, flush=True)

    cold, warm = measure(repeat, lambda cache, work: run_snippet(source, cache))
    results["readme"] = {"cold": cold, "warm": warm, "summary": summarize(cold, warm)}
    emit(
        table(
            f"README snippet ('In a few lines'), seconds; {repeat} cold runs on an empty numba "
            "cache, each then warm",
            results["readme"]["summary"],
        )
    )
    if args.kernels:
        results["readme"]["compilation"] = compile_profile(source)
        emit([""])
        emit(kernel_table(results["readme"]["compilation"]))
    if not args.no_demo:
        cold, warm = measure(repeat, lambda cache, work: run_demo(cache, args.quick, work))
        results["demo"] = {"cold": cold, "warm": warm, "summary": summarize(cold, warm)}
        emit([""])
        emit(
            table(
                f"skcoreset demo{' --quick' if args.quick else ''}, seconds; {repeat} cold runs "
                "on an empty numba cache, each then warm",
                results["demo"]["summary"],
            )
        )
    results["load_average_at_end"] = os.getloadavg()
    start, end = (
        ", ".join(f"{x:.1f}" for x in results[key])
        for key in ("load_average_at_start", "load_average_at_end")
    )
    cores = os.cpu_count()
    emit(["", f"load average (1, 5, 15 min): {start} at start, {end} at end; {cores} cores"])
    if args.out:
        args.out.write_text(json.dumps(results, indent=2))
        args.out.with_suffix(".txt").write_text("\n".join(lines) + "\n")
        print(f"\nwrote {args.out} and {args.out.with_suffix('.txt')}")


if __name__ == "__main__":
    main()
