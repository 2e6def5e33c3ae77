"""ioukit.compat.torchmetrics.MeanAveragePrecision against torchmetrics' own, side by side.

torchmetrics 1.9's ``MeanAveragePrecision`` refuses to start without torchvision, which the
test environment cannot install; torchvision serves it one function only,
``torchvision.ops.box_convert`` (imported inside ``update``). The reference below is
torchmetrics' own class with its default pycocotools backend and that one function supplied
by the test, transcribed from torchvision's ``ops/_box_convert.py`` (through xyxy, in the
input dtype). Everything else (conversion to COCO, the per-class loop, the key names, the
dtypes) runs from torchmetrics' and pycocotools' code. Every key is compared bit for bit.
"""

from __future__ import annotations

import json
import socket
import sys
import types
from pathlib import Path
from typing import Any
from unittest import mock

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("torchmetrics")
pytest.importorskip("pycocotools")

import pycocotools.cocoeval  # noqa: E402
import torch.distributed as dist  # noqa: E402
import torch.multiprocessing as mp  # noqa: E402
from torchmetrics import Metric  # noqa: E402
from torchmetrics.detection import mean_ap as tm_mean_ap  # noqa: E402

from ioukit.compat.torchmetrics import MeanAveragePrecision  # noqa: E402
from ioukit.errors import ParameterError  # noqa: E402

H, W = 96, 128


def _box_convert(boxes: Any, in_fmt: str, out_fmt: str) -> Any:
    """torchvision.ops.box_convert (xyxy / xywh / cxcywh), as torchvision computes it."""
    if in_fmt == out_fmt:
        return boxes.clone()
    if in_fmt != "xyxy" and out_fmt != "xyxy":
        if in_fmt == "xywh":
            x, y, w, h = boxes.unbind(-1)
            boxes = torch.stack([x, y, x + w, y + h], dim=-1)
        else:
            cx, cy, w, h = boxes.unbind(-1)
            boxes = torch.stack((cx - 0.5 * w, cy - 0.5 * h, cx + 0.5 * w, cy + 0.5 * h), dim=-1)
        in_fmt = "xyxy"
    x1, y1, x2, y2 = boxes.unbind(-1)
    if out_fmt == "xywh":
        return torch.stack((x1, y1, x2 - x1, y2 - y1), dim=-1)
    raise NotImplementedError(out_fmt)


def _install_box_convert() -> None:
    assert pycocotools.cocoeval.COCOeval.__module__ == "pycocotools.cocoeval"  # the real one
    tv = types.ModuleType("torchvision")
    ops = types.ModuleType("torchvision.ops")
    ops.box_convert = _box_convert  # type: ignore[attr-defined]
    tv.ops = ops  # type: ignore[attr-defined]
    sys.modules["torchvision"], sys.modules["torchvision.ops"] = tv, ops
    tm_mean_ap._TORCHVISION_AVAILABLE = True  # type: ignore[attr-defined]


@pytest.fixture
def reference(monkeypatch: pytest.MonkeyPatch) -> Any:
    """torchmetrics' MeanAveragePrecision class (the stub is removed after the test)."""
    monkeypatch.setitem(sys.modules, "torchvision", None)
    monkeypatch.setitem(sys.modules, "torchvision.ops", None)
    monkeypatch.setattr(tm_mean_ap, "_TORCHVISION_AVAILABLE", False)
    _install_box_convert()
    return tm_mean_ap.MeanAveragePrecision


def _mask(box: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    m = np.zeros((H, W), np.uint8)
    x1, y1, x2, y2 = np.clip(np.round(box).astype(int), 0, [W, H, W, H])
    m[y1 : max(y2, y1 + 1), x1 : max(x2, x1 + 1)] = 1
    m &= (rng.random((H, W)) > 0.15).astype(np.uint8)
    return m


def _batch(
    seed: int,
    n: int,
    *,
    masks: bool = False,
    box_format: str = "xyxy",
    n_labels: int = 4,
    extras: bool = True,
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """n images: 0-5 targets (some crowd, some with an area), 0-7 predictions near them."""
    rng = np.random.default_rng(seed)
    preds, target = [], []
    for _ in range(n):
        g = int(rng.integers(0, 6))
        xy = rng.uniform(0, 70, (g, 2))
        gt = np.concatenate([xy, xy + rng.uniform(2, 50, (g, 2))], 1)
        labels = rng.integers(0, n_labels, g)
        d = int(rng.integers(0, 8))
        src = rng.integers(0, max(g, 1), d)
        dt = gt[src] + rng.normal(0, 2, (d, 4)) if g else rng.uniform(0, 40, (d, 4))
        dt[:, 2:] = np.maximum(dt[:, 2:], dt[:, :2] + 1)
        dt_labels = labels[src] if g else rng.integers(0, n_labels, d)
        dt_labels = np.where(rng.random(d) < 0.15, rng.integers(0, n_labels, d), dt_labels)

        def fmt(b: np.ndarray) -> Any:
            t = torch.tensor(b, dtype=torch.float32)
            if box_format == "xywh":
                t = torch.cat([t[:, :2], t[:, 2:] - t[:, :2]], 1)
            elif box_format == "cxcywh":
                t = torch.cat([(t[:, :2] + t[:, 2:]) / 2, t[:, 2:] - t[:, :2]], 1)
            return t

        p: dict[str, Any] = {
            "boxes": fmt(dt),
            "scores": torch.tensor(rng.choice([0.2, 0.5, 0.5, 0.7, 0.9], d), dtype=torch.float32),
            "labels": torch.tensor(dt_labels, dtype=torch.int64),
        }
        t: dict[str, Any] = {"boxes": fmt(gt), "labels": torch.tensor(labels, dtype=torch.int64)}
        if extras:
            t["iscrowd"] = torch.tensor(rng.random(g) < 0.2, dtype=torch.int64)
            area = rng.uniform(10, 2000, g) * (rng.random(g) < 0.3)
            t["area"] = torch.tensor(area, dtype=torch.float32)
        if masks:
            p["masks"] = torch.tensor(
                np.array([_mask(b, rng) for b in dt], np.uint8).reshape(d, H, W)
            )
            t["masks"] = torch.tensor(
                np.array([_mask(b, rng) for b in gt], np.uint8).reshape(g, H, W)
            )
        preds.append(p)
        target.append(t)
    return preds, target


def _same(ours: Any, theirs: Any, key: str = "") -> None:
    if isinstance(theirs, dict):
        assert isinstance(ours, dict) and ours.keys() == theirs.keys(), key
        for k in theirs:
            _same(ours[k], theirs[k], f"{key}.{k}")
    elif isinstance(theirs, torch.Tensor):
        assert isinstance(ours, torch.Tensor), key
        assert ours.dtype == theirs.dtype and ours.shape == theirs.shape, (key, ours, theirs)
        assert torch.equal(ours, theirs), (key, ours, theirs)
    else:
        assert type(ours) is type(theirs) and ours == theirs, (key, ours, theirs)


def _run(cls: Any, batches: list[tuple[list[Any], list[Any]]], **kwargs: Any) -> dict[str, Any]:
    metric = cls(**kwargs)
    for preds, target in batches:
        metric.update(preds, target)
    if not batches:  # torchmetrics' own warning, from Metric
        with pytest.warns(UserWarning, match="before the ``update`` method"):
            return dict(metric.compute())
    return dict(metric.compute())


def _side_by_side(
    reference: Any, batches: list[Any], route: str | None = "columns", **kwargs: Any
) -> dict[str, Any]:
    """Both metrics on the same updates, every key bit for bit; ``route``: which of ours
    computed it ("columns": the states' columns, "coco": torchmetrics' COCO dicts, None:
    either)."""
    theirs = _run(reference, batches, **kwargs)
    with mock.patch.object(
        MeanAveragePrecision,
        "_compute_coco",
        autospec=True,
        side_effect=MeanAveragePrecision._compute_coco,
    ) as coco_route:
        ours = _run(MeanAveragePrecision, batches, **kwargs)
    if route is not None:
        assert coco_route.called == (route == "coco"), route
    _same(ours, theirs)
    return ours


def test_is_a_torchmetrics_metric_with_its_states(reference: Any) -> None:
    ours, theirs = MeanAveragePrecision(), reference()
    assert isinstance(ours, Metric)
    assert ours._defaults.keys() == theirs._defaults.keys()
    assert ours._reductions == theirs._reductions  # every state a list, dist_reduce_fx=None
    for name in ("iou_thresholds", "rec_thresholds", "max_detection_thresholds", "iou_type"):
        assert getattr(ours, name) == getattr(theirs, name), name


@pytest.mark.parametrize("box_format", ["xyxy", "xywh", "cxcywh"])
def test_bbox_random_with_classes_and_summary(reference: Any, box_format: str) -> None:
    batches = [_batch(seed, 6, box_format=box_format) for seed in range(4)]
    ours = _side_by_side(
        reference, batches, box_format=box_format, class_metrics=True, extended_summary=True
    )
    assert ours["map_per_class"].shape == (4,) and 0 < float(ours["map"]) < 1
    assert ours["precision"].shape == (10, 101, 4, 4, 3)


def test_micro_average_and_custom_thresholds(reference: Any) -> None:
    batches = [_batch(seed, 8) for seed in (10, 11)]
    for kwargs in (
        {"average": "micro", "class_metrics": True},
        {"average": "micro", "extended_summary": True},
        {
            "iou_thresholds": [0.3, 0.5, 0.75],
            "rec_thresholds": [0.0, 0.25, 0.5, 0.75, 1.0],
            "max_detection_thresholds": [50, 1, 3],
            "class_metrics": True,
        },
    ):
        ours = _side_by_side(reference, batches, **kwargs)
    assert "mar_50_per_class" in ours and "mar_3" in ours


def test_segm_and_both(reference: Any) -> None:
    batches = [_batch(seed, 5, masks=True) for seed in (20, 21)]
    _side_by_side(reference, batches, iou_type="segm", class_metrics=True, extended_summary=True)
    ours = _side_by_side(
        reference, batches, iou_type=("bbox", "segm"), class_metrics=True, extended_summary=True
    )
    assert {"bbox_map", "segm_map", "bbox_map_per_class", "segm_mar_100_per_class"} <= set(ours)
    _side_by_side(reference, batches, iou_type=("segm", "bbox"), average="micro")


def test_bool_masks_without_extras(reference: Any) -> None:
    preds, target = _batch(30, 6, masks=True, extras=False)
    for item in preds + target:
        item["masks"] = item["masks"].bool()
    _side_by_side(reference, [(preds, target)], iou_type="segm")


def test_empty_images_and_empty_metric(reference: Any) -> None:
    empty_p = {
        "boxes": torch.zeros((0, 4)),
        "scores": torch.zeros(0),
        "labels": torch.zeros(0, dtype=torch.int64),
    }
    empty_t = {"boxes": torch.zeros((0, 4)), "labels": torch.zeros(0, dtype=torch.int64)}
    preds, target = _batch(40, 4)
    flat_p = {**empty_p, "boxes": torch.zeros(0)}  # 1-d empty: torchmetrics' DDP fix
    cases: list[list[Any]] = [
        [],  # nothing seen
        [([empty_p, flat_p], [empty_t, empty_t])],
        [([empty_p] * 4, target)],  # no detection
        [(preds, [empty_t] * 4)],  # no ground truth
        [([*preds, empty_p], [*target, empty_t])],
    ]
    for batches in cases:
        for kwargs in ({}, {"class_metrics": True, "extended_summary": True}):
            # without any label there is no category: pycocotools' stages on nothing
            ours = _side_by_side(reference, batches, route=None, **kwargs)
    assert float(ours["map"]) > 0
    none = _run(MeanAveragePrecision, [], class_metrics=True)
    assert float(none["map"]) == -1.0 and "map_per_class" not in none


def test_values_the_columns_route_cannot_take(reference: Any) -> None:
    # a predicted box of negative width: only pycocotools' stages take it (dict route)
    preds, target = _batch(45, 6)
    preds[0]["boxes"] = preds[0]["boxes"][:, [2, 1, 0, 3]]
    _side_by_side(reference, [(preds, target)], route="coco", class_metrics=True)
    # mixed dtypes (one batch conversion per dtype), float16 and float64 boxes, boolean
    # crowd flags, integer areas, an image without detections given as float empties
    preds, target = _batch(46, 6)
    preds[1]["boxes"] = preds[1]["boxes"].double()
    preds[2]["boxes"] = preds[2]["boxes"].half()
    target[3]["boxes"] = target[3]["boxes"].double()
    target[4]["iscrowd"] = target[4]["iscrowd"].bool()
    target[5]["area"] = target[5]["area"].round().long()
    preds[5] = {"boxes": torch.tensor([]), "scores": torch.tensor([]), "labels": torch.tensor([])}
    for kwargs in ({"class_metrics": True}, {"box_format": "cxcywh", "average": "micro"}):
        _side_by_side(reference, [(preds, target)], **kwargs)


def test_segm_images_without_masks(reference: Any) -> None:
    preds, target = _batch(50, 5, masks=True)
    empty = torch.zeros((0, H, W), dtype=torch.uint8)
    target[1] = {**target[1], "masks": empty, "labels": torch.zeros(0, dtype=torch.int64)}
    target[1]["iscrowd"] = target[1]["area"] = torch.zeros(0)
    _side_by_side(reference, [(preds, target)], iou_type="segm", class_metrics=True)


def test_forward_reset_and_clone(reference: Any) -> None:
    batches = [_batch(seed, 3) for seed in (60, 61, 62)]
    ours, theirs = MeanAveragePrecision(class_metrics=True), reference(class_metrics=True)
    for preds, target in batches:
        _same(ours(preds, target), theirs(preds, target))  # forward: this batch alone
    _same(ours.compute(), theirs.compute())
    _same(ours.clone().compute(), theirs.compute())
    ours.reset()
    assert ours.detection_box == [] and ours.groundtruth_labels == []
    ours.update(*batches[0])
    theirs.reset()
    theirs.update(*batches[0])
    _same(ours.compute(), theirs.compute())


def test_states_are_torchmetrics_lists() -> None:
    preds, target = _batch(70, 3, masks=True)
    ours = MeanAveragePrecision(iou_type=("bbox", "segm"))
    ours.update(preds, target)
    for name in ("detection_box", "detection_scores", "groundtruth_area", "groundtruth_crowds"):
        assert all(isinstance(v, torch.Tensor) for v in getattr(ours, name))
    assert all(isinstance(v, tuple) for v in ours.detection_mask)
    ours.to(torch.float64)  # masks' RLE tuples are left alone; boxes become float64
    assert ours.detection_box[0].dtype == torch.float64
    assert isinstance(ours.groundtruth_mask[0], tuple)


def test_bad_arguments_name_themselves() -> None:
    for kwargs, word in (
        ({"box_format": "xyxyz"}, "box_format"),
        ({"iou_type": "keypoints"}, "iou_type"),
        ({"iou_thresholds": (0.5,)}, "iou_thresholds"),
        ({"max_detection_thresholds": [1, 10]}, "max_detection_thresholds"),
        ({"class_metrics": 1}, "class_metrics"),
        ({"average": "weighted"}, "average"),
        ({"backend": "hotcoco"}, "backend"),
    ):
        with pytest.raises(ParameterError, match=word):
            MeanAveragePrecision(**kwargs)
    metric = MeanAveragePrecision()
    preds, target = _batch(80, 2)
    with pytest.raises(ValueError, match="same length"):
        metric.update(preds, target[:1])
    with pytest.raises(ValueError, match=r"preds\[0\]: expected a 'scores' key"):
        metric.update([{k: v for k, v in preds[0].items() if k != "scores"}], target[:1])
    bad = {**target[0], "labels": torch.zeros(len(target[0]["labels"]) + 1, dtype=torch.int64)}
    with pytest.raises(ValueError, match=r"target\[0\]\['boxes'\]: expected"):
        metric.update(preds[:1], [bad])


# ------------------------------------------------------------------- two gloo processes


def _worker(rank: int, world: int, port: int, out: str) -> None:
    dist.init_process_group(
        "gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=world
    )
    try:
        _install_box_convert()
        results = {}
        for name, kwargs, masks in (
            ("bbox", {"class_metrics": True}, False),
            ("both", {"iou_type": ("bbox", "segm"), "class_metrics": True}, True),
        ):
            pair = []
            for cls in (MeanAveragePrecision, tm_mean_ap.MeanAveragePrecision):
                metric = cls(**kwargs)
                for seed in (0, 1):
                    metric.update(*_batch(100 * rank + seed, 3, masks=masks))
                r = metric.compute()
                pair.append({k: v.tolist() for k, v in r.items()})
                assert len(metric.detection_labels) == 3 * 2  # this rank's, after the sync
            results[name] = pair
        Path(out, f"rank{rank}.json").write_text(json.dumps(results))
    finally:
        dist.destroy_process_group()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_two_gloo_ranks_equal_torchmetrics(tmp_path: Path) -> None:
    mp.start_processes(
        _worker, args=(2, _free_port(), str(tmp_path)), nprocs=2, join=True, start_method="spawn"
    )
    ranks = [json.loads((tmp_path / f"rank{r}.json").read_text()) for r in range(2)]
    for name in ("bbox", "both"):
        ours, theirs = ranks[0][name]
        assert ours == theirs and ranks[1][name] == ranks[0][name]
    # the gathered result is that of all 12 images, not of one rank's 6
    single = MeanAveragePrecision(class_metrics=True)
    for seed in (0, 1):
        single.update(*_batch(seed, 3))
    assert single.compute()["map"].tolist() != ranks[0]["bbox"][0]["map"]


@pytest.mark.parametrize("iou_type", ["bbox", ("bbox", "segm")])
def test_corrected_switch_reads_the_last_max_dets(reference: Any, iou_type: Any) -> None:
    # torchmetrics (pycocotools) reads maxDets=100 for map: -1 when 100 is not a threshold;
    # corrected=True reads the last one, every other key unchanged
    batches = [_batch(seed, 6, masks=iou_type != "bbox") for seed in (21, 22)]
    kwargs = {"iou_type": iou_type, "max_detection_thresholds": [1, 10, 50]}
    theirs = _run(reference, batches, class_metrics=True, extended_summary=True, **kwargs)
    ours = _run(MeanAveragePrecision, batches, class_metrics=True, **kwargs)
    fixed = _run(MeanAveragePrecision, batches, class_metrics=True, corrected=True, **kwargs)
    prefixes = [""] if iou_type == "bbox" else ["bbox_", "segm_"]
    for prefix in prefixes:
        assert float(theirs[f"{prefix}map"]) == -1 == float(ours[f"{prefix}map"])
        # pycocotools' own precision at the last level, classes with ground truth
        precision = theirs[f"{prefix}precision"].numpy()[:, :, :, 0, -1]
        valid = precision[precision > -1]
        assert float(fixed[f"{prefix}map"]) == np.float32(np.mean(valid))
        slices = [precision[:, :, k] for k in range(precision.shape[2])]  # (T, R) each
        per_class = [np.mean(c[c > -1]) if (c > -1).any() else -1.0 for c in slices]
        assert fixed[f"{prefix}map_per_class"].tolist() == np.float32(per_class).tolist()
        for key in theirs:
            if key.startswith(prefix) and key not in (f"{prefix}map", f"{prefix}map_per_class"):
                if key.removeprefix(prefix) in ("ious", "precision", "recall", "scores"):
                    continue
                _same(fixed[key], theirs[key], key)
    with pytest.raises(ParameterError, match="corrected"):
        MeanAveragePrecision(corrected=1)
