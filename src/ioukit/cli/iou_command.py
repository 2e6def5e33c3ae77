"""``ioukit iou A B``: every overlap measure of two boxes."""

from __future__ import annotations

import argparse
import math
from typing import Any, Literal

import numpy as np

from ioukit.boxes import box_area, box_convert
from ioukit.cli import add_command
from ioukit.errors import BoxError
from ioukit.io._oriented import polygon_area
from ioukit.overlap import family
from ioukit.overlap.rotated import probiou_elementwise, rotated_box_iou_elementwise

__all__ = ["parse_box", "register", "report", "rotated_report", "run"]

_HELP = """\
Print intersection, union, IoU, Dice, GIoU, DIoU and CIoU of two boxes.
Boxes are 4 comma-separated numbers; put '--' before a box that starts with '-'.
Rotated boxes are 5 numbers (cx,cy,w,h,angle; degrees counter-clockwise unless --radians /
--clockwise) or 8 (the corners x1,y1,...,x4,y4 of a convex quadrilateral).

example: ioukit iou 100,80,300,280 120,100,320,300
         ioukit iou 50,50,40,20,30 55,50,40,20,45"""


def register(subparsers: Any) -> None:
    """Add the ``iou`` subcommand."""
    parser = add_command(subparsers, "iou", _HELP)
    parser.add_argument("box_a", metavar="A", help="first box, e.g. 100,80,300,280")
    parser.add_argument("box_b", metavar="B", help="second box")
    parser.add_argument(
        "--fmt",
        choices=("xyxy", "xywh", "cxcywh", "cxcywhr", "xywhr", "xyxyxyxy"),
        default="xyxy",
        help="box format (default xyxy; 5 numbers mean cxcywhr, 8 mean xyxyxyxy)",
    )
    parser.add_argument("--radians", action="store_true", help="rotated angles in radians")
    parser.add_argument(
        "--clockwise", action="store_true", help="rotated angles turn clockwise (mmcv, Ultralytics)"
    )
    parser.set_defaults(run=run)


def parse_box(text: str, name: str) -> list[float]:
    """Parse ``"x1,y1,x2,y2"`` into 4 finite floats, or raise :class:`BoxError`."""
    parts = [p.strip() for p in text.replace(" ", ",").split(",") if p.strip()]
    try:
        values = [float(p) for p in parts]
    except ValueError:
        raise BoxError(f"box {name}: expected 4 comma-separated numbers, got {text!r}") from None
    if len(values) != 4:
        raise BoxError(
            f"box {name}: expected 4 comma-separated numbers, got {len(values)} in {text!r}"
        )
    if not all(math.isfinite(v) for v in values):
        raise BoxError(f"box {name}: coordinates must be finite, got {text!r}")
    return values


def report(box_a: list[float], box_b: list[float], fmt: str) -> str:
    """The text block ``ioukit iou`` prints."""
    a = np.asarray([box_a])
    b = np.asarray([box_b])
    xyxy = []
    for label, box in (("A", a), ("B", b)):
        try:
            xyxy.append(box_convert(box, fmt, "xyxy")[0])
        except BoxError as exc:
            raise BoxError(f"box {label}: {str(exc).split(': ', 1)[1]}") from None
    area_a, area_b = float(box_area(a, fmt=fmt)[0]), float(box_area(b, fmt=fmt)[0])
    inter = float(family.box_intersection_elementwise(xyxy[0], xyxy[1])[()])
    iou = float(family.box_iou_elementwise(a, b, fmt=fmt)[0])
    rows = _rows((box_a, box_b), (fmt, fmt), (area_a, area_b), inter, iou)
    for name, measure in (
        ("Dice", family.box_dice_elementwise),
        ("GIoU", family.generalized_box_iou_elementwise),
        ("DIoU", family.distance_box_iou_elementwise),
        ("CIoU", family.complete_box_iou_elementwise),
    ):
        rows.append((name, f"{float(measure(a, b, fmt=fmt)[0]):.6f}"))
    return _text(rows)


def _rows(
    boxes: tuple[list[float], list[float]],
    formats: tuple[str, str] | list[str],
    areas: tuple[float, float],
    inter: float,
    iou: float,
) -> list[tuple[str, str]]:
    """The rows both reports start with: the boxes, their areas, intersection, union, IoU."""
    return [
        (f"box A ({formats[0]})", ", ".join(f"{v:g}" for v in boxes[0])),
        (f"box B ({formats[1]})", ", ".join(f"{v:g}" for v in boxes[1])),
        ("area A", f"{areas[0]:g}"),
        ("area B", f"{areas[1]:g}"),
        ("intersection", f"{inter:g}"),
        ("union", f"{areas[0] + areas[1] - inter:g}"),
        ("IoU", f"{iou:.6f}"),
    ]


def _text(rows: list[tuple[str, str]]) -> str:
    width = max(len(k) for k, _ in rows)
    return "\n".join(f"{k:<{width}}  {v}" for k, v in rows)


def _parse_any(text: str, name: str) -> list[float]:
    """4, 5 or 8 finite numbers (the 4-number rules and messages of :func:`parse_box`)."""
    parts = [p.strip() for p in text.replace(" ", ",").split(",") if p.strip()]
    if len(parts) not in (5, 8):
        return parse_box(text, name)
    try:
        values = [float(p) for p in parts]
    except ValueError:
        raise BoxError(
            f"box {name}: expected {len(parts)} comma-separated numbers, got {text!r}"
        ) from None
    if not all(math.isfinite(v) for v in values):
        raise BoxError(f"box {name}: coordinates and angle must be finite, got {text!r}")
    return values


def rotated_report(
    box_a: list[float], box_b: list[float], fmt: str, *, radians: bool, clockwise: bool
) -> str:
    """The text block ``ioukit iou`` prints for rotated boxes (5 or 8 numbers each)."""
    unit: Literal["degrees", "radians"] = "radians" if radians else "degrees"
    corners = []
    formats = []
    for label, box in (("A", box_a), ("B", box_b)):
        five = fmt if fmt in ("cxcywhr", "xywhr") else "cxcywhr"
        box_fmt = "xyxyxyxy" if len(box) == 8 else five
        formats.append(box_fmt)
        try:
            c = box_convert(
                np.asarray([box]), box_fmt, "xyxyxyxy", angle_unit=unit, clockwise=clockwise
            )
            rotated_box_iou_elementwise(c, c, fmt="xyxyxyxy")  # convexity check
        except BoxError as exc:
            raise BoxError(f"box {label}: {str(exc).split(': ', 1)[1]}") from None
        corners.append(c)
    area_a, area_b = (float(polygon_area(c)[0]) for c in corners)
    iou = float(rotated_box_iou_elementwise(corners[0], corners[1], fmt="xyxyxyxy")[0])
    inter = iou * (area_a + area_b) / (1 + iou)
    rows = _rows((box_a, box_b), formats, (area_a, area_b), inter, iou)
    if len(box_a) == 5 and len(box_b) == 5:
        prob = (
            probiou_elementwise(
                np.asarray([box_a]),
                np.asarray([box_b]),
                fmt=formats[0],
                angle_unit=unit,
                clockwise=clockwise,
            )
            if formats[0] == formats[1]
            else None
        )
        if prob is not None:
            rows.append(("probiou (Ultralytics)", f"{float(prob[0]):.6f}"))
    return _text(rows)


def run(args: argparse.Namespace) -> int:
    """Entry point of ``ioukit iou``."""
    box_a = _parse_any(args.box_a, "A")
    box_b = _parse_any(args.box_b, "B")
    if len(box_a) == 4 and len(box_b) == 4 and args.fmt in ("xyxy", "xywh", "cxcywh"):
        print(report(box_a, box_b, args.fmt))
        return 0
    if len(box_a) == 4 or len(box_b) == 4:
        raise BoxError(
            "boxes A and B: expected 5 or 8 numbers each for a rotated box "
            f"(--fmt {args.fmt}), got {len(box_a)} and {len(box_b)}"
        )
    print(rotated_report(box_a, box_b, args.fmt, radians=args.radians, clockwise=args.clockwise))
    return 0
