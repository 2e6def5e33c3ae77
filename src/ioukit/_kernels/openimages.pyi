# Type stub of the compiled kernel openimages.pyx.
import numpy as np

FP: int
TP: int
IGNORED_DIFFICULT: int
IGNORED_GROUP_OF: int

def match_groups(
    pred_boxes: np.ndarray,
    pred_scores: np.ndarray,
    pred_start: np.ndarray,
    gt_boxes: np.ndarray,
    gt_difficult: np.ndarray,
    gt_start: np.ndarray,
    group_boxes: np.ndarray,
    group_start: np.ndarray,
    threshold: float,
    status: np.ndarray,
    matched: np.ndarray,
    overlap: np.ndarray,
    group_score: np.ndarray,
) -> None: ...
