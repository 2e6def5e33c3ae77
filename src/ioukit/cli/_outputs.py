"""Output files of one command run: checked before any work, written together at the end.

Rules (issue #16, items 11 and 13):

* an output never lands on an input (the same file, or a file inside an input folder);
* an existing output file is refused unless ``--force``; something that is not a regular file
  (a device node, a FIFO, a folder where a file is expected) is refused even with ``--force``;
* every output is first written under a temporary name next to its target; only when all of
  them are complete are they renamed into place, so a late failure (a full disk, a plot that
  cannot be drawn) leaves nothing behind;
* files get the usual permissions (``0o666`` less the umask; folders ``0o777`` less it).

Examples
--------
>>> import pathlib, tempfile
>>> d = pathlib.Path(tempfile.mkdtemp())
>>> plan = OutputPlan(inputs=[], force=False)
>>> plan.add_file("--json", d / "r.json")
>>> with plan:
...     plan.write_bytes("--json", b"{}")
>>> (d / "r.json").read_bytes()
b'{}'
"""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
import tempfile
from collections.abc import Iterable, Sequence
from pathlib import Path
from types import TracebackType

from ioukit.errors import ParameterError
from ioukit.io._text import WriteError, default_mode, file_kind

__all__ = ["OutputPlan", "check_not_input", "refuse_existing"]


def stdout_choice(given: Sequence[tuple[str, str | None]], format: str) -> str | None:
    """The one output printed on stdout instead of the text report: the option whose file
    name is ``-``, or ``"--format json"`` (the ``--json`` document); None for the report.
    More than one is refused before any work, naming them.

    Parameters
    ----------
    given : sequence of (option, value)
        Each output option and its file name (None: not asked).
    format : {"text", "json"}
        ``--format``.

    >>> stdout_choice([("--json", None), ("--csv", "-")], "text")
    '--csv'
    >>> stdout_choice([("--json", "r.json")], "json")
    '--format json'
    >>> stdout_choice([("--json", None), ("--csv", "-")], "json")
    Traceback (most recent call last):
    ...
    ioukit.errors.ParameterError: --format json, --csv -: expected at most one output on stdout, got 2 (write the others to files)
    """  # noqa: E501
    dashes = [option for option, value in given if value == "-"]
    if format == "json" and "--json" not in dashes:
        dashes.insert(0, "--format json")
    if len(dashes) > 1:
        shown = ", ".join(d if d.startswith("--format") else f"{d} -" for d in dashes)
        raise ParameterError(
            f"{shown}: expected at most one output on stdout, got {len(dashes)} (write the "
            "others to files)"
        )
    return dashes[0] if dashes else None


def _resolved(path: Path) -> Path:
    return Path(os.path.realpath(path))


def check_not_input(option: str, path: Path, inputs: Iterable[Path]) -> None:
    """Refuse ``path`` when it is an input file or lies inside an input folder.

    >>> check_not_input("--json", Path("gt.json"), [Path("gt.json")])
    Traceback (most recent call last):
    ...
    ioukit.errors.ParameterError: --json gt.json: refusing to write onto the input gt.json
    """
    target = _resolved(path)
    for source in inputs:
        src = _resolved(source)
        same = target == src
        if not same and path.exists() and source.exists():
            with contextlib.suppress(OSError):
                same = os.path.samefile(path, source)
        if same:
            raise ParameterError(f"{option} {path}: refusing to write onto the input {source}")
        if src.is_dir() and (src in target.parents or target == src):
            raise ParameterError(
                f"{option} {path}: refusing to write inside the input folder {source}"
            )


def refuse_existing(option: str, path: Path, *, force: bool, folder: bool = False) -> None:
    """Refuse an existing output that ``--force`` may not (or was not asked to) replace.

    A folder output may exist when it is empty; a file output may exist with ``force`` when it
    is a regular file (never a device, FIFO or folder).
    """
    try:
        info = os.stat(path)
    except FileNotFoundError:
        if os.path.islink(path) and not force:  # a dangling link is something there too
            raise FileExistsError(
                f"{option} {path}: a symbolic link to the missing {os.readlink(path)} exists "
                "(pass --force to replace the link)"
            ) from None
        return
    except OSError as exc:
        raise OSError(f"{option} {path}: cannot inspect: {exc.strerror or exc}") from None
    if folder:
        if not stat.S_ISDIR(info.st_mode):
            raise NotADirectoryError(
                f"{option} {path}: expected a folder, got {file_kind(info.st_mode)}"
            )
        if any(path.iterdir()) and not force:
            raise FileExistsError(
                f"{option} {path}: folder exists and is not empty (pass --force to write into it)"
            )
        return
    if not stat.S_ISREG(info.st_mode):
        raise FileExistsError(
            f"{option} {path}: expected a regular file to write, got {file_kind(info.st_mode)}"
        )
    if not force:
        raise FileExistsError(f"{option} {path}: file exists (pass --force to overwrite)")


class OutputPlan:
    """The output files and folders of one run; a context manager that commits on success.

    Parameters
    ----------
    inputs : iterable of path
        Files and folders read by the run; no output may land on or inside them.
    force : bool
        Allow replacing existing regular files (and writing into non-empty folders).
    """

    def __init__(self, *, inputs: Iterable[str | os.PathLike[str] | None], force: bool) -> None:
        self.inputs = [Path(p) for p in inputs if p is not None]
        self.force = force
        self._files: dict[str, Path] = {}
        self._folders: dict[str, Path] = {}
        self._staged_files: dict[str, Path] = {}
        self._staged_folders: dict[str, Path] = {}
        self._current: tuple[str, Path] | None = None  # the output being written

    def _check_parent(self, option: str, path: Path) -> None:
        parent = path.parent
        if not parent.exists():
            raise FileNotFoundError(f"{option} {path}: folder {parent} does not exist")
        if not parent.is_dir():
            raise NotADirectoryError(f"{option} {path}: {parent} is not a folder")

    def _check_distinct(self, option: str, path: Path) -> None:
        target = _resolved(path)
        for other, taken in (*self._files.items(), *self._folders.items()):
            t = _resolved(taken)
            if t == target or t in target.parents or target in t.parents:
                raise ParameterError(f"{option} {path}: the same place as {other} {taken}")

    def add_file(self, option: str, path: str | os.PathLike[str] | None) -> None:
        """Register an output file (``None``: not requested); raises if it may not be written."""
        if path is None:
            return
        p = Path(path)
        self._check_parent(option, p)
        check_not_input(option, p, self.inputs)
        if p.is_dir():
            raise IsADirectoryError(f"{option} {p}: expected a file name, got a folder")
        refuse_existing(option, p, force=self.force)
        self._check_distinct(option, p)
        self._files[option] = p

    def add_folder(self, option: str, path: str | os.PathLike[str] | None) -> None:
        """Register an output folder (created at commit); raises if it may not be written."""
        if path is None:
            return
        p = Path(path)
        self._check_parent(option, p)
        check_not_input(option, p, self.inputs)
        refuse_existing(option, p, force=self.force, folder=True)
        self._check_distinct(option, p)
        self._folders[option] = p

    def wants(self, option: str) -> bool:
        """Whether ``option`` was registered."""
        return option in self._files or option in self._folders

    def write_bytes(self, option: str, data: bytes) -> None:
        """Stage the content of the file registered under ``option``."""
        target = self._files[option]
        self._current = (option, target)
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
        self._staged_files[option] = Path(tmp)
        with os.fdopen(fd, "wb") as handle:
            os.fchmod(handle.fileno(), default_mode())
            handle.write(data)

    def write_text(self, option: str, text: str) -> None:
        """Stage UTF-8 ``text`` for ``option``."""
        self.write_bytes(option, text.encode("utf-8"))

    def stage_folder(self, option: str) -> Path:
        """A temporary folder to fill in place of the folder registered under ``option``."""
        target = self._folders[option]
        self._current = (option, target)
        tmp = Path(tempfile.mkdtemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp"))
        os.chmod(tmp, default_mode(folder=True))
        self._staged_folders[option] = tmp
        return tmp

    def abort(self) -> None:
        """Remove everything staged; the targets are untouched."""
        for tmp in self._staged_files.values():
            with contextlib.suppress(OSError):
                tmp.unlink()
        for folder in self._staged_folders.values():
            shutil.rmtree(folder, ignore_errors=True)
        self._staged_files.clear()
        self._staged_folders.clear()

    def commit(self) -> None:
        """Rename every staged output into place (files first, then folders)."""
        created: list[Path] = []
        try:
            for option, tmp in list(self._staged_files.items()):
                target = self._files[option]
                self._current = (option, target)
                refuse_existing(option, target, force=self.force)  # nothing appeared meanwhile
                existed = target.exists()
                os.replace(tmp, target)
                del self._staged_files[option]
                if not existed:
                    created.append(target)
            for option, tmp in list(self._staged_folders.items()):
                target = self._folders[option]
                self._current = (option, target)
                if not target.exists():
                    os.rename(tmp, target)
                    del self._staged_folders[option]
                    created.append(target)
                    continue
                for source in sorted(tmp.rglob("*")):
                    dest = target / source.relative_to(tmp)
                    if source.is_dir():
                        if not dest.is_dir():
                            dest.mkdir(mode=default_mode(folder=True))
                            created.append(dest)
                    else:
                        check_not_input(option, dest, self.inputs)
                        refuse_existing(option, dest, force=self.force)
                        existed = dest.exists()
                        os.replace(source, dest)
                        if not existed:
                            created.append(dest)
                shutil.rmtree(tmp, ignore_errors=True)
                del self._staged_folders[option]
        except BaseException:
            for path in reversed(created):
                with contextlib.suppress(OSError):
                    if path.is_dir() and not path.is_symlink():
                        shutil.rmtree(path)
                    else:
                        path.unlink()
            self.abort()
            raise

    def __enter__(self) -> OutputPlan:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if exc_type is None:
            try:
                self.commit()
            except OSError as failed:
                raise self._named(failed) from None
            return
        self.abort()
        if isinstance(exc, OSError):
            raise self._named(exc) from None

    def _named(self, exc: OSError) -> OSError:
        """``exc`` naming the output being written (a full disk says "No space left" only)."""
        if self._current is None or str(self._current[1]) in str(exc):
            return exc
        option, target = self._current
        return WriteError(f"{option} {target}", exc.errno, exc.strerror or str(exc))
