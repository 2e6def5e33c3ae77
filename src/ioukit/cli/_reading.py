"""Reading a ground truth / predictions pair from the command line's arguments: the options
``eval``, ``check`` and ``convert`` share (``--gt``, ``--pred``, the formats, image sizes,
class names), the notes about what was read, and ``-`` for stdin."""

from __future__ import annotations

import argparse
import contextlib
import glob
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from ioukit.errors import DataFormatError, ParameterError
from ioukit.evaluation.registry import protocol_has, protocol_iou_types, similarity_input
from ioukit.io import Unknowns, ambiguous_txt, detect_format, read_ground_truth, read_predictions
from ioukit.io._build import companion_inputs, find_class_file, sideways_images
from ioukit.io._ultralytics_json import read_yolo_val_json
from ioukit.io._yolo_folder import pixel_index_line, sibling_images
from ioukit.io.coco import read_coco_ground_truth, read_coco_results
from ioukit.io.formats import file_format, file_formats
from ioukit.report import escape_text

__all__ = [
    "FORMAT_CHOICES",
    "add_progress_argument",
    "add_reading_arguments",
    "check_output_folder",
    "input_paths",
    "prediction_format",
    "progress_enabled",
    "read_ground_truth_arg",
    "read_pair_args",
    "read_predictions_arg",
    "read_segm_args",
    "refuse_mixed_formats",
    "sideways_note",
    "sizes_note",
    "stdin_inputs",
]

FORMAT_CHOICES = ("auto", *file_formats())


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
    images_dir = args.images
    if images_dir is not None and getattr(args, "html", None):
        # COCO and VOC files give their own sizes: --images is then the report's pictures
        try:
            fmt = args.gt_format if args.gt_format != "auto" else detect_format(args.gt)
        except (DataFormatError, OSError):
            fmt = None  # the read below names the problem
        if fmt is not None and file_format(fmt).sizes_in_file:
            images_dir = None
    try:
        return read_ground_truth(
            args.gt,
            format=args.gt_format,
            image_size=args.image_size,
            images_dir=images_dir,
            classes=args.classes,
            fmt=args.txt_box_format,
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
    if file_format(pred_format).pixel_twin == gt_format:  # txt labels, YOLO predictions
        option, folder, other = "--gt", gt, f"--pred {escape_text(str(pred))}"
        normalized = pred_format
    elif file_format(gt_format).pixel_twin == pred_format:
        option, folder, other = "--pred", pred, f"--gt {escape_text(str(gt))}"
        normalized = gt_format
    else:
        return
    label = file_format(normalized).label
    evidence = pixel_index_line(folder)
    if evidence is None:
        return
    file, line, value = evidence
    raise DataFormatError(
        f"{option} {escape_text(str(folder))}: mixed formats: YOLO-style lines in pixels "
        f"({escape_text(str(file))}: line {line}: a class index, then {value:g} > 1) while "
        f"{other} is normalized {label}; {label} divides by the image size: normalize these "
        "labels, "
        f"or pass --gt-format and --pred-format if they are plain txt (class x y w h in "
        "pixels; relative txt predictions: class conf cx cy w h)"
    )


def read_predictions_arg(args: argparse.Namespace, gt: Any, *, unknowns: Any = None) -> Any:
    """The predictions named by ``--pred`` read against ``gt`` (mixed YOLO formats refused)."""
    refuse_mixed_formats(args)

    return read_predictions(
        args.pred,
        gt,
        format=prediction_format(args),
        classes=args.classes,
        fmt=args.txt_box_format,
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
    gt = read_ground_truth_arg(args)
    yolo_val = _yolo_val_json(args, gt, unknowns)
    if yolo_val is not None:
        return gt, yolo_val
    protocol = getattr(args, "protocol", None)
    yolo_pair = (
        protocol is not None
        and protocol_has(protocol, "unlisted_classes")
        and unknowns is None
        and args.classes is None
        and Path(args.gt).is_dir()
        and Path(args.pred).is_dir()
        and _indexed(_gt_format(args))
        and _indexed(prediction_format(args))
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


def _gt_format(args: argparse.Namespace) -> str:
    """``--gt-format``, detected from the path when auto."""
    return str(args.gt_format if args.gt_format != "auto" else detect_format(args.gt))


def _indexed(fmt: str) -> bool:
    """Whether format ``fmt`` labels classes by index, its class list optional (YOLO); False
    for ``"auto"`` (a folder :func:`prediction_format` could not resolve)."""
    return fmt != "auto" and not file_format(fmt).names_classes


def _yolo_val_json(args: argparse.Namespace, gt: Any, unknowns: Any) -> Any:
    """Predictions of a ``yolo val save_json=True`` file against its YOLO labels, or None.

    Such a file names images by file stem and classes by index + 1 (#23 item 19); a note
    says it was read so. Any other JSON file: None (the COCO reader takes it).
    """
    pred = Path(args.pred)
    if pred.suffix.lower() != ".json" or not Path(args.gt).is_dir() or not pred.is_file():
        return None
    val_json = file_format(_gt_format(args)).val_json  # labels yolo val writes a JSON for
    if val_json is None or args.pred_format not in ("auto", val_json):
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
    if args.pred_format != "auto" or not Path(args.pred).is_dir() or not ambiguous_txt(args.pred):
        return args.pred_format
    gt_format = _gt_format(args)
    if gt_format in _twin_formats():  # YOLO or plain txt ground truth: the same reading
        return gt_format
    if not getattr(args, "quiet", False):
        print(
            f"note: --pred {escape_text(str(args.pred))} read as YOLO (class cx cy w h conf); "
            "pass --pred-format txt if its lines are plain txt (class conf cx cy w h)",
            file=sys.stderr,
        )
    return "yolo"


def _twin_formats() -> set[str]:
    """The formats whose lines read alike in normalized units (YOLO) and pixels (plain txt)."""
    twins: set[str] = set()
    for name in file_formats():
        twin = file_format(name).pixel_twin
        if twin is not None:
            twins |= {name, twin}
    return twins


def read_segm_args(args: argparse.Namespace) -> tuple[Any, Any]:
    """Ground truth and predictions with their masks (``--iou-type segm``: COCO JSON only)."""
    if not any(similarity_input(t) == "segmentation" for t in protocol_iou_types(args.protocol)):
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
        if not file_format(fmt).holds_masks:
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
    names = ("gt", "pred", "classes", "images", "gt_masks", "pred_masks")
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


@contextlib.contextmanager
def stdin_inputs(args: argparse.Namespace) -> Iterator[None]:
    """``--gt -`` or ``--pred -``: a COCO JSON file read from stdin into memory.

    The text is kept in a private temporary file (``.json``) for the command's duration, so
    the readers see a regular file of their own that no other process rewrites; the pipe
    itself is never mapped. One of ``--gt``, ``--pred`` and ``--image-ids`` at most reads
    stdin.
    """
    readers = [f"--{n.replace('_', '-')}" for n in ("gt", "pred", "image_ids")]
    given = [o for o in readers if getattr(args, o[2:].replace("-", "_"), None) == "-"]
    if len(given) > 1:  # one stdin: the first reader would take it all
        raise ParameterError(
            f"{', '.join(given)}: expected at most one of them to be '-' (stdin), got "
            f"{'both' if len(given) == 2 else len(given)}"
        )
    dashes = [n for n in ("gt", "pred") if getattr(args, n, None) == "-"]
    if not dashes:
        yield
        return
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
