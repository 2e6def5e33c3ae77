"""Private helpers shared by the readers and writers: safe file reading, number parsing with
file + line in every message, atomic writes (temporary file or folder, then rename).

Examples
--------
>>> parse_number("0.5", "labels/a.txt", 3, "cx")
0.5
>>> parse_number("nan", "labels/a.txt", 3, "cx")
Traceback (most recent call last):
...
ioukit.errors.DataFormatError: labels/a.txt: line 3: cx: expected a finite number, got 'nan'
"""

from __future__ import annotations

import contextlib
import math
import os
import stat
from collections.abc import Iterator
from typing import TYPE_CHECKING

from ioukit.errors import DataFormatError

# pathlib, tempfile and shutil load on first use: reading a COCO JSON file needs none of them
if TYPE_CHECKING:
    import mmap
    import re
    from pathlib import Path

__all__ = [
    "MAX_CLASS_INDEX",
    "WriteError",
    "atomic_directory",
    "atomic_write_bytes",
    "atomic_write_text",
    "check_exists",
    "default_mode",
    "file_kind",
    "iter_records",
    "map_bytes",
    "parse_class_index",
    "parse_number",
    "read_bytes",
    "read_text",
]

_MAX_TEXT_BYTES = 1 << 31
"""Largest text or JSON input read (2 GiB); anything larger is refused before reading."""


def default_mode(*, folder: bool = False) -> int:
    """Permissions of a new file (``0o666``) or folder (``0o777``) less the process umask.

    ``tempfile`` creates ``0o600`` files and ``0o700`` folders; outputs renamed from them get
    this mode instead, as if created with ``open``/``mkdir``.

    >>> default_mode() & ~0o666
    0
    """
    mask = os.umask(0)
    os.umask(mask)
    return (0o777 if folder else 0o666) & ~mask


def file_kind(mode: int) -> str:
    """What a path that is not a regular file is, for a message: ``"a folder"``, ``"a FIFO"``...

    Parameters
    ----------
    mode : int
        ``os.stat(path).st_mode``.

    Returns
    -------
    str

    Examples
    --------
    >>> file_kind(os.stat(".").st_mode)
    'a folder'
    """
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device file"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def read_bytes(path: str | os.PathLike[str], *, limit: int = _MAX_TEXT_BYTES) -> bytes:
    """The bytes of a regular file of at most ``limit`` bytes.

    FIFOs, devices and sockets are refused before opening (reading one could block forever or
    never end), and so are folders and files larger than ``limit``.

    >>> read_bytes("/dev/null")
    Traceback (most recent call last):
    ...
    ioukit.errors.DataFormatError: /dev/null: expected a regular file, got a device file
    """
    try:
        info = os.stat(path)
    except FileNotFoundError:
        raise FileNotFoundError(f"{_shown(path)}: no such file") from None
    except OSError as exc:
        raise OSError(f"{_shown(path)}: cannot read: {exc.strerror or exc}") from None
    if not stat.S_ISREG(info.st_mode):
        kind = file_kind(info.st_mode)
        what = "a file" if stat.S_ISDIR(info.st_mode) else "a regular file"
        raise DataFormatError(f"{_shown(path)}: expected {what}, got {kind}")
    if info.st_size > limit:
        raise DataFormatError(
            f"{_shown(path)}: expected at most {limit} bytes, got {info.st_size} (file too large)"
        )
    try:
        with open(path, "rb") as handle:
            # read(n) allocates n bytes up front: ask for the stated size, then the rest of a
            # file that grew meanwhile in bounded pieces
            data = handle.read(info.st_size + 1)
            if len(data) > info.st_size:
                parts = [data]
                total = len(data)
                while total <= limit:
                    piece = handle.read(1 << 20)
                    if not piece:
                        break
                    parts.append(piece)
                    total += len(piece)
                data = b"".join(parts)
    except OSError as exc:
        raise OSError(f"{_shown(path)}: cannot read: {exc.strerror or exc}") from None
    if len(data) > limit:
        raise DataFormatError(
            f"{_shown(path)}: expected at most {limit} bytes, got more (file too large)"
        )
    return data


def map_bytes(path: str | os.PathLike[str], *, limit: int = _MAX_TEXT_BYTES) -> mmap.mmap | None:
    """A read-only memory map of a regular, non-empty file of at most ``limit`` bytes, or None.

    For a compiled scanner that reads a large file once: no copy, no buffer the size of the
    file. None for anything else (no such file, a FIFO, an empty or too large file, a system
    without ``mmap``): the caller then reads the file with :func:`read_bytes`, which names
    the problem. The caller closes the map.

    >>> map_bytes("/dev/null") is None
    True
    """
    import mmap

    try:
        info = os.stat(path)
        if not stat.S_ISREG(info.st_mode) or not 0 < info.st_size <= limit:
            return None  # checked before opening: opening a FIFO could block
        with open(path, "rb") as handle:
            return mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
    except (OSError, ValueError):
        return None


def _shown(path: str | os.PathLike[str]) -> str:
    """``path`` as messages show it (``str(Path(path))``)."""
    from pathlib import Path

    return str(Path(path))


def check_exists(path: str | os.PathLike[str], what: str) -> Path:
    """``Path(path)`` if it exists, else :class:`FileNotFoundError` naming ``what`` and the path.

    >>> check_exists("/definitely/not/here", "--gt")
    Traceback (most recent call last):
    ...
    FileNotFoundError: --gt /definitely/not/here: no such file or folder
    """
    from pathlib import Path

    p = Path(path)
    if not p.exists():
        raise FileNotFoundError(f"{what} {p}: no such file or folder")
    return p


def read_text(path: Path) -> str:
    """Whole text of ``path`` (UTF-8, optional BOM); binary or undecodable files are refused.

    Raises
    ------
    DataFormatError
        The file holds NUL bytes (binary) or is not valid UTF-8 (the message names the line).
    OSError
        The file cannot be read (the message names it).
    """
    return decode_text(read_bytes(path), path)


def decode_text(data: bytes, path: str | os.PathLike[str]) -> str:
    """``data`` (the bytes of ``path``) as text: UTF-8 with an optional BOM; NUL bytes or
    undecodable bytes raise :class:`DataFormatError` naming the file and line.

    >>> decode_text(b"\\xef\\xbb\\xbfa 1\\n", "a.txt")
    'a 1\\n'
    >>> decode_text(b"a\\n\\xff", "a.txt")
    Traceback (most recent call last):
    ...
    ioukit.errors.DataFormatError: a.txt: line 2: expected UTF-8 text, got byte 0xff
    """
    nul = data.find(b"\x00")
    if nul >= 0:
        line = data.count(b"\n", 0, nul) + 1
        raise DataFormatError(f"{path}: line {line}: expected text, got binary data (a NUL byte)")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise DataFormatError(
            f"{path}: line {line}: expected UTF-8 text, got byte 0x{data[exc.start]:02x}"
        ) from None


def iter_records(text: str) -> Iterator[tuple[int, list[str]]]:
    """``(line_number, tokens)`` of every non-blank line.

    Tokens are separated by any whitespace (spaces and tabs, as in the wild) or commas. A line
    starting with ``#`` is a record like any other (``#`` is a valid class name in plain txt;
    YOLO, plain txt and devkit files have no comment syntax). A line of only commas yields no
    tokens, which the readers report as a wrong number of values.

    >>> list(iter_records("a 1\\n\\n#b 2\\nc\\t2,3\\n,,,\\n"))
    [(1, ['a', '1']), (3, ['#b', '2']), (4, ['c', '2', '3']), (5, [])]
    """
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        if not stripped:
            continue
        yield number, stripped.replace(",", " ").split()


def parse_number(token: str, path: str | Path, line: int, field: str) -> float:
    """``float(token)``, finite, or :class:`DataFormatError` naming file, line and field."""
    try:
        value = float(token)
    except ValueError:
        raise DataFormatError(
            f"{path}: line {line}: {field}: expected a number, got {token!r}"
        ) from None
    if not math.isfinite(value):
        raise DataFormatError(
            f"{path}: line {line}: {field}: expected a finite number, got {token!r}"
        )
    return value


_INT: re.Pattern[str] | None = None  # [+]?\d+(\.0*)?\Z, compiled on first use
MAX_CLASS_INDEX = (1 << 20) - 1
"""Largest class index a text file may hold (about a million classes)."""


def parse_class_index(token: str, path: str | Path, line: int) -> int:
    """A class index in [0, 2**20) (``"3"`` or ``"3.0"``), else :class:`DataFormatError`.

    >>> parse_class_index("7", "a.txt", 1)
    7
    >>> parse_class_index("1e20", "a.txt", 2)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ioukit.errors.DataFormatError: a.txt: line 2: class: expected a non-negative integer ...
    """
    global _INT
    if _INT is None:
        import re

        _INT = re.compile(r"[+]?\d+(\.0*)?\Z")
    if not _INT.match(token):
        raise DataFormatError(
            f"{path}: line {line}: class: expected a non-negative integer class index, got "
            f"{token[:40]!r}"
        )
    digits = token.lstrip("+").split(".")[0]
    if len(digits) > 7 or int(digits) > MAX_CLASS_INDEX:
        raise DataFormatError(
            f"{path}: line {line}: class: expected a class index <= {MAX_CLASS_INDEX}, got "
            f"{token[:40]!r}"
        )
    return int(digits)


def atomic_write_bytes(path: str | os.PathLike[str], data: bytes) -> Path:
    """Write ``data`` to ``path`` through a temporary file in the same folder, then rename.

    Readers of ``path`` see the old file or the complete new one, never a partial file.

    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> atomic_write_bytes(d / "x.txt", b"hi").read_bytes()
    b'hi'
    """
    import tempfile
    from pathlib import Path

    target = Path(path)
    folder = target.parent
    if not folder.is_dir():
        raise FileNotFoundError(f"{target}: folder {folder} does not exist")
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            os.fchmod(handle.fileno(), default_mode())
            handle.write(data)
        os.replace(tmp, target)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        if isinstance(exc, OSError):
            raise _named(exc, target) from None
        raise
    return target


class WriteError(OSError):
    """An output could not be written: names the output, keeps ``errno`` and ``strerror``.

    >>> str(WriteError("out.json", 28, "No space left on device"))
    'out.json: cannot write: No space left on device'
    """

    def __init__(self, target: str | os.PathLike[str], errno: int | None, reason: str) -> None:
        super().__init__(errno, reason)
        self.target = str(target)

    def __str__(self) -> str:
        return f"{self.target}: cannot write: {self.strerror}"


def _named(exc: OSError, target: Path) -> OSError:
    """``exc`` naming the output ``target`` (a full disk says "No space left" and no more)."""
    if isinstance(exc, WriteError) or str(target) in str(exc):
        return exc
    return WriteError(target, exc.errno, exc.strerror or str(exc))


def atomic_write_text(path: str | os.PathLike[str], text: str) -> Path:
    """:func:`atomic_write_bytes` of UTF-8 ``text``."""
    return atomic_write_bytes(path, text.encode("utf-8"))


@contextlib.contextmanager
def atomic_directory(path: str | os.PathLike[str]) -> Iterator[Path]:
    """Yield a temporary folder next to ``path``; on success it is renamed to ``path``.

    ``path`` must not exist or be an empty folder. On an exception the temporary folder is
    removed and ``path`` is left untouched.

    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> with atomic_directory(d / "out") as tmp:
    ...     _ = (tmp / "a.txt").write_text("1")
    >>> sorted(p.name for p in (d / "out").iterdir())
    ['a.txt']
    """
    import shutil
    import tempfile
    from pathlib import Path

    target = Path(path)
    if target.exists() and (not target.is_dir() or any(target.iterdir())):
        raise FileExistsError(f"{target}: output folder exists and is not empty")
    parent = target.parent
    if not parent.is_dir():
        raise FileNotFoundError(f"{target}: folder {parent} does not exist")
    tmp = Path(tempfile.mkdtemp(dir=parent, prefix=f".{target.name}.", suffix=".tmp"))
    try:
        os.chmod(tmp, default_mode(folder=True))
        yield tmp
        if target.exists():
            target.rmdir()
        os.replace(tmp, target)
    except BaseException as exc:
        shutil.rmtree(tmp, ignore_errors=True)
        if isinstance(exc, OSError):
            raise _named(exc, target) from None
        raise
