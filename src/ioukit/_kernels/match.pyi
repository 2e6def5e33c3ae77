# Type stub of the compiled kernel match.pyx (the evaluation pipeline's kernels).
import numpy as np

FALSE_POSITIVE: int
TRUE_POSITIVE: int
IGNORED: int
TIE_LAST: int
TIE_FIRST: int
ARGMAX: int
PARALLEL_MIN_PREDICTIONS: int

def group_box_iou(
    gt_start: np.ndarray,
    gt_end: np.ndarray,
    pred_start: np.ndarray,
    kept: np.ndarray,
    gt_boxes: np.ndarray,
    gt_area: np.ndarray,
    gt_crowd: np.ndarray,
    pred_boxes: np.ndarray,
    pred_area: np.ndarray,
    offsets: np.ndarray,
    out: np.ndarray,
    pixel_offset: float,
    eps: float,
    gt_rows: np.ndarray | None = None,
    pred_rows: np.ndarray | None = None,
) -> None: ...
def group_box_iou_f32(
    gt_start: np.ndarray,
    gt_end: np.ndarray,
    pred_start: np.ndarray,
    kept: np.ndarray,
    gt_boxes: np.ndarray,
    pred_boxes: np.ndarray,
    offsets: np.ndarray,
    out: np.ndarray,
    eps: np.float32 | float,
) -> None: ...
def match_groups(
    gt_start: np.ndarray,
    gt_end: np.ndarray,
    pred_start: np.ndarray,
    kept: np.ndarray,
    iou_values: np.ndarray,
    iou_offsets: np.ndarray,
    gt_area: np.ndarray,
    gt_ignore: np.ndarray,
    gt_crowd: np.ndarray,
    gt_never: np.ndarray,
    pred_area: np.ndarray,
    thresholds: np.ndarray,
    area_lo: np.ndarray,
    area_hi: np.ndarray,
    slot: np.ndarray,
    gt_rows: np.ndarray,
    strict: int,
    tie: int,
    group_list: np.ndarray,
    tp_bits: np.ndarray,
    ign_bits: np.ndarray,
    first_gt: np.ndarray,
    first_iou: np.ndarray,
    same_bits: np.ndarray,
    has_other: np.ndarray,
    dense_row: np.ndarray,
    other_gt: np.ndarray,
    other_iou: np.ndarray,
    threads: bool | None = None,
    carry: np.ndarray | None = None,
) -> None: ...
def accumulate_coco(
    class_start: np.ndarray,
    class_end: np.ndarray,
    rank: np.ndarray,
    tp_bits: np.ndarray,
    ign_bits: np.ndarray,
    scores: np.ndarray,
    num_regular_gt: np.ndarray,
    max_dets: np.ndarray,
    recall_thresholds: np.ndarray,
    precision: np.ndarray,
    recall: np.ndarray,
    score_out: np.ndarray,
    threads: bool | None = None,
    level_slot: np.ndarray | None = None,
) -> None: ...
def counting_order(
    key: np.ndarray,
    n_keys: int,
    order: np.ndarray,
    out: np.ndarray,
    counts: np.ndarray,
) -> None: ...
def dense_score_rank(scores: np.ndarray, dense: np.ndarray) -> int: ...
def merge_group_keys(
    gt_key: np.ndarray, pred_key: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]: ...
