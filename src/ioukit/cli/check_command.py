"""``ioukit check --gt PATH --pred PATH``: only the diagnostics, no evaluation."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from ioukit.analysis.diagnostics import diagnose
from ioukit.analysis.trust import dataset_notes
from ioukit.cli import add_command
from ioukit.cli._keypoints import visibility_note
from ioukit.cli._reading import (
    add_progress_argument,
    add_reading_arguments,
    progress_enabled,
    read_pair_args,
    sideways_note,
    sizes_note,
    stdin_inputs,
)
from ioukit.cli._report import error_findings, fail_status, say
from ioukit.errors import DataFormatError
from ioukit.io import Unknowns
from ioukit.io._progress import enabled_progress
from ioukit.io.coco_keypoints import read_coco_keypoints
from ioukit.report import json_text

__all__ = ["register", "run"]

_HELP = """\
Look for the classic mistakes before evaluating: boxes in another format than assumed
(xywh read as xyxy...), normalized vs pixel coordinates, predictions for unknown images or
classes, near-duplicate predictions, duplicated ground truth, ground truths matched twice.
Predictions for unknown images or classes are counted and reported, not refused.
Exit status: 0 when no error-level problem is found, 1 when one is (unless --no-fail),
2 for unreadable input.

example: ioukit check --gt instances_val.json --pred results.json"""


def register(subparsers: Any) -> None:
    """Add the ``check`` subcommand."""
    parser = add_command(subparsers, "check", _HELP)
    add_reading_arguments(parser)
    parser.add_argument(
        "--format",
        choices=("text", "json"),
        default="text",
        help="stdout: one line per finding (default), or a JSON document {ground_truth, "
        "predictions, notes, findings: [{code, severity, message, fix}]}",
    )
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    add_progress_argument(parser)
    parser.add_argument(
        "--no-fail", action="store_true", help="exit 0 even when an error-level problem is found"
    )
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Entry point of ``ioukit check`` (``--gt -`` / ``--pred -``: stdin)."""
    with stdin_inputs(args):
        return _run(args)


def _run(args: argparse.Namespace) -> int:
    """``ioukit check`` once the inputs are files."""
    unknowns = Unknowns()
    with enabled_progress(progress_enabled(args)):
        gt, pred = read_pair_args(args, unknowns=unknowns)
    notes = [n for n in (sizes_note(gt), sideways_note(args, gt), _keypoint_note(args.gt)) if n]
    findings = [*diagnose(gt, pred, unknowns=unknowns), *dataset_notes(gt, pred)]
    if args.format == "json":
        document = {
            "ground_truth": {
                "boxes": len(gt),
                "images": len(gt.images),
                "classes": len(gt.categories),
            },
            "predictions": {"boxes": len(pred)},
            "notes": notes,
            "findings": [
                {"code": f.code, "severity": f.severity, "message": f.message, "fix": f.fix}
                for f in findings
            ],
        }
        say(json_text(document).rstrip("\n"))
        return fail_status(error_findings(findings), no_fail=args.no_fail, command="check")
    say(
        f"ground truth: {len(gt)} boxes, {len(gt.images)} images, {len(gt.categories)} classes; "
        f"predictions: {len(pred)} boxes"
    )
    for note in notes:
        say(note)
    if not findings:
        say("no problems found")
    for finding in findings:
        say(str(finding))
    return fail_status(error_findings(findings), no_fail=args.no_fail, command="check")


def _keypoint_note(path: str) -> str | None:
    """The visibility note of a COCO keypoint ground truth (the box check reads no keypoints)."""
    p = Path(path)
    if p.suffix.lower() != ".json" or not p.is_file():
        return None
    with open(p, "rb") as handle:
        if b'"keypoints"' not in handle.read(1 << 20):  # no keypoints near the start: none
            return None
    try:
        return visibility_note(path, read_coco_keypoints(p))
    except (DataFormatError, ValueError, OSError):  # a box dataset after all
        return None
