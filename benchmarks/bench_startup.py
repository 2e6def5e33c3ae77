"""Start-up costs in fresh processes (#9): import, first call of each compiled kernel, and
``ioukit eval`` on the bundled sample, end to end.

Every figure is the median over ``--runs`` fresh interpreter processes (default 7), measured
inside the process with ``time.perf_counter`` from before ``import ioukit`` to after the first
result, plus the bare interpreter (``python -c pass``) and ``import numpy`` for reference,
and whether ``import ioukit`` loaded any compiled kernel (it should not). Exits 1 when
``import ioukit`` takes more than 0.15 s. Processes may write and use cached bytecode
(``PYTHONDONTWRITEBYTECODE`` is dropped from their environment, and one untimed run of each
snippet comes first), as for an installed package.

Run: ``python benchmarks/bench_startup.py [--runs N]``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from _timing import print_table

SAMPLE = Path(__file__).resolve().parent.parent / "src" / "ioukit" / "sample_data"

SNIPPETS = {
    "import numpy": "import numpy",
    "import ioukit": "import ioukit",
    "first box_iou 200x200": (
        "import numpy as np, ioukit\n"
        "a = np.random.default_rng(0).random((200, 4)); a[:, 2:] += a[:, :2]\n"
        "ioukit.box_iou(a, a)"
    ),
    "first nms 1000 boxes": (
        "import numpy as np, ioukit\n"
        "r = np.random.default_rng(0); a = r.random((1000, 4)); a[:, 2:] += a[:, :2]\n"
        "ioukit.nms(a, r.random(1000), 0.5)"
    ),
    "import + first evaluate, bundled sample (200 images)": (
        "import ioukit\n"
        f"ioukit.evaluate({str(SAMPLE / 'ground_truth.json')!r}, "
        f"{str(SAMPLE / 'predictions.json')!r})"
    ),
    "first mask_iou 20 masks 64x64": (
        "import numpy as np, ioukit\n"
        "m = np.random.default_rng(0).random((20, 64, 64)) < 0.3\n"
        "ioukit.masks.mask_iou(m, m)"
    ),
}


# cached bytecode, as for an installed package
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
IMPORT_LIMIT = 0.15


def _in_process(code: str) -> float:
    """Seconds from before ``code`` to after it, measured inside a fresh interpreter."""
    wrapped = f"import time\nt = time.perf_counter()\n{code}\nprint(time.perf_counter() - t)"
    out = subprocess.run([sys.executable, "-c", wrapped], capture_output=True, text=True, env=ENV)
    out.check_returncode()
    return float(out.stdout.strip().splitlines()[-1])


def _whole_process(command: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(command, capture_output=True, check=True, env=ENV)
    return time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    runs = parser.parse_args().runs
    rows = []
    bare = statistics.median(_whole_process([sys.executable, "-c", "pass"]) for _ in range(runs))
    rows.append(["python -c pass (whole process)", f"{bare * 1000:.0f} ms"])
    medians = {}
    for label, code in SNIPPETS.items():
        _in_process(code)  # warm-up: bytecode caches
        median = statistics.median(_in_process(code) for _ in range(runs))
        medians[label] = median
        rows.append([label, f"{median * 1000:.0f} ms"])
    ioukit = [sys.executable, "-m", "ioukit"]
    command = [*ioukit, "eval", "--gt", str(SAMPLE / "ground_truth.json")]
    command += ["--pred", str(SAMPLE / "predictions.json"), "--quiet"]
    median = statistics.median(_whole_process(command) for _ in range(runs))
    rows.append(["ioukit eval on the bundled sample (whole process)", f"{median * 1000:.0f} ms"])
    print_table(
        f"fresh processes, median of {runs} ({os.cpu_count()} CPUs)", ["what", "time"], rows
    )
    check = (
        "import sys, ioukit; "
        "print(sorted(m for m in sys.modules if m.startswith('ioukit._kernels.')), "
        "'numba' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", check], capture_output=True, text=True, env=ENV)
    print(f"compiled kernels / numba loaded by `import ioukit`: {out.stdout.strip()}")
    if medians["import ioukit"] > IMPORT_LIMIT:
        print(f"import ioukit: {medians['import ioukit']:.3f} s > {IMPORT_LIMIT} s")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
