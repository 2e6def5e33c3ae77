"""``ioukit compare --gt G --pred A --pred B``: two models on one ground truth, B - A."""

from __future__ import annotations

import argparse
import csv
import io
import json
from pathlib import Path
from typing import Any

from ioukit.analysis.bootstrap import compare
from ioukit.cli import add_command
from ioukit.cli._outputs import OutputPlan, stdout_choice
from ioukit.engine import evaluate
from ioukit.errors import ParameterError
from ioukit.evaluation.registry import similarity_names
from ioukit.io import read_ground_truth
from ioukit.plots import require_matplotlib
from ioukit.report.compare_html import compare_html_text

__all__ = ["register", "run"]

_HELP = """\
Compare two prediction files on the same ground truth (COCO protocol family): per stat the
delta B - A, its paired-bootstrap interval (the same resampled images for both models),
P(B > A), and a McNemar test of the ground truths found by one model only.

example: ioukit compare --gt instances_val.json --pred a.json --pred b.json --names a,b"""


def register(subparsers: Any) -> None:
    """Add the ``compare`` subcommand."""
    parser = add_command(subparsers, "compare", _HELP)
    parser.add_argument("--gt", required=True, metavar="PATH", help="ground truth (COCO JSON)")
    parser.add_argument(
        "--pred", required=True, action="append", metavar="PATH", help="predictions, twice"
    )
    parser.add_argument("--names", default="A,B", help="labels of the two models (default A,B)")
    parser.add_argument("--bootstrap", type=int, default=1000, metavar="N", help="replicates")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--iou-type",
        default="bbox",
        choices=similarity_names(),
        metavar="NAME",
        help=f"one of {', '.join(similarity_names())} (default bbox)",
    )
    parser.add_argument(
        "--format",
        choices=("text", "json"),
        default="text",
        help="stdout: the delta table (default) or the JSON document of --json",
    )
    parser.add_argument(
        "--json", metavar="FILE", help="write the comparison as JSON ('-': on stdout instead)"
    )
    parser.add_argument(
        "--csv", metavar="FILE", help="write the delta table as CSV ('-': on stdout instead)"
    )
    parser.add_argument("--plots", metavar="DIR", help="write compare.png (deltas, intervals)")
    parser.add_argument(
        "--html",
        metavar="FILE",
        help="write a self-contained HTML comparison (deltas, per-class intervals, PR curves; "
        "'-': on stdout instead)",
    )
    parser.add_argument(
        "--force",
        action="store_true",
        help="overwrite existing output files and write into a non-empty --plots folder",
    )
    parser.set_defaults(run=run)


def _stdout_output(args: argparse.Namespace) -> str | None:
    """The output printed instead of the delta table (:func:`stdout_choice`), or None.

    >>> _stdout_output(argparse.Namespace(json=None, csv="-", html=None, format="text"))
    '--csv'
    """
    given = (("--json", args.json), ("--csv", args.csv), ("--html", args.html))
    return stdout_choice(given, args.format)


def _file(path: str | None) -> str | None:
    return None if path in (None, "-") else path


def run(args: argparse.Namespace) -> int:
    """Evaluate both prediction files, compare, print the delta table, write the outputs.

    Every output is checked before any work (its folder exists, it is no input, an existing
    file needs ``--force``) and written at the end, all or none.
    """
    if len(args.pred) != 2:
        raise ParameterError(f"--pred: expected two prediction files, got {len(args.pred)}")
    names = [n.strip() for n in str(args.names).split(",")]
    if len(names) != 2 or not all(names):
        raise ParameterError(f"--names: expected two comma-separated labels, got {args.names!r}")
    if args.bootstrap < 1:
        raise ParameterError(
            f"--bootstrap {args.bootstrap}: expected a positive number of replicates, got "
            f"{args.bootstrap}"
        )
    if args.seed < 0:  # bootstrap()'s own rule, before the evaluations
        raise ParameterError(
            f"--seed {args.seed}: expected a non-negative integer, got {args.seed}"
        )
    on_stdout = _stdout_output(args)
    plan = OutputPlan(inputs=[args.gt, *args.pred], force=args.force)
    plan.add_file("--json", _file(args.json))
    plan.add_file("--csv", _file(args.csv))
    plan.add_folder("--plots", args.plots)
    plan.add_file("--html", _file(args.html))
    if args.plots is not None:
        require_matplotlib()  # a missing matplotlib fails now, not after the bootstrap
    gt = read_ground_truth(args.gt)
    a = evaluate(gt, args.pred[0], iou_type=args.iou_type)
    b = evaluate(gt, args.pred[1], iou_type=args.iou_type)
    result = compare(a, b, n=args.bootstrap, seed=args.seed, names=names)
    texts: dict[str, str] = {}
    if args.json is not None or on_stdout == "--format json":
        texts["--json"] = json.dumps(result.to_dict(), indent=1)
    if on_stdout == "--format json":
        on_stdout = "--json"
    if args.csv is not None:
        buffer = io.StringIO()
        rows = result.rows()
        writer = csv.DictWriter(buffer, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
        texts["--csv"] = buffer.getvalue()
    if args.html is not None:
        texts["--html"] = compare_html_text(a, b, comparison=result)
    with plan:
        for option, text in texts.items():
            if plan.wants(option):
                plan.write_text(option, text)
        if args.plots:
            _plot(result, plan.stage_folder("--plots"))
    print(texts[on_stdout].rstrip("\n") if on_stdout is not None else result.to_text())
    return 0


def _plot(result: Any, folder: Path) -> None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as exc:  # pragma: no cover - matplotlib is optional
        raise ParameterError("--plots: needs matplotlib (pip install matplotlib)") from exc
    rows = result.rows()
    fig, ax = plt.subplots(figsize=(7, 3.5))
    x = range(len(rows))
    deltas = [r["delta"] for r in rows]
    err = [
        [r["delta"] - r["lower"] for r in rows],
        [r["upper"] - r["delta"] for r in rows],
    ]
    ax.errorbar(list(x), deltas, yerr=err, fmt="o", capsize=3)
    ax.axhline(0.0, color="grey", linewidth=0.8)
    ax.set_xticks(list(x), [r["stat"] for r in rows], rotation=45)
    ax.set_ylabel(f"{result.names[1]} - {result.names[0]}")
    ax.set_title(f"paired bootstrap, {result.n} replicates")
    fig.tight_layout()
    fig.savefig(folder / "compare.png", dpi=100)
    plt.close(fig)
