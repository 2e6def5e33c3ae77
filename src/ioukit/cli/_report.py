"""Exit codes and report printing shared by the subcommands.

Exit status, as a linter's:

====  =============================================================================
code  meaning
====  =============================================================================
0     success (``check``: no error-level finding; ``eval``: no error-level
      diagnostic, or ``--no-fail``)
1     ``check``/``eval`` found an error-level problem (after printing the report);
      also an internal error (a bug: please report it)
2     bad input or usage: one line on stderr naming the file or option and place
130   interrupted (Ctrl-C)
====  =============================================================================

Examples
--------
>>> fail_status([], no_fail=False, command="check")
0
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Sequence
from typing import Any

from ioukit.report import escape_text

__all__ = ["error_findings", "fail_status", "quiet_stdout", "say", "yolo_val_table"]


def quiet_stdout() -> None:
    """Point stdout at ``/dev/null`` after its reader went away (``ioukit eval | head -1``).

    Later writes, and the interpreter's final flush, then succeed silently instead of raising
    ``BrokenPipeError``.
    """
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):  # stdout without a file descriptor (captured in tests)
        pass


def say(text: str) -> None:
    """Print ``text`` to stdout; a closed pipe silences the rest of the output, nothing else."""
    try:
        print(text, flush=True)
    except BrokenPipeError:
        quiet_stdout()


def error_findings(findings: Iterable[Any]) -> list[Any]:
    """The findings of severity ``"error"``."""
    return [f for f in findings if getattr(f, "severity", None) == "error"]


def fail_status(errors: Sequence[Any], *, no_fail: bool, command: str) -> int:
    """1 (with a closing line on stderr) when ``errors`` is not empty and ``no_fail`` is off."""
    if not errors or no_fail:
        return 0
    codes = ", ".join(sorted({str(getattr(f, "code", "?")) for f in errors}))
    print(
        f"ioukit {command}: {len(errors)} error-level finding(s) ({codes}); exit status 1 "
        "(pass --no-fail to exit 0)",
        file=sys.stderr,
    )
    return 1


def yolo_val_table(
    rows: Sequence[Any],
    stats: Any,
    *,
    images: int,
    images_per_class: Any,
) -> str:
    """``yolo val``'s table: ``Class Images Instances Box(P R mAP50 mAP50-95)``.

    Ultralytics' layout (``"%22s" + "%11i" * 2 + "%11.3g" * 4``): an ``all`` row (every
    image, every instance, the means), then one row per class with ground truth, in the
    order of ``rows``, as ``DetectionValidator.print_results`` does when there is more than
    one class. ``images_per_class`` maps a category id to the number of images holding one
    of its instances.

    >>> rows = [{"category_id": 0, "name": "cat", "num_gt": 3, "precision": 0.5,
    ...          "recall": 0.25, "AP50": 0.75, "AP50-95": 0.5}]
    >>> stats = {"precision": 0.5, "recall": 0.25, "mAP50": 0.75, "mAP50-95": 0.5}
    >>> print(yolo_val_table(rows, stats, images=2, images_per_class={0: 2}))
                     Class     Images  Instances      Box(P          R      mAP50  mAP50-95)
                       all          2          3        0.5       0.25       0.75        0.5
    """
    header = ("%22s" + "%11s" * 6) % (
        "Class",
        "Images",
        "Instances",
        "Box(P",
        "R",
        "mAP50",
        "mAP50-95)",
    )
    line = "%22s" + "%11i" * 2 + "%11.3g" * 4
    instances = sum(int(r["num_gt"]) for r in rows)
    means = [float(stats[k]) for k in ("precision", "recall", "mAP50", "mAP50-95")]
    lines = [header, line % ("all", images, instances, *means)]
    with_gt = [r for r in rows if int(r["num_gt"]) > 0]
    if len(rows) > 1:
        for r in with_gt:
            values = [float(r[k]) for k in ("precision", "recall", "AP50", "AP50-95")]
            count = int(images_per_class.get(int(r["category_id"]), 0))
            lines.append(line % (escape_text(str(r["name"])), count, int(r["num_gt"]), *values))
    return "\n".join(lines)
