"""ioukit's float32 OKS and probiou against Ultralytics' own ``kpt_iou`` and ``batch_probiou``.

Skipped where ultralytics is not installed (the normal test venv); run it with
``.venv-bench/bin/python -m pytest -q
tests/evaluation/protocols/test_ultralytics_pose_obb_parity.py``. The
protocol-level numbers are checked against plain twins in
tests/evaluation/protocols/test_yolo_pose_obb.py.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from ioukit.evaluation.similarity.ultralytics import (
    ultralytics_oks,
    ultralytics_probiou,
    ultralytics_sigmas,
)

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    pytest.importorskip("ultralytics")
    torch = pytest.importorskip("torch")
    from ultralytics.utils.metrics import OKS_SIGMA, batch_probiou, kpt_iou

from tests.evaluation.protocols.test_yolo_pose_obb import _obb, _pose, _xywhr


@pytest.mark.parametrize(("seed", "k"), [(0, 17), (1, 5)])
def test_oks_against_kpt_iou(seed: int, k: int) -> None:
    gt, pred = _pose(seed, k, images=30)
    b = gt.boxes.astype(np.float32)
    area = (b[:, 2] - b[:, 0]) * (b[:, 3] - b[:, 1]) * np.float32(0.53)
    sigma = OKS_SIGMA if k == 17 else np.ones(k) / k
    np.testing.assert_array_equal(ultralytics_sigmas(k), sigma)
    want = kpt_iou(
        torch.from_numpy(gt.keypoints.astype(np.float32)),  # type: ignore[union-attr]
        torch.from_numpy(pred.keypoints.astype(np.float32)),  # type: ignore[union-attr]
        sigma=sigma,
        area=torch.from_numpy(area),
    ).numpy()
    got = ultralytics_oks(gt.keypoints, pred.keypoints, area, sigma)  # type: ignore[arg-type]
    np.testing.assert_allclose(got, want, rtol=0, atol=4e-7)
    assert (got == want).mean() > 0.98


def test_probiou_against_batch_probiou() -> None:
    gt, pred = _obb(0, images=30)
    a = _xywhr(gt.rotated).astype(np.float32)  # type: ignore[arg-type]
    b = _xywhr(pred.rotated).astype(np.float32)  # type: ignore[arg-type]
    want = batch_probiou(torch.from_numpy(a), torch.from_numpy(b)).numpy()
    got = ultralytics_probiou(a, b)
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-5)
    assert (got == want).mean() > 0.9
