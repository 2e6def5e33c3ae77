"""Keypoint ground truth with visibilities outside {0, 1, 2} (#23 item 21): any ``v > 0``
counts as labelled, as pycocotools and xtcocotools count it, so COCO-WholeBody's hand and
face confidences (0.187 ...) evaluate as published; ``check`` and ``eval`` say so in a note."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from ioukit.cli import main
from ioukit.errors import DataFormatError
from ioukit.io.coco_keypoints import read_coco_keypoints, unusual_visibility
from tests.coco_reference import run_faster_coco_eval, run_pycocotools

# the values COCO-WholeBody's hand and face keypoints carry in v, and COCO's flags
_VISIBILITY = [0, 1, 2, 0.187, 0.5, 0.93, 0.0421]


def _wholebody_like(seed: int) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    rng = np.random.default_rng(seed)
    images = [{"id": i, "width": 640, "height": 480} for i in (1, 2, 3)]
    anns: list[dict[str, Any]] = []
    results: list[dict[str, Any]] = []
    for image in images:
        for _ in range(int(rng.integers(1, 5))):
            x0, y0 = rng.uniform(20, 400), rng.uniform(20, 250)
            w, h = rng.uniform(40, 200), rng.uniform(60, 220)
            kp: list[float] = []
            pk: list[float] = []
            for _ in range(17):
                x, y = x0 + rng.uniform(0, w), y0 + rng.uniform(0, h)
                kp += [float(x), float(y), float(rng.choice(_VISIBILITY))]
                pk += [float(x + rng.normal(0, 6)), float(y + rng.normal(0, 6)), 1.0]
            anns.append(
                {
                    "id": len(anns) + 1,
                    "image_id": image["id"],
                    "category_id": 1,
                    "keypoints": kp,
                    "num_keypoints": sum(1 for v in kp[2::3] if v > 0),
                    "bbox": [x0, y0, w, h],
                    "area": float(w * h * rng.uniform(0.5, 1.0)),
                    "iscrowd": 0,
                }
            )
            results.append(
                {
                    "image_id": image["id"],
                    "category_id": 1,
                    "keypoints": pk,
                    "score": float(rng.uniform()),
                }
            )
    categories = [{"id": 1, "name": "person", "keypoints": [f"k{k}" for k in range(17)]}]
    return {"images": images, "annotations": anns, "categories": categories}, results


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_confidences_as_visibility_evaluate_as_pycocotools(
    seed: int, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    gt, results = _wholebody_like(seed)
    (tmp_path / "gt.json").write_text(json.dumps(gt))
    (tmp_path / "dt.json").write_text(json.dumps(results))
    out = tmp_path / "r.json"
    argv = ["eval", "--gt", str(tmp_path / "gt.json"), "--pred", str(tmp_path / "dt.json")]
    assert main([*argv, "--iou-type", "keypoints", "--json", str(out)]) == 0
    assert "keypoint visibilities outside {0, 1, 2}" in capsys.readouterr().err
    stats = list(json.loads(out.read_text())["stats"].values())
    reference = run_pycocotools(gt, results, {}, "keypoints").stats
    assert np.allclose(stats, reference, atol=1e-12, rtol=0), (stats, reference)
    faster = run_faster_coco_eval(gt, results, {}, "keypoints").stats
    assert np.allclose(stats, faster[: len(stats)], atol=1e-12, rtol=0)


def test_check_notes_the_visibilities(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    gt, _ = _wholebody_like(5)
    (tmp_path / "gt.json").write_text(json.dumps(gt))
    boxes = [
        {"image_id": a["image_id"], "category_id": 1, "bbox": a["bbox"], "score": 0.5}
        for a in gt["annotations"]
    ]
    (tmp_path / "dt.json").write_text(json.dumps(boxes))
    argv = ["check", "--gt", str(tmp_path / "gt.json"), "--pred", str(tmp_path / "dt.json")]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "keypoint visibilities outside {0, 1, 2}" in out and "v > 0" in out


def test_a_negative_visibility_is_refused(tmp_path: Path) -> None:
    gt, _ = _wholebody_like(6)
    gt["annotations"][1]["keypoints"][5] = -1
    with pytest.raises(DataFormatError, match=r"annotations\[1\]\.keypoints\[5\]: .*>= 0"):
        read_coco_keypoints(gt)


def test_only_flags_need_no_note() -> None:
    gt, _ = _wholebody_like(7)
    for ann in gt["annotations"]:
        ann["keypoints"][2::3] = [2] * 17
    assert unusual_visibility(read_coco_keypoints(gt).keypoints) is None


def test_confidences_survive_a_conversion_to_pose_labels(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from ioukit.io.yolo_pose import read_yolo_pose_ground_truth

    gt, _ = _wholebody_like(8)
    (tmp_path / "gt.json").write_text(json.dumps(gt))
    labels = tmp_path / "labels"
    argv = ["convert", str(tmp_path / "gt.json"), str(labels), "--to", "yolo", "--keypoints"]
    assert main(argv) == 0
    capsys.readouterr()
    back = read_yolo_pose_ground_truth(labels, image_size="640x480")
    expected = np.array([a["keypoints"][2::3] for a in gt["annotations"]])
    assert sorted(back.keypoints[:, :, 2].ravel().tolist()) == sorted(expected.ravel().tolist())
