# Type stub of the compiled kernel resample.pyx (the bootstrap's weighted accumulation).
import numpy as np

def thread_count(threads: bool | int | None = None) -> int: ...
def lanes() -> int: ...
def accumulate_batch(
    ev_start: np.ndarray,
    ev_end: np.ndarray,
    ev_image: np.ndarray,
    ev_level: np.ndarray,
    ev_tp: np.ndarray,
    ev_head: np.ndarray,
    gt_image: np.ndarray,
    gt_cell: np.ndarray,
    gt_count: np.ndarray,
    weights: np.ndarray,
    max_dets: np.ndarray,
    level_slot: np.ndarray,
    recall_thresholds: np.ndarray,
    npig: np.ndarray,
    precision: np.ndarray,
    recall: np.ndarray,
    threads: int = 1,
) -> None: ...
