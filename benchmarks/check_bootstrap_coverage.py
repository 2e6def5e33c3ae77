"""Coverage of the paired-bootstrap interval (#25): the slow statistical check.

Synthetic population of 400 images; model B drops a third of model A's predictions, so the
true difference is the full population's ``AP50(B) - AP50(A)``. Over ``--trials``
independent samples of 100 images, ``compare(a, b, n=150)`` on each sample gives a 95 %
interval; the share of intervals covering the true difference should be about 0.95. Exits
non-zero when it is below ``--floor`` (0.85 by default: with 40 trials and true coverage
0.95, a share below 0.85 happens in about 1 % of runs). The quick version is
``tests/analysis/test_bootstrap.py::test_interval_covers_a_known_difference_quick``.

Usage: ``python benchmarks/check_bootstrap_coverage.py [--trials 40] [--floor 0.85]``.
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np

import ioukit
from ioukit.synthetic import make_detections


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=40)
    parser.add_argument("--floor", type=float, default=0.85)
    args = parser.parse_args()
    gt, res = make_detections(
        num_images=400,
        num_classes=2,
        gt_per_image=4.0,
        fp_per_image=6.0,
        crowd_fraction=0.1,
        empty_gt_images=0.15,
        empty_pred_images=0.15,
        score_levels=6,
        seed=11,
    )
    worse = [d for i, d in enumerate(res) if i % 3]
    ids = np.array([im["id"] for im in gt["images"]])
    full_a, full_b = ioukit.evaluate(gt, res), ioukit.evaluate(gt, worse)
    truth = full_b.stats["AP50"] - full_a.stats["AP50"]
    start = time.perf_counter()
    covered = 0
    widths = []
    for s in range(args.trials):
        sample = np.random.default_rng(100 + s).choice(ids, 100, replace=False).tolist()
        a, b = full_a.slice(image_ids=sample), full_b.slice(image_ids=sample)
        c = ioukit.compare(a, b, n=150, seed=s)
        i = c.stat_names.index("AP50")
        covered += bool(c.lower[i] <= truth <= c.upper[i])
        widths.append(c.upper[i] - c.lower[i])
    share = covered / args.trials
    print(
        f"true delta AP50 {truth:+.4f}; covered {covered}/{args.trials} = {share:.3f} "
        f"(nominal 0.95, floor {args.floor}); mean width {np.mean(widths):.4f}; "
        f"{time.perf_counter() - start:.1f} s"
    )
    if share < args.floor:
        print("coverage below the floor", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
