# Type stub of the compiled module nms.pyx.
import numpy as np

LINEAR: int
GAUSSIAN: int
SOFT_METHODS: dict[str, int]

def greedy_nms(
    boxes: np.ndarray,
    order: np.ndarray,
    segments: np.ndarray | None,
    threshold: float,
    limit: int,
) -> np.ndarray: ...
def soft_nms(
    boxes: np.ndarray,
    scores: np.ndarray,
    method: str,
    sigma: float,
    iou_threshold: float,
    score_threshold: float,
) -> tuple[np.ndarray, np.ndarray]: ...
def simd(avx2: bool | None = None) -> str: ...
def threshold_below(threshold: float, dtype: np.dtype | type) -> np.floating: ...
