"""Evaluation flags of ``ioukit eval`` mapped onto :func:`ioukit.evaluate`'s protocol options.

The CLI parses the text of a flag (``--iou-thresholds 0.5:0.95:0.05``) and names the flag in its
errors; what a value may be is the protocol's to say: every option is handed to
:func:`ioukit.evaluation.registry.make_protocol`, the same validation :func:`ioukit.evaluate`
runs, and its message is passed on after the flag's name. A flag the protocol has no option
for is refused, never emulated.

=====================  ===================================  =========================
flag                   API option                           e.g.
=====================  ===================================  =========================
``--iou-thresholds``   ``iou_thresholds`` (one value:       ``0.5:0.95:0.05``,
                       ``iou_threshold`` where the          ``0.5,0.75``
                       protocol takes a single one)
``--max-dets``         ``max_dets`` (one value: the         ``1,10,100``
                       integer where it takes one)
``--area-ranges``      ``area_ranges``                      ``small=0:1024,large=9216:inf``
``--class-agnostic``   ``use_cats=False``
``--dilation-ratio``   ``dilation_ratio`` (boundary AP)     ``0.02``
``--compat``           ``compat`` (boundary AP: the tool    ``faster_coco_eval``,
                       reproduced; coco: ``pycocotools``;   ``ultrafast``
                       dota / mmrotate)
``--range-area``       ``range_area`` (keypoints: area      ``annotation``
                       ranges by the OKS scale or the
                       annotation's ``area``)
``--setups``           ``setups`` (pedestrian protocols)    ``Reasonable,All``
``--sampling``         ``sampling`` (pedestrian: how MR⁻²   ``brambox``
                       samples the curve)
=====================  ===================================  =========================

Which protocol takes which option is the protocol's declaration
(:func:`ioukit.evaluation.registry.protocol_options`): adding a flag here is one line of
:data:`FLAG_OPTIONS` and one ``add_argument``; the refusals and the value checks are the
protocol's.

Examples
--------
>>> float_list("0.5:0.95:0.05")[-1], float_list("0.5, 0.75")
(0.95, [0.5, 0.75])
>>> int_list("1,10,100")
[1, 10, 100]
>>> area_ranges("small=0:1024,large=9216:inf")["large"]
(9216.0, inf)
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable
from typing import Any, TypeVar

import numpy as np

from ioukit.errors import ParameterError
from ioukit.evaluation.registry import make_protocol

__all__ = [
    "FLAG_OPTIONS",
    "NOT_FLAGS",
    "area_ranges",
    "finite_number",
    "float_list",
    "int_list",
    "name_list",
    "protocol_options",
]


def _items(text: str) -> list[str]:
    parts = [p.strip() for p in text.replace(" ", ",").split(",")]
    return [p for p in parts if p]


_T = TypeVar("_T")


def _listed(text: str, parse: Callable[[str], list[_T]], expected: str, one: str) -> list[_T]:
    # parse(text), at least one value; ValueError or nothing: the option's error
    try:
        values = parse(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected {expected}, got {text!r}") from None
    if not values:
        raise argparse.ArgumentTypeError(f"expected at least one {one}, got {text!r}")
    return values


def _floats(text: str) -> list[float]:
    items = _items(text)
    if len(items) == 1 and items[0].count(":") == 2:
        start, stop, step = (float(v) for v in items[0].split(":"))
        if not (step > 0 and stop >= start and math.isfinite(stop - start)):
            raise ValueError
        count = int(np.round((stop - start) / step)) + 1
        return [float(v) for v in np.linspace(start, stop, count, endpoint=True)]
    return [float(v) for v in items]


def float_list(text: str) -> list[float]:
    """``"a,b,c"`` or pycocotools' ``START:STOP:STEP`` (``np.linspace(start, stop,
    round((stop - start) / step) + 1)``, as ``COCOeval.Params`` builds its thresholds)."""
    return _listed(text, _floats, "comma-separated numbers or START:STOP:STEP", "number")


def int_list(text: str) -> list[int]:
    """``"1,10,100"``: comma-separated integers."""
    return _listed(
        text, lambda t: [int(v) for v in _items(t)], "comma-separated integers", "integer"
    )


def finite_number(text: str) -> float:
    """One finite number (``--dilation-ratio 0.02``).

    >>> finite_number("0.05")
    0.05
    """
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"expected a finite number, got {text!r}")
    return value


def name_list(text: str) -> list[str]:
    """``"Reasonable,All"``: comma-separated names.

    >>> name_list("Reasonable, All")
    ['Reasonable', 'All']
    """
    names = [n.strip() for n in text.split(",") if n.strip()]
    if not names:
        raise argparse.ArgumentTypeError(f"expected comma-separated names, got {text!r}")
    return names


def area_ranges(text: str) -> dict[str, tuple[float, float]]:
    """``"small=0:1024,medium=1024:9216"``: NAME=LOW:HIGH pairs (``inf`` for no bound)."""
    ranges: dict[str, tuple[float, float]] = {}
    for item in _items(text):
        name, sep, bounds = item.partition("=")
        low, colon, high = bounds.partition(":")
        try:
            if not (sep and colon and name.strip()):
                raise ValueError
            pair = (float(low), float(high))
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"expected NAME=LOW:HIGH[,NAME=LOW:HIGH...] (e.g. small=0:1024), got {item!r}"
            ) from None
        if name.strip() in ranges:
            raise argparse.ArgumentTypeError(f"expected each name once, got {name!r} twice")
        ranges[name.strip()] = pair
    if not ranges:
        raise argparse.ArgumentTypeError(f"expected NAME=LOW:HIGH pairs, got {text!r}")
    return ranges


FLAG_OPTIONS: tuple[tuple[str, str, str, Callable[[Any], Any] | None, str | None], ...] = (
    ("--iou-thresholds", "iou_thresholds", "iou_thresholds", None, "iou_threshold"),
    ("--max-dets", "max_dets", "max_dets", None, "max_dets"),
    ("--area-ranges", "area_ranges", "area_ranges", None, None),
    ("--class-agnostic", "class_agnostic", "use_cats", lambda on: not on, None),
    ("--dilation-ratio", "dilation_ratio", "dilation_ratio", None, None),
    ("--compat", "compat", "compat", None, None),
    ("--range-area", "range_area", "range_area", None, None),
    ("--setups", "setups", "setups", None, None),
    ("--sampling", "sampling", "sampling", None, None),
)
"""(flag, argparse dest, API option, value transform, option for a single value)."""

NOT_FLAGS: dict[str, str] = {
    "recall_thresholds": "COCO's 101 recall points are the definition of its AP",
    "pixel_inclusive": "set by voc07 / voc10 themselves (the devkit's +1 pixel areas)",
    "strict_threshold": "set by each protocol to its reference's > or >=",
    "exact_grid": "an internal switch of the VOC recall grid",
    "stable_ties": "Ultralytics' own tie order is the yolo protocol's definition",
    "interpolation": "set by dota / mmrotate to their reference's AP formula",
    "height_ratio": "the pedestrian scripts' 1.25, part of each setup's definition",
    "category_id": "the pedestrian scripts evaluate category 1; --classes-only selects",
    "workers": "panoptic's decoding threads (the result does not depend on it)",
    "group_of_weight": "set by openimages (0) / openimages_challenge (1), their definitions",
    "image_labels": "read from the Open Images files themselves",
    "crowd_index": "read from the CrowdPose file itself",
    "sigmas": "--sigmas (keypoint options, ioukit.cli._keypoints)",
    "oks_area": "--oks-area (keypoint options, ioukit.cli._keypoints)",
    "fixed_ap": "--fixed-ap (lvis)",
}
"""Options some protocol declares (``registry.protocol_options``) that have no flag in
:data:`FLAG_OPTIONS`, and why; a test fails on a declared option in neither table, so a new
option gets a flag or a reason."""


def _shown(value: Any) -> str:
    if isinstance(value, dict):
        return ",".join(f"{k}={lo:g}:{hi:g}" for k, (lo, hi) in value.items())
    if isinstance(value, list):
        return ",".join(v if isinstance(v, str) else f"{v:g}" for v in value)
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, str):
        return value
    return ""


def protocol_options(args: argparse.Namespace, protocol: str, iou_type: str) -> dict[str, Any]:
    """The protocol options the evaluation flags of ``args`` ask for, validated by the
    protocol (``make_protocol``, as :func:`ioukit.evaluate` does).

    Raises
    ------
    ParameterError
        A flag the protocol has no option for, or a value it refuses: the flag, then the
        protocol's own message (``--iou-thresholds 1.5: iou_thresholds: expected ...``).
    """
    options: dict[str, Any] = {}
    for flag, dest, name, transform, single in FLAG_OPTIONS:
        raw = getattr(args, dest, None)
        if raw is None or raw is False:
            continue
        value = transform(raw) if transform is not None else raw
        candidates = [(name, value)]
        if single is not None and isinstance(raw, list):
            candidates.append((single, raw[0]))
        first: str | None = None
        takes_one = False
        for index, (option, given) in enumerate(candidates):
            try:
                make_protocol(protocol, iou_type=iou_type, **options, **{option: given})
            except (ParameterError, ValueError) as exc:
                message = str(exc)
                if "unexpected keyword argument" not in message:
                    first = first or message
                continue
            if index == 1 and len(raw) > 1:
                takes_one = True  # the protocol takes one value where several were given
                continue
            options[option] = given
            break
        else:
            if takes_one:
                raise ParameterError(
                    f"{flag} {_shown(raw)}: expected one value for --protocol {protocol} (its "
                    f"option {single!r} is a single number), got {len(raw)}"
                )
            if first is None:
                raise ParameterError(
                    f"{flag}: expected a protocol with the option {name!r}, got --protocol "
                    f"{protocol} (--iou-type {iou_type}), which has none"
                )
            raise ParameterError(f"{f'{flag} {_shown(raw)}'.rstrip()}: {first}")
    return options
