"""Every code block of the documentation pages runs (``docs/*.md`` and the README).

``python`` blocks are executed and ``pycon`` blocks are doctests (their output must be what
the page shows), in page order, in one namespace per page (``__name__ == "__main__"``), in a
fresh process per page (a page may install the pycocotools drop-in), in a temporary working
directory holding the bundled sample's ``ground_truth.json`` and ``predictions.json``.

A block that needs something optional says so on the line before it, as a MyST comment (not
rendered): ``% test: requires MODULE [MODULE ...]`` (skipped, naming the module, where one is
missing) or ``% test: skip REASON`` (never run here; the reason says why and where the same
call is tested). Nothing is skipped silently: each block is its own test, and a skipped block
shows as skipped with its reason. Blocks of other languages (``bash``, ``console``, ``text``)
are not run; a ``% test:`` marker before one is an error.

Run one page by hand with ``python tests/test_docs.py docs/PAGE.md`` (prints one JSON line per
block).
"""

from __future__ import annotations

import contextlib
import doctest
import importlib.util
import io
import json
import re
import shutil
import subprocess
import sys
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from ioukit.sample_data import ground_truth_path, predictions_path

ROOT = Path(__file__).parents[1]
PAGES = [*sorted((ROOT / "docs").glob("*.md")), ROOT / "README.md"]
RUN = ("python", "pycon")
"""Languages whose blocks are run."""

_FENCE = re.compile(r"^(?P<fence>`{3,}|~{3,})(?P<lang>[^\s`]*)[^\n]*$")
_MARKER = re.compile(r"^%\s*test:\s*(?P<kind>requires|skip)\s+(?P<arg>\S.*)$")
_DOCTEST_FLAGS = doctest.NORMALIZE_WHITESPACE | doctest.ELLIPSIS


@dataclass(frozen=True)
class Block:
    """One fenced code block of a page: language, 1-based line of its first code line, text,
    and its marker (``("requires", "torch")``, ``("skip", reason)`` or None)."""

    lang: str
    line: int
    code: str
    marker: tuple[str, str] | None


def parse_blocks(text: str) -> list[Block]:
    """The fenced code blocks of a Markdown page (MyST directives such as ``{toctree}`` and
    ``{include}`` are not code), each with the ``% test:`` marker on the line before it."""
    blocks: list[Block] = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        match = _FENCE.match(lines[i])
        if not match:
            i += 1
            continue
        fence, lang = match["fence"], match["lang"]
        start = i + 1
        end = start
        while end < len(lines) and not lines[end].startswith(fence):
            end += 1
        marker = None
        previous = lines[i - 1].strip() if i > 0 else ""
        if previous.startswith("%") and "test:" in previous:
            found = _MARKER.match(previous)
            if found is None:
                raise ValueError(f"line {i}: malformed marker {previous!r}")
            marker = (found["kind"], found["arg"].strip())
        if not lang.startswith("{"):
            blocks.append(Block(lang, start + 1, "\n".join(lines[start:end]) + "\n", marker))
        i = end + 1
    return blocks


def _missing(modules: str) -> list[str]:
    return [name for name in modules.split() if importlib.util.find_spec(name) is None]


def _run_block(block: Block, namespace: dict[str, Any], page: str) -> tuple[str, str]:
    """Run one block in ``namespace``: ``("ok" | "failed", message)``."""
    if block.lang == "python":
        sink = io.StringIO()
        try:
            with contextlib.redirect_stdout(sink):
                exec(compile(block.code, f"{page}:{block.line}", "exec"), namespace)
        except Exception:
            return "failed", traceback.format_exc(limit=-3)
        return "ok", ""
    parser = doctest.DocTestParser()
    test = doctest.DocTest(
        parser.get_examples(block.code, name=page),
        namespace,
        f"{page}:{block.line}",
        page,
        block.line - 1,
        block.code,
    )
    runner = doctest.DocTestRunner(optionflags=_DOCTEST_FLAGS, verbose=False)
    report = io.StringIO()
    results = runner.run(test, out=report.write, clear_globs=False)
    namespace.update(test.globs)  # DocTest runs on a copy of the namespace
    if results.attempted == 0:
        return "failed", "a pycon block without a >>> example"
    return ("failed", report.getvalue()) if results.failed else ("ok", "")


def run_page(path: Path) -> list[dict[str, Any]]:
    """Run every block of one page in order; one record per block (line, status, message)."""
    namespace: dict[str, Any] = {"__name__": "__main__"}
    records = []
    for block in parse_blocks(path.read_text(encoding="utf-8")):
        if block.lang not in RUN:
            status, message = (
                ("failed", f"a test marker before a {block.lang!r} block")
                if (block.marker)
                else ("not run", "")
            )
        elif block.marker and block.marker[0] == "skip":
            status, message = "skipped", block.marker[1]
        elif block.marker and _missing(block.marker[1]):
            status, message = "skipped", f"needs {' '.join(_missing(block.marker[1]))}"
        else:
            status, message = _run_block(block, namespace, path.name)
        records.append({"line": block.line, "status": status, "message": message})
    return records


def _copy_sample(folder: Path) -> None:
    for path in (ground_truth_path(), predictions_path()):
        shutil.copy(path, folder / path.name)


_RESULTS: dict[Path, dict[int, dict[str, Any]]] = {}


def _page_results(page: Path, folder: Path) -> dict[int, dict[str, Any]]:
    """Run ``page`` once in a fresh process (cached for its blocks' tests)."""
    if page not in _RESULTS:
        _copy_sample(folder)
        done = subprocess.run(
            [sys.executable, __file__, str(page)],
            cwd=folder,
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert done.returncode == 0, done.stderr[-4000:]
        records = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
        _RESULTS[page] = {record["line"]: record for record in records}
    return _RESULTS[page]


CASES = [
    pytest.param(page, block.line, id=f"{page.name}:{block.line}")
    for page in PAGES
    for block in parse_blocks(page.read_text(encoding="utf-8"))
    if block.lang in RUN
]


@pytest.mark.parametrize(("page", "line"), CASES)
def test_docs_block(page: Path, line: int, tmp_path_factory: pytest.TempPathFactory) -> None:
    record = _page_results(page, tmp_path_factory.mktemp(page.stem))[line]
    if record["status"] == "skipped":
        pytest.skip(f"{page.name}:{line}: {record['message']}")
    assert record["status"] == "ok", f"{page.name}:{line}\n{record['message']}"


def test_every_page_has_run_blocks_or_none_to_run() -> None:
    """Markers parse on every page, and no marker sits before a block that is not run."""
    for page in PAGES:
        for block in parse_blocks(page.read_text(encoding="utf-8")):
            assert block.lang in RUN or block.marker is None, f"{page.name}:{block.line}"
    assert len(CASES) > 20


def test_every_page_is_in_the_index() -> None:
    """``make docs`` fails on a page outside every toctree; this says which, without Sphinx."""
    index = (ROOT / "docs" / "index.md").read_text(encoding="utf-8")
    listed = {
        line.strip()
        for tree in re.findall(r"^```\{toctree\}\n(.*?)^```", index, re.M | re.S)
        for line in tree.splitlines()
        if line.strip() and not line.startswith(":")
    }
    pages = {p.stem for p in (ROOT / "docs").glob("*.md")} - {"index"}
    assert pages <= listed, sorted(pages - listed)


def test_parse_blocks_reads_markers_and_skips_directives() -> None:
    text = (
        "# t\n\n```{toctree}\nx\n```\n\n% test: requires torch numpy\n```python\nimport torch\n"
        "```\n\n````pycon\n>>> 1 + 1\n2\n````\n\n% test: skip needs a cluster\n```python\nx\n```\n"
    )
    blocks = parse_blocks(text)
    assert [(b.lang, b.line, b.marker) for b in blocks] == [
        ("python", 9, ("requires", "torch numpy")),
        ("pycon", 13, None),
        ("python", 19, ("skip", "needs a cluster")),
    ]
    with pytest.raises(ValueError, match="malformed marker"):
        parse_blocks("% test: maybe\n```python\nx\n```\n")


def test_a_failing_block_is_reported(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text("```pycon\n>>> 1 + 1\n3\n```\n\n```python\nraise RuntimeError('no')\n```\n")
    records = run_page(page)
    assert [r["status"] for r in records] == ["failed", "failed"]
    assert "RuntimeError: no" in records[1]["message"]


if __name__ == "__main__":
    for record in run_page(Path(sys.argv[1]).resolve()):
        print(json.dumps(record), flush=True)
