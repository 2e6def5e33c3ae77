"""``ioukit eval --protocol yolo`` prints ``yolo val``'s table (#29 item 5): Ultralytics' header
and column widths (``"%22s" + "%11i" * 2 + "%11.3g" * 4``), Images and Instances counted from
the ground-truth file here, P R mAP50 mAP50-95 from ``ioukit.evaluate``; ``--plots`` writes
the P, R and F1 curves against confidence."""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

import pytest

import ioukit
from ioukit.cli import main
from ioukit.errors import ParameterError
from ioukit.io import write_dataset
from tests.io.test_io_formats import make_pair

# DetectionValidator.get_desc() of Ultralytics 8.x, as `yolo val` prints it
ULTRALYTICS_HEADER = (
    "                 Class     Images  Instances      Box(P          R      mAP50  mAP50-95)"
)


@pytest.fixture(scope="module")
def pair(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("yolo_table")
    gt, pred = make_pair(seed=11, n_images=30, n_classes=4)
    write_dataset(gt, root / "gt.json", format="coco")
    write_dataset(pred, root / "pred.json", format="coco")
    return root / "gt.json", root / "pred.json"


def test_the_table_is_yolo_vals(
    pair: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    gt, pred = pair
    assert (
        main(["eval", "--gt", str(gt), "--pred", str(pred), "--protocol", "yolo", "--quiet"]) == 0
    )
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == ULTRALYTICS_HEADER
    document = json.loads(gt.read_text())
    images: dict[int, set[int]] = defaultdict(set)
    instances: dict[int, int] = defaultdict(int)
    for a in document["annotations"]:
        images[a["category_id"]].add(a["image_id"])
        instances[a["category_id"]] += 1
    result = ioukit.evaluate(str(gt), str(pred), protocol="yolo")
    s = result.stats
    row = "%22s" + "%11i" * 2 + "%11.3g" * 4
    keys = ("precision", "recall", "AP50", "AP50-95")
    want = [
        row
        % (
            "all",
            len(document["images"]),
            len(document["annotations"]),
            s["precision"],
            s["recall"],
            s["mAP50"],
            s["mAP50-95"],
        ),
        *(
            row
            % (
                r["name"],
                len(images[r["category_id"]]),
                instances[r["category_id"]],
                *(r[k] for k in keys),
            )
            for r in result.per_class
            if instances[r["category_id"]]
        ),
    ]
    assert lines[1 : 1 + len(want)] == want
    assert len(want) == 5
    assert lines[1 + len(want)].startswith("fitness ")


def test_other_protocols_keep_their_report(
    pair: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    gt, pred = pair
    assert main(["eval", "--gt", str(gt), "--pred", str(pred), "--quiet"]) == 0
    out = capsys.readouterr().out
    assert ULTRALYTICS_HEADER not in out and "Average Precision" in out


def test_plots_write_the_p_r_f1_curves(
    pair: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("matplotlib")
    gt, pred = pair
    folder = tmp_path / "plots"
    argv = ["eval", "--gt", str(gt), "--pred", str(pred), "--protocol", "yolo", "--quiet"]
    assert main([*argv, "--plots", str(folder)]) == 0
    capsys.readouterr()
    for name in ("precision_confidence.png", "recall_confidence.png", "f1_confidence.png"):
        assert (folder / name).read_bytes()[:4] == b"\x89PNG"


def test_plot_metric_confidence_names_a_bad_metric(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    from ioukit.plots import plot_metric_confidence

    with pytest.raises(ParameterError, match="metric: expected 'precision' or 'recall', got 'F2'"):
        plot_metric_confidence(object(), tmp_path / "x.png", metric="F2")
