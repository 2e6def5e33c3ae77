"""``ioukit iou A B``: every overlap measure of two boxes."""

from __future__ import annotations

import argparse
import math
from typing import Any

from ioukit.errors import BoxError

__all__ = ["parse_box", "register", "report", "run"]

_HELP = """\
Print intersection, union, IoU, Dice, GIoU, DIoU and CIoU of two boxes.
Boxes are 4 comma-separated numbers; put '--' before a box that starts with '-'.

example: ioukit iou 100,80,300,280 120,100,320,300"""


def register(subparsers: Any) -> None:
    """Add the ``iou`` subcommand."""
    parser = subparsers.add_parser(
        "iou",
        help="overlap measures of two boxes",
        description=_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("box_a", metavar="A", help="first box, e.g. 100,80,300,280")
    parser.add_argument("box_b", metavar="B", help="second box")
    parser.add_argument(
        "--fmt",
        choices=("xyxy", "xywh", "cxcywh"),
        default="xyxy",
        help="box format (default xyxy)",
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
    import numpy as np

    from ioukit.boxes import box_area, box_convert
    from ioukit.overlap import _formulas, family

    a = np.asarray([box_a])
    b = np.asarray([box_b])
    xyxy = []
    for label, box in (("A", a), ("B", b)):
        try:
            xyxy.append(box_convert(box, fmt, "xyxy")[0])
        except BoxError as exc:
            raise BoxError(f"box {label}: {str(exc).split(': ', 1)[1]}") from None
    area_a, area_b = float(box_area(a, fmt=fmt)[0]), float(box_area(b, fmt=fmt)[0])
    inter = float(_formulas.intersection(np, tuple(xyxy[0]), tuple(xyxy[1])))
    union = area_a + area_b - inter
    iou = float(family.box_iou_elementwise(a, b, fmt=fmt)[0])
    rows = [
        (f"box A ({fmt})", ", ".join(f"{v:g}" for v in box_a)),
        (f"box B ({fmt})", ", ".join(f"{v:g}" for v in box_b)),
        ("area A", f"{area_a:g}"),
        ("area B", f"{area_b:g}"),
        ("intersection", f"{inter:g}"),
        ("union", f"{union:g}"),
        ("IoU", f"{iou:.6f}"),
        ("Dice", f"{float(family.box_dice_elementwise(a, b, fmt=fmt)[0]):.6f}"),
        ("GIoU", f"{float(family.generalized_box_iou_elementwise(a, b, fmt=fmt)[0]):.6f}"),
        ("DIoU", f"{float(family.distance_box_iou_elementwise(a, b, fmt=fmt)[0]):.6f}"),
        ("CIoU", f"{float(family.complete_box_iou_elementwise(a, b, fmt=fmt)[0]):.6f}"),
    ]
    width = max(len(k) for k, _ in rows)
    return "\n".join(f"{k:<{width}}  {v}" for k, v in rows)


def run(args: argparse.Namespace) -> int:
    """Entry point of ``ioukit iou``."""
    box_a = parse_box(args.box_a, "A")
    box_b = parse_box(args.box_b, "B")
    print(report(box_a, box_b, args.fmt))
    return 0
