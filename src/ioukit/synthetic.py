"""Seeded synthetic detection data sets, for tests, benchmarks and demos.

Like ``sklearn.datasets.make_*``: every function is a function of its arguments only (one
``numpy.random.default_rng(seed)`` stream). The ``make_*_detections``, ``make_keypoints`` and
``make_lvis`` functions return ground truth plus predictions as COCO dicts (a ground-truth dict
and a results list, what :func:`ioukit.evaluate` and the readers take), ``make_rotated`` a pair
of :class:`~ioukit.dataset.Dataset`, the others arrays.

- :func:`make_detections`: COCO-like boxes: Zipf classes, a COCO size mix, crowds, true and
  false positives with overlapping scores, a ``max_dets`` cap (the benchmark set);
- :func:`make_grid_detections`: integer boxes and scores in tenths: IoU and score ties,
  wrong-class / duplicate / badly placed / background predictions, a class without ground
  truth, images without ground truth or predictions;
- :func:`make_exact_iou_detections`: predictions whose IoU is exactly a given threshold;
- :func:`add_masks`: the same sets with masks, polygons (ground truth) and compressed RLE
  (results);
- :func:`make_keypoints`: COCO person keypoints: crowded images, hidden keypoints, crowd
  regions, jittered results, false positives, score ties;
- :func:`make_lvis`: LVIS federated sets: r/c/f frequencies, negative and not-exhaustive
  classes, zero areas, ignore flags;
- :func:`make_rotated`: rotated boxes ``(cx, cy, w, h, angle)`` with ``difficult`` flags, as
  two Datasets;
- :func:`make_boxes`, :func:`make_rotated_boxes`, :func:`make_masks`: arrays of boxes,
  rotated boxes and binary masks for the IoU, NMS and mask kernels;
- :func:`to_datasets`: a (ground truth, results) pair of COCO dicts -> two Datasets.

``seed`` is an int or a ``numpy.random.Generator`` (whose stream then continues).

Examples
--------
>>> from ioukit.synthetic import make_detections
>>> gt, results = make_detections(num_images=3, num_classes=2, seed=0)
>>> sorted(gt), len(gt["images"]), sorted(results[0])
(['annotations', 'categories', 'images'], 3, ['bbox', 'category_id', 'image_id', 'score'])
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from ioukit import masks
from ioukit._evaluate_inputs import COCO_READERS
from ioukit.boxes import box_convert
from ioukit.dataset import CategoryTable, Dataset, ImageTable
from ioukit.errors import ParameterError
from ioukit.evaluation.registry import similarity_input

if TYPE_CHECKING:
    from ioukit.dataset import Dataset

__all__ = [
    "add_masks",
    "make_boxes",
    "make_detections",
    "make_exact_iou_detections",
    "make_grid_detections",
    "make_keypoints",
    "make_lvis",
    "make_masks",
    "make_rotated",
    "make_rotated_boxes",
    "to_datasets",
]

GroundTruth = dict[str, Any]
Results = list[dict[str, Any]]

#: (width, height) of the images of :func:`make_detections`
IMAGE_SIZES = ((640, 480), (640, 427), (480, 640), (500, 375), (640, 512))


# ---------------------------------------------------------------- COCO-like boxes


def _check_counts(**counts: tuple[object, int]) -> None:
    """Refuse a count that is not an integer >= its minimum, naming the argument."""

    for name, (value, minimum) in counts.items():
        if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < minimum:
            raise ParameterError(f"{name}: expected an integer >= {minimum}, got {value!r}")


def _sizes(rng: np.random.Generator, n: int, width: int, height: int) -> np.ndarray:
    """Box (w, h) pairs with a COCO-like small/medium/large mix, shape (n, 2)."""
    kind = rng.choice(3, size=n, p=[0.41, 0.34, 0.25])
    side_max = min(width, height) * 0.95
    low = np.array([4.0, 32.0, 96.0])[kind]
    high = np.minimum(np.array([32.0, 96.0, side_max])[kind], side_max)
    side = rng.uniform(low, np.maximum(high, low + 1))
    aspect = np.exp(rng.normal(0.0, 0.45, size=n))
    w = np.clip(side * np.sqrt(aspect), 2.0, width - 1.0)
    h = np.clip(side / np.sqrt(aspect), 2.0, height - 1.0)
    return np.stack([w, h], axis=1)


def _place(rng: np.random.Generator, wh: np.ndarray, width: int, height: int) -> np.ndarray:
    """xywh boxes of the given sizes placed uniformly inside the image, shape (n, 4)."""
    x = rng.uniform(0.0, width - wh[:, 0])
    y = rng.uniform(0.0, height - wh[:, 1])
    return np.stack([x, y, wh[:, 0], wh[:, 1]], axis=1)


def _jitter(rng: np.random.Generator, boxes: np.ndarray, scale: np.ndarray) -> np.ndarray:
    """Localisation noise proportional to box size; ``scale`` per box, shape (n,)."""
    noise = rng.normal(0.0, 1.0, size=boxes.shape) * scale[:, None]
    out = boxes.copy()
    out[:, 0] += noise[:, 0] * boxes[:, 2]
    out[:, 1] += noise[:, 1] * boxes[:, 3]
    out[:, 2] *= np.exp(noise[:, 2])
    out[:, 3] *= np.exp(noise[:, 3])
    out[:, 2:] = np.maximum(out[:, 2:], 1.0)
    return out


def make_detections(
    num_images: int = 5000,
    num_classes: int = 80,
    *,
    gt_per_image: float = 7.2,
    fp_per_image: float = 56.0,
    max_dets: int = 100,
    crowd_fraction: float = 0.01,
    seed: int | np.random.Generator = 0,
    class_names: Sequence[str] | None = None,
    category_ids: Sequence[int] | None = None,
    image_ids: Sequence[int] | None = None,
    classes_without_gt: int = 0,
    empty_gt_images: float = 0.0,
    empty_pred_images: float = 0.0,
    decimals: int = 2,
    score_decimals: int = 3,
    score_levels: int = 0,
    clip: bool = False,
) -> tuple[GroundTruth, Results]:
    """COCO-like ground truth and the predictions of a plausible detector.

    Classes follow a Zipf-like frequency; boxes a COCO size mix (about 41 % small, 34 %
    medium, 25 % large). About 88 % of the ground truths are detected (30 % of those twice,
    8 % with the wrong class); false positives are scattered boxes that score lower on
    average, but the two score distributions overlap. Each image keeps its top ``max_dets``
    predictions, in shuffled file order. The defaults make the 5 000-image benchmark set
    (about 36 000 ground truths, 318 000 predictions).

    Parameters
    ----------
    num_images, num_classes : int
        Image ids are ``1..num_images``, image sizes from :data:`IMAGE_SIZES`.
    gt_per_image, fp_per_image : float
        Poisson means of the ground truths and of the false positives per image.
    max_dets : int
        Predictions kept per image (the best scores).
    crowd_fraction : float
        Probability that a ground truth is a crowd region (``iscrowd`` 1).
    seed : int or numpy.random.Generator
        Seed of the one random stream.
    class_names : sequence of str, optional
        ``num_classes`` names; default ``class_1``...
    category_ids : sequence of int, optional
        ``num_classes`` category ids (any order, e.g. non-contiguous); default ``1..num_classes``.
    image_ids : sequence of int, optional
        ``num_images`` image ids in table order (e.g. not sorted); default ``1..num_images``.
    classes_without_gt : int
        The last ``classes_without_gt`` classes get no ground truth (predictions may still
        name them).
    empty_gt_images, empty_pred_images : float
        Probability that an image has no ground truth / no predictions.
    decimals, score_decimals : int
        Rounding of the box coordinates / areas and of the scores (fewer decimals: more ties).
    score_levels : int
        > 0: scores rounded up to multiples of ``1 / score_levels`` instead (heavy ties).
    clip : bool
        Clip the predictions to their image (jittered boxes may otherwise reach past its
        edges, which formats with normalized coordinates cannot hold).

    Returns
    -------
    ground_truth : dict
        COCO dict with ``images``, ``annotations`` (``bbox`` xywh, ``area``, ``iscrowd``) and
        ``categories``.
    results : list of dict
        COCO results (``image_id``, ``category_id``, ``bbox``, ``score``).

    Examples
    --------
    >>> gt, res = make_detections(num_images=20, num_classes=3, seed=1, classes_without_gt=1)
    >>> sorted({a["category_id"] for a in gt["annotations"]})
    [1, 2]
    >>> len(res) > 0 and all(0 <= r["score"] <= 1 for r in res)
    True
    """
    _check_counts(num_images=(num_images, 0), num_classes=(num_classes, 1))
    rng = np.random.default_rng(seed)
    names = tuple(class_names or (f"class_{i + 1}" for i in range(num_classes)))
    cat_ids = np.arange(1, num_classes + 1) if category_ids is None else np.array(category_ids)
    freq = 1.0 / np.arange(1, num_classes + 1) ** 0.8
    freq /= freq.sum()
    gt_freq = freq
    if classes_without_gt:
        gt_freq = freq.copy()
        gt_freq[num_classes - classes_without_gt :] = 0.0
        gt_freq /= gt_freq.sum()
    images: list[dict[str, Any]] = []
    annotations: list[dict[str, Any]] = []
    results: list[dict[str, Any]] = []
    ann_id = 1
    for img in range(num_images):
        image_id = img + 1 if image_ids is None else int(image_ids[img])
        width, height = IMAGE_SIZES[rng.integers(len(IMAGE_SIZES))]
        images.append(
            {"id": image_id, "file_name": f"{image_id:012d}.jpg", "width": width, "height": height}
        )
        n_gt = int(rng.poisson(gt_per_image))
        if empty_gt_images and rng.random() < empty_gt_images:
            n_gt = 0
        gt = _place(rng, _sizes(rng, n_gt, width, height), width, height)
        gt_cls = rng.choice(cat_ids, size=n_gt, p=gt_freq)
        crowd = rng.random(n_gt) < crowd_fraction
        fill = rng.uniform(0.45, 0.9, size=n_gt)  # segment area / box area
        for j in range(n_gt):
            x, y, w, h = (round(float(v), decimals) for v in gt[j])
            annotations.append(
                {
                    "id": ann_id,
                    "image_id": image_id,
                    "category_id": int(gt_cls[j]),
                    "bbox": [x, y, w, h],
                    "area": round(w * h * float(fill[j]), decimals),
                    "iscrowd": int(crowd[j]),
                }
            )
            ann_id += 1
        # true-positive-like predictions: detected GTs, some twice, some with the wrong class
        detected = rng.random(n_gt) < 0.88
        dup = detected & (rng.random(n_gt) < 0.3)
        src = np.concatenate([np.flatnonzero(detected), np.flatnonzero(dup)])
        tp_boxes = _jitter(rng, gt[src], rng.uniform(0.02, 0.15, size=len(src)))
        tp_cls = gt_cls[src].copy()
        wrong = rng.random(len(src)) < 0.08
        tp_cls[wrong] = rng.choice(cat_ids, size=int(wrong.sum()), p=freq)
        tp_score = rng.beta(4.0, 2.0, size=len(src))
        tp_score[len(np.flatnonzero(detected)) :] *= 0.6
        # false positives: scattered boxes
        n_fp = int(rng.poisson(fp_per_image))
        fp_boxes = _place(rng, _sizes(rng, n_fp, width, height), width, height)
        fp_cls = rng.choice(cat_ids, size=n_fp, p=freq)
        fp_score = rng.beta(1.5, 5.0, size=n_fp)
        boxes = np.concatenate([tp_boxes, fp_boxes])
        cls = np.concatenate([tp_cls, fp_cls])
        score = np.concatenate([tp_score, fp_score])
        if score_levels:
            score = np.ceil(score * score_levels) / score_levels
        else:
            score = np.round(score, score_decimals)
        keep = np.argsort(-score, kind="stable")[:max_dets]
        keep = keep[rng.permutation(len(keep))]  # file order is not score order
        if empty_pred_images and rng.random() < empty_pred_images:
            keep = keep[:0]
        if clip:
            x2 = np.minimum(boxes[:, 0] + boxes[:, 2], width)
            y2 = np.minimum(boxes[:, 1] + boxes[:, 3], height)
            boxes[:, :2] = np.maximum(boxes[:, :2], 0.0)
            boxes[:, 2] = np.maximum(x2 - boxes[:, 0], 0.0)
            boxes[:, 3] = np.maximum(y2 - boxes[:, 1], 0.0)
        for j in keep:
            x, y, w, h = (round(float(v), decimals) for v in boxes[j])
            results.append(
                {
                    "image_id": image_id,
                    "category_id": int(cls[j]),
                    "bbox": [x, y, w, h],
                    "score": float(score[j]),
                }
            )
    categories = [{"id": int(i), "name": n} for i, n in zip(cat_ids, names, strict=True)]
    return {"images": images, "annotations": annotations, "categories": categories}, results


# ---------------------------------------------------------------- integer grid (ties)


def make_grid_detections(
    num_images: int = 20,
    num_classes: int = 4,
    *,
    crowd_fraction: float = 0.1,
    crowded_image: bool = False,
    seed: int | np.random.Generator = 0,
) -> tuple[GroundTruth, Results]:
    """Small sets on an integer grid, where IoU and score ties occur.

    Integer boxes in 120 x 120 images and scores in tenths, so IoU ties and equal scores
    occur (for IoUs exactly at a threshold see :func:`make_exact_iou_detections`);
    predictions are jittered copies (75 % of the class of the image's last ground truth, else
    any class: wrong-class predictions), duplicates, badly placed and background boxes;
    images without ground truth or without predictions; crowd regions; the last class has
    predictions only. Image ids are multiples of 7, not in table order; results are shuffled.

    Parameters
    ----------
    num_images, num_classes : int
        Sizes of the image and category tables (category ids ``1..num_classes``).
    crowd_fraction : float
        Probability that a ground truth is a crowd region.
    crowded_image : bool
        Add 150 background predictions (scores in hundredths) to the first image, more than
        the 100-detection cap.
    seed : int or numpy.random.Generator
        Seed of the one random stream.

    Returns
    -------
    ground_truth : dict
        COCO dict (``images`` with 120 x 120 sizes, ``annotations``, ``categories``).
    results : list of dict
        COCO results.

    Examples
    --------
    >>> gt, res = make_grid_detections(5, 3, seed=2)
    >>> all(float(v).is_integer() for r in res for v in r["bbox"])
    True
    >>> 3 in {a["category_id"] for a in gt["annotations"]}
    False
    """
    _check_counts(num_images=(num_images, 0), num_classes=(num_classes, 1))
    rng = np.random.default_rng(seed)
    images: list[dict[str, Any]] = []
    anns: list[dict[str, Any]] = []
    res: list[dict[str, Any]] = []
    ids = rng.permutation(np.arange(1, num_images + 1) * 7)  # image ids not in table order
    for img in ids.tolist():
        images.append({"id": img, "file_name": f"im{img}.jpg", "width": 120, "height": 120})
        n_gt = int(rng.integers(0, 6))
        boxes = np.c_[rng.integers(0, 80, (n_gt, 2)), rng.integers(4, 40, (n_gt, 2))].astype(float)
        for b in boxes:
            anns.append(
                {
                    "id": len(anns) + 1,
                    "image_id": img,
                    # the last class never has ground truth
                    "category_id": int(rng.integers(1, num_classes)),
                    "bbox": b.tolist(),
                    "area": float(b[2] * b[3]),
                    "iscrowd": int(rng.random() < crowd_fraction),
                }
            )
        for b in boxes:
            for _ in range(int(rng.integers(0, 3))):
                jit = b + rng.integers(-6, 7, 4)
                jit[2:] = np.maximum(jit[2:], 1)
                same = rng.random() < 0.75
                cat = anns[-1]["category_id"] if same else int(rng.integers(1, num_classes + 1))
                res.append(
                    {
                        "image_id": img,
                        "category_id": cat,
                        "bbox": jit.tolist(),
                        "score": float(rng.integers(1, 11) / 10),
                    }
                )
        for _ in range(int(rng.integers(0, 4))):
            b = np.r_[rng.integers(0, 90, 2), rng.integers(3, 30, 2)].astype(float)
            res.append(
                {
                    "image_id": img,
                    "category_id": int(rng.integers(1, num_classes + 1)),
                    "bbox": b.tolist(),
                    "score": float(rng.integers(1, 11) / 10),
                }
            )
    if crowded_image:
        img = int(ids[0])
        for _ in range(150):
            b = np.r_[rng.integers(0, 90, 2), rng.integers(3, 30, 2)].astype(float)
            res.append(
                {
                    "image_id": img,
                    "category_id": int(rng.integers(1, num_classes + 1)),
                    "bbox": b.tolist(),
                    "score": float(rng.integers(1, 101) / 100),
                }
            )
    order = rng.permutation(len(res))
    res = [res[i] for i in order]
    cats = [{"id": c, "name": f"c{c}"} for c in range(1, num_classes + 1)]
    return {"images": images, "annotations": anns, "categories": cats}, res


def make_exact_iou_detections(
    num_images: int = 10,
    num_classes: int = 2,
    *,
    ious: Sequence[float] = (0.5, 0.55, 0.6, 0.65, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95),
    objects_per_image: tuple[int, int] = (1, 6),
    score_levels: int = 4,
    seed: int | np.random.Generator = 0,
) -> tuple[GroundTruth, Results]:
    """Predictions whose IoU with their ground truth is exactly one of ``ious``.

    Each ground truth ``[x, y, w, h]`` (integers, one object per row of the image, rows apart)
    gets one prediction shifted right by ``d`` with ``(w - d) / (w + d) = p / q`` for the
    threshold ``p / q`` (the fraction nearest to it with a denominator up to 1000): the IoU,
    computed in float64 from integer coordinates as pycocotools does, is the float nearest to
    ``p / q`` — the comparison ``iou >= threshold`` is decided by the threshold's own rounding
    (e.g. ``np.linspace(0.5, 0.95, 10)`` is not ``0.55`` at every step). Scores take
    ``score_levels`` values (ties).

    Parameters
    ----------
    num_images, num_classes : int
        Image ids ``1..num_images``, category ids ``1..num_classes``.
    ious : sequence of float
        The IoUs to hit, each in [0, 1].
    objects_per_image : (int, int)
        Bounds of the ground truths per image.
    score_levels : int
        Number of distinct scores.
    seed : int or numpy.random.Generator
        Seed of the one random stream.

    Returns
    -------
    ground_truth : dict
        COCO dict, images 1000 pixels wide.
    results : list of dict
        One result per ground truth.

    Examples
    --------
    >>> import ioukit
    >>> gt, res = make_exact_iou_detections(1, ious=[0.55], objects_per_image=(1, 1))
    >>> g, r = gt["annotations"][0]["bbox"], res[0]["bbox"]
    >>> to_xyxy = lambda b: [b[0], b[1], b[0] + b[2], b[1] + b[3]]
    >>> float(ioukit.box_iou([to_xyxy(r)], [to_xyxy(g)])[0, 0]) == 0.55
    True
    """
    _check_counts(num_images=(num_images, 0), num_classes=(num_classes, 1))
    from fractions import Fraction

    rng = np.random.default_rng(seed)
    shapes = []
    for t in ious:
        f = Fraction(float(t)).limit_denominator(1000)
        if not 0 <= f <= 1:
            raise ParameterError(f"ious: expected numbers in [0, 1], got {t!r}")
        shapes.append((f.denominator + f.numerator, f.denominator - f.numerator))  # (w, d)
    images: list[dict[str, Any]] = []
    anns: list[dict[str, Any]] = []
    res: list[dict[str, Any]] = []
    for image_id in range(1, num_images + 1):
        y = 0
        for _ in range(int(rng.integers(objects_per_image[0], objects_per_image[1] + 1))):
            w, d = shapes[int(rng.integers(len(shapes)))]
            scale = int(rng.integers(1, 4))
            w, d, h = w * scale, d * scale, int(rng.integers(5, 40))
            x = int(rng.integers(0, max(1, 1000 - w - d)))
            category = int(rng.integers(1, num_classes + 1))
            anns.append(
                {
                    "id": len(anns) + 1,
                    "image_id": image_id,
                    "category_id": category,
                    "bbox": [float(x), float(y), float(w), float(h)],
                    "area": float(w * h),
                    "iscrowd": 0,
                }
            )
            score = (int(rng.integers(score_levels)) + 1) / score_levels
            res.append(
                {
                    "image_id": image_id,
                    "category_id": category,
                    "bbox": [float(x + d), float(y), float(w), float(h)],
                    "score": score,
                }
            )
            y += h + 1  # rows apart: no overlap between objects
        images.append({"id": image_id, "file_name": f"{image_id}.jpg", "width": 1000, "height": y})
    cats = [{"id": c, "name": f"c{c}"} for c in range(1, num_classes + 1)]
    return {"images": images, "annotations": anns, "categories": cats}, res


def add_masks(ground_truth: GroundTruth, results: Results) -> tuple[GroundTruth, Results]:
    """Copies of a box set with masks in place of boxes, for ``iou_type="segm"``.

    Each box becomes a polygon with one corner cut (so the mask IoU differs from the box
    IoU): ground truths keep their box and get the polygon and its pixel ``area``; results
    get the same shape as compressed RLE (``counts`` a str) and lose their ``bbox``. The
    inputs are not modified; images need ``height`` and ``width``.

    Parameters
    ----------
    ground_truth : dict
        COCO ground-truth dict with boxes.
    results : list of dict
        COCO box results on its images.

    Returns
    -------
    ground_truth, results : dict, list of dict
        The copies with ``segmentation``.

    Examples
    --------
    >>> gt, res = add_masks(*make_grid_detections(3, 2, seed=0))
    >>> isinstance(gt["annotations"][0]["segmentation"], list)
    True
    >>> sorted(res[0]["segmentation"]), "bbox" in res[0]
    (['counts', 'size'], False)
    """

    sizes = {im["id"]: (im["height"], im["width"]) for im in ground_truth["images"]}

    def polygon(b: list[float]) -> list[list[float]]:
        x, y, w, h = b
        return [[x, y, x + w, y, x + w, y + 0.7 * h, x + 0.7 * w, y + h, x, y + h]]

    anns = []
    for a in ground_truth["annotations"]:
        seg = polygon(a["bbox"])
        h, w = sizes[a["image_id"]]
        area = float(masks.area(masks.from_annotation(seg, h, w)))
        anns.append({**a, "segmentation": seg, "area": area})
    out = []
    for d in results:
        h, w = sizes[d["image_id"]]
        rle = masks.from_annotation(polygon(d["bbox"]), h, w)
        counts = rle["counts"]
        rle = {
            "size": rle["size"],
            "counts": counts.decode() if isinstance(counts, bytes) else counts,
        }
        record = dict(d)
        del record["bbox"]  # a mask result instead of the box
        out.append(record | {"segmentation": rle})
    return {**ground_truth, "annotations": anns}, out


# ---------------------------------------------------------------- keypoints


def make_keypoints(
    num_images: int = 20,
    *,
    num_keypoints: int = 17,
    num_classes: int = 1,
    max_people: int = 14,
    min_people: int = 0,
    results_per_person: tuple[int, int] = (1, 3),
    max_false_positives: int = 5,
    hidden_rate: float = 0.1,
    crowd_rate: float = 0.05,
    with_bbox: bool = False,
    seed: int | np.random.Generator = 0,
) -> tuple[GroundTruth, Results]:
    """COCO person-keypoint ground truth and keypoint results.

    Crowded 640 x 480 images (``min_people`` to ``max_people`` persons) in every size range,
    COCO-like visibility, ground truths with no visible keypoint (``num_keypoints`` 0, all
    keypoints ``[0, 0, 0]`` as COCO stores them), crowd regions, results that jitter the
    ground truth by a per-result noise level (2 % to 30 % of the person's size), false
    positives, missing predicted keypoints, scores rounded to 2 decimals (ties).

    Parameters
    ----------
    num_images : int
        Image ids ``1000, 1007, ...``.
    num_keypoints, num_classes : int
        Keypoints per instance and person-like categories (ids ``1..num_classes``).
    max_people, min_people : int
        Bounds of the persons per image.
    results_per_person : (int, int)
        Bounds of the results per non-crowd person.
    max_false_positives : int
        Upper bound of the background results per image.
    hidden_rate, crowd_rate : float
        Probability that a person has no visible keypoint / is a crowd region.
    with_bbox : bool
        Results carry a ``bbox`` (pycocotools' ``loadRes`` then takes their area from it, not
        from the keypoint extent).
    seed : int or numpy.random.Generator
        Seed of the one random stream.

    Returns
    -------
    ground_truth : dict
        COCO keypoint dict (categories with ``keypoints`` names).
    results : list of dict
        COCO keypoint results (``keypoints`` a flat list of x, y, confidence), shuffled.

    Examples
    --------
    >>> gt, res = make_keypoints(2, num_keypoints=5, seed=0)
    >>> len(gt["annotations"][0]["keypoints"]), len(res[0]["keypoints"])
    (15, 15)
    """
    _check_counts(
        num_images=(num_images, 0), num_keypoints=(num_keypoints, 1), num_classes=(num_classes, 1)
    )
    rng = np.random.default_rng(seed)
    k = num_keypoints
    images, annotations, results = [], [], []
    categories = [
        {"id": c + 1, "name": f"person{c}", "keypoints": [f"k{j}" for j in range(k)]}
        for c in range(num_classes)
    ]
    ann_id = 1
    for image in range(num_images):
        width, height = 640, 480
        image_id = 1000 + 7 * image
        batch: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
        images.append(
            {"id": image_id, "width": width, "height": height, "file_name": f"{image}.jpg"}
        )
        for _ in range(int(rng.integers(min_people, max_people + 1))):
            category = int(rng.integers(1, num_classes + 1))
            side = float(np.exp(rng.uniform(np.log(12.0), np.log(300.0))))
            w = round(side * float(rng.uniform(0.5, 1.0)), 2)
            h = round(side * float(rng.uniform(0.8, 1.6)), 2)
            x = round(float(rng.uniform(0, width - w / 2)), 2)
            y = round(float(rng.uniform(0, height - h / 2)), 2)
            kx = np.round(x + rng.uniform(0, 1, k) * w, 2)
            ky = np.round(y + rng.uniform(0, 1, k) * h, 2)
            v = rng.choice([0, 1, 2], size=k, p=[0.3, 0.2, 0.5])
            crowd = int(rng.random() < crowd_rate)
            if crowd or rng.random() < hidden_rate:
                v[:] = 0
            kx[v == 0] = 0.0
            ky[v == 0] = 0.0
            kps = np.stack([kx, ky, v.astype(float)], axis=1)
            annotations.append(
                {
                    "id": ann_id,
                    "image_id": image_id,
                    "category_id": category,
                    "bbox": [x, y, w, h],
                    "area": round(w * h * float(rng.uniform(0.3, 0.9)), 3),
                    "iscrowd": crowd,
                    "num_keypoints": int((v > 0).sum()),
                    "keypoints": [
                        int(t) if j % 3 == 2 else float(t) for j, t in enumerate(kps.reshape(-1))
                    ],
                }
            )
            ann_id += 1
            if crowd:
                continue
            # true keypoints (also where not labelled) to jitter
            tx = x + rng.uniform(0, 1, k) * w
            ty = y + rng.uniform(0, 1, k) * h
            tx[v > 0] = kx[v > 0]
            ty[v > 0] = ky[v > 0]
            copies = int(rng.integers(results_per_person[0], results_per_person[1] + 1))
            noise = rng.choice([0.02, 0.05, 0.1, 0.3], size=(copies, 1)) * np.sqrt(w * h)
            pxs = np.round(tx + rng.normal(0, 1, (copies, k)) * noise, 2)
            pys = np.round(ty + rng.normal(0, 1, (copies, k)) * noise, 2)
            batch.append((np.full(copies, category), pxs, pys))
        n_fp = int(rng.integers(0, max_false_positives + 1))  # false positives
        centre = rng.uniform(0, 1, (n_fp, 2)) * [width, height]
        spread = rng.uniform(10, 150, (n_fp, 1))
        batch.append(
            (
                rng.integers(1, num_classes + 1, n_fp),
                np.round(centre[:, :1] + rng.normal(0, 1, (n_fp, k)) * spread, 2),
                np.round(centre[:, 1:] + rng.normal(0, 1, (n_fp, k)) * spread, 2),
            )
        )
        results += _keypoint_results(rng, image_id, batch, with_bbox)
    order = rng.permutation(len(results))
    return (
        {"images": images, "annotations": annotations, "categories": categories},
        [results[i] for i in order],
    )


def _keypoint_results(
    rng: np.random.Generator,
    image_id: int,
    batch: list[tuple[np.ndarray, np.ndarray, np.ndarray]],
    with_bbox: bool,
) -> list[dict[str, Any]]:
    """Result records of one image from (categories (n,), x (n, K), y (n, K)) parts."""
    if not batch:
        return []
    categories = np.concatenate([b[0] for b in batch]).astype(int).tolist()
    px = np.concatenate([b[1] for b in batch])
    py = np.concatenate([b[2] for b in batch])
    if len(px) == 0:
        return []
    conf = np.round(rng.uniform(0, 1, px.shape), 3)
    missing = rng.random(px.shape) < 0.05  # some keypoints not predicted: (0, 0, 0)
    px[missing], py[missing], conf[missing] = 0.0, 0.0, 0.0
    scores = np.round(rng.uniform(0.05, 1.0, len(px)), 2).tolist()
    flat = np.stack([px, py, conf], axis=2).reshape(len(px), -1).tolist()
    out = []
    for i, (category, keypoints, score) in enumerate(zip(categories, flat, scores, strict=True)):
        record: dict[str, Any] = {
            "image_id": image_id,
            "category_id": category,
            "keypoints": keypoints,
            "score": score,
        }
        if with_bbox:
            x0, y0 = float(px[i].min()), float(py[i].min())
            w, h = round(float(px[i].max()) - x0, 2), round(float(py[i].max()) - y0, 2)
            record["bbox"] = [x0, y0, w, h]
        out.append(record)
    return out


# ---------------------------------------------------------------- LVIS


def make_lvis(
    num_images: int = 30,
    num_classes: int = 40,
    *,
    dets_per_image: tuple[int, int] = (20, 120),
    score_levels: int = 0,
    zero_area: float = 0.01,
    ignore: float = 0.0,
    seed: int | np.random.Generator = 0,
) -> tuple[GroundTruth, Results]:
    """An LVIS-like ground truth and results.

    Categories have non-contiguous ids and r/c/f frequencies (some classes never have ground
    truth); each image has positive classes (with boxes), negative classes (verified absent)
    and not-exhaustive classes (mostly positive ones, sometimes others). Results mix true
    detections, false ones on positive/negative classes and results on classes the image
    says nothing about (dropped by the federated filter); ``dets_per_image`` bounds the
    count per image (> 300 exercises the cap). ``score_levels`` > 0 quantizes scores (ties).

    Parameters
    ----------
    num_images, num_classes : int
        Image ids are not sorted in table order; category ids are ``1, 4, 7, ...``.
    dets_per_image : (int, int)
        Bounds of the results per image.
    score_levels : int
        > 0: scores rounded to multiples of ``1 / score_levels``.
    zero_area, ignore : float
        Probabilities of a zero area (ground truth) or zero width (result), and of an
        ``ignore`` flag on a ground truth.
    seed : int or numpy.random.Generator
        Seed of the one random stream.

    Returns
    -------
    ground_truth : dict
        LVIS dict (images with ``neg_category_ids`` and ``not_exhaustive_category_ids``,
        categories with ``frequency``).
    results : list of dict
        Box results, shuffled.

    Examples
    --------
    >>> gt, res = make_lvis(4, 10, seed=0)
    >>> sorted(gt["images"][0])[2:4], gt["categories"][1]["id"]
    (['id', 'neg_category_ids'], 4)
    """
    _check_counts(num_images=(num_images, 0), num_classes=(num_classes, 1))
    rng = np.random.default_rng(seed)
    cat_ids = [int(3 * c + 1) for c in range(num_classes)]
    freq = rng.choice(["r", "c", "f"], size=num_classes, p=[0.3, 0.4, 0.3])
    categories = [
        {"id": c, "name": f"class{c}", "frequency": str(f), "synset": f"s{c}"}
        for c, f in zip(cat_ids, freq, strict=True)
    ]
    with_gt = [c for c in cat_ids if rng.random() < 0.85]
    images: list[dict[str, Any]] = []
    anns: list[dict[str, Any]] = []
    results: list[dict[str, Any]] = []
    for i in range(num_images):
        image_id = 1000 - 7 * i if i % 2 else 5000 + i  # not sorted in file order
        n_pos = int(rng.integers(0, 6))
        pos = [int(c) for c in rng.choice(with_gt, size=min(n_pos, len(with_gt)), replace=False)]
        rest = [c for c in cat_ids if c not in pos]
        neg = [
            int(c)
            for c in rng.choice(rest, size=min(int(rng.integers(0, 8)), len(rest)), replace=False)
        ]
        not_ex = [c for c in pos if rng.random() < 0.3]
        if rest and rng.random() < 0.2:
            not_ex.append(int(rng.choice(rest)))  # lvis-api does not require a positive one
        images.append(
            {
                "id": image_id,
                "file_name": f"{image_id:012d}.jpg",
                "width": 640,
                "height": 480,
                "neg_category_ids": neg,
                "not_exhaustive_category_ids": not_ex,
            }
        )
        gt_boxes = []
        for c in pos:
            for _ in range(int(rng.integers(1, 5))):
                side = rng.choice([rng.uniform(4, 32), rng.uniform(32, 96), rng.uniform(96, 300)])
                w, h = side * rng.uniform(0.6, 1.4, 2)
                x, y = rng.uniform(0, 320, 2)
                box = [round(float(v), 2) for v in (x, y, w, h)]
                area = box[2] * box[3] * float(rng.uniform(0.4, 1.0))
                if rng.random() < zero_area:
                    area = 0.0
                ann = {
                    "id": len(anns) + 1,
                    "image_id": image_id,
                    "category_id": c,
                    "bbox": box,
                    "area": area,
                }
                if ignore and rng.random() < ignore:
                    ann["ignore"] = 1
                anns.append(ann)
                gt_boxes.append((c, box))
        n_dets = int(rng.integers(dets_per_image[0], dets_per_image[1] + 1))
        for _ in range(n_dets):
            kind = rng.random()
            if gt_boxes and kind < 0.5:
                c, b = gt_boxes[int(rng.integers(len(gt_boxes)))]
                jitter = rng.normal(0, 0.08, 4) * (b[2] + b[3]) / 2
                box = [
                    b[0] + jitter[0],
                    b[1] + jitter[1],
                    max(b[2] + jitter[2], 0.5),
                    max(b[3] + jitter[3], 0.5),
                ]
            else:
                pool = pos + neg if kind < 0.85 or not rest else rest
                c = int(rng.choice(pool)) if pool else int(rng.choice(cat_ids))
                w, h = rng.uniform(4, 200, 2)
                box = [float(rng.uniform(0, 400)), float(rng.uniform(0, 300)), float(w), float(h)]
            if rng.random() < zero_area:
                box[2] = 0.0
            score = float(rng.random())
            if score_levels:
                score = round(score * score_levels) / score_levels
            results.append(
                {
                    "image_id": image_id,
                    "category_id": int(c),
                    "bbox": [round(float(v), 2) for v in box],
                    "score": score,
                }
            )
    order = rng.permutation(len(results))  # results not grouped by image
    results = [results[k] for k in order]
    gt = {"images": images, "annotations": anns, "categories": categories}
    return gt, results


# ---------------------------------------------------------------- rotated boxes


def make_rotated(
    num_images: int = 25,
    num_classes: int = 3,
    *,
    difficult_fraction: float = 0.15,
    seed: int | np.random.Generator = 0,
) -> tuple[Dataset, Dataset]:
    """Rotated ground truth and predictions, as Datasets with a ``rotated`` column.

    Boxes ``(cx, cy, w, h, angle)`` (angle in degrees, ``cxcywhr``) in a 600-pixel square, 0
    to 8 per image; 85 % are detected (centre, size and angle jittered), plus up to 3 false
    positives and a duplicate of a detected box per image; scores are distinct. ``boxes``
    holds the axis-aligned hull, ``area`` the rotated area.

    Parameters
    ----------
    num_images, num_classes : int
        Image ids ``1..num_images``, category ids ``1..num_classes``.
    difficult_fraction : float
        Probability that a ground truth is ``difficult`` (DOTA, VOC).
    seed : int or numpy.random.Generator
        Seed of the one random stream.

    Returns
    -------
    ground_truth, predictions : Dataset
        Ground truth (with ``difficult``) and predictions (with ``scores``).

    Examples
    --------
    >>> gt, pred = make_rotated(4, 2, seed=0)
    >>> gt.rotated.shape[1], pred.scores is not None
    (5, True)
    """
    _check_counts(num_images=(num_images, 0), num_classes=(num_classes, 1))

    rng = np.random.default_rng(seed)
    img_g: list[int] = []
    cat_g: list[int] = []
    box_g: list[list[float]] = []
    diff_g: list[bool] = []
    img_p: list[int] = []
    cat_p: list[int] = []
    box_p: list[list[float]] = []
    for image in range(num_images):
        n = int(rng.integers(0, 9))
        boxes = make_rotated_boxes(n, centre=(0, 600), size=(10, 150), seed=rng)
        cats = rng.integers(1, num_classes + 1, n)
        img_g += [image] * n
        cat_g += cats.tolist()
        box_g += boxes.tolist()
        diff_g += (rng.uniform(size=n) < difficult_fraction).tolist()
        keep = rng.uniform(size=n) < 0.85
        jitter = boxes[keep].copy()
        jitter[:, :2] += rng.normal(0, 0.1, (len(jitter), 2)) * jitter[:, 2:4]
        jitter[:, 2:4] *= np.exp(rng.normal(0, 0.15, (len(jitter), 2)))
        jitter[:, 4] += rng.normal(0, 8, len(jitter))
        m = int(rng.integers(0, 4))
        fps = make_rotated_boxes(m, centre=(0, 600), size=(10, 150), seed=rng)
        dup = jitter[: int(rng.integers(0, 2))] + 1.0  # duplicates of matched objects
        p = np.concatenate([jitter, fps, dup])
        img_p += [image] * len(p)
        cat_p += cats[keep].tolist() + rng.integers(1, num_classes + 1, m).tolist()
        cat_p += cats[keep][: len(dup)].tolist()
        box_p += p.tolist()
    images = ImageTable.from_lists(
        list(range(1, num_images + 1)), [f"img{i:03d}" for i in range(num_images)]
    )
    categories = CategoryTable.from_lists(
        list(range(1, num_classes + 1)), [f"c{i}" for i in range(num_classes)]
    )
    g = np.asarray(box_g, dtype=np.float64).reshape(-1, 5)
    p = np.asarray(box_p, dtype=np.float64).reshape(-1, 5)
    scores = (rng.permutation(len(p)) + 1.0) / (len(p) + 1)

    def make(rotated: np.ndarray, image: list[int], cat: list[int], **extra: Any) -> Dataset:
        return Dataset.from_arrays(
            images,
            categories,
            boxes=box_convert(rotated, "cxcywhr", "xyxy") if len(rotated) else np.zeros((0, 4)),
            image_index=image,
            category_id=cat,
            area=rotated[:, 2] * rotated[:, 3],
            rotated=rotated,
            **extra,
        )

    return make(g, img_g, cat_g, difficult=diff_g), make(p, img_p, cat_p, scores=scores)


# ---------------------------------------------------------------- arrays: boxes, masks


def make_boxes(
    n: int,
    *,
    corner: tuple[float, float] = (0.0, 1000.0),
    size: tuple[float, float] = (1.0, 120.0),
    degenerate: float = 0.0,
    duplicates: float = 0.0,
    dtype: type = np.float64,
    seed: int | np.random.Generator = 0,
) -> np.ndarray:
    """Random xyxy boxes, shape (n, 4), for IoU kernels, NMS and benchmarks.

    Top-left corners uniform in ``corner`` (both axes), widths and heights uniform in
    ``size``; then a fraction ``degenerate`` get zero width and height and a fraction
    ``duplicates`` become copies of box 0 (exact IoU ties).

    Parameters
    ----------
    n : int
    corner, size : (float, float)
        Ranges of the top-left corner and of the width/height.
    degenerate, duplicates : float
        Fractions of zero-size boxes and of copies of the first box.
    dtype : type
        Of the result (computed in float64).
    seed : int or numpy.random.Generator
        A seed, or a generator to draw from (its stream continues).

    Returns
    -------
    ndarray, shape (n, 4)

    Examples
    --------
    >>> b = make_boxes(5, seed=0)
    >>> b.shape, bool((b[:, 2:] >= b[:, :2]).all())
    ((5, 4), True)
    """
    _check_counts(n=(n, 0))
    rng = np.random.default_rng(seed)
    xy = rng.uniform(corner[0], corner[1], size=(n, 2))
    wh = rng.uniform(size[0], size[1], size=(n, 2))
    if degenerate:
        wh[rng.random(n) < degenerate] = 0
    boxes = np.concatenate([xy, xy + wh], axis=1)
    if duplicates:
        boxes[rng.random(n) < duplicates] = boxes[0]
    return boxes.astype(dtype)


def make_rotated_boxes(
    n: int,
    *,
    centre: tuple[float, float] = (0.0, 600.0),
    size: tuple[float, float] = (10.0, 150.0),
    angle: tuple[float, float] = (-90.0, 90.0),
    seed: int | np.random.Generator = 0,
) -> np.ndarray:
    """Random rotated boxes ``(cx, cy, w, h, angle)`` (``cxcywhr``, degrees), shape (n, 5).

    Centres (both axes), sizes (both sides) and angles uniform in their ranges, drawn in that
    order.

    Parameters
    ----------
    n : int
    centre, size, angle : (float, float)
        Ranges of the centre coordinates, of the width/height and of the angle in degrees.
    seed : int or numpy.random.Generator

    Returns
    -------
    ndarray, shape (n, 5)

    Examples
    --------
    >>> b = make_rotated_boxes(3, angle=(0, 0), seed=0)
    >>> b.shape, b[:, 4].tolist()
    ((3, 5), [0.0, 0.0, 0.0])
    """
    _check_counts(n=(n, 0))
    rng = np.random.default_rng(seed)
    return np.concatenate(
        [
            rng.uniform(centre[0], centre[1], (n, 2)),
            rng.uniform(size[0], size[1], (n, 2)),
            rng.uniform(angle[0], angle[1], (n, 1)),
        ],
        axis=1,
    )


def make_masks(
    n: int,
    height: int,
    width: int,
    *,
    radius: tuple[float, float] | None = None,
    holes_every: int = 5,
    seed: int | np.random.Generator = 0,
) -> np.ndarray:
    """Random elliptical binary masks, shape (n, height, width), some with holes.

    Each mask is an ellipse with its centre uniform in the image and radii uniform in
    ``radius`` (default 10 to a third of the side); every ``holes_every``-th mask (0: none)
    is cut by a regular pattern of holes, which multiplies its runs.

    Parameters
    ----------
    n, height, width : int
    radius : (float, float), optional
        Range of the radii; default ``(10, side / 3)`` per axis.
    holes_every : int
        Masks 0, k, 2k... get holes.
    seed : int or numpy.random.Generator

    Returns
    -------
    ndarray of bool, shape (n, height, width)

    Examples
    --------
    >>> m = make_masks(3, 40, 60, seed=0)
    >>> m.shape, m.dtype.name, bool(m.any(axis=(1, 2)).all())
    ((3, 40, 60), 'bool', True)
    """
    _check_counts(n=(n, 0))
    rng = np.random.default_rng(seed)
    yy, xx = np.mgrid[:height, :width]
    out = np.zeros((n, height, width), dtype=bool)
    for i in range(n):
        cy, cx = rng.uniform(0, height), rng.uniform(0, width)
        if radius is None:
            ry, rx = rng.uniform(10, height / 3), rng.uniform(10, width / 3)
        else:
            ry, rx = rng.uniform(*radius), rng.uniform(*radius)
        out[i] = ((yy - cy) / ry) ** 2 + ((xx - cx) / rx) ** 2 < 1
        if holes_every and i % holes_every == 0:
            out[i] &= ((yy // 7 + xx // 9) % 4) != 0
    return out


# ---------------------------------------------------------------- COCO dicts -> Datasets


def to_datasets(
    ground_truth: Mapping[str, Any],
    results: Sequence[Mapping[str, Any]],
    *,
    iou_type: str = "bbox",
) -> tuple[Dataset, Dataset]:
    """Read a (ground truth, results) pair of COCO dicts into two Datasets.

    Parameters
    ----------
    ground_truth : Mapping
        COCO ground-truth dict (never modified).
    results : sequence of Mapping
        COCO results on its images (never modified).
    iou_type : {"bbox", "segm", "keypoints"}
        Which reader, by the column the similarity compares: boxes, boxes with their
        ``segmentation`` kept (``"segm"``, ``"boundary"``), or keypoints.

    Returns
    -------
    ground_truth, predictions : Dataset

    Examples
    --------
    >>> gt, pred = to_datasets(*make_detections(num_images=2, num_classes=2, seed=0))
    >>> gt.boxes.shape[1], len(pred.scores) == len(pred)
    (4, True)
    """
    readers = COCO_READERS.get(similarity_input(iou_type) or "", None)
    if readers is None:  # not a similarity, or one whose column COCO JSON does not hold
        raise ParameterError(f"iou_type: expected 'bbox', 'segm' or 'keypoints', got {iou_type!r}")
    gt = readers.ground_truth(ground_truth)
    return gt, readers.results(results, gt)
