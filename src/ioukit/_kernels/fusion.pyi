# Type stub of the compiled module fusion.pyx.
import numpy as np

def cluster(
    boxes: np.ndarray,
    wscores: np.ndarray,
    weights: np.ndarray,
    iou_threshold: float,
    emulate_float32: bool,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]: ...
