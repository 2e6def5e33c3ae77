"""``ioukit eval --gt PATH --pred PATH``: read, diagnose, evaluate, report (text, JSON, CSV, "
"plots)."""

from __future__ import annotations

import argparse
import contextlib
import math
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from ioukit.cli._options import area_ranges, float_list, int_list, protocol_options
from ioukit.cli._report import yolo_val_table
from ioukit.cli._select import missing_as, read_image_ids, select, table_rows
from ioukit.errors import ParameterError
from ioukit.evaluation.registry import (
    protocol_iou_types,
    protocol_names,
    similarity_input,
    similarity_names,
)
from ioukit.report import escape_text, per_class_table

__all__ = [
    "add_progress_argument",
    "add_protocol_option_arguments",
    "add_reading_arguments",
    "add_selection_arguments",
    "check_output_folder",
    "evaluate_shards",
    "input_paths",
    "prediction_format",
    "progress_enabled",
    "read_ground_truth_arg",
    "read_pair_args",
    "read_predictions_arg",
    "read_segm_args",
    "refuse_mixed_formats",
    "register",
    "run",
    "shard_paths",
    "sideways_note",
    "sizes_note",
    "stdin_inputs",
]

_HELP = """\
Evaluate detections against ground truth and print the report.

Formats (detected from the paths unless given): COCO .json; a folder of YOLO .txt
(class cx cy w h [conf], normalized); a folder of Pascal VOC .xml or devkit
comp4_det_test_<class>.txt files; a folder of plain .txt (class [conf] x y w h).
Images are matched by COCO id or file stem.

examples:
  ioukit eval --gt instances_val.json --pred results.json --json report.json
  ioukit eval --gt labels/val --pred runs/detect/predict/labels --protocol yolo --images images/val
  ioukit eval --gt Annotations --pred results --protocol voc07 --plots plots/
  ioukit eval --gt lvis_v1_val.json --pred results.json --protocol lvis [--fixed-ap]
  ioukit eval --gt person_keypoints_val.json --pred kp_results.json --iou-type keypoints

Outputs (--json, --csv, --plots) are written together at the end or not at all, never onto an
input; an existing output file needs --force.
Exit status: 0 success; 1 an error-level diagnostic (after the report; --no-fail gives 0);
2 bad input or usage (one line on stderr naming the file and place)."""

FORMAT_CHOICES = ("auto", "coco", "yolo", "voc", "txt", "dota", "yolo_obb", "coco_rotated")


class _OnePrediction(argparse.Action):
    # a second --pred used to replace the first silently: refuse it, point to compare
    def __call__(self, parser: Any, namespace: Any, values: Any, option: Any = None) -> None:
        if getattr(namespace, self.dest, None) is not None:
            parser.error(
                "--pred: expected one predictions file, got a second; to compare two models "
                "use: ioukit compare --gt G --pred A --pred B"
            )
        setattr(namespace, self.dest, values)


def add_reading_arguments(parser: argparse.ArgumentParser, *, predictions: bool = True) -> None:
    """The options shared by ``eval``, ``check`` and ``convert`` to read a gt/pred pair."""
    parser.add_argument(
        "--gt", required=True, metavar="PATH", help="ground truth file or folder ('-': stdin)"
    )
    if predictions:
        parser.add_argument(
            "--pred",
            required=True,
            metavar="PATH",
            action=_OnePrediction,
            help="predictions file or folder ('-': COCO results JSON on stdin)",
        )
    parser.add_argument("--gt-format", choices=FORMAT_CHOICES, default="auto", help="default: auto")
    if predictions:
        parser.add_argument(
            "--pred-format", choices=FORMAT_CHOICES, default="auto", help="default: auto"
        )
    sizes = parser.add_mutually_exclusive_group()
    sizes.add_argument(
        "--image-size", metavar="WxH", help="image size for normalized YOLO/txt boxes"
    )
    sizes.add_argument(
        "--images", metavar="DIR", help="images matched by stem; sizes from their headers"
    )
    parser.add_argument(
        "--classes", metavar="FILE", help="classes.txt or data.yaml with the class names"
    )
    parser.add_argument(
        "--txt-box-format",
        choices=("xywh", "xyxy", "cxcywh"),
        help="plain txt: the four numbers (default xywh, cxcywh when relative)",
    )
    parser.add_argument(
        "--voc-one-based",
        action="store_true",
        help="VOC: shift 1-based pixel indices to 0-based continuous coordinates",
    )


def read_ground_truth_arg(args: argparse.Namespace) -> Any:
    """The ground truth named by ``--gt`` and the reading options.

    When it cannot be read and looks like predictions (a COCO results list, text lines with a
    confidence), the message ends with a hint that ``--gt`` and ``--pred`` may be swapped.
    """
    from ioukit.errors import DataFormatError
    from ioukit.io import detect_format, read_ground_truth

    images_dir = args.images
    if images_dir is not None and getattr(args, "html", None):
        # COCO and VOC files give their own sizes: --images is then the report's pictures
        try:
            fmt = args.gt_format if args.gt_format != "auto" else detect_format(args.gt)
        except (DataFormatError, OSError):
            fmt = None  # the read below names the problem
        if fmt in ("coco", "voc"):
            images_dir = None
    try:
        return read_ground_truth(
            args.gt,
            format=args.gt_format,
            image_size=args.image_size,
            images_dir=images_dir,
            classes=args.classes,
            box_format=args.txt_box_format,
            one_based=args.voc_one_based,
        )
    except DataFormatError as exc:
        what = _looks_like_predictions(Path(args.gt))
        if what is None or getattr(args, "pred", None) is None:
            raise
        raise DataFormatError(f"{exc} (--gt holds {what}: were --gt and --pred swapped?)") from None


def _looks_like_predictions(path: Path) -> str | None:
    """What in ``path`` looks like predictions, or None: a JSON list at the top (COCO
    results), or a first label line of 6 values (YOLO ``class cx cy w h conf``, plain
    ``class conf x y w h``)."""
    try:
        if path.is_file() and path.suffix.lower() == ".json":
            with open(path, "rb") as handle:
                head = handle.read(1 << 16).lstrip(b" \t\r\n\xef\xbb\xbf")
            return "a JSON list, as COCO results are" if head.startswith(b"[") else None
        if path.is_dir():
            for file in sorted(path.iterdir())[:20]:
                if file.suffix.lower() != ".txt" or file.name.lower() == "classes.txt":
                    continue
                with open(file, "rb") as handle:
                    for line in handle.read(1 << 16).splitlines():
                        if line.strip():
                            n = len(line.replace(b",", b" ").split())
                            return "lines of 6 values with a confidence" if n == 6 else None
    except OSError:
        return None
    return None


def refuse_mixed_formats(args: argparse.Namespace) -> None:
    """Refuse YOLO-style lines in pixels on one side and normalized YOLO on the other.

    ``0 50 50 20 20`` in a folder auto-detects as plain txt (``class x y w h`` in pixels);
    beside normalized YOLO predictions it is much more likely YOLO labels written in pixels
    (#23 item 11). Formats given explicitly are taken as given.
    """
    from ioukit.errors import DataFormatError
    from ioukit.io import detect_format
    from ioukit.io._yolo_folder import pixel_index_line

    if args.gt_format != "auto" or args.pred_format != "auto":
        return
    gt, pred = Path(args.gt), Path(args.pred)
    if not (gt.is_dir() and pred.is_dir()):
        return
    try:
        gt_format = detect_format(gt)
        pred_format = detect_format(pred)  # normalized 6-value lines: "yolo"
    except (DataFormatError, OSError):
        return  # the readers name the problem
    if (gt_format, pred_format) == ("txt", "yolo"):
        option, folder, other = "--gt", gt, f"--pred {escape_text(str(pred))}"
    elif (gt_format, pred_format) == ("yolo", "txt"):
        option, folder, other = "--pred", pred, f"--gt {escape_text(str(gt))}"
    else:
        return
    evidence = pixel_index_line(folder)
    if evidence is None:
        return
    file, line, value = evidence
    raise DataFormatError(
        f"{option} {escape_text(str(folder))}: mixed formats: YOLO-style lines in pixels "
        f"({escape_text(str(file))}: line {line}: a class index, then {value:g} > 1) while "
        f"{other} is normalized YOLO; YOLO divides by the image size: normalize these labels, "
        f"or pass --gt-format and --pred-format if they are plain txt (class x y w h in "
        "pixels; relative txt predictions: class conf cx cy w h)"
    )


def read_predictions_arg(args: argparse.Namespace, gt: Any, *, unknowns: Any = None) -> Any:
    """The predictions named by ``--pred`` read against ``gt`` (mixed YOLO formats refused)."""
    from ioukit.io import read_predictions

    refuse_mixed_formats(args)

    return read_predictions(
        args.pred,
        gt,
        format=prediction_format(args),
        classes=args.classes,
        box_format=args.txt_box_format,
        one_based=args.voc_one_based,
        unknowns=unknowns,
    )


def read_pair_args(args: argparse.Namespace, *, unknowns: Any = None) -> tuple[Any, Any]:
    """Ground truth and predictions; under ``--protocol yolo`` a YOLO folder's predicted
    class without a ground-truth instance is evaluated as ``yolo val`` does (#23 item 20).

    ``yolo predict`` writes no ``classes.txt``: without a class list the ground truth knows
    only the classes it has instances of. Such predictions are false positives of a class
    that gets no AP (mAP is over the classes with ground truth, as Ultralytics'
    ``ap_per_class``); a note says so. ``--skip-unknown`` leaves them out instead.
    """
    from ioukit.io import Unknowns, detect_format
    from ioukit.io._build import find_class_file

    gt = read_ground_truth_arg(args)
    yolo_val = _yolo_val_json(args, gt, unknowns)
    if yolo_val is not None:
        return gt, yolo_val
    yolo_pair = (
        getattr(args, "protocol", None) == "yolo"
        and unknowns is None
        and args.classes is None
        and Path(args.gt).is_dir()
        and Path(args.pred).is_dir()
        and (args.gt_format if args.gt_format != "auto" else detect_format(args.gt)) == "yolo"
        and prediction_format(args) == "yolo"
        and find_class_file(Path(args.gt), ground_truth=True) is None
        and find_class_file(Path(args.pred), ground_truth=False) is None
    )
    if not yolo_pair:
        return gt, read_predictions_arg(args, gt, unknowns=unknowns)
    probe = Unknowns()
    pred = read_predictions_arg(args, gt, unknowns=probe)
    if probe.images or not probe.classes:  # an unknown image: the strict read names it
        return gt, pred if not probe else read_predictions_arg(args, gt)
    extra = sorted(int(c) for c in probe.classes)
    indices = sorted({*(int(i) for i in gt.categories.ids.tolist()), *extra})
    classes = {i: str(i) for i in indices}
    gt = read_ground_truth_arg(argparse.Namespace(**{**vars(args), "classes": classes}))
    pred = read_predictions_arg(argparse.Namespace(**{**vars(args), "classes": classes}), gt)
    if not getattr(args, "quiet", False):
        count = sum(probe.classes.values())
        shown = ", ".join(str(c) for c in extra[:10]) + (" ..." if len(extra) > 10 else "")
        print(
            f"note: --protocol yolo: {count} prediction(s) of class(es) {shown} without a "
            "ground-truth instance are false positives of classes that get no AP, as `yolo "
            "val` does (pass --skip-unknown to leave them out, --classes to name the classes)",
            file=sys.stderr,
        )
    return gt, pred


def _yolo_val_json(args: argparse.Namespace, gt: Any, unknowns: Any) -> Any:
    """Predictions of a ``yolo val save_json=True`` file against its YOLO labels, or None.

    Such a file names images by file stem and classes by index + 1 (#23 item 19); a note
    says it was read so. Any other JSON file: None (the COCO reader takes it).
    """
    from ioukit.errors import DataFormatError
    from ioukit.io import detect_format
    from ioukit.io._ultralytics_json import read_yolo_val_json
    from ioukit.io.coco import read_coco_results

    pred = Path(args.pred)
    if args.pred_format not in ("auto", "coco") or pred.suffix.lower() != ".json":
        return None
    if not Path(args.gt).is_dir() or not pred.is_file():
        return None
    if (args.gt_format if args.gt_format != "auto" else detect_format(args.gt)) != "yolo":
        return None
    records = read_yolo_val_json(pred, gt)
    if records is None:
        return None
    if unknowns is not None:  # classes beyond the ground truth's: counted, left out
        known = set(gt.categories.ids.tolist())
        for record in records:
            if record["category_id"] not in known:
                unknowns.add_class(record["category_id"])
        records = [r for r in records if r["category_id"] in known]
    try:
        dataset = read_coco_results(records, gt)
    except DataFormatError as exc:
        raise DataFormatError(
            f"{escape_text(str(pred))} (as yolo val's save_json): {exc}"
        ) from None
    if not getattr(args, "quiet", False):
        print(
            f"note: --pred {escape_text(str(pred))} read as `yolo val save_json=True` output: "
            "image_id is the image's file stem, category_id the class index + 1",
            file=sys.stderr,
        )
    return dataset


def prediction_format(args: argparse.Namespace) -> Any:
    """``--pred-format``, resolved when auto-detection cannot tell YOLO from relative txt.

    Normalized 6-value lines are YOLO (``class cx cy w h conf``) or relative plain txt
    (``class conf cx cy w h``): the ground truth's format decides; otherwise YOLO, with a note.
    """
    from ioukit.io import ambiguous_txt, detect_format

    if args.pred_format != "auto" or not Path(args.pred).is_dir() or not ambiguous_txt(args.pred):
        return args.pred_format
    gt_format = args.gt_format if args.gt_format != "auto" else detect_format(args.gt)
    if gt_format in {"yolo", "txt"}:
        return gt_format
    if not getattr(args, "quiet", False):
        print(
            f"note: --pred {escape_text(str(args.pred))} read as YOLO (class cx cy w h conf); "
            "pass --pred-format txt if its lines are plain txt (class conf cx cy w h)",
            file=sys.stderr,
        )
    return "yolo"


def read_segm_args(args: argparse.Namespace) -> tuple[Any, Any]:
    """Ground truth and predictions with their masks (``--iou-type segm``: COCO JSON only)."""
    from ioukit.errors import DataFormatError
    from ioukit.io import detect_format
    from ioukit.io.coco import read_coco_ground_truth, read_coco_results

    if args.protocol != "coco":
        raise ParameterError(f"--iou-type segm: expected --protocol coco, got {args.protocol}")
    if args.skip_unknown:
        raise ParameterError("--iou-type segm: --skip-unknown is not supported with masks")
    for option, path, given in (
        ("--gt", args.gt, args.gt_format),
        ("--pred", args.pred, args.pred_format),
    ):
        if not Path(path).exists():
            raise FileNotFoundError(f"{option} {path}: no such file")
        fmt = detect_format(path) if given == "auto" else given
        if fmt != "coco":
            raise ValueError(
                f"--iou-type segm: expected COCO JSON for {option} (masks in 'segmentation'), "
                f"got {fmt} ({path})"
            )
    gt = read_coco_ground_truth(args.gt, keep_segmentation=True)
    missing = [i for i, seg in enumerate(gt.segmentation or ()) if seg is None]
    if missing:  # found now, before any diagnostic is printed
        raise DataFormatError(
            f"{args.gt}: annotations[{missing[0]}].segmentation: missing (--iou-type segm needs "
            f"a mask for every annotation; {len(missing)} lack one)"
        )
    return gt, read_coco_results(args.pred, gt, iou_type="segm")


def progress_enabled(args: argparse.Namespace) -> bool:
    """Bars only on a terminal and without ``--quiet`` or ``--no-progress``."""
    hidden = getattr(args, "quiet", False) or getattr(args, "no_progress", False)
    return not hidden and sys.stderr.isatty()


def add_progress_argument(parser: argparse.ArgumentParser) -> None:
    """``--no-progress``: hide the progress bar only (``--quiet`` hides the notes too)."""
    parser.add_argument(
        "--no-progress",
        action="store_true",
        help="no progress bar (notes, diagnostics and the exit status stay)",
    )


def input_paths(args: argparse.Namespace) -> list[str]:
    """Every file or folder the run reads (outputs may not land on them, even with --force).

    The reading options, the files a ``--pred`` glob expands to, and what the readers find by
    themselves next to a folder (``classes.txt``, ``data.yaml``, an ``images/`` sibling).
    """
    import glob

    from ioukit.io._build import companion_inputs

    names = ("gt", "pred", "classes", "images")
    given = [str(getattr(args, n)) for n in names if getattr(args, n, None) is not None]
    found: list[str] = []
    for path in given:
        found.append(path)
        if not Path(path).exists():  # a --pred glob (--workers): every file it names
            found.extend(glob.glob(path))
    for path in list(found):
        found.extend(str(p) for p in companion_inputs(path))
    return list(dict.fromkeys(found))


def check_output_folder(path: str | None, option: str) -> None:
    """Fail before any work when an output file's folder does not exist."""
    if path is None:
        return
    parent = Path(path).parent
    if not parent.is_dir():
        raise FileNotFoundError(f"{option} {path}: folder {parent} does not exist")
    if Path(path).is_dir():
        raise IsADirectoryError(f"{option} {path}: expected a file name, got a folder")


def sizes_note(gt: Any) -> str | None:
    """A note when YOLO/relative boxes stayed in normalized units (image sizes unknown)."""
    import numpy as np

    if (
        len(gt.images)
        and np.isnan(gt.images.widths).all()
        and len(gt)
        and float(np.max(gt.boxes)) <= 1.0
    ):
        return (
            "note: image sizes unknown, boxes kept in normalized units: IoU, VOC and YOLO AP are "
            "unaffected, COCO small/medium/large are not meaningful (pass --image-size or --images)"
        )
    return None


def sideways_note(args: argparse.Namespace, gt: Any) -> str | None:
    """A note naming the images whose EXIF orientation swapped their size (#23 item 9).

    Their labels were scaled by the shown size (height x width of the stored pixels), as
    Ultralytics' ``exif_size`` and OpenCV do; a label made on the stored pixels would not fit.
    """
    from ioukit.io._build import sideways_images
    from ioukit.io._yolo_folder import sibling_images

    if getattr(args, "image_size", None) is not None:
        return None
    folder = args.images
    if folder is None and Path(args.gt).is_dir():
        folder = sibling_images(Path(args.gt))
    if folder is None or not Path(folder).is_dir():
        return None
    found = sideways_images(Path(folder), gt.images.stems)
    if not found:
        return None
    shown = ", ".join(
        f"{escape_text(file.name)} (stored {w}x{h}, shown {h}x{w})" for file, w, h in found[:3]
    )
    more = f" and {len(found) - 3} more" if len(found) > 3 else ""
    return (
        f"note: {len(found)} image(s) turned sideways by their EXIF orientation: {shown}{more}; "
        "their shown size was used for the normalized labels, as Ultralytics and OpenCV do"
    )


def add_protocol_option_arguments(parser: argparse.ArgumentParser) -> None:
    """``--iou-thresholds``, ``--max-dets``, ``--area-ranges``, ``--class-agnostic``: the
    protocol options of :func:`ioukit.evaluate` (:mod:`ioukit.cli._options`)."""
    group = parser.add_argument_group(
        "protocol options (those of ioukit.evaluate; a protocol without the option refuses it)"
    )
    group.add_argument(
        "--iou-thresholds",
        type=float_list,
        metavar="LIST",
        help="IoU thresholds: 0.5,0.75 or START:STOP:STEP as pycocotools (0.5:0.95:0.05); "
        "voc07/voc10/dota/openimages take one",
    )
    group.add_argument(
        "--max-dets",
        type=int_list,
        metavar="LIST",
        help="detections kept per image: 1,10,100 (coco), one number (lvis, openimages)",
    )
    group.add_argument(
        "--area-ranges",
        type=area_ranges,
        metavar="SPEC",
        help="size ranges in pixels^2: small=0:1024,medium=1024:9216,large=9216:inf (coco); "
        "'all' is added when not given",
    )
    group.add_argument(
        "--class-agnostic",
        action="store_true",
        help="match predictions to ground truth of any class (pycocotools useCats=0; coco)",
    )


def _conf(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"expected a finite score threshold, got {text!r}")
    return value


def add_selection_arguments(parser: argparse.ArgumentParser) -> None:
    """``--classes-only``, ``--image-ids``, ``--conf`` (what is evaluated) and ``--sort``,
    ``--hide-empty``, ``--missing`` (how the per-class table shows it).

    See :mod:`ioukit.cli._select`."""
    group = parser.add_argument_group("selection and per-class table")
    group.add_argument(
        "--classes-only",
        type=lambda text: [n.strip() for n in text.split(",") if n.strip()],
        metavar="NAMES",
        help="evaluate only these classes (comma-separated names or ids; pycocotools catIds)",
    )
    group.add_argument(
        "--image-ids",
        metavar="FILE",
        help="evaluate only the images listed in FILE, one id or file stem a line ('-': "
        "stdin; pycocotools imgIds)",
    )
    group.add_argument(
        "--conf",
        type=_conf,
        metavar="X",
        help="keep predictions with score > X (Ultralytics' conf; default: all)",
    )
    group.add_argument(
        "--sort",
        metavar="KEY",
        help="sort the per-class table and CSV by a column (AP, num_gt, name...): numbers "
        "descending, names ascending; KEY:asc or KEY:desc to choose; classes without a value last",
    )
    group.add_argument(
        "--hide-empty",
        action="store_true",
        help="leave out classes with no ground truth and no prediction from the table and CSV",
    )
    group.add_argument(
        "--missing",
        choices=("null", "-1"),
        default="null",
        help="per-class value of a class without ground truth in JSON/CSV: null (default, an "
        "empty CSV cell) or pycocotools' -1",
    )


def register(subparsers: Any) -> None:
    """Add the ``eval`` subcommand."""
    parser = subparsers.add_parser(
        "eval",
        help="evaluate detections (COCO, VOC, YOLO, LVIS protocols)",
        description=_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_reading_arguments(parser)
    parser.add_argument(
        "--protocol",
        choices=protocol_names(),
        default="coco",
        metavar="NAME",
        help=f"one of {', '.join(protocol_names())} (default: coco). crowdpose: keypoints "
        "with CrowdPose's easy/medium/hard split; dota / mmrotate: oriented boxes; lvis: LVIS "
        "JSON (federated labels, APr/APc/APf); openimages: hierarchy-free Open Images AP",
    )
    parser.add_argument(
        "--fixed-ap",
        action="store_true",
        help="lvis: Fixed AP (no per-image cap, top 10 000 results per class)",
    )
    parser.add_argument(
        "--iou-type",
        choices=similarity_names(),
        default=None,
        metavar="NAME",
        help=f"one of {', '.join(similarity_names())} (default: the protocol's own: bbox; "
        "keypoints for crowdpose; rotated for dota/mmrotate). segm: mask IoU of COCO "
        "'segmentation' fields; keypoints: OKS of COCO keypoints or Ultralytics pose labels; "
        "rotated: exact IoU of oriented boxes (DOTA, YOLO OBB files); probiou: Ultralytics' "
        "Gaussian approximation",
    )
    add_protocol_option_arguments(parser)
    add_selection_arguments(parser)
    parser.add_argument(
        "--format",
        choices=("text", "json"),
        default="text",
        help="stdout: the text report (default) or the JSON document of --json",
    )
    from ioukit.cli._keypoints import add_keypoint_arguments

    add_keypoint_arguments(parser)
    parser.add_argument(
        "--json",
        metavar="OUT",
        help="write {protocol, stats, per_class, params}; '-': print it on stdout instead of "
        "the text report",
    )
    parser.add_argument("--csv", metavar="OUT", help="write the per-class table")
    parser.add_argument(
        "--plots", metavar="DIR", help="write PR, F1, confusion and IoU figures (PNG)"
    )
    parser.add_argument(
        "--html",
        metavar="OUT",
        help="write a self-contained HTML report (curves, confusion, calibration, label-error "
        "candidates, boxes; with --images: the images, found by file stem, embedded when "
        "Pillow is installed; COCO/VOC ground truth too)",
    )
    parser.add_argument(
        "--html-bootstrap",
        type=int,
        default=0,
        metavar="N",
        help="--html: bootstrap intervals of the stats and per-class AP from N replicates "
        "(default 0: none)",
    )
    parser.add_argument(
        "--skip-unknown",
        action="store_true",
        help="leave out predictions for images/classes the ground truth lacks (default: error)",
    )
    parser.add_argument(
        "--errors",
        action="store_true",
        help="TIDE error analysis at IoU 0.5 (protocol coco); with --plots also tide.png",
    )
    parser.add_argument(
        "--per-image", metavar="OUT", help="write per-image TP/FP/FN, AP, mean IoU (CSV)"
    )
    parser.add_argument(
        "--label-errors",
        metavar="OUT",
        help="write label-error candidates from the match (wrong label, missing annotation, "
        "loose box; ranked by score) as CSV",
    )
    parser.add_argument(
        "--all-plots",
        action="store_true",
        help="with --plots: a PR figure for every class (default: the worst and most frequent)",
    )
    parser.add_argument(
        "--force",
        action="store_true",
        help="overwrite existing --json/--csv files and write into a non-empty --plots folder",
    )
    parser.add_argument(
        "--no-fail",
        action="store_true",
        help="exit 0 even when a diagnostic is an error (default: exit 1 after the report)",
    )
    parser.add_argument(
        "--workers",
        type=int,
        metavar="N",
        help="evaluate prediction shards on a local Dask cluster of N worker processes: --pred is "
        "a glob ('shards/*.json'), a folder of shard files or one file; each image's predictions "
        "in one shard (needs ioukit[dask]; the protocols ioukit.evaluate_sharded supports)",
    )
    parser.add_argument(
        "--quiet",
        action="store_true",
        help="no progress bar, notes or diagnostics on stderr (an error-level diagnostic still "
        "gives exit status 1)",
    )
    add_progress_argument(parser)
    parser.set_defaults(run=run)


def shard_paths(pattern: str) -> list[str]:
    """The shard files ``--pred`` names with ``--workers``: a glob, a folder or one file.

    A folder gives its ``*.json`` and ``*.csv`` files; the order is sorted by name.
    """
    import glob

    path = Path(pattern)
    if path.is_dir():
        found = sorted(str(p) for p in path.iterdir() if p.suffix.lower() in (".json", ".csv"))
    elif path.exists():
        found = [str(path)]
    else:
        found = sorted(glob.glob(pattern))
    files = [f for f in found if Path(f).is_file()]
    if not files:
        raise FileNotFoundError(
            f"--pred {pattern}: no shard files (expected a glob, a folder or a file)"
        )
    return files


def evaluate_shards(args: argparse.Namespace, options: dict[str, Any]) -> Any:
    """``ioukit.evaluate_sharded`` on a local cluster of ``--workers`` processes."""
    from ioukit.distributed import evaluate_sharded

    if args.workers < 1:
        raise ParameterError(
            f"--workers: expected a positive number of processes, got {args.workers}"
        )
    for option, value in (
        ("--plots", args.plots),
        ("--per-image", args.per_image),
        ("--html", getattr(args, "html", None)),
        ("--classes-only", getattr(args, "classes_only", None)),
        ("--image-ids", getattr(args, "image_ids", None)),
        ("--conf", getattr(args, "conf", None)),
    ):
        if value is not None:
            raise ParameterError(
                f"{option}: not available with --workers (the predictions stay on the workers)"
            )
    if args.errors:
        raise ParameterError(
            "--errors: not available with --workers (the predictions stay on the workers)"
        )
    shards = shard_paths(args.pred)
    with _quiet_workers():
        return evaluate_sharded(
            args.gt,
            shards,
            workers=args.workers,
            protocol=args.protocol,
            iou_type=args.iou_type,
            **options,
        )


@contextlib.contextmanager
def _quiet_workers() -> Iterator[None]:
    """Dask workers started meanwhile log no "Compute Failed" record with a traceback.

    The error a task raised (a malformed shard, named with its place) reaches the client and
    becomes the command's one line; the worker's own log of it would print first (#23 item
    25). A ``DASK_LOGGING`` of the user's own is left alone.
    """
    try:
        import dask
    except ImportError:  # evaluate_sharded names the missing extra
        yield
        return
    if "DASK_LOGGING" in os.environ:
        yield
        return

    quiet = repr({"distributed.worker": "critical"})
    with dask.config.set({"distributed.nanny.pre-spawn-environ.DASK_LOGGING": quiet}):
        yield


@contextlib.contextmanager
def stdin_inputs(args: argparse.Namespace) -> Iterator[None]:
    """``--gt -`` or ``--pred -``: a COCO JSON file read from stdin into memory.

    The text is kept in a private temporary file (``.json``) for the command's duration, so
    the readers see a regular file of their own that no other process rewrites; the pipe
    itself is never mapped. One of the two at most.
    """
    dashes = [n for n in ("gt", "pred") if getattr(args, n, None) == "-"]
    if not dashes:
        yield
        return
    if len(dashes) > 1:
        raise ParameterError(
            "--gt, --pred: expected at most one of them to be '-' (stdin), got both"
        )
    import tempfile

    data = sys.stdin.buffer.read()
    if not data.strip():
        raise ParameterError(f"--{dashes[0]} -: expected COCO JSON on stdin, got nothing")
    with tempfile.TemporaryDirectory(prefix="ioukit-stdin-") as folder:
        path = Path(folder) / f"{dashes[0]}-stdin.json"
        path.write_bytes(data)
        setattr(args, dashes[0], str(path))
        try:
            yield
        finally:
            setattr(args, dashes[0], "-")


def run(args: argparse.Namespace) -> int:
    """Entry point of ``ioukit eval`` (``--gt -`` / ``--pred -``: stdin)."""
    with stdin_inputs(args):
        return _run(args)


def _run(args: argparse.Namespace) -> int:
    """``ioukit eval`` once the inputs are files."""
    from ioukit.analysis.diagnostics import diagnose
    from ioukit.cli._outputs import OutputPlan
    from ioukit.cli._report import error_findings, fail_status, say
    from ioukit.engine import evaluate
    from ioukit.io import Unknowns
    from ioukit.io._progress import enabled_progress
    from ioukit.report import csv_bytes, format_findings, json_text

    plan = OutputPlan(inputs=input_paths(args), force=args.force)
    # the JSON document on stdout instead of the text report: --format json, or --json -
    to_stdout = args.json == "-" or args.format == "json"
    json_path = None if args.json == "-" else args.json
    plan.add_file("--json", json_path)
    plan.add_file("--csv", args.csv)
    plan.add_folder("--plots", args.plots)
    per_image_path = getattr(args, "per_image", None)
    plan.add_file("--per-image", per_image_path)
    plan.add_file("--html", getattr(args, "html", None))
    plan.add_file("--label-errors", getattr(args, "label_errors", None))
    if getattr(args, "errors", False) and args.protocol != "coco":
        raise ParameterError(f"--errors: expected --protocol coco, got --protocol {args.protocol}")
    # --plots with oriented boxes: curves, confusion matrix and IoU histogram read the
    # evaluation's own match or rematch with its similarity (EvaluationResult._similarity)
    if args.plots is not None:
        from ioukit.plots import require_matplotlib

        require_matplotlib()  # a missing matplotlib fails now, not after the evaluation
    unknowns = Unknowns() if args.skip_unknown else None
    lvis_gt: Any = None
    if args.fixed_ap and args.protocol != "lvis":
        raise ParameterError(f"--fixed-ap: expected --protocol lvis, got {args.protocol}")
    if args.protocol == "lvis" and args.plots is not None:  # the curves would match again
        raise ParameterError(
            "--plots: not available with --protocol lvis yet (the figures would match again "
            "without LVIS's federated filter); --per-image reads the LVIS match"
        )
    iou_type = args.iou_type or protocol_iou_types(args.protocol)[0]
    args.iou_type = iou_type  # the readers below ask the namespace
    keypoints = similarity_input(iou_type) == "keypoints"
    # the evaluation flags as the protocol's own options, refused by the protocol as
    # ioukit.evaluate would refuse them (before any file is read)
    options: dict[str, Any] = protocol_options(args, args.protocol, iou_type)
    if args.workers is not None:
        return _report_sharded(args, plan, evaluate_shards(args, options), to_stdout)
    with enabled_progress(progress_enabled(args)):
        if args.protocol == "lvis":  # LVIS JSON: federated labels and frequency groups
            from ioukit.io.lvis import read_lvis_ground_truth, read_lvis_results

            if args.skip_unknown:
                raise ParameterError("--protocol lvis: --skip-unknown is not supported")
            segm = similarity_input(iou_type) == "segmentation"
            lvis_gt = read_lvis_ground_truth(args.gt, keep_segmentation=segm)
            gt = lvis_gt.dataset
            pred = read_lvis_results(args.pred, lvis_gt, iou_type=iou_type)
        elif keypoints:
            from ioukit.cli._keypoints import keypoint_options, read_keypoint_args

            options.update(keypoint_options(args))
            gt, pred, extra = read_keypoint_args(args)
            options.update(extra)
        elif args.sigmas is not None or args.oks_area is not None:
            raise ParameterError("--sigmas, --oks-area: need --iou-type keypoints")
        elif similarity_input(iou_type) == "segmentation":
            gt, pred = read_segm_args(args)
        else:
            gt, pred = read_pair_args(args, unknowns=unknowns)
    gt, pred = _selected(args, gt, pred, lvis=lvis_gt is not None)
    if lvis_gt is not None:
        result = evaluate(
            lvis_gt, pred, protocol="lvis", iou_type=iou_type, fixed_ap=args.fixed_ap, **options
        )
    else:
        result = evaluate(gt, pred, protocol=args.protocol, iou_type=iou_type, **options)
    note = sizes_note(gt)
    if note and not args.quiet:
        print(note, file=sys.stderr)
    # the diagnostics read the evaluation's own box match (no second matching); LVIS's
    # outcome covers only the results it keeps, so its checks match on their own, with
    # LVIS's cap of 300 per image (Fixed AP: none). --quiet hides them, not the exit status
    # they give (#23 item 24)
    lvis = lvis_gt is not None
    outcome = result.outcome if iou_type == "bbox" and not lvis else None
    cap = {"max_dets": 10**9 if args.fixed_ap else 300} if lvis else {}
    findings = tuple(diagnose(gt, pred, unknowns=unknowns, outcome=outcome, **cap))
    if findings and not args.quiet:
        print(format_findings(findings), file=sys.stderr)
    analysis = per_image_table = None
    if getattr(args, "errors", False):
        from ioukit.analysis.errors import error_analysis

        analysis = error_analysis(result)  # reads the evaluation's own match
    if per_image_path is not None:
        from ioukit.analysis.per_image import per_image

        per_image_table = per_image(result)
    candidates = None
    if getattr(args, "label_errors", None) is not None:  # read from the evaluation's match
        candidates = result.label_errors(n=None)
    files: list[Any] = []
    document_text = None
    if args.json or to_stdout:
        document = result.to_dict()
        document["per_class"] = missing_as(document["per_class"], _missing(args))
        if analysis is not None:
            document["errors"] = analysis.to_dict()
        if per_image_table is not None:
            document["worst_images"] = per_image_table.worst(10)
        if (calibrated := result.calibration(if_available=True)) is not None:
            document["calibration"] = calibrated.to_dict()
        document_text = json_text(document)
    with plan:
        if document_text is not None and json_path is not None:
            plan.write_text("--json", document_text)
        if args.csv:
            plan.write_bytes("--csv", csv_bytes(_table(args, result.per_class, csv=True)))
        if per_image_table is not None:
            plan.write_bytes("--per-image", csv_bytes(per_image_table.rows()))
        if candidates is not None:
            plan.write_bytes("--label-errors", candidates.csv_bytes())
        if getattr(args, "html", None):
            from ioukit.report.html import html_text

            page = html_text(
                result,
                images=args.images,
                output=args.html,
                errors=args.errors,
                bootstrap=args.html_bootstrap,
            )
            plan.write_text("--html", page)
        if args.plots:
            from ioukit.plots import write_plots

            folder = plan.stage_folder("--plots")
            files = write_plots(result, folder, all_classes=args.all_plots)
            if analysis is not None:
                analysis.plot(folder / "tide.png")
                files = [*files, folder / "tide.png"]
    notes = "" if args.quiet else format_findings(result.trust_notes())  # provenance, floors
    if to_stdout:
        assert document_text is not None
        say(document_text.rstrip("\n"))
        if notes:
            print(notes, file=sys.stderr)
        if args.plots and not args.quiet:
            print(f"wrote {len(files)} figures to {escape_text(args.plots)}", file=sys.stderr)
        return fail_status(error_findings(findings), no_fail=args.no_fail, command="eval")
    say(_text_report(args, result, gt))
    if notes:
        print(notes, file=sys.stderr)
    if keypoints and result.outcome is not None and len(result.outcome.thresholds):
        from ioukit.analysis.keypoints import keypoint_errors

        threshold = float(result.outcome.thresholds[0])
        say(f"\nper keypoint, pairs matched at OKS {threshold:g}:")
        say(keypoint_errors(result, threshold=threshold).table())
    if analysis is not None:
        say("")
        say(analysis.summary())
    if per_image_table is not None:
        say("")
        say("worst images (AP at IoU 0.5):")
        for row in per_image_table.worst(5):
            say(
                f"  {row['file_name']}  AP {row['ap']:.3f}  TP {row['tp']}  FP {row['fp']}  "
                f"FN {row['fn']}"
            )
    if args.plots and not args.quiet:
        print(f"wrote {len(files)} figures to {escape_text(args.plots)}", file=sys.stderr)
    return fail_status(error_findings(findings), no_fail=args.no_fail, command="eval")


def _report_sharded(args: argparse.Namespace, plan: Any, result: Any, to_stdout: bool) -> int:
    """Outputs and report of a sharded evaluation (no diagnostics: the predictions stayed on
    the workers)."""
    from ioukit.cli._report import say
    from ioukit.report import csv_bytes, json_text, per_class_table

    with plan:
        if args.json and args.json != "-":
            plan.write_text("--json", json_text(_document(args, result)))
        if args.csv:
            plan.write_bytes("--csv", csv_bytes(_table(args, result.per_class, csv=True)))
    if not args.quiet:
        print(
            "note: --workers: diagnostics are skipped (the predictions stay on the workers)",
            file=sys.stderr,
        )
    if to_stdout:
        say(json_text(_document(args, result)).rstrip("\n"))
        return 0
    say(result.summary())
    say("")
    say(per_class_table(_table(args, result.per_class)))
    return 0


_YOLO_VAL = ("precision", "recall", "mAP50", "mAP50-95")


def _text_report(args: argparse.Namespace, result: Any, gt: Any) -> str:
    """The summary and the per-class table; a summary in ``yolo val``'s terms (precision,
    recall, mAP50, mAP50-95) prints as ``yolo val``'s table (Class Images Instances P R
    mAP50 mAP50-95), then the figures it has beyond them."""
    rows = _table(args, result.per_class)
    stats = result.stats
    if not all(k in stats for k in _YOLO_VAL) or any("AP50-95" not in r for r in rows):
        return f"{result.summary()}\n\n{per_class_table(rows)}"
    pairs = np.unique(np.stack([gt.image_index, gt.category_id]), axis=1)
    ids, counts = np.unique(pairs[1], return_counts=True)
    table = yolo_val_table(
        rows,
        stats,
        images=len(gt.images),
        images_per_class=dict(zip(ids.tolist(), counts.tolist(), strict=True)),
    )
    rest = "  ".join(f"{k} {float(v):.3f}" for k, v in stats.items() if k not in _YOLO_VAL)
    return table + (f"\n{rest}" if rest else "")


def _missing(args: argparse.Namespace) -> float | None:
    return -1.0 if getattr(args, "missing", "null") == "-1" else None


def _document(args: argparse.Namespace, result: Any) -> dict[str, Any]:
    document: dict[str, Any] = result.to_dict()
    document["per_class"] = missing_as(document["per_class"], _missing(args))
    return document


def _table(args: argparse.Namespace, rows: Any, *, csv: bool = False) -> list[dict[str, Any]]:
    """The per-class rows of the text table (``csv``: of the CSV) after ``--sort``,
    ``--hide-empty`` and (CSV) ``--missing``."""
    shown = table_rows(list(rows), sort=args.sort, hide_empty=args.hide_empty)
    return missing_as(shown, _missing(args)) if csv else shown


def _selected(args: argparse.Namespace, gt: Any, pred: Any, *, lvis: bool) -> tuple[Any, Any]:
    """``gt`` and ``pred`` restricted by ``--classes-only``, ``--image-ids`` and ``--conf``."""
    asked = [
        (flag, value)
        for flag, value in (
            ("--classes-only", args.classes_only),
            ("--image-ids", args.image_ids),
            ("--conf", args.conf),
        )
        if value is not None
    ]
    if not asked:
        return gt, pred
    if lvis:
        raise ParameterError(
            f"{asked[0][0]}: not available with --protocol lvis (its federated labels are "
            "per image and class)"
        )
    rows = None if args.image_ids is None else read_image_ids(args.image_ids, gt.images)
    options = {"classes": args.classes_only, "image_rows": rows}
    return select(gt, **options), select(pred, **options, conf=args.conf)
