"""Boundary IoU: ioukit's boundaries vs faster-coco-eval's (its C++ backend and its OpenCV one).

Run with ``.venv-bench/bin/python benchmarks/bench_boundary.py [--quick]``. The masks are
ellipses (some with holes) on 480 x 640 images, as COCO RLEs. Each tool turns every RLE into
its boundary RLE (the step a boundary-AP evaluation adds to a segm one); the script checks that
the boundaries agree before it prints times and ratios (reference time / ioukit time, > 1
means ioukit is faster). Both faster-coco-eval backends run single-threaded, per mask, as its
``rleToBoundary`` does.
"""

from __future__ import annotations

import sys
import warnings
from typing import Any

from _timing import best_of, fmt_time, have, print_table
from ioukit import masks, synthetic
from ioukit.boundary import boundary_iou, boundary_runs

QUICK = "--quick" in sys.argv
H, W = 480, 640
COUNTS = [50, 200] if QUICK else [50, 200, 1000]


def bench_count(n: int, fce: Any) -> list[list[str]]:
    """Time the boundaries of n masks with every tool; table rows."""
    rles = masks.encode(synthetic.make_masks(n, H, W, seed=n))
    ours = boundary_runs(rles, compat="faster_coco_eval").to_rles()
    theirs = [fce.rleToBoundary(r, 0.02, backend="mask_api") for r in rles]
    assert masks.decode(ours).tolist() == masks.decode(theirs).tolist(), "boundaries differ"
    t_ours = best_of(lambda: boundary_runs(rles, compat="faster_coco_eval"), repeat=3)
    t_default = best_of(lambda: boundary_runs(rles), repeat=3)
    t_cpp = best_of(lambda: [fce.rleToBoundary(r, 0.02, backend="mask_api") for r in rles])
    row = [f"{n} masks", fmt_time(t_ours), fmt_time(t_default), fmt_time(t_cpp)]
    row.append(f"{t_cpp / t_ours:.2f}x")
    if have("cv2"):
        t_cv = best_of(lambda: [fce.rleToBoundaryCV(r, 0.02) for r in rles[:50]], repeat=3)
        t_cv *= n / min(n, 50)
        row += [fmt_time(t_cv), f"{t_cv / t_default:.2f}x"]
    else:
        row += ["-", "-"]
    rows = [row]
    if n <= 200:
        t_iou = best_of(lambda: boundary_iou(rles, rles), repeat=3)
        rows.append([f"  boundary_iou {n}x{n}", fmt_time(t_iou), "", "", "", "", ""])
    return rows


def main() -> None:
    if not have("faster_coco_eval"):
        print("faster-coco-eval is not installed: nothing to compare with")
        return
    import faster_coco_eval.core.mask as fce

    warnings.filterwarnings("ignore", category=DeprecationWarning)
    rows: list[list[str]] = []
    for n in COUNTS:
        rows += bench_count(n, fce)
    print_table(
        f"boundaries of COCO RLEs on {H}x{W} images (faster-coco-eval "
        f"{getattr(sys.modules.get('faster_coco_eval'), '__version__', '?')})",
        [
            "masks",
            "ioukit (fce compat)",
            "ioukit (default)",
            "fce C++",
            "ratio",
            "fce OpenCV",
            "ratio",
        ],
        rows,
    )


if __name__ == "__main__":
    main()
