# Type stub of the compiled module iou_matrix.pyx.
import numpy as np

IOU: int
DICE: int
GIOU: int
DIOU: int
CIOU: int
METRIC_CODES: dict[str, int]
PARALLEL_MIN_ELEMENTS: int

def pairwise(
    metric: str,
    boxes1: np.ndarray,
    boxes2: np.ndarray,
    angle1: np.ndarray,
    angle2: np.ndarray,
    eps: float,
    out: np.ndarray | None = None,
    *,
    threads: bool | None = None,
) -> np.ndarray: ...
def simd(avx2: bool | None = None) -> str: ...
