"""SIGTERM and SIGHUP clean up staged outputs as Ctrl-C does (#23 item 15).

Each run sends the signal to itself at a point where an output is staged under its temporary
``.name.XXXX.tmp`` name: the JSON report of ``eval`` (before its CSV is built), the label
folder of ``convert`` (while its files are written). Afterwards nothing may be left.
"""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import DATA

GOOD = DATA / "bad_inputs" / "good"

_SELF_KILL = """
import os, signal, sys, time
signal.signal(signal.{sig}, signal.SIG_DFL)  # as from a terminal, even when pytest runs under nohup
def hit(*args, **kwargs):
    os.kill(os.getpid(), signal.{sig})
    time.sleep(30)
    raise SystemExit("the signal did not stop the run")
{patch}
from ioukit.cli import main
sys.exit(main({argv!r}))
"""

pytestmark = pytest.mark.skipif(not hasattr(signal, "SIGHUP"), reason="POSIX signals")


def _run(sig: str, patch: str, argv: list[str]) -> subprocess.CompletedProcess[str]:
    code = _SELF_KILL.format(sig=sig, patch=patch, argv=argv)
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False
    )


@pytest.mark.parametrize("sig", ["SIGTERM", "SIGHUP"])
def test_eval_removes_the_staged_report(sig: str, tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    patch = "import ioukit.report; ioukit.report.csv_bytes = hit"
    argv = ["eval", "--gt", str(GOOD / "gt.json"), "--pred", str(GOOD / "pred.json")]
    argv += ["--json", str(out / "r.json"), "--csv", str(out / "t.csv")]
    done = _run(sig, patch, argv)
    assert done.returncode == 128 + getattr(signal, sig), done.stderr
    assert "Traceback" not in done.stderr
    assert list(out.iterdir()) == []


@pytest.mark.parametrize("sig", ["SIGTERM", "SIGHUP"])
def test_convert_removes_the_staged_folder(sig: str, tmp_path: Path) -> None:
    patch = "import pathlib; pathlib.Path.write_text = hit"
    argv = ["convert", str(GOOD / "gt.json"), str(tmp_path / "labels"), "--to", "yolo"]
    done = _run(sig, patch, argv)
    assert done.returncode == 128 + getattr(signal, sig), done.stderr
    assert list(tmp_path.iterdir()) == []


def test_an_ignored_hangup_stays_ignored(tmp_path: Path) -> None:
    """Under ``nohup`` (SIGHUP ignored) the run goes on and finishes."""
    code = (
        "import os, signal, sys; signal.signal(signal.SIGHUP, signal.SIG_IGN)\n"
        "import ioukit.report as r; real = r.csv_bytes\n"
        "def hit(*a):\n    os.kill(os.getpid(), signal.SIGHUP); return real(*a)\n"
        "r.csv_bytes = hit\nfrom ioukit.cli import main\n"
        f"sys.exit(main(['eval', '--gt', {str(GOOD / 'gt.json')!r}, '--pred', "
        f"{str(GOOD / 'pred.json')!r}, '--csv', {str(tmp_path / 't.csv')!r}]))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "t.csv").is_file()
