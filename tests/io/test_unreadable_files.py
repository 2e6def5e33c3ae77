"""A file that exists but cannot be read (permission denied) gives exit 2 and one line naming it.

Tests run as root in CI, where ``chmod 000`` does not stop reading, so the denial is simulated.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from ioukit.cli import main
from ioukit.io import _text
from tests.conftest import DATA

GOOD = DATA / "bad_inputs" / "good"


@pytest.mark.parametrize("side", ["gt", "pred"])
def test_permission_denied(
    side: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    denied = (GOOD / ("gt.json" if side == "gt" else "pred.json")).resolve()
    real_open = Path.open

    def open_(self: Path, *args: Any, **kwargs: Any) -> Any:
        if self.resolve() == denied:
            raise PermissionError(13, "Permission denied", str(self))
        return real_open(self, *args, **kwargs)

    def builtin_open(file: Any, *args: Any, **kwargs: Any) -> Any:
        if isinstance(file, str | Path) and Path(file).resolve() == denied:
            raise PermissionError(13, "Permission denied", str(file))
        return open(file, *args, **kwargs)

    monkeypatch.setattr(Path, "open", open_)
    # the readers' byte reader opens files with the built-in open (no pathlib at start-up)
    monkeypatch.setattr(_text, "open", builtin_open, raising=False)
    status = main(["eval", "--gt", str(GOOD / "gt.json"), "--pred", str(GOOD / "pred.json")])
    err = capsys.readouterr().err
    assert status == 2
    assert err.count("\n") == 1
    assert denied.name in err and "Permission denied" in err
