"""``ioukit compare --gt G --pred A --pred B``: two models on one ground truth, B - A."""

from __future__ import annotations

import argparse
import csv
import io
import json
from pathlib import Path
from typing import Any

from ioukit.analysis.bootstrap import check_options, compare
from ioukit.engine import evaluate
from ioukit.errors import ParameterError
from ioukit.io import read_ground_truth
from ioukit.report.compare_html import write_compare_html

__all__ = ["register", "run"]

_HELP = """\
Compare two prediction files on the same ground truth (COCO protocol family): per stat the
delta B - A, its paired-bootstrap interval (the same resampled images for both models),
P(B > A), and a McNemar test of the ground truths found by one model only.

example: ioukit compare --gt instances_val.json --pred a.json --pred b.json --names a,b"""


def register(subparsers: Any) -> None:
    """Add the ``compare`` subcommand."""
    parser = subparsers.add_parser(
        "compare",
        help="compare two models on one ground truth (delta, paired bootstrap interval)",
        description=_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--gt", required=True, metavar="PATH", help="ground truth (COCO JSON)")
    parser.add_argument(
        "--pred", required=True, action="append", metavar="PATH", help="predictions, twice"
    )
    parser.add_argument("--names", default="A,B", help="labels of the two models (default A,B)")
    parser.add_argument("--bootstrap", type=int, default=1000, metavar="N", help="replicates")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--iou-type", default="bbox", help="bbox (default), segm, keypoints")
    parser.add_argument("--json", metavar="FILE", help="write the comparison as JSON")
    parser.add_argument("--csv", metavar="FILE", help="write the delta table as CSV")
    parser.add_argument("--plots", metavar="DIR", help="write compare.png (deltas, intervals)")
    parser.add_argument(
        "--html",
        metavar="FILE",
        help="write a self-contained HTML comparison (deltas, per-class intervals, PR curves)",
    )
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Evaluate both prediction files, compare, print the delta table, write the outputs."""
    if len(args.pred) != 2:
        raise ParameterError(f"--pred: expected two prediction files, got {len(args.pred)}")
    names = [n.strip() for n in str(args.names).split(",")]
    if len(names) != 2 or not all(names):
        raise ParameterError(f"--names: expected two comma-separated labels, got {args.names!r}")
    for flag, option in (("--bootstrap", "n"), ("--seed", "seed")):
        value = getattr(args, flag[2:])
        try:  # before the evaluations: compare()'s own check, the flag named first
            check_options(**{option: value})
        except ParameterError as exc:
            raise ParameterError(f"{flag} {value}: {exc}") from None
    gt = read_ground_truth(args.gt)
    a = evaluate(gt, args.pred[0], iou_type=args.iou_type)
    b = evaluate(gt, args.pred[1], iou_type=args.iou_type)
    result = compare(a, b, n=args.bootstrap, seed=args.seed, names=names)
    print(result.to_text())
    if args.json:
        Path(args.json).write_text(json.dumps(result.to_dict(), indent=1), encoding="utf-8")
    if args.csv:
        buffer = io.StringIO()
        rows = result.rows()
        writer = csv.DictWriter(buffer, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
        Path(args.csv).write_text(buffer.getvalue(), encoding="utf-8")
    if args.plots:
        _plot(result, Path(args.plots))
    if args.html:
        write_compare_html(a, b, args.html, comparison=result, inputs=[args.gt, *args.pred])
    return 0


def _plot(result: Any, folder: Path) -> None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as exc:  # pragma: no cover - matplotlib is optional
        raise ParameterError("--plots: needs matplotlib (pip install matplotlib)") from exc
    folder.mkdir(parents=True, exist_ok=True)
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
