"""``make demo``: the worked IoU example, then a full evaluation of the bundled sample data.

Run as ``python -m ioukit.demo [OUTPUT_DIR]``; the report goes to ``OUTPUT_DIR/report.json``
and the plots to ``OUTPUT_DIR/plots`` (default ``demo-output``).

The demo owns its output folder: a second run replaces the folder a first run wrote (marked by
a ``.ioukit-demo`` file), and refuses any other non-empty folder. The previous output is moved
aside while the new one is written and put back when the run fails.
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path

from ioukit import sample_data
from ioukit.cli import main as cli_main
from ioukit.overlap import box_dice_elementwise, box_iou_elementwise

__all__ = ["MARKER", "WORKED_EXAMPLE", "main", "worked_example_table"]

#: the file that marks a folder as written by the demo (so a later run may replace it)
MARKER = ".ioukit-demo"
# what a demo run leaves in its folder (an unmarked folder holding only these, from a run of an
# earlier version, is replaced too)
_DEMO_ENTRIES = frozenset({MARKER, "report.json", "plots"})

WORKED_EXAMPLE = (
    ((100, 80, 300, 280), (120, 100, 320, 300)),
    ((50, 60, 210, 260), (110, 90, 260, 280)),
    ((400, 150, 600, 450), (430, 190, 570, 410)),
    ((700, 100, 800, 200), (820, 210, 900, 300)),
)


def worked_example_table() -> str:
    """The README's worked example: IoU, Dice and hits at 0.5 / 0.75 for four box pairs.

    Examples
    --------
    >>> print(worked_example_table().splitlines()[2])
    (100, 80, 300, 280)   (120, 100, 320, 300)  0.681  0.810  yes    no
    """
    gt = [g for g, _ in WORKED_EXAMPLE]
    pred = [p for _, p in WORKED_EXAMPLE]
    ious = box_iou_elementwise(gt, pred)
    dices = box_dice_elementwise(gt, pred)
    lines = [
        f"{'ground truth':<21} {'prediction':<21} {'IoU':<6} {'Dice':<6} {'@0.5':<6} @0.75",
        "-" * 70,
    ]
    for (g, p), iou, dice in zip(WORKED_EXAMPLE, ious.tolist(), dices.tolist(), strict=True):
        hit = ["yes" if iou >= t else "no" for t in (0.5, 0.75)]
        lines.append(f"{g!s:<21} {p!s:<21} {iou:.3f}  {dice:.3f}  {hit[0]:<6} {hit[1]}")
    return "\n".join(lines)


def _demo_owned(folder: Path) -> bool:
    """True when ``folder`` is empty or was written by the demo (so a new run may replace it)."""
    entries = {entry.name for entry in folder.iterdir()}
    return MARKER in entries or entries <= _DEMO_ENTRIES


def main(argv: list[str] | None = None) -> int:
    """Print the worked example, then run ``ioukit eval`` on the sample data.

    Parameters
    ----------
    argv : list of str, optional
        ``[OUTPUT_DIR]``; ``sys.argv[1:]`` when omitted.

    Returns
    -------
    int
        The exit status: 0 on success, 2 when the output folder is not the demo's.
    """
    args = sys.argv[1:] if argv is None else argv
    output = Path(args[0] if args else "demo-output")
    if output.is_symlink() or (output.exists() and not output.is_dir()):
        kind = "a symbolic link" if output.is_symlink() else "a file"
        print(f"ioukit.demo: error: {output}: expected a folder, got {kind}", file=sys.stderr)
        return 2
    if output.exists() and not _demo_owned(output):
        print(
            f"ioukit.demo: error: {output}: folder exists and was not written by the demo "
            f"(no {MARKER} file); remove it or name another folder",
            file=sys.stderr,
        )
        return 2
    output.parent.mkdir(parents=True, exist_ok=True)
    previous = None
    if output.exists():
        previous = Path(tempfile.mkdtemp(prefix=f".{output.name}-previous-", dir=output.parent))
        output.rename(previous / output.name)
    status = 1  # stays 1 when the run raises
    try:
        output.mkdir()
        status = _run(output)
    finally:
        if status == 0:
            (output / MARKER).write_text(
                "written by python -m ioukit.demo; a next run replaces it\n"
            )
            if previous is not None:
                shutil.rmtree(previous)
        else:
            shutil.rmtree(output, ignore_errors=True)
            if previous is not None:
                (previous / output.name).rename(output)
                previous.rmdir()
    return status


def _run(output: Path) -> int:
    """The demo proper, writing into the (empty) folder ``output``."""
    print("IoU of four box pairs (xyxy pixels; ioukit.box_iou_elementwise / box_dice_elementwise)")
    print(worked_example_table())
    print()
    print("ioukit eval on the bundled sample data (200 images, COCO protocol):")
    print(f"  ground truth: {sample_data.ground_truth_path()}")
    print(f"  predictions:  {sample_data.predictions_path()}")
    print(f"  plots:        {output / 'plots'}")
    print(flush=True)
    return cli_main(
        [
            "eval",
            "--gt",
            str(sample_data.ground_truth_path()),
            "--pred",
            str(sample_data.predictions_path()),
            "--plots",
            str(output / "plots"),
            "--json",
            str(output / "report.json"),
        ]
    )


if __name__ == "__main__":
    sys.exit(main())
