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
    from ioukit.io._text import read_text

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

    The extra options hold ``crowd_index`` for ``--protocol crowdpose`` (from the ground
    truth's ``images[].crowdIndex``).
    """
    from ioukit.io import detect_format
    from ioukit.io.coco_keypoints import (
        read_coco_keypoint_results,
        read_coco_keypoints,
        read_crowd_index,
    )
    from ioukit.io.yolo_pose import read_yolo_pose_ground_truth, read_yolo_pose_predictions

    if getattr(args, "skip_unknown", False):
        raise ParameterError("--iou-type keypoints: --skip-unknown is not supported")
    formats = []
    for option, path, given in (
        ("--gt", args.gt, args.gt_format),
        ("--pred", args.pred, args.pred_format),
    ):
        if not Path(path).exists():
            raise FileNotFoundError(f"{option} {path}: no such file or folder")
        fmt = detect_format(path) if given == "auto" else given
        if given == "auto" and fmt == "txt" and Path(path).is_dir():
            fmt = "yolo"  # pose lines are longer than the box lines the detection looks for
        if fmt not in ("coco", "yolo"):
            raise ValueError(
                f"--iou-type keypoints: expected COCO keypoint JSON or Ultralytics pose labels "
                f"for {option}, got {fmt} ({path})"
            )
        formats.append(fmt)
    extra: dict[str, Any] = {}
    if formats[0] == "coco":
        gt = read_coco_keypoints(args.gt)
        if args.protocol == "crowdpose":
            extra["crowd_index"] = read_crowd_index(args.gt)
    else:
        gt = read_yolo_pose_ground_truth(
            args.gt, image_size=args.image_size, images_dir=args.images, classes=args.classes
        )
    if formats[1] == "coco":
        pred = read_coco_keypoint_results(args.pred, gt)
    else:
        pred = read_yolo_pose_predictions(args.pred, gt, classes=args.classes)
    note = visibility_note(args.gt, gt)
    if note and not getattr(args, "quiet", False):
        print(note, file=sys.stderr)
    return gt, pred, extra


def visibility_note(path: str, gt: Any) -> str | None:
    """A note when ground-truth visibilities lie outside {0, 1, 2} (#23 item 21)."""
    from ioukit.io.coco_keypoints import unusual_visibility
    from ioukit.report import escape_text

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
    from ioukit.io import detect_format
    from ioukit.io.coco_keypoints import read_coco_keypoint_results, read_coco_keypoints
    from ioukit.io.yolo_pose import read_yolo_pose_ground_truth, read_yolo_pose_predictions

    if not Path(path).exists():
        raise FileNotFoundError(f"{option} {path}: no such file or folder")
    fmt = detect_format(path) if given == "auto" else given
    if given == "auto" and fmt == "txt" and Path(path).is_dir():
        fmt = "yolo"
    if fmt not in ("coco", "yolo"):
        raise ValueError(
            f"--keypoints: expected COCO keypoint JSON or Ultralytics pose labels for {option}, "
            f"got {fmt} ({path})"
        )
    if gt is None:
        if fmt == "coco":
            return read_coco_keypoints(path)
        return read_yolo_pose_ground_truth(
            path, image_size=args.image_size, images_dir=args.images, classes=args.classes
        )
    if fmt == "coco":
        return read_coco_keypoint_results(path, gt)
    return read_yolo_pose_predictions(path, gt, classes=args.classes)


def convert_keypoints(args: argparse.Namespace) -> tuple[Any, Path]:
    """``ioukit convert --keypoints``: read keypoints, write COCO keypoint JSON or YOLO pose."""
    from ioukit.io.keypoint_writers import write_coco_keypoints, write_yolo_pose

    if args.to not in ("coco", "yolo"):
        raise ParameterError(f"--keypoints: expected --to coco or yolo, got {args.to}")
    if args.gt is None:
        dataset = _read_keypoint_side(args.src, args.src_format, "SRC", args)
    else:
        gt = _read_keypoint_side(args.gt, args.gt_format, "--gt", args)
        dataset = _read_keypoint_side(args.src, args.src_format, "SRC", args, gt)
    if args.to == "coco":
        return dataset, write_coco_keypoints(dataset, args.dst)
    return dataset, write_yolo_pose(dataset, args.dst)
