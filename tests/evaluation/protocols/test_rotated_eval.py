"""Rotated evaluation through the pipeline: COCO (RotatedCOCOeval semantics, against pycocotools
with a shapely rotated IoU), the DOTA devkit and mmrotate protocols (against transcriptions of
their evaluation loops), probiou as a similarity, and the DOTA readers end to end."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import ioukit
from ioukit import box_convert
from ioukit.dataset import CategoryTable, Dataset, ImageTable
from ioukit.synthetic import make_rotated

shapely = pytest.importorskip("shapely")


def generated(seed: int, n_images: int = 25, n_cats: int = 3) -> tuple[Dataset, Dataset]:
    """Rotated ground truth, jittered predictions plus false positives, distinct scores."""
    return make_rotated(n_images, n_cats, seed=seed)


def shapely_iou(dt: np.ndarray, gt: np.ndarray) -> np.ndarray:
    if len(dt) == 0 or len(gt) == 0:
        return np.zeros((len(dt), len(gt)))
    pd = shapely.polygons(box_convert(dt, "cxcywhr", "xyxyxyxy").reshape(-1, 4, 2))
    pg = shapely.polygons(box_convert(gt, "cxcywhr", "xyxyxyxy").reshape(-1, 4, 2))
    inter = shapely.area(shapely.intersection(pd[:, None], pg[None, :]))
    union = shapely.area(pd)[:, None] + shapely.area(pg)[None, :] - inter
    return inter / union


# -------------------------------------------------------------------- COCO: RotatedCOCOeval


def rotated_cocoeval_stats(gt: Dataset, pred: Dataset) -> np.ndarray:
    """detectron2's RotatedCOCOeval: pycocotools with computeIoU -> rotated IoU (shapely)."""
    import contextlib
    import io

    from pycocotools.coco import COCO
    from pycocotools.cocoeval import COCOeval

    class RotatedCOCOeval(COCOeval):  # type: ignore[misc]
        def computeIoU(self, imgId: int, catId: int) -> object:  # noqa: N802
            p = self.params
            g = self._gts[imgId, catId]
            d = self._dts[imgId, catId]
            if len(g) == 0 and len(d) == 0:
                return []
            order = np.argsort([-x["score"] for x in d], kind="mergesort")
            d = [d[i] for i in order][: p.maxDets[-1]]
            return shapely_iou(
                np.array([x["bbox"] for x in d]).reshape(-1, 5),
                np.array([x["bbox"] for x in g]).reshape(-1, 5),
            )

    doc = {
        "images": [{"id": int(i)} for i in gt.images.ids],
        "categories": [{"id": int(c)} for c in gt.categories.ids],
        "annotations": [
            {
                "id": k + 1,
                "image_id": int(gt.images.ids[gt.image_index[k]]),
                "category_id": int(gt.category_id[k]),
                "bbox": gt.rotated[k].tolist(),  # type: ignore[index]
                "area": float(gt.area[k]),
                "iscrowd": 0,
            }
            for k in range(len(gt))
        ],
    }
    results = [
        {
            "image_id": int(gt.images.ids[pred.image_index[k]]),
            "category_id": int(pred.category_id[k]),
            "bbox": pred.rotated[k].tolist(),  # type: ignore[index]
            "score": float(pred.scores[k]),  # type: ignore[index]
        }
        for k in range(len(pred))
    ]
    with contextlib.redirect_stdout(io.StringIO()):
        coco = COCO()
        coco.dataset = doc
        coco.createIndex()
        dets = coco.loadRes(results)
        ev = RotatedCOCOeval(coco, dets, "bbox")
        ev.evaluate()
        ev.accumulate()
        ev.summarize()
    return np.asarray(ev.stats)


@pytest.mark.parametrize("seed", [0, 1])
def test_coco_rotated_matches_rotated_cocoeval(seed: int) -> None:
    gt, pred = generated(seed)
    # pycocotools ignores "difficult": compare without it
    gt = Dataset.from_arrays(
        gt.images,
        gt.categories,
        boxes=gt.boxes,
        image_index=gt.image_index,
        category_id=gt.category_id,
        area=gt.area,
        rotated=gt.rotated,
    )
    want = rotated_cocoeval_stats(gt, pred)
    got = ioukit.evaluate(gt, pred, protocol="coco", iou_type="rotated")
    values = np.array(list(got.stats.values()))
    assert 0.1 < want[0] < 0.9
    np.testing.assert_allclose(values, want, rtol=0, atol=1e-12, err_msg=f"{values}\n{want}")


def test_coco_rotated_with_zero_angles_equals_bbox() -> None:
    gt, pred = generated(3)
    flat_g, flat_p = np.array(gt.rotated), np.array(pred.rotated)
    flat_g[:, 4] = 0
    flat_p[:, 4] = 0

    def rebuild(ds: Dataset, rotated: np.ndarray) -> Dataset:
        return Dataset.from_arrays(
            ds.images,
            ds.categories,
            boxes=box_convert(rotated, "cxcywhr", "xyxy"),
            image_index=ds.image_index,
            category_id=ds.category_id,
            scores=ds.scores,
            area=ds.area,
            rotated=rotated,
        )

    g, p = rebuild(gt, flat_g), rebuild(pred, flat_p)
    rotated = ioukit.evaluate(g, p, iou_type="rotated").stats
    bbox = ioukit.evaluate(g, p, iou_type="bbox").stats
    for key in bbox:
        assert rotated[key] == pytest.approx(bbox[key], abs=1e-12), key


def test_crowd_is_refused() -> None:
    gt, pred = generated(4)
    crowd = Dataset.from_arrays(
        gt.images,
        gt.categories,
        boxes=gt.boxes,
        image_index=gt.image_index,
        category_id=gt.category_id,
        crowd=np.arange(len(gt)) == 0,
        rotated=gt.rotated,
    )
    with pytest.raises(ioukit.DataFormatError, match="crowd"):
        ioukit.evaluate(crowd, pred, iou_type="rotated")


# -------------------------------------------------------------- DOTA devkit and mmrotate


def devkit_map(
    gt: Dataset, pred: Dataset, *, strict: bool, with_gt_only: bool, kind: str = "stable"
) -> tuple:
    """dota_evaluation_task1.voc_eval (and mmrotate's eval_rbbox_map) transcribed."""
    aps = {}
    for cid in gt.categories.ids.tolist():
        g_sel = gt.category_id == cid
        records = {}
        npos = 0
        for image in range(len(gt.images)):
            rows = np.flatnonzero(g_sel & (gt.image_index == image))
            difficult = gt.difficult[rows]
            records[image] = (gt.rotated[rows], difficult, np.zeros(len(rows), bool))  # type: ignore[index]
            npos += int((~difficult).sum())
        p_rows = np.flatnonzero(pred.category_id == cid)
        order = p_rows[np.argsort(-pred.scores[p_rows], kind=kind)]  # type: ignore[index,call-overload]
        tp = np.zeros(len(order))
        fp = np.zeros(len(order))
        for d, row in enumerate(order):
            boxes, difficult, taken = records[int(pred.image_index[row])]
            ovmax = -np.inf
            if len(boxes):
                overlaps = shapely_iou(pred.rotated[row : row + 1], boxes)[0]  # type: ignore[index]
                ovmax, jmax = overlaps.max(), int(overlaps.argmax())
            if (ovmax > 0.5) if strict else (ovmax >= 0.5):
                if not difficult[jmax]:
                    if not taken[jmax]:
                        tp[d] = 1
                        taken[jmax] = True
                    else:
                        fp[d] = 1
            else:
                fp[d] = 1
        fp, tp = np.cumsum(fp), np.cumsum(tp)
        if npos == 0:
            aps[cid] = None
            continue
        rec = tp / npos
        prec = tp / np.maximum(tp + fp, np.finfo(np.float64).eps)
        ap = 0.0
        for t in np.arange(0.0, 1.1, 0.1):
            ap += (0 if np.sum(rec >= t) == 0 else np.max(prec[rec >= t])) / 11.0
        aps[cid] = ap
    values = [a for a in aps.values() if a is not None]
    if not with_gt_only:
        values += [0.0] * sum(a is None for a in aps.values())
    return float(np.mean(values)), aps


@pytest.mark.parametrize("seed", [5, 6])
def test_dota_protocol_matches_devkit_loop(seed: int) -> None:
    gt, pred = generated(seed, n_cats=4)
    want, per_class = devkit_map(gt, pred, strict=True, with_gt_only=False)
    got = ioukit.evaluate(gt, pred, protocol="dota", iou_type="rotated")
    assert got.stats["mAP"] == pytest.approx(want, abs=1e-12)
    for row in got.per_class:
        expected = per_class[row["category_id"]]
        assert row["AP"] == pytest.approx(-1.0 if expected is None else expected, abs=1e-12)


def mmrotate_map(gt: Dataset, pred: Dataset) -> tuple[float, dict]:  # type: ignore[type-arg]
    """mmrotate's eval_rbbox_map (tpfp_default + mmdet average_precision '11points') transcribed."""
    rotated_g, rotated_p = np.asarray(gt.rotated), np.asarray(pred.rotated)
    scores = np.asarray(pred.scores)
    aps, results = [], {}
    for cid in gt.categories.ids.tolist():
        tps, fps, dets, num_gts = [], [], [], 0
        for image in range(len(gt.images)):
            g_sel = (gt.category_id == cid) & (gt.image_index == image)
            regular = rotated_g[g_sel & ~gt.difficult]
            ignored = rotated_g[g_sel & gt.difficult]
            num_gts += len(regular)
            boxes = np.vstack([regular, ignored])
            ignore = np.r_[np.zeros(len(regular), bool), np.ones(len(ignored), bool)]
            rows = np.flatnonzero((pred.category_id == cid) & (pred.image_index == image))
            tp = np.zeros(len(rows), dtype=np.float32)
            fp = np.zeros(len(rows), dtype=np.float32)
            if len(boxes) == 0:
                fp[:] = 1
            elif len(rows):
                ious = shapely_iou(rotated_p[rows], boxes)
                ious_max, ious_argmax = ious.max(axis=1), ious.argmax(axis=1)
                covered = np.zeros(len(boxes), bool)
                for i in np.argsort(-scores[rows]):
                    if ious_max[i] >= 0.5:
                        j = ious_argmax[i]
                        if not ignore[j]:
                            if not covered[j]:
                                covered[j] = True
                                tp[i] = 1
                            else:
                                fp[i] = 1
                    else:
                        fp[i] = 1
            tps.append(tp)
            fps.append(fp)
            dets.append(scores[rows])
        order = np.argsort(-np.concatenate(dets))
        tp = np.cumsum(np.concatenate(tps)[order])
        fp = np.cumsum(np.concatenate(fps)[order])
        eps = np.finfo(np.float32).eps
        recalls = tp / np.maximum(np.array([num_gts]), eps)
        precisions = tp / np.maximum(tp + fp, eps)
        ap = np.zeros(1, dtype=np.float32)
        for thr in np.arange(0, 1 + 1e-3, 0.1):
            precs = precisions[recalls >= thr]
            ap[0] += precs.max() if precs.size > 0 else 0
        ap /= 11
        results[cid] = ap[0] if num_gts > 0 else None
        if num_gts > 0:
            aps.append(ap[0])
    return float(np.array(aps).mean()), results


@pytest.mark.parametrize("seed", [7, 8])
def test_mmrotate_protocol_matches_eval_rbbox_map_loop(seed: int) -> None:
    gt, pred = generated(seed, n_cats=4)
    want, per_class = mmrotate_map(gt, pred)
    got = ioukit.evaluate(gt, pred, protocol="mmrotate", iou_type="rotated")
    assert got.stats["mAP"] == want  # mmdet's float32 arithmetic, bit for bit
    for row in got.per_class:
        expected = per_class[row["category_id"]]
        assert row["AP"] == (-1.0 if expected is None else float(expected))


def test_threshold_exactly_half_separates_dota_and_mmrotate() -> None:
    images = ImageTable.from_lists([1], ["a"])
    cats = CategoryTable.from_lists([1], ["ship"])
    g = np.array([[10.0, 10.0, 6.0, 2.0, 0.0]])
    p = np.array([[12.0, 10.0, 6.0, 2.0, 0.0]])  # IoU exactly 4 / 8
    assert ioukit.rotated_box_iou(g, p)[0, 0] == 0.5
    gt = Dataset.from_arrays(
        images, cats, boxes=[[7, 9, 13, 11]], image_index=[0], category_id=[1], rotated=g
    )
    pred = Dataset.from_arrays(
        images,
        cats,
        boxes=[[9, 9, 15, 11]],
        image_index=[0],
        category_id=[1],
        scores=[0.9],
        rotated=p,
    )
    assert ioukit.evaluate(gt, pred, protocol="dota", iou_type="rotated").stats["mAP"] == 0.0
    # 11 * (1 / 11) summed as the devkit sums it: 1.0000000000000002
    mm = ioukit.evaluate(gt, pred, protocol="mmrotate", iou_type="rotated").stats["mAP"]
    assert mm == pytest.approx(1.0, abs=1e-15)
    # matched again at 0.5 (the outcome holds 0.3 only): each tool's threshold test still
    for protocol, hits in (("dota", 0), ("mmrotate", 1)):
        at = ioukit.evaluate(gt, pred, protocol=protocol, iou_type="rotated", iou_threshold=0.3)
        assert at.matched_ious(iou_threshold=0.5).size == hits, protocol
        assert (at.curves(iou_threshold=0.5).best_f1 > 0) == bool(hits), protocol


def test_probiou_similarity_is_more_lenient() -> None:
    gt, pred = generated(9)
    exact = ioukit.evaluate(gt, pred, iou_type="rotated").stats
    prob = ioukit.evaluate(gt, pred, iou_type="probiou").stats
    assert prob["AP50"] > exact["AP50"]
    dota = ioukit.evaluate(gt, pred, protocol="dota", iou_type="probiou").stats["mAP"]
    assert dota >= ioukit.evaluate(gt, pred, protocol="dota", iou_type="rotated").stats["mAP"]


def test_protocol_options_are_validated() -> None:
    gt, pred = generated(10)
    with pytest.raises(ValueError, match="supports 'rotated', 'probiou'"):
        ioukit.evaluate(gt, pred, protocol="dota")
    with pytest.raises(ValueError, match="interpolation"):
        ioukit.evaluate(gt, pred, protocol="dota", iou_type="rotated", interpolation="101")
    r = ioukit.evaluate(gt, pred, protocol="dota", iou_type="rotated", interpolation="all")
    assert 0 < r.stats["mAP"] < 1


def test_dota_files_end_to_end(tmp_path: Path) -> None:
    from ioukit.io import read_ground_truth, read_predictions, write_dataset
    from ioukit.io.dota import DOTA_V1_CLASSES

    gt, pred = generated(11)
    names = DOTA_V1_CLASSES[:3]
    relabel = CategoryTable.from_lists([1, 2, 3], list(names))

    def with_names(ds: Dataset) -> Dataset:
        return Dataset.from_arrays(
            ds.images,
            relabel,
            boxes=ds.boxes,
            image_index=ds.image_index,
            category_id=ds.category_id,
            scores=ds.scores,
            difficult=ds.difficult,
            rotated=ds.rotated,
        )

    write_dataset(with_names(gt), tmp_path / "labelTxt", format="dota")
    write_dataset(with_names(pred), tmp_path / "det", format="dota")
    g = read_ground_truth(tmp_path / "labelTxt", classes=list(DOTA_V1_CLASSES))
    p = read_predictions(tmp_path / "det", g)
    got = ioukit.evaluate(g, p, protocol="dota", iou_type="rotated")
    want, _ = devkit_map(gt, pred, strict=True, with_gt_only=True)
    # 15 classes in the DOTA list, 3 with data: the devkit averages over all 15
    assert got.stats["mAP"] == pytest.approx(want * 3 / 15, abs=1e-9)


def test_cli_eval_dota(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from ioukit.cli import main
    from ioukit.io import write_dataset

    gt, pred = generated(12)
    write_dataset(gt, tmp_path / "labelTxt", format="dota")
    write_dataset(pred, tmp_path / "det", format="dota")
    args = ["eval", "--gt", str(tmp_path / "labelTxt"), "--pred", str(tmp_path / "det")]
    assert main([*args, "--protocol", "dota", "--iou-type", "rotated", "--quiet"]) == 0
    out = capsys.readouterr().out
    want = ioukit.evaluate(gt, pred, protocol="dota", iou_type="rotated").stats["mAP"]
    assert f"{want:.3f}" in out
    # without --iou-type: the protocol's own (rotated), the same report (#29 item 5)
    assert main([*args, "--protocol", "dota", "--quiet"]) == 0
    assert capsys.readouterr().out == out
    assert main([*args, "--protocol", "dota", "--iou-type", "bbox", "--quiet"]) == 2
    assert "supports 'rotated', 'probiou'" in capsys.readouterr().err


def test_dota_devkit_compat_reproduces_its_unstable_sort() -> None:
    gt, pred = generated(13, n_images=40, n_cats=2)
    tied = Dataset.from_arrays(
        pred.images,
        pred.categories,
        boxes=pred.boxes,
        image_index=pred.image_index,
        category_id=pred.category_id,
        scores=np.round(np.asarray(pred.scores) * 4) / 4,  # many ties
        area=pred.area,
        rotated=pred.rotated,
    )
    quick, _ = devkit_map(gt, tied, strict=True, with_gt_only=False, kind="quicksort")
    stable, _ = devkit_map(gt, tied, strict=True, with_gt_only=False, kind="stable")
    assert quick != stable  # the data exercises the tie order
    got = ioukit.evaluate(gt, tied, protocol="dota", iou_type="rotated", compat="devkit")
    assert got.stats["mAP"] == pytest.approx(quick, abs=1e-12)
    default = ioukit.evaluate(gt, tied, protocol="dota", iou_type="rotated")
    assert default.stats["mAP"] == pytest.approx(stable, abs=1e-12)
    outcome = got.outcome
    assert outcome is not None
    assert sorted(outcome.pred_row.tolist()) == list(range(len(tied)))
    np.testing.assert_array_equal(np.asarray(tied.scores)[outcome.pred_row], outcome.score)


def test_coco_rotated_json_round_trip_and_cli(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from ioukit.cli import main
    from ioukit.io import read_ground_truth, read_predictions, write_dataset

    gt, pred = generated(14)
    gt = Dataset.from_arrays(  # the format has no "difficult" flag
        gt.images,
        gt.categories,
        boxes=gt.boxes,
        image_index=gt.image_index,
        category_id=gt.category_id,
        area=gt.area,
        rotated=gt.rotated,
    )
    write_dataset(gt, tmp_path / "gt.json", format="coco_rotated")
    write_dataset(pred, tmp_path / "res.json", format="coco_rotated")
    g = read_ground_truth(tmp_path / "gt.json", format="coco_rotated")
    p = read_predictions(tmp_path / "res.json", g, format="coco_rotated")
    np.testing.assert_array_equal(g.rotated, gt.rotated)  # type: ignore[arg-type]
    np.testing.assert_array_equal(p.rotated, pred.rotated)  # type: ignore[arg-type]
    np.testing.assert_array_equal(g.area, gt.area)
    want = ioukit.evaluate(gt, pred, iou_type="rotated").stats
    assert ioukit.evaluate(g, p, iou_type="rotated").stats == want
    args = ["eval", "--gt", str(tmp_path / "gt.json"), "--pred", str(tmp_path / "res.json")]
    args += ["--gt-format", "coco_rotated", "--pred-format", "coco_rotated"]
    assert main([*args, "--iou-type", "rotated", "--quiet"]) == 0
    assert f"{want['AP']:.3f}" in capsys.readouterr().out
    # to DOTA and back keeps the boxes (as corners)
    assert (
        main(
            [
                "convert",
                str(tmp_path / "gt.json"),
                str(tmp_path / "dota"),
                "--to",
                "dota",
                "--from",
                "coco_rotated",
                "--quiet",
            ]
        )
        == 0
    )
    d = read_ground_truth(tmp_path / "dota")
    again = ioukit.evaluate(
        d,
        read_predictions(tmp_path / "res.json", d, format="coco_rotated"),
        iou_type="rotated",
    ).stats
    for key, value in want.items():
        assert again[key] == pytest.approx(value, abs=1e-9), key


@pytest.mark.parametrize(
    ("doc", "match"),
    [
        ({"images": [], "annotations": {}}, "annotations: expected a list"),
        (
            {
                "images": [{"id": 1}],
                "categories": [{"id": 1}],
                "annotations": [{"image_id": 1, "category_id": 1, "bbox": [0, 0, 1, 1]}],
            },
            r"annotations\[0\].bbox: expected 5 numbers \[cx, cy, w, h, angle\] \(rotated\), got 4",
        ),
        (
            {
                "images": [{"id": 1}],
                "categories": [{"id": 1}],
                "annotations": [{"image_id": 1, "category_id": 1, "bbox": [0, 0, 1, 1, "x"]}],
            },
            r"annotations\[0\].bbox\[4\]: expected a number",
        ),
        (
            {
                "images": [{"id": 1}],
                "categories": [{"id": 1}],
                "annotations": [{"image_id": 2, "category_id": 1, "bbox": [0, 0, 1, 1, 0]}],
            },
            r"annotations\[0\].image_id: 2 is not in images",
        ),
    ],
)
def test_coco_rotated_bad_documents(doc: dict, match: str) -> None:  # type: ignore[type-arg]
    from ioukit.io.coco_rotated import read_coco_rotated_ground_truth

    with pytest.raises(ioukit.DataFormatError, match=match):
        read_coco_rotated_ground_truth(doc)


@pytest.mark.parametrize(
    ("protocol", "iou_type"), [("coco", "rotated"), ("dota", "rotated"), ("yolo", "probiou")]
)
def test_cli_plots_for_rotated(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], protocol: str, iou_type: str
) -> None:
    from ioukit.cli import main
    from ioukit.io import write_dataset

    gt, pred = generated(15)
    write_dataset(gt, tmp_path / "g", format="dota")
    write_dataset(pred, tmp_path / "p", format="dota")
    args = ["eval", "--gt", str(tmp_path / "g"), "--pred", str(tmp_path / "p"), "--quiet"]
    args += ["--iou-type", iou_type, "--protocol", protocol, "--plots", str(tmp_path / "fig")]
    assert main(args) == 0, capsys.readouterr().err
    assert (tmp_path / "fig" / "confusion_matrix.png").is_file()
    assert (tmp_path / "fig" / "pr_curves.png").is_file()


@pytest.mark.parametrize("protocol", ["coco", "dota", "yolo"])
def test_curves_and_confusion_use_the_rotated_match(protocol: str) -> None:
    """Crossed thin boxes: identical envelopes (IoU 1) but rotated IoU ~0.04."""
    images, cats = ImageTable.from_lists([1], ["a"]), CategoryTable.from_lists([1], ["pole"])
    env = [[0.0, 0.0, 100.0, 100.0]]
    one = {"image_index": [0], "category_id": [1], "area": [560.0]}
    gt = Dataset.from_arrays(images, cats, boxes=env, rotated=[[50, 50, 140, 4, 45]], **one)
    pred = Dataset.from_arrays(
        images, cats, boxes=env, scores=[0.9], rotated=[[50, 50, 140, 4, -45]], **one
    )
    r = ioukit.evaluate(gt, pred, protocol=protocol, iou_type="rotated")
    cm = r.confusion_matrix()
    assert cm.matrix.tolist() == [[0, 1], [1, 0]]  # a false positive and a missed pole
    curves = r.curves()
    assert curves.best_f1 == pytest.approx(0.0, abs=1e-9)
    assert r.matched_ious().size == 0
    boxes = ioukit.evaluate(gt, pred, protocol="yolo" if protocol == "dota" else protocol)
    assert boxes.confusion_matrix().matrix.tolist() == [[1, 0], [0, 0]]  # envelopes: a match


@pytest.mark.parametrize("iou_type", ["rotated", "probiou"])
def test_group_matrices_equal_per_group_functions(iou_type: str) -> None:
    from ioukit.evaluation import Groups, get_similarity

    gt, pred = generated(16)
    groups = Groups.build(gt, pred, max_det=3)
    m = get_similarity(iou_type).matrices(gt, pred, groups)
    fn = ioukit.rotated_box_iou if iou_type == "rotated" else ioukit.probiou
    checked = 0
    for i in range(groups.n_groups):
        p0, kept = int(groups.pred_start[i]), int(groups.kept_count[i])
        p_rows = groups.pred_rows[p0 : p0 + kept]
        g_rows = groups.gt_rows[int(groups.gt_start[i]) : int(groups.gt_end[i])]
        if len(p_rows) and len(g_rows):
            want = fn(np.asarray(pred.rotated)[p_rows], np.asarray(gt.rotated)[g_rows])
            np.testing.assert_array_equal(m.matrix(groups, i), want)
            checked += 1
    assert checked > 5


@pytest.mark.parametrize("protocol", ["dota", "mmrotate"])
def test_matched_ious_at_another_threshold_rematch_by_the_protocols_rule(protocol: str) -> None:
    """Without the threshold in the outcome, ``matched_ious`` matches again by the rule the
    protocol declares (VOC's for these, with the rotated IoU): equal to the outcome of the
    same protocol evaluated at that threshold (was refused by protocol name)."""
    gt, pred = generated(5, n_cats=4)
    result = ioukit.evaluate(gt, pred, protocol=protocol, iou_type="rotated")
    assert not np.isclose(result.outcome.thresholds, 0.7).any()
    at = ioukit.evaluate(gt, pred, protocol=protocol, iou_type="rotated", iou_threshold=0.7)
    got, want = result.matched_ious(iou_threshold=0.7), at.matched_ious(iou_threshold=0.7)
    assert got.size > 0
    np.testing.assert_array_equal(np.sort(got), np.sort(want))
