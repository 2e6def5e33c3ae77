"""``ioukit convert SRC DST --to coco|yolo|voc``: convert ground truth or predictions."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from ioukit.cli import add_command
from ioukit.cli._keypoints import convert_keypoints
from ioukit.cli._outputs import check_not_input, refuse_existing
from ioukit.cli._reading import FORMAT_CHOICES, add_progress_argument, progress_enabled
from ioukit.errors import DataFormatError
from ioukit.io import read_ground_truth, read_predictions, write_dataset
from ioukit.io._build import companion_inputs
from ioukit.io._conversion import conversion_notes
from ioukit.io._progress import enabled_progress
from ioukit.io.formats import file_format, writable_formats
from ioukit.report import escape_text

__all__ = ["register", "run"]

_HELP = """\
Convert a dataset between COCO JSON, YOLO txt, Pascal VOC XML, DOTA and YOLO OBB txt.

Ground truth: ioukit convert instances_val.json labels/ --to yolo
Predictions need the ground truth they refer to (images, classes, sizes):
              ioukit convert preds/ results.json --to coco --gt instances_val.json

Output is written atomically (a temporary name, renamed at the end), never onto an input.
An existing DST file is refused unless --force; a DST folder must not exist or be empty.
Datasets that would not read back the same (two images with one stem, an image named
"classes" in YOLO, two classes with one name, names with line breaks) are refused.
YOLO output needs image sizes (from COCO/VOC, or --image-size / --images when reading
YOLO or relative txt)."""


def register(subparsers: Any) -> None:
    """Add the ``convert`` subcommand."""
    parser = add_command(subparsers, "convert", _HELP)
    parser.add_argument("src", metavar="SRC", help="dataset (or predictions with --gt)")
    parser.add_argument("dst", metavar="DST", help="output .json file (coco) or folder (yolo, voc)")
    parser.add_argument(
        "--to",
        required=True,
        choices=writable_formats(),
        help="output format (dota and yolo_obb keep the corners of oriented boxes)",
    )
    parser.add_argument("--from", dest="src_format", choices=FORMAT_CHOICES, default="auto")
    parser.add_argument(
        "--gt", metavar="PATH", help="SRC holds predictions against this ground truth"
    )
    parser.add_argument("--gt-format", choices=FORMAT_CHOICES, default="auto")
    sizes = parser.add_mutually_exclusive_group()
    sizes.add_argument("--image-size", metavar="WxH", help="image size for normalized boxes")
    sizes.add_argument("--images", metavar="DIR", help="images matched by stem; sizes from headers")
    parser.add_argument("--classes", metavar="FILE", help="classes.txt or data.yaml")
    parser.add_argument("--txt-box-format", choices=("xywh", "xyxy", "cxcywh"))
    parser.add_argument("--voc-one-based", action="store_true")
    parser.add_argument(
        "--keypoints",
        action="store_true",
        help="keypoints: COCO keypoint JSON <-> Ultralytics pose labels (--to coco|yolo)",
    )
    parser.add_argument(
        "--force",
        action="store_true",
        help="overwrite an existing DST file (a DST folder must still be absent or empty)",
    )
    parser.add_argument("--quiet", action="store_true", help="no progress bar, no summary line")
    add_progress_argument(parser)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Entry point of ``ioukit convert``."""
    dst = Path(args.dst)
    inputs = [Path(p) for p in (args.src, args.gt, args.classes, args.images) if p is not None]
    inputs += [c for p in list(inputs) for c in companion_inputs(p)]
    if not dst.parent.is_dir():
        raise FileNotFoundError(f"DST {dst}: folder {dst.parent} does not exist")
    check_not_input("DST", dst, inputs)
    if file_format(args.to).single_file:
        if dst.is_dir():
            raise IsADirectoryError(f"DST {dst}: expected a file name for --to coco, got a folder")
        refuse_existing("DST", dst, force=args.force)
    else:
        if dst.exists() and not dst.is_dir():
            raise FileExistsError(f"DST {dst}: expected a folder for --to {args.to}, got a file")
        refuse_existing("DST", dst, force=False, folder=True)
    options: dict[str, Any] = {
        "image_size": args.image_size,
        "images_dir": args.images,
        "classes": args.classes,
        "fmt": args.txt_box_format,
        "one_based": args.voc_one_based,
    }
    if args.keypoints:
        dataset, out = convert_keypoints(args)
    else:
        dataset, out = _convert(args, options)
    if not args.quiet:
        if not args.keypoints:  # what --to cannot hold (#23 items 13, 14)
            for note in conversion_notes(dataset, args.to):
                print(f"note: --to {args.to}: {note}", file=sys.stderr)
        kind = "predictions" if dataset.is_prediction else "boxes"
        print(
            f"wrote {len(dataset)} {kind} on {len(dataset.images)} images to "
            f"{escape_text(str(out))}",
            file=sys.stderr,
        )
    return 0


def _convert(args: argparse.Namespace, options: dict[str, Any]) -> tuple[Any, Any]:
    with enabled_progress(progress_enabled(args)):
        if args.gt is None:
            dataset = read_ground_truth(args.src, format=args.src_format, **options)
        else:
            gt = read_ground_truth(args.gt, format=args.gt_format, **options)
            dataset = read_predictions(
                args.src,
                gt,
                format=args.src_format,
                classes=args.classes,
                fmt=args.txt_box_format,
                one_based=args.voc_one_based,
            )
    try:
        return dataset, write_dataset(dataset, args.dst, format=args.to)
    except DataFormatError as exc:
        raise DataFormatError(f"{args.src}: cannot convert to {args.to}: {exc}") from None
