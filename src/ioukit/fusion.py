"""Weighted boxes fusion (Solovyev et al. 2021): merge the predictions of several models.

The semantics are ensemble-boxes' ``weighted_boxes_fusion`` (version 1.0.9), label by label:

1. boxes with ``score < score_threshold`` are dropped; each remaining score is multiplied
   by its model's weight; coordinates are clipped to the image; zero-area boxes are dropped;
2. the boxes of a label are visited in decreasing weighted score; a box joins the cluster whose
   current fused box overlaps it most (IoU ``> iou_threshold``, the first cluster on ties),
   else it starts a new cluster; a fused box is the score-weighted mean of its members;
3. the cluster score follows ``conf_type`` and is rescaled by the number of models.

Differences from ensemble-boxes, all on purpose:

- fused boxes are computed in float64; ensemble-boxes rounds a multi-box cluster's box, score
  and weight to float32. ``emulate_float32=True`` reproduces its numbers bit for bit;
- ties in score keep input order (model order, then box order); ensemble-boxes' unstable sort
  may order tied boxes either way;
- bad input raises (``x2 < x1``, a wrong number of weights, an unknown ``conf_type``) where
  ensemble-boxes swaps coordinates, prints, or exits the interpreter; coordinates outside the
  image are clipped silently (ensemble-boxes warns);
- when every member of a cluster scores 0 the fused box is the plain mean (ensemble-boxes
  returns NaN).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

import numpy as np

from ioukit._array import Array, check_image_size
from ioukit._host import check_number, from_host, host_boxes, host_vector, to_host
from ioukit._kernels import fusion as kernels
from ioukit._renamed import renamed_keyword
from ioukit.errors import BoxError, ParameterError

__all__ = ["weighted_boxes_fusion"]

_CONF_TYPES = ("avg", "max", "box_and_model_avg", "absent_model_aware_avg")


def _gather(
    boxes_list: Sequence[Array],
    scores_list: Sequence[Array],
    labels_list: Sequence[Array],
) -> tuple[list[np.ndarray], list[np.ndarray], list[np.ndarray], Any]:
    lengths = {len(boxes_list), len(scores_list), len(labels_list)}
    if len(lengths) != 1:
        raise ValueError(
            "boxes_list, scores_list, labels_list: expected one entry per model in each, got "
            f"{len(boxes_list)}, {len(scores_list)} and {len(labels_list)}"
        )
    boxes, scores, labels, like = [], [], [], None
    for t, (b, s, lab) in enumerate(zip(boxes_list, scores_list, labels_list, strict=True)):
        host_b, like_b = to_host(b, f"boxes_list[{t}]")
        host_s, like_s = to_host(s, f"scores_list[{t}]")
        host_l, like_l = to_host(lab, f"labels_list[{t}]")
        for candidate in (like_b, like_s, like_l):
            like = candidate if like is None else like
        if host_b.size == 0 and host_b.ndim < 2:
            host_b = host_b.reshape(0, 4)
        xyxy = host_boxes(host_b, f"boxes_list[{t}]", "xyxy").astype(np.float64)
        n = xyxy.shape[0]
        host_s = host_s.reshape(0) if host_s.size == 0 else host_s
        host_l = host_l.reshape(0) if host_l.size == 0 else host_l
        host_vector(host_s, f"scores_list[{t}]", n, finite=True)
        if (host_s < 0).any():
            i = int(np.flatnonzero(host_s < 0)[0])
            raise BoxError(f"scores_list[{t}][{i}]: expected a score >= 0, got {host_s[i]}")
        boxes.append(xyxy)
        scores.append(host_s.astype(np.float64))
        labels.append(host_vector(host_l, f"labels_list[{t}]", n, integer=True))
    return boxes, scores, labels, like


def _model_weights(weights: Sequence[float] | Array | None, models: int) -> np.ndarray:
    if weights is None:
        return np.ones(models)
    host = np.asarray(to_host(weights, "weights")[0], dtype=np.float64)
    if host.shape != (models,):
        raise ParameterError(
            f"weights: expected one weight per model ({models},), got shape {host.shape}"
        )
    if not (np.isfinite(host).all() and (host > 0).all()):
        raise ParameterError(f"weights: expected positive finite numbers, got {host.tolist()}")
    return host


def _f32(values: np.ndarray) -> np.ndarray:
    return values.astype(np.float32).astype(np.float64)


def weighted_boxes_fusion(
    boxes_list: Sequence[Array],
    scores_list: Sequence[Array],
    labels_list: Sequence[Array],
    /,
    *,
    weights: Sequence[float] | Array | None = None,
    iou_threshold: float = 0.55,
    score_threshold: float = 0.0,
    conf_type: Literal["avg", "max", "box_and_model_avg", "absent_model_aware_avg"] = "avg",
    image_size: Sequence[float] | None = None,
    allows_overflow: bool = False,
    emulate_float32: bool = False,
    skip_box_threshold: float | None = None,
) -> tuple[Array, Array, Array]:
    """Fuse the boxes of several models (ensemble-boxes' weighted boxes fusion).

    Parameters
    ----------
    boxes_list : sequence of array_like, each shape (N_t, 4)
        xyxy boxes of each model: normalized to [0, 1] when ``image_size`` is None, else in
        pixels. Coordinates outside the image are clipped to it.
    scores_list : sequence of array_like, each shape (N_t,)
        Finite scores >= 0.
    labels_list : sequence of array_like of int, each shape (N_t,)
        Class of each box (floats holding whole numbers accepted); only boxes of the same
        class are fused.
    weights : sequence of float, shape (T,), optional
        Positive weight of each model (default 1 each).
    iou_threshold : float
        A box joins a cluster when its IoU with the cluster's fused box is ``> iou_threshold``.
    score_threshold : float
        Boxes with ``score < score_threshold`` are ignored (ensemble-boxes' ``skip_box_thr``;
        the old name ``skip_box_threshold`` still works with a DeprecationWarning).
    conf_type : {"avg", "max", "box_and_model_avg", "absent_model_aware_avg"}
        Fused score: mean member score times ``min(T, members) / sum(weights)`` (``"avg"``);
        max member score over ``max(weights)`` (``"max"``); or ensemble-boxes' two
        model-aware averages.
    image_size : (width, height), optional
        Boxes are in pixels of an image of this size (the output too).
    allows_overflow : bool
        ``"avg"`` only: scale by ``members`` instead of ``min(T, members)`` (scores may pass 1).
    emulate_float32 : bool
        Round multi-box clusters to float32 as ensemble-boxes does (bit-identical results).
    skip_box_threshold : float, optional
        Deprecated name of ``score_threshold``.

    Returns
    -------
    boxes : array, shape (K, 4)
        Fused xyxy boxes (float64), in the units of the input.
    scores : array, shape (K,)
        Fused scores, decreasing (ties: first label seen, then first cluster formed).
    labels : array of int64, shape (K,)

    Raises
    ------
    BoxError
        A box array not (N, 4), an invalid box, a negative or non-finite score, mismatched
        lengths, or non-integer labels.
    ValueError
        Wrong number of weights, unknown ``conf_type``, bad ``image_size``.

    Examples
    --------
    >>> boxes = [[[0.1, 0.1, 0.5, 0.5]], [[0.1, 0.1, 0.5, 0.7], [0.6, 0.6, 0.9, 0.9]]]
    >>> scores = [[0.9], [0.3, 0.8]]
    >>> labels = [[0], [0, 0]]
    >>> fused, fused_scores, fused_labels = weighted_boxes_fusion(boxes, scores, labels)
    >>> fused.round(3).tolist()
    [[0.1, 0.1, 0.5, 0.55], [0.6, 0.6, 0.9, 0.9]]
    >>> fused_scores.round(3).tolist(), fused_labels.tolist()
    ([0.6, 0.4], [0, 0])
    >>> weighted_boxes_fusion([[[64, 48, 320, 240]]], [[0.5]], [[3]], image_size=(640, 480))
    (array([[ 64.,  48., 320., 240.]]), array([0.5]), array([3]))
    >>> weighted_boxes_fusion([np.zeros((0, 4))], [np.zeros(0)], [np.zeros(0, dtype=int)])
    (array([], shape=(0, 4), dtype=float64), array([], dtype=float64), array([], dtype=int64))
    """
    if conf_type not in _CONF_TYPES:
        raise ParameterError(
            f"conf_type: expected one of {', '.join(map(repr, _CONF_TYPES))}, got {conf_type!r}"
        )
    threshold = check_number(iou_threshold, "iou_threshold")
    score_threshold = renamed_keyword(
        "ioukit.weighted_boxes_fusion",
        "skip_box_threshold",
        "score_threshold",
        skip_box_threshold,
        score_threshold,
        0.0,
    )
    skip = check_number(score_threshold, "score_threshold")
    boxes, scores, labels, like = _gather(boxes_list, scores_list, labels_list)
    model_weights = _model_weights(weights, len(boxes))
    size = None if image_size is None else np.array(check_image_size(image_size) * 2)

    all_boxes = np.concatenate([np.empty((0, 4)), *boxes])
    all_scores = np.concatenate([np.empty(0), *scores])
    all_labels = np.concatenate([np.empty(0, dtype=np.int64), *labels])
    all_models = np.repeat(np.arange(len(boxes)), [b.shape[0] for b in boxes])
    if size is not None:
        all_boxes = all_boxes / size
    all_boxes = np.clip(all_boxes, 0.0, 1.0)
    area = (all_boxes[:, 2] - all_boxes[:, 0]) * (all_boxes[:, 3] - all_boxes[:, 1])
    use = (all_scores >= skip) & (area != 0)
    all_boxes, all_labels, all_models = all_boxes[use], all_labels[use], all_models[use]
    box_weights = model_weights[all_models]
    wscores = all_scores[use] * box_weights

    out_boxes, out_scores, out_labels = [], [], []
    first_seen = np.unique(all_labels, return_index=True)[1]
    for label in all_labels[np.sort(first_seen)]:
        rows = np.flatnonzero(all_labels == label)
        rows = rows[np.argsort(-wscores[rows], kind="stable")]
        member_of, fused, conf, best, weight_sum, count = kernels.cluster(
            all_boxes[rows], wscores[rows], box_weights[rows], threshold, emulate_float32
        )
        single = count == 1
        if conf_type == "max":
            score = np.where(single, best, _f32(best) if emulate_float32 else best)
        else:
            mean = conf / count
            score = np.where(single, conf, _f32(mean) if emulate_float32 else mean)
        weight = np.where(single | (not emulate_float32), weight_sum, _f32(weight_sum))
        score = _rescale(
            score,
            weight,
            count,
            member_of,
            all_models[rows],
            model_weights,
            conf_type,
            allows_overflow,
        )
        out_boxes.append(fused)
        out_scores.append(score)
        out_labels.append(np.full(fused.shape[0], label, dtype=np.int64))

    fused_boxes = np.concatenate([np.empty((0, 4)), *out_boxes])
    fused_scores = np.concatenate([np.empty(0), *out_scores])
    fused_labels = np.concatenate([np.empty(0, dtype=np.int64), *out_labels])
    order = np.argsort(-fused_scores, kind="stable")
    fused_boxes, fused_scores, fused_labels = (
        fused_boxes[order],
        fused_scores[order],
        fused_labels[order],
    )
    if size is not None:
        fused_boxes = fused_boxes * size
    return (
        from_host(fused_boxes, like),
        from_host(fused_scores, like),
        from_host(fused_labels, like),
    )


def _rescale(
    score: np.ndarray,
    weight: np.ndarray,
    count: np.ndarray,
    member_of: np.ndarray,
    models: np.ndarray,
    model_weights: np.ndarray,
    conf_type: str,
    allows_overflow: bool,
) -> np.ndarray:
    # ensemble-boxes' final rescaling, operation for operation (float64)
    total = model_weights.sum()
    if conf_type == "max":
        return np.asarray(score / model_weights.max())
    if conf_type == "avg":
        scale = count if allows_overflow else np.minimum(len(model_weights), count)
        return np.asarray(score * scale / total)
    out = np.empty_like(score)
    for c in range(score.shape[0]):
        present = np.unique(models[member_of == c])
        if conf_type == "box_and_model_avg":
            value = score[c] * count[c] / weight[c]
            out[c] = value * model_weights[present].sum() / total
        else:
            absent = np.ones(len(model_weights), dtype=bool)
            absent[present] = False
            out[c] = score[c] * count[c] / (weight[c] + model_weights[absent].sum())
    return out
