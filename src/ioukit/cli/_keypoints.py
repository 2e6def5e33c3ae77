"""``ioukit eval --iou-type keypoints``: the keypoint options and readers (private).

Ground truth and predictions are COCO keypoint JSON (annotations and ``loadRes`` results) or
Ultralytics pose label folders (``class cx cy w h x y v ...``, ``kpt_shape`` from data.yaml).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any

from ioukit.errors import ParameterError
from ioukit.evaluation.registry import protocol_takes
from ioukit.io import detect_format
from ioukit.io._text import read_text
from ioukit.io.coco_keypoints import read_crowd_index, unusual_visibility
from ioukit.io.formats import FileFormat, keypoint_file_format, keypoint_formats
from ioukit.report import escape_text

__all__ = [
    "add_keypoint_arguments",
    "convert_keypoints",
    "keypoint_options",
    "parse_sigmas",
    "read_keypoint_args",
    "visibility_note",
]


def add_keypoint_arguments(parser: argparse.ArgumentParser) -> None:
    """``--sigmas`` and ``--oks-area``."""
    group = parser.add_argument_group("keypoints (--iou-type keypoints, --protocol crowdpose)")
    group.add_argument(
        "--sigmas",
        metavar="FILE|LIST",
        help="per-keypoint OKS sigmas: comma-separated numbers, or a file holding them (JSON "
        "list or numbers separated by spaces, commas or lines); default: the 17 COCO person "
        "sigmas (crowdpose: its 14)",
    )
    group.add_argument(
        "--oks-area",
        choices=("annotation", "box"),
        help="OKS scale: the annotation's area (pycocotools; default) or box w*h*0.53 "
        "(CrowdPose, xtcocotools use_area=False, Ultralytics; default for crowdpose)",
    )


def parse_sigmas(value: str) -> list[float]:
    """Numbers of ``--sigmas``: a comma-separated list or a file (JSON list or plain numbers).

    Raises
    ------
    ParameterError
        A token that is not a number (the message names it and where it came from).

    Examples
    --------
    >>> parse_sigmas("0.026, 0.025,0.035")
    [0.026, 0.025, 0.035]
    >>> parse_sigmas("0.1,abc")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ioukit.errors.ParameterError: --sigmas: expected numbers separated by commas ..., got 'abc'
    """
    path = Path(value)
    where = "--sigmas"
    text = value
    if path.is_file():
        text = read_text(path)
        where = f"--sigmas {value}"
        try:
            data = json.loads(text)
        except ValueError:
            data = None
        if isinstance(data, list):
            text = ",".join(str(v) for v in data)
    numbers = []
    for token in re.split(r"[\s,]+", text.strip()):
        if not token:
            continue
        try:
            numbers.append(float(token))
        except ValueError:
            raise ParameterError(
                f"{where}: expected numbers separated by commas (or a file of them), got {token!r}"
            ) from None
    if not numbers:
        raise ParameterError(f"{where}: expected at least one number")
    return numbers


def keypoint_options(args: argparse.Namespace) -> dict[str, Any]:
    """The evaluate() options given on the command line (``sigmas``, ``oks_area``)."""
    options: dict[str, Any] = {}
    if args.sigmas is not None:
        options["sigmas"] = parse_sigmas(args.sigmas)
    if args.oks_area is not None:
        options["oks_area"] = args.oks_area
    return options


def read_keypoint_args(args: argparse.Namespace) -> tuple[Any, Any, dict[str, Any]]:
    """Ground truth, predictions (with keypoints) and extra evaluate() options.

    The extra options hold ``crowd_index`` for a protocol that takes it (``--protocol
    crowdpose``: from the ground truth's ``images[].crowdIndex``).
    """
    if getattr(args, "skip_unknown", False):
        raise ParameterError("--iou-type keypoints: --skip-unknown is not supported")
    what = "--iou-type keypoints"
    gt_format = _keypoint_format(args.gt, args.gt_format, "--gt", what)
    pred_format = _keypoint_format(args.pred, args.pred_format, "--pred", what)
    extra: dict[str, Any] = {}
    gt = gt_format.read_ground_truth(args.gt, **_reading_options(args))
    if Path(args.gt).is_file() and protocol_takes(args.protocol, "crowd_index"):  # COCO JSON
        extra["crowd_index"] = read_crowd_index(args.gt)
    pred = pred_format.read_predictions(args.pred, gt, **_reading_options(args))
    note = visibility_note(args.gt, gt)
    if note and not getattr(args, "quiet", False):
        print(note, file=sys.stderr)
    return gt, pred, extra


def _reading_options(args: argparse.Namespace) -> dict[str, Any]:
    return {"image_size": args.image_size, "images_dir": args.images, "classes": args.classes}


def _keypoint_format(path: str, given: str, option: str, what: str) -> FileFormat:
    """The keypoint format of ``path`` (``given``, or detected: a folder of text lines is
    Ultralytics pose labels, whose lines are longer than the box lines detection looks for)."""
    if not Path(path).exists():
        raise FileNotFoundError(f"{option} {path}: no such file or folder")
    fmt = detect_format(path) if given == "auto" else given
    if given == "auto" and Path(path).is_dir():
        fmt = _POSE_FOLDERS.get(fmt, fmt)
    if fmt not in keypoint_formats():
        raise ValueError(
            f"{what}: expected COCO keypoint JSON or Ultralytics pose labels for {option}, "
            f"got {fmt} ({path})"
        )
    return keypoint_file_format(fmt)


_POSE_FOLDERS = {"txt": "yolo"}
"""Detected folder format -> keypoint format: pose lines look like plain txt to detection."""


def visibility_note(path: str, gt: Any) -> str | None:
    """A note when ground-truth visibilities lie outside {0, 1, 2} (#23 item 21)."""
    found = unusual_visibility(gt.keypoints)
    if found is None:
        return None
    count, record, keypoint, value = found
    return (
        f"note: --gt {escape_text(str(path))}: {count} keypoint visibilities outside {{0, 1, 2}} "
        f"(first: {value:g}, annotation row {record}, keypoint {keypoint + 1}): any v > 0 "
        "counts as labelled, as pycocotools and xtcocotools count it (COCO-WholeBody's "
        "confidences)"
    )


def _read_keypoint_side(
    path: str, given: str, option: str, args: argparse.Namespace, gt: Any = None
) -> Any:
    fmt = _keypoint_format(path, given, option, "--keypoints")
    if gt is None:
        return fmt.read_ground_truth(path, **_reading_options(args))
    return fmt.read_predictions(path, gt, **_reading_options(args))


def convert_keypoints(args: argparse.Namespace) -> tuple[Any, Path]:
    """``ioukit convert --keypoints``: read keypoints, write COCO keypoint JSON or YOLO pose."""
    if args.to not in keypoint_formats():
        raise ParameterError(f"--keypoints: expected --to coco or yolo, got {args.to}")
    if args.gt is None:
        dataset = _read_keypoint_side(args.src, args.src_format, "SRC", args)
    else:
        gt = _read_keypoint_side(args.gt, args.gt_format, "--gt", args)
        dataset = _read_keypoint_side(args.src, args.src_format, "SRC", args, gt)
    return dataset, keypoint_file_format(args.to).write(dataset, args.dst)
