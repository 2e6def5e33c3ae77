# Type stub of the compiled kernel rotated.pyx.
import numpy as np

PARALLEL_MIN_ELEMENTS: int

def pairwise(
    corners1: np.ndarray,
    env1: np.ndarray,
    degenerate1: np.ndarray,
    corners2: np.ndarray,
    env2: np.ndarray,
    degenerate2: np.ndarray,
    out: np.ndarray | None = None,
    *,
    threads: bool | None = None,
) -> np.ndarray: ...
def elementwise(
    corners1: np.ndarray,
    env1: np.ndarray,
    degenerate1: np.ndarray,
    corners2: np.ndarray,
    env2: np.ndarray,
    degenerate2: np.ndarray,
) -> np.ndarray: ...
def greedy_nms(
    corners: np.ndarray,
    env: np.ndarray,
    degenerate: np.ndarray,
    order: np.ndarray,
    segments: np.ndarray | None,
    threshold: float,
    limit: int,
) -> np.ndarray: ...
def group_iou(
    gt_start: np.ndarray,
    gt_end: np.ndarray,
    pred_start: np.ndarray,
    kept_count: np.ndarray,
    gt_corners: np.ndarray,
    gt_env: np.ndarray,
    gt_degenerate: np.ndarray,
    pred_corners: np.ndarray,
    pred_env: np.ndarray,
    pred_degenerate: np.ndarray,
    offsets: np.ndarray,
    out: np.ndarray,
) -> None: ...
def splits(corners: np.ndarray) -> np.ndarray: ...
