# Type stub of the compiled kernel oks.pyx.
import numpy as np

UNDERFLOW: float

def fill_terms(
    first: int,
    last: int,
    gt_start: np.ndarray,
    gt_end: np.ndarray,
    pred_start: np.ndarray,
    pred_count: np.ndarray,
    term_offsets: np.ndarray,
    gt_keypoints: np.ndarray,
    visible_index: np.ndarray,
    n_terms: np.ndarray,
    outer_box: np.ndarray,
    area_eps: np.ndarray,
    pred_keypoints: np.ndarray,
    pred_row: np.ndarray,
    variances: np.ndarray,
    terms: np.ndarray,
    parallel: bool,
) -> None: ...
def sum_terms(
    first: int,
    last: int,
    gt_start: np.ndarray,
    gt_end: np.ndarray,
    pred_count: np.ndarray,
    term_offsets: np.ndarray,
    n_terms: np.ndarray,
    offsets: np.ndarray,
    terms: np.ndarray,
    out: np.ndarray,
    parallel: bool,
) -> None: ...
def pairwise_sum(values: np.ndarray) -> float: ...
def set_exp_loop(index: int) -> None: ...
def exp_inplace(values: np.ndarray) -> None: ...
def oks_groups(
    first: int,
    last: int,
    gt_start: np.ndarray,
    gt_end: np.ndarray,
    pred_start: np.ndarray,
    pred_count: np.ndarray,
    gt_keypoints: np.ndarray,
    visible_index: np.ndarray,
    n_terms: np.ndarray,
    outer_box: np.ndarray,
    area_eps: np.ndarray,
    pred_keypoints: np.ndarray,
    pred_row: np.ndarray,
    variances: np.ndarray,
    offsets: np.ndarray,
    out: np.ndarray,
    rows: np.ndarray,
    parallel: bool,
) -> None: ...
