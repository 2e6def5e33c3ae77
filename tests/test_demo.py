"""``python -m ioukit.demo`` (``make demo``): repeatable; owns its output folder, no other."""

from __future__ import annotations

from pathlib import Path

import pytest

from ioukit import demo, sample_data


def test_demo_twice_replaces_its_own_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "demo-output"
    assert demo.main([str(out)]) == 0
    first = sorted(p.relative_to(out) for p in out.rglob("*"))
    (out / "plots" / "stale.png").write_bytes(b"left over")
    assert demo.main([str(out)]) == 0
    second = sorted(p.relative_to(out) for p in out.rglob("*"))
    assert first == second  # the stale file went with the old folder
    assert (out / demo.MARKER).is_file()
    assert not [p for p in tmp_path.iterdir() if p.name != "demo-output"]  # nothing left aside
    assert "IoU of four box pairs" in capsys.readouterr().out


def test_demo_refuses_a_folder_it_did_not_write(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "mine"
    out.mkdir()
    (out / "notes.txt").write_text("keep me")
    assert demo.main([str(out)]) == 2
    err = capsys.readouterr().err
    assert f"{out}: folder exists and was not written by the demo" in err
    assert [p.name for p in out.iterdir()] == ["notes.txt"]
    file = tmp_path / "a-file"
    file.write_text("x")
    assert demo.main([str(file)]) == 2
    assert "expected a folder, got a file" in capsys.readouterr().err
    assert file.read_text() == "x"


def test_failed_run_puts_the_previous_output_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "demo-output"
    assert demo.main([str(out)]) == 0
    before = (out / "report.json").read_bytes()
    # the next run fails while reading the predictions
    monkeypatch.setattr(sample_data, "predictions_path", lambda: tmp_path / "missing.json")
    assert demo.main([str(out)]) == 2
    assert (out / "report.json").read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["demo-output"]
