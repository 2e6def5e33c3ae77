"""The miss-rate-vs-FPPI figure of the pedestrian protocols (#26 item 4): it draws the
evaluation's own curves (``fppi/<setup>``, ``miss_rate/<setup>``) and sampled points, names each
setup's MR⁻², and is what ``write_plots`` / ``ioukit eval --plots`` write for them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import ioukit
from ioukit import plots
from ioukit.cli import main
from ioukit.errors import ParameterError
from tests.evaluation.protocols.test_pedestrian import generate

pytest.importorskip("matplotlib")


@pytest.fixture(scope="module")
def result() -> Any:
    gt, dets = generate(4, n_images=30)
    return ioukit.evaluate(gt, dets, protocol="citypersons")


def test_the_figure_draws_the_evaluations_curves(
    result: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    saved: list[Any] = []
    save = plots._save
    monkeypatch.setattr(
        plots, "_save", lambda figure, path: saved.append(figure) or save(figure, path)
    )
    path = plots.plot_miss_rate_fppi(result, tmp_path / "mr.png")
    assert path.read_bytes()[:4] == b"\x89PNG"
    ax = saved[0].axes[0]
    setups = plots.miss_rate_setups(result)
    assert (
        setups
        == list(result.stats)
        == ["Reasonable", "Reasonable_small", "Reasonable_occ=heavy", "All"]
    )
    arrays = result.result.arrays
    curves, dots = ax.lines[0::2], ax.lines[1::2]
    for name, line, dot in zip(setups, curves, dots, strict=True):
        fppi, miss = arrays[f"fppi/{name}"], arrays[f"miss_rate/{name}"]
        assert np.array_equal(line.get_xdata()[1:], np.maximum(fppi, 1e-3))
        assert np.array_equal(line.get_ydata()[1:], np.maximum(miss, 1e-3))
        sampled = arrays[f"sampled_miss_rate/{name}"]
        assert np.array_equal(dot.get_xdata(), arrays["fppi_points"][sampled >= 0])
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert labels[0] == f"Reasonable  MR$^{{-2}}$ {100 * result.stats['Reasonable']:.2f}%"


def test_write_plots_and_the_cli_write_it(
    result: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    written = plots.write_plots(result, tmp_path / "a")
    assert [p.name for p in written] == ["miss_rate_fppi.png"]
    gt, dets = generate(4, n_images=30)
    (tmp_path / "gt.json").write_text(json.dumps(gt))
    (tmp_path / "dt.json").write_text(json.dumps(dets))
    argv = ["eval", "--gt", str(tmp_path / "gt.json"), "--pred", str(tmp_path / "dt.json")]
    assert main([*argv, "--protocol", "caltech", "--plots", str(tmp_path / "b"), "--quiet"]) == 0
    assert capsys.readouterr().out.startswith("caltech")
    assert sorted(p.name for p in (tmp_path / "b").iterdir()) == ["miss_rate_fppi.png"]


def test_other_evaluations_have_no_miss_rate_figure() -> None:
    ann = {"id": 1, "image_id": 1, "category_id": 1, "bbox": [0, 0, 10, 10], "area": 100}
    gt = {"images": [{"id": 1}], "categories": [{"id": 1}], "annotations": [ann]}
    dets = [{"image_id": 1, "category_id": 1, "bbox": [0, 0, 10, 9], "score": 0.9}]
    coco = ioukit.evaluate(gt, dets)
    assert plots.miss_rate_setups(coco) == []
    with pytest.raises(
        ParameterError, match=r"expected a miss-rate evaluation .* got protocol 'coco'"
    ):
        plots.plot_miss_rate_fppi(coco, "unused.png")
