"""The README's examples are executable: every ``>>>`` example must print what the README
shows, and its command-line quick start works as written (copy the bundled sample, then
``ioukit eval``), printing the lines the README shows. (Its ``python`` blocks run in
``tests/test_docs.py`` with the documentation pages.)"""

from __future__ import annotations

import doctest
import os
import re
import stat
import subprocess
import sys
from pathlib import Path

README = Path(__file__).parents[1] / "README.md"


def test_readme_examples() -> None:
    failures, attempted = doctest.testfile(
        str(README),
        module_relative=False,
        optionflags=doctest.NORMALIZE_WHITESPACE | doctest.ELLIPSIS,
    )
    assert attempted > 5
    assert failures == 0


def _blocks(lang: str) -> list[str]:
    return re.findall(rf"^```{lang}\n(.*?)^```", README.read_text(encoding="utf-8"), re.M | re.S)


def test_readme_command_line_quick_start_runs_as_written(tmp_path: Path) -> None:
    """``python`` and ``ioukit`` on PATH are this interpreter and its ``-m ioukit``."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name, target in (("python", ""), ("ioukit", " -m ioukit")):
        shim = bin_dir / name
        shim.write_text(f'#!/bin/sh\nexec "{sys.executable}"{target} "$@"\n')
        shim.chmod(shim.stat().st_mode | stat.S_IXUSR)
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}
    work = tmp_path / "work"
    work.mkdir()
    copy = next(b for b in _blocks("bash") if "sample_data" in b)
    subprocess.run(["sh", "-ec", copy], cwd=work, env=env, check=True)
    assert sorted(p.name for p in work.iterdir()) == ["ground_truth.json", "predictions.json"]

    console = next(b for b in _blocks("console") if b.startswith("$ ioukit eval"))
    command, *shown = console.splitlines()
    done = subprocess.run(
        ["sh", "-ec", command.removeprefix("$ ")],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    printed = (done.stdout + done.stderr).splitlines()
    assert shown and all(line in printed for line in shown), (shown, printed)
    assert (work / "report.json").is_file()
    assert any((work / "plots").glob("*.png"))
