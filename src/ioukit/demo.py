"""``make demo``: the worked IoU example, then a full evaluation of the bundled sample data.

Run as ``python -m ioukit.demo [OUTPUT_DIR]``; plots go to ``OUTPUT_DIR/plots``
(default ``demo-output``).
"""

from __future__ import annotations

import sys
from pathlib import Path

from ioukit.overlap import box_dice_elementwise, box_iou_elementwise

__all__ = ["WORKED_EXAMPLE", "main", "worked_example_table"]

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


def main(argv: list[str] | None = None) -> int:
    """Print the worked example, then run ``ioukit eval`` on the sample data."""
    from ioukit import sample_data
    from ioukit.cli import main as cli_main

    args = sys.argv[1:] if argv is None else argv
    output = Path(args[0] if args else "demo-output")
    output.mkdir(parents=True, exist_ok=True)
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
