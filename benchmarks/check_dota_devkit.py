"""ioukit's ``protocol="dota"`` against the DOTA devkit's own task-1 evaluation code.

Runs ``dota_evaluation_task1.voc_eval`` from a checkout of CAPTAIN-WHU/DOTA_devkit (set
``DOTA_DEVKIT=/path/to/DOTA_devkit``; skipped when unset) with its C++ ``polyiou.cpp`` compiled
here with g++ behind a ctypes shim (the SWIG wrapper needs swig), patched only for NumPy >= 1.24
(``np.bool``/``np.float`` where missing). Generated data (oriented ground truth with difficult
flags, jittered detections with tied scores, false positives) is written with ioukit's DOTA
writer, evaluated by
both, and mAP and every class's AP must agree to 1e-9 (``compat="devkit"`` for the devkit's
unstable tie order). Exits non-zero on a mismatch.

Run: ``DOTA_DEVKIT=... .venv-bench/bin/python benchmarks/check_dota_devkit.py``.
"""

from __future__ import annotations

import contextlib
import ctypes
import importlib.util
import io
import os
import subprocess
import sys
import tempfile
import types
from pathlib import Path

import numpy as np

import ioukit
from ioukit.dataset import CategoryTable, Dataset, ImageTable
from ioukit.io import read_ground_truth, read_predictions, write_dataset
from ioukit.io.dota import DOTA_V1_CLASSES
from ioukit.synthetic import make_rotated_boxes


def polyiou_shim(devkit: Path, build: Path) -> types.ModuleType:
    """A ``polyiou`` module running the devkit's ``polyiou.cpp`` through ctypes."""
    wrapper = build / "wrapper.cpp"
    wrapper.write_text(
        "#include <vector>\n"
        "double iou_poly(std::vector<double> p, std::vector<double> q);\n"
        'extern "C" double iou_poly_c(const double* p, const double* q) {\n'
        "  return iou_poly(std::vector<double>(p, p + 8), std::vector<double>(q, q + 8));\n"
        "}\n"
    )
    library = build / "_polyiou_ctypes.so"
    subprocess.run(
        [
            "g++",
            "-O2",
            "-shared",
            "-fPIC",
            str(devkit / "polyiou.cpp"),
            str(wrapper),
            "-o",
            str(library),
        ],
        check=True,
    )
    lib = ctypes.CDLL(str(library))
    lib.iou_poly_c.restype = ctypes.c_double
    lib.iou_poly_c.argtypes = [ctypes.POINTER(ctypes.c_double)] * 2
    module = types.ModuleType("polyiou")

    def vector(values: object) -> object:
        return (ctypes.c_double * 8)(*[float(v) for v in values])  # type: ignore[attr-defined]

    module.VectorDouble = vector  # type: ignore[attr-defined]
    module.iou_poly = lambda p, q: lib.iou_poly_c(p, q)  # type: ignore[attr-defined]
    return module


def load_devkit(devkit: Path, build: Path) -> types.ModuleType:
    os.environ.setdefault("MPLBACKEND", "Agg")
    # removed in NumPy 1.24 (np.bool is back in 2.x as np.bool_); the devkit uses them
    for name, value in (("bool", bool), ("float", float)):
        if not hasattr(np, name):
            setattr(np, name, value)
    sys.modules["polyiou"] = polyiou_shim(devkit, build)
    spec = importlib.util.spec_from_file_location("dota_eval", devkit / "dota_evaluation_task1.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def generated(seed: int, n_images: int = 40) -> tuple[Dataset, Dataset]:
    rng = np.random.default_rng(seed)
    names = DOTA_V1_CLASSES[:4]
    g_rows, g_cat, g_box, g_diff, p_rows, p_cat, p_box = [], [], [], [], [], [], []
    for image in range(n_images):
        n = int(rng.integers(1, 10))
        boxes = make_rotated_boxes(n, centre=(50, 900), size=(10, 120), seed=rng)
        cats = rng.integers(0, len(names), n)
        g_rows += [image] * n
        g_cat += cats.tolist()
        g_box += boxes.tolist()
        g_diff += (rng.uniform(size=n) < 0.15).tolist()
        jitter = boxes.copy()
        jitter[:, :2] += rng.normal(0, 0.1, (n, 2)) * boxes[:, 2:4]
        jitter[:, 2:4] *= np.exp(rng.normal(0, 0.15, (n, 2)))
        jitter[:, 4] += rng.normal(0, 8, n)
        m = int(rng.integers(0, 4))
        fps = make_rotated_boxes(m, centre=(50, 900), size=(10, 120), seed=rng)
        p_rows += [image] * (n + m)
        p_cat += cats.tolist() + rng.integers(0, len(names), m).tolist()
        p_box += jitter.tolist() + fps.tolist()
    images = ImageTable.from_lists(
        list(range(1, n_images + 1)), [f"P{i:04d}" for i in range(n_images)]
    )
    categories = CategoryTable.from_lists(list(range(len(names))), list(names))
    g, p = np.array(g_box), np.array(p_box)
    scores = np.round(rng.uniform(0.05, 1, len(p)), 2)  # ties, as real score files have
    gt = Dataset.from_arrays(
        images,
        categories,
        boxes=ioukit.box_convert(g, "cxcywhr", "xyxy"),
        image_index=g_rows,
        category_id=g_cat,
        difficult=g_diff,
        rotated=g,
    )
    pred = Dataset.from_arrays(
        images,
        categories,
        boxes=ioukit.box_convert(p, "cxcywhr", "xyxy"),
        image_index=p_rows,
        category_id=p_cat,
        scores=scores,
        rotated=p,
    )
    return gt, pred


def main() -> int:
    devkit_path = os.environ.get("DOTA_DEVKIT")
    if not devkit_path:
        print("DOTA_DEVKIT not set: skipped (point it at a CAPTAIN-WHU/DOTA_devkit checkout)")
        return 0
    devkit = Path(devkit_path)
    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        module = load_devkit(devkit, root)
        for seed in range(3):
            gt, pred = generated(seed)
            write_dataset(gt, root / f"labelTxt{seed}", format="dota")
            write_dataset(pred, root / f"det{seed}", format="dota")
            imageset = root / f"images{seed}.txt"
            imageset.write_text("".join(f"{s}\n" for s in gt.images.stems))
            names = list(gt.categories.names)
            devkit_ap = {}
            for name in names:
                with contextlib.redirect_stdout(io.StringIO()):
                    _, _, ap = module.voc_eval(
                        str(root / f"det{seed}" / "Task1_{:s}.txt"),
                        str(root / f"labelTxt{seed}" / "{:s}.txt"),
                        str(imageset),
                        name,
                        ovthresh=0.5,
                        use_07_metric=True,
                    )
                devkit_ap[name] = float(ap)
            devkit_map = float(np.mean(list(devkit_ap.values())))
            g = read_ground_truth(root / f"labelTxt{seed}", format="dota", classes=names)
            p = read_predictions(root / f"det{seed}", g, format="dota")
            result = ioukit.evaluate(g, p, protocol="dota", iou_type="rotated", compat="devkit")
            ours = {row["name"]: row["AP"] for row in result.per_class}
            worst = max(abs(ours[n] - devkit_ap[n]) for n in names)
            ok = abs(result.stats["mAP"] - devkit_map) <= 1e-9 and worst <= 1e-9
            failures += not ok
            stable = ioukit.evaluate(g, p, protocol="dota", iou_type="rotated").stats["mAP"]
            print(
                f"seed {seed}: {len(g)} objects, {len(p)} detections: devkit mAP "
                f"{devkit_map:.12f}, ioukit {result.stats['mAP']:.12f}, max class difference "
                f"{worst:.1e} {'OK' if ok else 'MISMATCH'} (stable tie order: {stable:.12f})"
            )
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
