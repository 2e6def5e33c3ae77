"""Check an installed ioukit wheel: run it from a fresh virtual environment, not from a clone.

Run with the interpreter of a venv where the wheel and pycocotools (the reference) are
installed, from a folder outside the source tree (``make wheel-test`` and cibuildwheel's
``test-command`` do both). It checks that

- ``ioukit`` and its compiled kernels are imported from that environment's site-packages
  (not from ``src/``), and on Linux that the OpenMP kernels load the libgomp vendored in
  ``ioukit.libs/`` by auditwheel;
- ``ioukit eval`` on the bundled sample writes a JSON report whose twelve COCO numbers equal
  pycocotools' ``COCOeval.stats`` on the same files, run side by side.

Exits 0 when every check passes, 1 with a message naming the failed check otherwise.
"""

from __future__ import annotations

import contextlib
import io
import json
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path

from pycocotools.coco import COCO
from pycocotools.cocoeval import COCOeval

import ioukit
from ioukit import sample_data
from ioukit._kernels import iou_matrix

STATS = ["AP", "AP50", "AP75", "APs", "APm", "APl", "AR1", "AR10", "AR100", "ARs", "ARm", "ARl"]


def fail(message: str) -> None:
    print(f"check_wheel: FAILED: {message}", file=sys.stderr)
    sys.exit(1)


def check_installed() -> None:
    site = Path(sysconfig.get_paths()["platlib"]).resolve()
    for module in (ioukit, iou_matrix):
        where = Path(module.__file__ or "").resolve()
        if site not in where.parents:
            fail(f"{module.__name__} imported from {where}, not from {site}")
    print(f"check_wheel: ioukit {ioukit.__version__} from {site}")
    if sys.platform.startswith("linux"):
        libs = sorted((site / "ioukit.libs").glob("libgomp*.so*"))
        if not libs:
            fail(f"no vendored libgomp in {site / 'ioukit.libs'}")
        from ioukit._kernels import match  # noqa: F401  (an OpenMP kernel)

        maps = Path("/proc/self/maps").read_text()
        if not any(str(lib.name) in maps for lib in libs):
            fail(f"the OpenMP kernels did not load the vendored {libs[0].name}")
        print(f"check_wheel: OpenMP kernels load the vendored {libs[0].name}")


def check_sample() -> None:
    gt, pred = sample_data.ground_truth_path(), sample_data.predictions_path()
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp, "report.json")
        run = subprocess.run(
            [
                sys.executable,
                "-m",
                "ioukit",
                "eval",
                "--gt",
                str(gt),
                "--pred",
                str(pred),
                "--json",
                str(report),
            ],
            cwd=tmp,
            capture_output=True,
            text=True,
            check=False,
        )
        if run.returncode != 0:
            fail(f"ioukit eval exited {run.returncode}: {run.stderr.strip()}")
        ours = json.loads(report.read_text())["stats"]
    with contextlib.redirect_stdout(io.StringIO()):
        coco_gt = COCO(str(gt))
        evaluator = COCOeval(coco_gt, coco_gt.loadRes(str(pred)), "bbox")
        evaluator.evaluate()
        evaluator.accumulate()
        evaluator.summarize()
    for name, reference in zip(STATS, evaluator.stats.tolist(), strict=True):
        if ours[name] != reference:
            fail(f"ioukit eval {name} = {ours[name]!r}, pycocotools {reference!r}")
    print(f"check_wheel: ioukit eval on the sample equals pycocotools (AP {ours['AP']:.6f})")


if __name__ == "__main__":
    check_installed()
    check_sample()
