"""A NaN or infinite score written by Python's ``json.dumps`` is refused naming the word and
the way out (#23 item 25), on the path and the CLI routes alike."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import ioukit
from ioukit.cli import main
from ioukit.errors import DataFormatError

GT = {
    "images": [{"id": 1}],
    "categories": [{"id": 1, "name": "a"}],
    "annotations": [
        {"id": 1, "image_id": 1, "category_id": 1, "bbox": [0, 0, 4, 4], "area": 16, "iscrowd": 0}
    ],
}


@pytest.mark.parametrize(("value", "word"), [(float("nan"), "NaN"), (float("inf"), "Infinity"),
                                             (float("-inf"), "Infinity")])  # fmt: skip
def test_non_json_number_is_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], value: float, word: str
) -> None:
    results = tmp_path / "results.json"
    row = {"image_id": 1, "category_id": 1, "bbox": [0, 0, 4, 4], "score": value}
    results.write_text(json.dumps([row]))  # what json.dumps writes by default
    with pytest.raises(DataFormatError, match=rf"{word} is not JSON .*allow_nan=False"):
        ioukit.evaluate(GT, results)
    gt = tmp_path / "gt.json"
    gt.write_text(json.dumps(GT))
    assert main(["eval", "--gt", str(gt), "--pred", str(results), "--quiet"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and f"{word} is not JSON" in err[0] and "results.json" in err[0]
