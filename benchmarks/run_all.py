"""Run every ``benchmarks/bench_*.py`` in turn (``make bench``); each prints its own ratios.

Pass names to run a subset: ``python benchmarks/run_all.py iou nms``.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def main() -> int:
    here = Path(__file__).parent
    wanted = set(sys.argv[1:])
    scripts = sorted(here.glob("bench_*.py"))
    failed = []
    for script in scripts:
        name = script.stem.removeprefix("bench_")
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
