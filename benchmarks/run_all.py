"""Run every ``benchmarks/bench_*.py`` and ``check_*.py`` in turn (``make bench``).

The bench scripts print times and ratios; the check scripts compare numbers with reference tools
that are too heavy for the test environment (Ultralytics) and exit non-zero on a mismatch.

Pass names to run a subset: ``python benchmarks/run_all.py iou nms``.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def main() -> int:
    here = Path(__file__).parent
    wanted = set(sys.argv[1:])
    scripts = sorted(here.glob("bench_*.py")) + sorted(here.glob("check_*.py"))
    failed = []
    for script in scripts:
        name = script.stem.removeprefix("bench_").removeprefix("check_")
        if wanted and name not in wanted:
            continue
        print(f"\n==================== {script.name} ====================", flush=True)
        if subprocess.call([sys.executable, str(script)]) != 0:
            failed.append(script.name)
    if failed:
        print(f"\nfailed: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
