"""``--dilation-ratio``, ``--compat`` (boundary AP, #26 item 1) and ``--range-area`` (keypoints,
#29): the protocol options of :func:`ioukit.evaluate` (itself tested against faster-coco-eval,
ultrafast, boundary-iou-api and xtcocotools), the CLI's numbers equal to the API's bit for bit,
and a flag the protocol has no option for, or a value it refuses, named in one line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import ioukit
from ioukit.cli import main
from tests.keypoints_data import make_keypoint_set

DATA = Path(__file__).parents[1] / "data" / "conformance" / "coco" / "val2014_100"
GT = DATA / "instances_val2014_100.json"
SEGM = DATA / "instances_val2014_fakesegm100_results.json"


def _stats(argv: list[str], capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    assert main(["eval", *argv, "--format", "json", "--quiet"]) == 0
    stats: dict[str, Any] = json.loads(capsys.readouterr().out)["stats"]
    return stats


def _error(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    try:
        code = main(["eval", *argv])
    except SystemExit as usage:  # argparse: the usage, then the line
        code = int(usage.code or 0)
    assert code == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = captured.err.splitlines()
    return lines[-1]


@pytest.mark.parametrize(
    ("compat", "ratio"), [(None, 0.02), ("faster_coco_eval", 0.02), ("ultrafast", 0.05)]
)
def test_boundary_flags_are_the_api_options(
    compat: str | None, ratio: float, capsys: pytest.CaptureFixture[str]
) -> None:
    options: dict[str, Any] = {"dilation_ratio": ratio}
    argv = ["--gt", str(GT), "--pred", str(SEGM), "--iou-type", "boundary"]
    argv += ["--dilation-ratio", str(ratio)]
    if compat is not None:
        options["compat"] = compat
        argv += ["--compat", compat]
    expected = ioukit.evaluate(GT, SEGM, iou_type="boundary", **options)
    assert _stats(argv, capsys) == expected.stats


def test_the_dilation_ratio_changes_boundary_ap(capsys: pytest.CaptureFixture[str]) -> None:
    base = ["--gt", str(GT), "--pred", str(SEGM), "--iou-type", "boundary"]
    assert _stats(base, capsys) != _stats([*base, "--dilation-ratio", "0.05"], capsys)


def test_range_area_flag_is_the_api_option(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    gt, results = make_keypoint_set(15, seed=8)
    (tmp_path / "gt.json").write_text(json.dumps(gt))
    (tmp_path / "dt.json").write_text(json.dumps(results))
    argv = ["--gt", str(tmp_path / "gt.json"), "--pred", str(tmp_path / "dt.json")]
    argv += ["--iou-type", "keypoints", "--oks-area", "box"]
    for range_area in ("annotation", "oks"):
        expected = ioukit.evaluate(
            gt, results, iou_type="keypoints", oks_area="box", range_area=range_area
        )
        assert _stats([*argv, "--range-area", range_area], capsys) == expected.stats
    default = _stats(argv, capsys)
    assert default == _stats([*argv, "--range-area", "oks"], capsys)
    assert default["APm"] != _stats([*argv, "--range-area", "annotation"], capsys)["APm"]


@pytest.mark.parametrize(
    ("extra", "line"),
    [
        (["--dilation-ratio", "0.02"],
         "ioukit eval: error: --dilation-ratio: expected a protocol with the option "
         "'dilation_ratio', got --protocol coco (--iou-type bbox), which has none"),
        (["--iou-type", "boundary", "--dilation-ratio", "-1"],
         "ioukit eval: error: --dilation-ratio -1: dilation_ratio: expected a finite number >= 0, "
         "got -1.0"),
        (["--iou-type", "boundary", "--compat", "opencv"],
         "ioukit eval: error: --compat opencv: compat: expected None, 'pycocotools', "
         "'faster_coco_eval' or 'ultrafast' for iou_type='boundary', got 'opencv'"),
        (["--compat", "ultrafast"],
         "ioukit eval: error: --compat ultrafast: compat: expected None or 'pycocotools', got "
         "'ultrafast'"),
        (["--range-area", "annotation"],
         "ioukit eval: error: --range-area: expected a protocol with the option 'range_area', "
         "got --protocol coco (--iou-type bbox), which has none"),
        (["--iou-type", "boundary", "--dilation-ratio", "wide"],
         "ioukit eval: error: argument --dilation-ratio: expected a finite number, got 'wide' "
         "(see ioukit eval --help)"),
    ],
)  # fmt: skip
def test_bad_values_are_one_line(
    extra: list[str], line: str, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    out = tmp_path / "r.json"
    assert (
        _error(["--gt", str(GT), "--pred", str(SEGM), *extra, "--json", str(out)], capsys) == line
    )
    assert not out.exists()


def test_every_declared_option_has_a_flag_or_a_reason() -> None:
    """A protocol option (``registry.protocol_options``, variants included) is a flag of
    ``FLAG_OPTIONS`` or listed in ``NOT_FLAGS`` with its reason: a new option cannot be left
    without either."""
    from ioukit.cli._options import FLAG_OPTIONS, NOT_FLAGS
    from ioukit.evaluation.registry import protocol_iou_types, protocol_names, protocol_options

    declared: set[str] = set()
    for name in protocol_names():
        for iou_type in protocol_iou_types(name):
            declared |= set(protocol_options(name, iou_type=iou_type) or ())
    flagged = {api for _, _, api, _, _ in FLAG_OPTIONS} | {s for *_, s in FLAG_OPTIONS if s}
    assert declared - flagged == set(NOT_FLAGS), sorted(declared - flagged ^ set(NOT_FLAGS))
    assert not set(NOT_FLAGS) & flagged
