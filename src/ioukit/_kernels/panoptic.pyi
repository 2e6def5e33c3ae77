# Type stub of the compiled kernel panoptic.pyx.
import numpy as np

def count_pairs_arrow(
    gt_image: tuple[object, object],
    pred_image: tuple[object, object],
    gt_ids: np.ndarray,
    pred_ids: np.ndarray,
    counts: np.ndarray,
) -> None: ...
def count_pairs(
    gt: bytes | memoryview | np.ndarray,
    gt_step: int,
    pred: bytes | memoryview | np.ndarray,
    pred_step: int,
    gt_ids: np.ndarray,
    pred_ids: np.ndarray,
    counts: np.ndarray,
) -> None: ...
