"""The ``skcoreset`` command: its arguments, its subcommands and how errors are shown.

A user error (a :class:`~._errors.CommandError`, or a bad argument) is one line on standard
error and a non-zero exit status: 1 for a problem with the data or files, 2 for a bad
command line. Warnings are shown as one line each.
"""

import argparse
import importlib
import sys
import textwrap
import warnings

from .. import __version__
from ..coreset._registry import ALGORITHMS, BY_NAME, COMMAND_LINE_DEFAULT, RECOMMENDED
from ..models import MODEL_NAMES
from ..models._names import MODELS
from ._algorithms import MULTILEVEL
from ._demo_settings import FULL, QUICK, columns_help
from ._errors import INSTALL_HINT, CommandError

_DESCRIPTION = """\
Bayesian coresets: small weighted subsets of a data set whose weighted log-likelihood matches
the full one, so that MCMC on them gives nearly the full posterior at a fraction of the cost.
"""


class _Parser(argparse.ArgumentParser):
    """An argument parser whose errors are one line (not the usage and the error)."""

    def error(self, message):
        self.exit(2, f"{self.prog}: error: {message} (see '{self.prog} --help')\n")


def _command(module, name):
    """The function ``name`` of the submodule ``module``, imported when the command runs: the
    parser, ``--help`` and ``--version`` do not load the numerical stack."""

    def run(args):
        return getattr(importlib.import_module(module, __package__), name)(args)

    return run


def _wrap(*paragraphs):
    """Paragraphs filled to the width of a terminal, for the help's free text."""
    return "\n\n".join(textwrap.fill(p, 88) for p in paragraphs)


def _positive_int(text):
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return value


def _size(text):
    """A coreset size: a positive integer, or 'auto' (the estimators' own)."""
    return "auto" if text == "auto" else _positive_int(text)


def _large_rows(text):
    """0 (no large part), or enough rows for a default coreset well below them."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected 0 or at least 10000, got {text!r}") from None
    if value != 0 and value < 10_000:
        raise argparse.ArgumentTypeError(f"expected 0 or at least 10000, got {text!r}")
    return value


def _projections(text):
    value = _positive_int(text)
    if value < 2:
        raise argparse.ArgumentTypeError(f"expected an integer of at least 2, got {text!r}")
    return value


#: The seeds NumPy takes.
_SEEDS = 2**32


def _seed(text):
    try:
        value = int(text)
    except ValueError:
        value = None
    if value is None or not 0 <= value < _SEEDS:
        raise argparse.ArgumentTypeError(
            f"expected an integer from 0 to {_SEEDS - 1}, got {text!r}"
        )
    return value


def _positive_float(text):
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive number, got {text!r}") from None
    if not 0 < value < float("inf"):
        raise argparse.ArgumentTypeError(f"expected a positive number, got {text!r}")
    return value


def _demo_parser(commands):
    sizes = " ".join(map(str, FULL.sizes))
    demo = commands.add_parser(
        "demo",
        help="compare every algorithm on the bundled Phishing data",
        description=_wrap(
            "Build coresets of the bundled Phishing data (the training split of the coreset "
            "papers) with every algorithm at a few sizes, run MCMC (MALA) on each and on all "
            "rows, and print how close each coreset posterior is to the full one, how well it "
            "predicts the test split, and how long it took. A plot of the fidelity against "
            "the size is saved. Then the default pipeline (OMP) and QNC's on a synthetic "
            "logistic problem of a million rows, against MALA on all of them: the size where "
            "coresets matter."
        ),
        epilog="columns of the table:\n" + columns_help(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    demo.add_argument(
        "--sizes",
        type=_positive_int,
        nargs="+",
        metavar="M",
        help=f"coreset sizes (default: {sizes}; with --quick: {' '.join(map(str, QUICK.sizes))})",
    )
    demo.add_argument(
        "--rows",
        type=_large_rows,
        metavar="N",
        help=f"rows of the synthetic logistic problem that follows the Phishing table: the "
        f"default pipeline and QNC's against MALA on all rows (default: {FULL.large_rows:,}; "
        f"with --quick: {QUICK.large_rows:,}); 0 skips it",
    )
    demo.add_argument(
        "--random-state",
        type=_seed,
        default=0,
        metavar="SEED",
        help="seed of the coresets and of the MCMC (default: 0)",
    )
    demo.add_argument(
        "--quick",
        action="store_true",
        help=f"a reduced run for tests: the first {QUICK.train_rows} training rows, "
        f"{QUICK.n_chains} chains x {QUICK.n_samples} draws (default: all rows, "
        f"{FULL.n_chains} chains x {FULL.n_samples} draws)",
    )
    demo.add_argument(
        "--plot",
        default="skcoreset_demo.png",
        metavar="PATH",
        help="where to save the plot, any format matplotlib writes (default: "
        "./skcoreset_demo.png); 'none' to skip it",
    )
    demo.set_defaults(run=_command("._demo", "run_demo"))


def _build_parser(commands):
    algorithms = "\n".join(
        f"  {a.name:<13} {a.description}"
        + (" (the default)" if a.name == COMMAND_LINE_DEFAULT else "")
        for a in ALGORITHMS
    )
    build = commands.add_parser(
        "build",
        help="build the coreset of a data file and write its rows and weights",
        description=_wrap(
            "Build a coreset of the rows of DATA and write it as row numbers and weights, to "
            "subsample the data for any tool that takes sample weights. The file is read in "
            "chunks of rows, each merged into the coreset of the rows seen so far, so files "
            "larger than memory work. A file read in one chunk gives the same coreset as the "
            "estimator's fit on all of it; with more chunks, every chunk is summarised at the "
            "first chunk's Laplace fit, the data's fit comes from the summaries, and the file "
            "is read again where that fit's predicted error asks for it (a file sorted by "
            "label, whose first chunk misleads; shuffle such files).",
            "With --groups, the coreset is that of a multilevel model (a random intercept per "
            "group, and random slopes with --slopes), built by the estimator's fit(X, y, "
            "groups=...) on all rows at once (so that small groups can become a coreset of "
            "groups): the file is read whole and must fit in memory (with room for a few copies "
            "of its features); partial_fit(groups=) streams larger data from Python.",
        ),
        epilog=f"algorithms:\n{algorithms}\n\n"
        + _wrap(
            "input: .npz with the features as array 'X' and the labels as 'y' (or --label); "
            ".csv (also .csv.gz, .bz2, .xz, .zip) and .parquet with a header: the label column "
            "named by --label (and the group column by --groups), every other column a feature "
            "(numbers only).",
            "output: the columns 'row' (0-based row of DATA, header not counted) and "
            "'weight' (and with --groups 'group', the row's group label), as .npz, .csv or "
            ".parquet by the extension of OUT.",
            f".csv and .parquet need pandas and pyarrow: {INSTALL_HINT}",
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    build.add_argument("data", metavar="DATA", help="the data file (.npz, .csv or .parquet)")
    build.add_argument(
        "--label",
        metavar="COL",
        help="the label column (required for .csv and .parquet; for .npz the label array, "
        "default 'y')",
    )
    build.add_argument(
        "--model",
        default="auto",
        choices=("auto", *MODEL_NAMES),
        metavar="MODEL",
        help="the likelihood: "
        + ", ".join(f"{name} ({targets})" for name, (_, _, targets) in MODELS.items())
        + "; default: auto, the model the labels call for, settled as the estimators' "
        "model='auto' settles it (skcoreset.models.model_from_targets), or the one model of "
        "an algorithm made for one",
    )
    build.add_argument(
        "--algorithm",
        type=str.lower,
        choices=list(BY_NAME),
        metavar="NAME",
        help=f"the coreset algorithm: {', '.join(BY_NAME)} "
        f"(see below; default: {COMMAND_LINE_DEFAULT}); with --groups one of "
        f"{', '.join(MULTILEVEL)} (default: {RECOMMENDED})",
    )
    build.add_argument(
        "--n-points",
        required=True,
        type=_size,
        metavar="M",
        help="the coreset size: rows to keep (draws, for the methods that sample with "
        "replacement), or auto: the size the posterior calls for, grown until within the "
        "quality target where the algorithm grows (the estimators' n_points='auto')",
    )
    build.add_argument(
        "-o",
        "--output",
        required=True,
        metavar="OUT",
        help="where to write the coreset: .npz, .csv or .parquet",
    )
    build.add_argument(
        "--random-state",
        type=_seed,
        default=0,
        metavar="SEED",
        help="seed of the projection and of the draws (default: 0)",
    )
    build.add_argument(
        "--chunk-rows",
        type=_positive_int,
        metavar="ROWS",
        help="rows read from DATA at a time (default: about 64 MB of features)",
    )
    build.add_argument(
        "--block-size",
        type=_positive_int,
        metavar="ROWS",
        help="rows per merge-reduce block inside the estimator (default: the estimator's)",
    )
    build.add_argument(
        "--n-projections",
        type=_projections,
        metavar="J",
        help="dimension of the random projection of the Hilbert methods (default: the estimator's)",
    )
    build.add_argument(
        "--prior-scale",
        type=_positive_float,
        metavar="S",
        help="standard deviation of the N(0, S^2) prior on every coefficient (default: the "
        "estimator's)",
    )
    build.add_argument(
        "--groups",
        metavar="COL",
        help="the group column (for .npz the group array): each row's group label (numbers or "
        "text), not a feature. The model becomes the multilevel model of --model (logistic, "
        "poisson, negative_binomial, gaussian or gamma; auto settles it from the labels) "
        "with a random intercept per group; the file is read whole (see above)",
    )
    build.add_argument(
        "--slopes",
        nargs="+",
        metavar="COL",
        help="with --groups: feature columns with a random slope per group (for .npz their "
        "column numbers in 'X')",
    )
    build.add_argument(
        "--progress",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="show a progress bar of the rows read (needs tqdm; default: when standard error "
        "is a terminal, else a line per chunk)",
    )
    build.add_argument(
        "--no-intercept",
        action="store_true",
        help="the likelihood has no intercept (default: it has one)",
    )
    build.set_defaults(run=_command("._build", "run_build"))


def make_parser():
    """Build the parser of the ``skcoreset`` command and its subcommands.

    Returns
    -------
    parser : argparse.ArgumentParser
        The parser; each subcommand sets ``run``, the function that carries it out.

    Examples
    --------
    >>> from skcoreset.cli import make_parser
    >>> make_parser().parse_args(["demo"]).command
    'demo'
    """
    parser = _Parser(
        prog="skcoreset",
        description=_DESCRIPTION,
        epilog="'skcoreset COMMAND --help' explains a command's options.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"skcoreset {__version__}")
    commands = parser.add_subparsers(dest="command", title="commands", metavar="COMMAND")
    _demo_parser(commands)
    _build_parser(commands)
    return parser


def _show_warning(message, category, filename, lineno, file=None, line=None):
    text = " ".join(str(message).split())
    print(f"skcoreset: warning: {text}", file=sys.stderr)


def main(argv=None):
    """Run the ``skcoreset`` command.

    Parameters
    ----------
    argv : list of str, default=None
        The arguments (default: ``sys.argv[1:]``).

    Returns
    -------
    status : int
        0 on success, 1 for a user error (data, files), 2 for a bad command line.

    Examples
    --------
    A user error is one line on standard error and the status 1:

    >>> from skcoreset.cli import main
    >>> main(["build", "no_such_file.npz", "--model", "logistic", "--algorithm", "giga",
    ...       "--n-points", "10", "-o", "out.npz"])
    1
    """
    parser = make_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.error("choose a command: demo or build")
    with warnings.catch_warnings():
        warnings.showwarning = _show_warning
        try:
            return args.run(args)
        except CommandError as exc:
            text = " ".join(str(exc).split())  # one line, whatever the message holds
            print(f"skcoreset {args.command}: error: {text}", file=sys.stderr)
            return 1
        except KeyboardInterrupt:
            print("skcoreset: interrupted", file=sys.stderr)
            return 130
