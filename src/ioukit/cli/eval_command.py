"""``ioukit eval --gt PATH --pred PATH``: read, diagnose, evaluate, report (text, JSON, CSV, "
"plots)."""

from __future__ import annotations

import argparse
import contextlib
import glob
import math
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from ioukit.analysis.diagnostics import diagnose
from ioukit.cli import add_command
from ioukit.cli._keypoints import add_keypoint_arguments, keypoint_options, read_keypoint_args
from ioukit.cli._options import (
    area_ranges,
    finite_number,
    float_list,
    int_list,
    name_list,
    protocol_options,
)
from ioukit.cli._outputs import OutputPlan, stdout_choice
from ioukit.cli._reading import (
    add_progress_argument,
    add_reading_arguments,
    input_paths,
    progress_enabled,
    read_pair_args,
    read_predictions_arg,
    read_segm_args,
    sizes_note,
    stdin_inputs,
)
from ioukit.cli._report import error_findings, fail_status, say, yolo_val_table
from ioukit.cli._select import missing_as, read_image_ids, select, table_rows
from ioukit.engine import evaluate
from ioukit.errors import ParameterError
from ioukit.evaluation.registry import (
    make_protocol,
    protocol_has,
    protocol_iou_types,
    protocol_names,
    protocol_takes,
    similarity_input,
    similarity_names,
)
from ioukit.io import Unknowns
from ioukit.io._progress import enabled_progress
from ioukit.io.lvis import read_lvis_ground_truth, read_lvis_results
from ioukit.report import csv_bytes, escape_text, format_findings, json_text, per_class_table

__all__ = [
    "add_protocol_option_arguments",
    "add_selection_arguments",
    "evaluate_shards",
    "register",
    "run",
    "shard_paths",
    "stdout_output",
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
    group.add_argument(
        "--dilation-ratio",
        type=finite_number,
        metavar="X",
        help="--iou-type boundary: the boundary's width as a fraction of the image diagonal "
        "(default 0.02, as boundary-iou-api)",
    )
    group.add_argument(
        "--compat",
        metavar="TOOL",
        help="reproduce another tool where the protocol has the switch: --iou-type boundary: "
        "faster_coco_eval or ultrafast (default: boundary-iou-api); coco: pycocotools; "
        "dota/mmrotate: devkit",
    )
    group.add_argument(
        "--setups",
        type=name_list,
        metavar="NAMES",
        help="caltech/citypersons/crowdhuman: the setups evaluated (e.g. Reasonable,All; "
        "default: the protocol's own list)",
    )
    group.add_argument(
        "--sampling",
        metavar="HOW",
        help="caltech/citypersons/crowdhuman: how MR-2 samples the curve: pedestron, caltech "
        "or brambox (default: the protocol's reference)",
    )
    group.add_argument(
        "--range-area",
        metavar="WHICH",
        help="--iou-type keypoints: area ranges by the OKS scale ('oks', default; xtcocotools) "
        "or the annotation's area ('annotation'; faster-coco-eval)",
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
    parser = add_command(subparsers, "eval", _HELP)
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
    masks = parser.add_argument_group(
        "files of their own (--protocol panoptic: COCO panoptic JSON files and their PNGs)"
    )
    masks.add_argument(
        "--gt-masks",
        metavar="DIR",
        help="folder of the ground truth's PNG id maps (default: the --gt path without .json, "
        "as panopticapi)",
    )
    masks.add_argument(
        "--pred-masks",
        metavar="DIR",
        help="folder of the predictions' PNG id maps (default: the --pred path without .json)",
    )
    add_protocol_option_arguments(parser)
    add_selection_arguments(parser)
    parser.add_argument(
        "--format",
        choices=("text", "json"),
        default="text",
        help="stdout: the text report (default) or the JSON document of --json",
    )
    add_keypoint_arguments(parser)
    parser.add_argument(
        "--json",
        metavar="OUT",
        help="write {protocol, stats, per_class, params}; '-': print it on stdout instead of "
        "the text report",
    )
    parser.add_argument(
        "--csv",
        metavar="OUT",
        help="write the per-class table; '-': print it on stdout instead of the text report",
    )
    parser.add_argument(
        "--plots", metavar="DIR", help="write PR, F1, confusion and IoU figures (PNG)"
    )
    parser.add_argument(
        "--html",
        metavar="OUT",
        help="write a self-contained HTML report (curves, confusion, calibration, label-error "
        "candidates, boxes; with --images: the images, found by file stem, embedded when "
        "Pillow is installed; COCO/VOC ground truth too); '-': print it on stdout instead of "
        "the text report",
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
        "--per-image",
        metavar="OUT",
        help="write per-image TP/FP/FN, AP, mean IoU (CSV); '-': print it on stdout instead of "
        "the text report",
    )
    parser.add_argument(
        "--label-errors",
        metavar="OUT",
        help="write label-error candidates from the match (wrong label, missing annotation, "
        "loose box; ranked by score) as CSV; '-': print them on stdout instead of the text "
        "report",
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
        ("--label-errors", getattr(args, "label_errors", None)),
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


def run(args: argparse.Namespace) -> int:
    """Entry point of ``ioukit eval`` (``--gt -`` / ``--pred -``: stdin)."""
    with stdin_inputs(args):
        return _run(args)


def _run(args: argparse.Namespace) -> int:
    """``ioukit eval`` once the inputs are files."""
    plan = OutputPlan(inputs=input_paths(args), force=args.force)
    # one output on stdout instead of the text report: --format json or --json -, --csv -,
    # --per-image -
    on_stdout = stdout_output(args)
    to_stdout = on_stdout in ("--json", "--format json")
    json_path = _file(args.json)
    csv_path = _file(args.csv)
    plan.add_file("--json", json_path)
    plan.add_file("--csv", csv_path)
    plan.add_folder("--plots", args.plots)
    per_image_path = getattr(args, "per_image", None)
    plan.add_file("--per-image", _file(per_image_path))
    html_path = _file(getattr(args, "html", None))
    plan.add_file("--html", html_path)
    plan.add_file("--label-errors", _file(getattr(args, "label_errors", None)))
    bootstrap = getattr(args, "html_bootstrap", 0)
    if bootstrap < 0:
        raise ParameterError(
            f"--html-bootstrap {bootstrap}: expected a number of replicates >= 0, got {bootstrap}"
        )
    if bootstrap and getattr(args, "html", None) is None:
        raise ParameterError(
            f"--html-bootstrap {bootstrap}: expected --html too (the intervals are a section "
            "of the HTML report), got no --html"
        )
    if protocol_has(args.protocol, "own_files"):  # panoptic: JSON files and PNG folders
        return _run_own_files(args, plan, on_stdout)
    for option, value in (("--gt-masks", args.gt_masks), ("--pred-masks", args.pred_masks)):
        if value is not None:
            raise ParameterError(
                f"{option}: expected --protocol {_having('own_files')} (its PNG folders), got "
                f"--protocol {args.protocol}"
            )
    if getattr(args, "errors", False) and not protocol_has(args.protocol, "error_analysis"):
        raise ParameterError(
            f"--errors: expected --protocol {_having('error_analysis')}, got --protocol "
            f"{args.protocol}"
        )
    # --plots with oriented boxes: curves, confusion matrix and IoU histogram read the
    # evaluation's own match or rematch with its similarity (EvaluationResult._similarity)
    if args.plots is not None:
        from ioukit.plots import require_matplotlib

        require_matplotlib()  # a missing matplotlib fails now, not after the evaluation
    unknowns = Unknowns() if args.skip_unknown else None
    lvis_gt: Any = None
    if args.fixed_ap and not protocol_takes(args.protocol, "fixed_ap"):
        raise ParameterError(
            f"--fixed-ap: expected --protocol {_taking('fixed_ap')}, got {args.protocol}"
        )
    federated = protocol_has(args.protocol, "federated")
    if federated and args.plots is not None:  # the curves would match again
        raise ParameterError(
            f"--plots: not available with --protocol {args.protocol} yet (the figures would "
            "match again without its federated filter); --per-image reads its match"
        )
    iou_type = args.iou_type or protocol_iou_types(args.protocol)[0]
    args.iou_type = iou_type  # the readers below ask the namespace
    # the evaluation flags as the protocol's own options, refused by the protocol as
    # ioukit.evaluate would refuse them (before any file is read)
    options: dict[str, Any] = protocol_options(args, args.protocol, iou_type)
    if args.workers is not None:
        return _report_sharded(args, plan, evaluate_shards(args, options), on_stdout)
    reader = _READERS.get(similarity_input(iou_type) or "", _read_boxes)
    keypoints = reader is _read_keypoints
    with enabled_progress(progress_enabled(args)):
        if federated:  # LVIS JSON: federated labels and frequency groups
            if args.skip_unknown:
                raise ParameterError(f"--protocol {args.protocol}: --skip-unknown is not supported")
            segm = similarity_input(iou_type) == "segmentation"
            lvis_gt = read_lvis_ground_truth(args.gt, keep_segmentation=segm)
            gt = lvis_gt.dataset
            pred = read_lvis_results(args.pred, lvis_gt, iou_type=iou_type)
        else:
            gt, pred = reader(args, options, unknowns)
    gt, pred = _selected(args, gt, pred, lvis=lvis_gt is not None)
    if lvis_gt is not None:
        result = evaluate(
            lvis_gt, pred, protocol="lvis", iou_type=iou_type, fixed_ap=args.fixed_ap, **options
        )
    else:
        result = evaluate(gt, pred, protocol=args.protocol, iou_type=iou_type, **options)
    _table(args, result.per_class)  # a bad --sort is refused before any note or output
    note = sizes_note(gt)
    if note and not args.quiet:
        print(note, file=sys.stderr)
    # the diagnostics read the evaluation's own box match (no second matching); LVIS's
    # outcome covers only the results it keeps, so its checks match on their own, with
    # LVIS's cap of 300 per image (Fixed AP: none). --quiet hides them, not the exit status
    # they give (#23 item 24)
    lvis = lvis_gt is not None
    outcome = result.outcome if similarity_input(iou_type) == "boxes" and not lvis else None
    cap = {"max_dets": 10**9 if args.fixed_ap else 300} if lvis else {}
    findings = tuple(diagnose(gt, pred, unknowns=unknowns, outcome=outcome, **cap))
    if findings and not args.quiet:
        print(format_findings(findings), file=sys.stderr)
    analysis = per_image_table = None
    if getattr(args, "errors", False):
        analysis = result.error_analysis()  # reads the evaluation's own match
    if per_image_path is not None:
        per_image_table = result.per_image()
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
    page = ""  # the --html page
    with plan:
        if document_text is not None and json_path is not None:
            plan.write_text("--json", document_text)
        if csv_path is not None:
            plan.write_bytes("--csv", csv_bytes(_table(args, result.per_class, csv=True)))
        if per_image_table is not None and per_image_path != "-":
            plan.write_bytes("--per-image", csv_bytes(per_image_table.rows()))
        if candidates is not None and plan.wants("--label-errors"):
            plan.write_bytes("--label-errors", candidates.csv_bytes())
        if getattr(args, "html", None):
            from ioukit.report.html import html_text

            page = html_text(
                result,
                images=args.images,
                output=html_path,
                errors=args.errors,
                bootstrap=args.html_bootstrap,
            )
            if html_path is not None:
                plan.write_text("--html", page)
        if args.plots:
            from ioukit.plots import write_plots

            folder = plan.stage_folder("--plots")
            files = write_plots(result, folder, all_classes=args.all_plots)
            if analysis is not None:
                analysis.plot(folder / "tide.png")
                files = [*files, folder / "tide.png"]
    notes = "" if args.quiet else format_findings(result.trust_notes())  # provenance, floors
    if on_stdout is not None:
        if to_stdout:
            assert document_text is not None
            say(document_text.rstrip("\n"))
        elif on_stdout == "--csv":
            say(csv_bytes(_table(args, result.per_class, csv=True)).decode("utf-8").rstrip("\n"))
        elif on_stdout == "--html":
            say(page.rstrip("\n"))
        elif on_stdout == "--label-errors":
            assert candidates is not None
            say(candidates.csv_bytes().decode("utf-8").rstrip("\n"))
        else:
            assert per_image_table is not None
            say(csv_bytes(per_image_table.rows()).decode("utf-8").rstrip("\n"))
        if notes:
            print(notes, file=sys.stderr)
        if args.plots and not args.quiet:
            print(f"wrote {len(files)} figures to {escape_text(args.plots)}", file=sys.stderr)
        return fail_status(error_findings(findings), no_fail=args.no_fail, command="eval")
    say(_text_report(args, result, gt))
    if notes:
        print(notes, file=sys.stderr)
    if keypoints and result.outcome is not None and len(result.outcome.thresholds):
        from ioukit.analysis.keypoints import keypoint_errors  # only for keypoints

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


_NOT_WITH_OWN_FILES = (
    ("--plots", "plots"),
    ("--html", "html"),
    ("--errors", "errors"),
    ("--per-image", "per_image"),
    ("--label-errors", "label_errors"),
    ("--workers", "workers"),
    ("--skip-unknown", "skip_unknown"),
    ("--classes-only", "classes_only"),
    ("--image-ids", "image_ids"),
    ("--conf", "conf"),
    ("--image-size", "image_size"),
    ("--images", "images"),
    ("--classes", "classes"),
    ("--txt-box-format", "txt_box_format"),
    ("--voc-one-based", "voc_one_based"),
    ("--fixed-ap", "fixed_ap"),
    ("--sigmas", "sigmas"),
    ("--oks-area", "oks_area"),
    ("--html-bootstrap", "html_bootstrap"),
    ("--all-plots", "all_plots"),
)
"""Options of the Dataset route that a protocol evaluating its own files has no use for."""


def _run_own_files(args: argparse.Namespace, plan: OutputPlan, on_stdout: str | None) -> int:
    """``--protocol panoptic``: the protocol evaluates its files (each side's JSON and PNG
    folder) and gives its rows and JSON document; the same outputs as the other protocols
    (text report, ``--json``, ``--csv``, ``--format json``, ``-`` for stdout)."""
    for flag, dest in _NOT_WITH_OWN_FILES:
        if getattr(args, dest, None) not in (None, False, 0):
            raise ParameterError(
                f"{flag}: not available with --protocol {args.protocol} (it evaluates its own "
                "files: --gt, --pred, --gt-masks, --pred-masks)"
            )
    for flag, value in (("--gt-format", args.gt_format), ("--pred-format", args.pred_format)):
        if value != "auto":
            raise ParameterError(
                f"{flag} {value}: not available with --protocol {args.protocol} (it reads COCO "
                "panoptic JSON files and their PNGs)"
            )
    iou_type = args.iou_type or protocol_iou_types(args.protocol)[0]
    options = protocol_options(args, args.protocol, iou_type)
    protocol = make_protocol(args.protocol, iou_type=iou_type, **options)
    result = protocol.evaluate_files(
        args.gt, args.pred, gt_folder=args.gt_masks, pred_folder=args.pred_masks
    )
    document = protocol.document(result)
    rows = protocol.rows(result)
    if args.hide_empty:  # a category without a TP, FP or FN
        rows = [r for r in rows if r.get("tp") or r.get("fp") or r.get("fn")]
    shown = table_rows(rows, sort=args.sort)
    text = json_text({**document, "per_class": shown})
    with plan:
        if _file(args.json) is not None:
            plan.write_text("--json", text)
        if _file(args.csv) is not None:
            plan.write_bytes("--csv", csv_bytes(shown))
    if on_stdout == "--csv":
        say(csv_bytes(shown).decode("utf-8").rstrip("\n"))
    elif on_stdout is not None:
        say(text.rstrip("\n"))
    else:
        say(f"{result.summary()}\n\n{per_class_table(shown)}")
    return 0


def _read_keypoints(
    args: argparse.Namespace, options: dict[str, Any], unknowns: Any
) -> tuple[Any, Any]:
    """Keypoint ground truth and predictions (COCO keypoints JSON, Ultralytics pose labels);
    ``options`` gains the keypoint options (sigmas, OKS area, CrowdPose's crowd index)."""
    options.update(keypoint_options(args))
    gt, pred, extra = read_keypoint_args(args)
    options.update(extra)
    return gt, pred


def _no_keypoint_options(args: argparse.Namespace) -> None:
    if args.sigmas is not None or args.oks_area is not None:
        raise ParameterError(f"--sigmas, --oks-area: need --iou-type {_reading('keypoints')}")


def _read_masks(
    args: argparse.Namespace, options: dict[str, Any], unknowns: Any
) -> tuple[Any, Any]:
    """Ground truth and predictions with their masks (COCO JSON ``segmentation``)."""
    _no_keypoint_options(args)
    return read_segm_args(args)


def _read_boxes(
    args: argparse.Namespace, options: dict[str, Any], unknowns: Any
) -> tuple[Any, Any]:
    """Boxes (axis-aligned or oriented) in any file format; a protocol with its own ground
    truth reader (CityPersons' heights and visibilities) reads ``--gt`` with it, as
    :func:`ioukit.evaluate` does."""
    _no_keypoint_options(args)
    protocol = make_protocol(args.protocol, iou_type=args.iou_type, **options)
    own_reader = getattr(protocol, "read_ground_truth", None)
    if own_reader is None:
        return read_pair_args(args, unknowns=unknowns)
    gt = own_reader(args.gt)
    return gt, read_predictions_arg(args, gt, unknowns=unknowns)


_READERS = {"keypoints": _read_keypoints, "segmentation": _read_masks}
"""The reader of each Dataset column a similarity compares (``similarity_input``); the
others (boxes, oriented boxes) are read by :func:`_read_boxes`."""


def _reading(column: str) -> str:
    """The similarities that compare Dataset column ``column``, for messages."""
    return " or ".join(n for n in similarity_names() if similarity_input(n) == column)


def _having(trait: str) -> str:
    """The protocols that declare ``trait``, for messages."""
    return " or ".join(n for n in protocol_names() if protocol_has(n, trait))


def _taking(option: str) -> str:
    """The protocols that take ``option``, for messages."""
    return " or ".join(n for n in protocol_names() if protocol_takes(n, option))


def _report_sharded(args: argparse.Namespace, plan: Any, result: Any, on_stdout: str | None) -> int:
    """Outputs and report of a sharded evaluation (no diagnostics: the predictions stayed on
    the workers)."""
    with plan:
        if _file(args.json) is not None:
            plan.write_text("--json", json_text(_document(args, result)))
        if _file(args.csv) is not None:
            plan.write_bytes("--csv", csv_bytes(_table(args, result.per_class, csv=True)))
    if not args.quiet:
        print(
            "note: --workers: diagnostics are skipped (the predictions stay on the workers)",
            file=sys.stderr,
        )
    if on_stdout == "--csv":
        say(csv_bytes(_table(args, result.per_class, csv=True)).decode("utf-8").rstrip("\n"))
        return 0
    if on_stdout is not None:
        say(json_text(_document(args, result)).rstrip("\n"))
        return 0
    say(result.summary())
    say("")
    say(per_class_table(_table(args, result.per_class)))
    return 0


_YOLO_VAL = ("precision", "recall", "mAP50", "mAP50-95")


def stdout_output(args: argparse.Namespace) -> str | None:
    """The output printed on stdout instead of the text report (``-`` as its file name, or
    ``--format json``), or None; more than one is refused before any work.

    >>> stdout_output(argparse.Namespace(json=None, csv="-", per_image=None, format="text"))
    '--csv'
    """
    given = (
        ("--json", args.json),
        ("--csv", args.csv),
        ("--per-image", args.per_image),
        ("--html", getattr(args, "html", None)),
        ("--label-errors", getattr(args, "label_errors", None)),
    )
    return stdout_choice(given, args.format)


def _file(path: str | None) -> str | None:
    """An output's file name; None for none or ``-`` (stdout)."""
    return None if path in (None, "-") else path


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
