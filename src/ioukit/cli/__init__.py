"""The ``ioukit`` command line: one module per subcommand, registered in :data:`COMMANDS`.

Exit status: 0 success; 1 an error-level finding of ``check``/``eval`` (after the report;
``--no-fail`` turns it off) or an internal error; 2 bad input (one line on stderr naming what
was wrong); 130 interrupted (Ctrl-C); 128 + N after signal N (SIGTERM 143, SIGHUP 129), with
every staged output removed as on Ctrl-C. Set ``IOUKIT_DEBUG=1`` to see the traceback of an
internal error.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import os
import signal
import sys
import threading
import warnings
from collections.abc import Iterator, Sequence
from types import FrameType

from ioukit.errors import IoukitError

__all__ = ["COMMANDS", "build_parser", "main"]

COMMANDS: tuple[str, ...] = (
    "ioukit.cli.iou_command",
    "ioukit.cli.eval_command",
    "ioukit.cli.convert_command",
    "ioukit.cli.check_command",
    "ioukit.cli.compare_command",
    "ioukit.cli.completion_command",
)
"""Modules that each define ``register(subparsers)``; order is the order in ``--help``."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        """A usage error: the usage, then one line naming the problem; exit status 2."""
        self.print_usage(sys.stderr)
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def build_parser() -> argparse.ArgumentParser:
    """The top-level parser with every subcommand registered."""
    from ioukit import __version__

    parser = _Parser(prog="ioukit", description="Intersection over union for object detection.")
    parser.add_argument("--version", action="version", version=f"ioukit {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    subparsers.required = True
    for module in COMMANDS:
        importlib.import_module(module).register(subparsers)
    return parser


class _Terminated(BaseException):
    """Raised in the main thread by SIGTERM or SIGHUP: unwinds like ``KeyboardInterrupt``, so
    every staged output (``.name.XXXX.tmp``) is removed on the way out (#23 item 15)."""

    def __init__(self, signum: int) -> None:
        super().__init__(f"terminated by signal {signum}")
        self.signum = signum


def _raise_terminated(signum: int, frame: FrameType | None) -> None:
    raise _Terminated(signum)


@contextlib.contextmanager
def _terminate_as_exception() -> Iterator[None]:
    """SIGTERM and SIGHUP raise :class:`_Terminated` while the block runs (main thread only)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    wanted = [getattr(signal, n) for n in ("SIGTERM", "SIGHUP") if hasattr(signal, n)]
    previous = {}
    for signum in wanted:
        with contextlib.suppress(OSError, ValueError):
            if signal.getsignal(signum) is signal.SIG_IGN:
                continue  # nohup: a hang-up was asked to be ignored
            previous[signum] = signal.signal(signum, _raise_terminated)
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def _one_line(text: str) -> str:
    """Messages stay on one line and print no terminal control: line breaks (a quoted file
    line), ANSI escapes and other control characters of a file name are escaped (``\\x1b``).
    """
    from ioukit.report import escape_text

    return escape_text(text)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    parser = build_parser()
    if "_ARGCOMPLETE" in os.environ:  # asked by argcomplete's shell hook (ioukit[completion])
        with contextlib.suppress(ImportError):
            import argcomplete

            argcomplete.autocomplete(parser)
    if not (sys.argv[1:] if argv is None else list(argv)):  # bare ``ioukit``: the help
        parser.print_help()
        return 0
    args = parser.parse_args(argv)
    try:
        with _terminate_as_exception(), warnings.catch_warnings():
            # overflow/invalid-value warnings of NumPy arithmetic on hostile numbers: the
            # readers refuse what matters with a message of their own
            warnings.simplefilter("ignore", RuntimeWarning)
            status: int = args.run(args)
    except BrokenPipeError:
        from ioukit.cli._report import quiet_stdout

        quiet_stdout()  # the reader of stdout went away (``| head``): stop quietly
        return 0
    except (IoukitError, ValueError, OSError) as exc:
        print(f"ioukit {args.command}: error: {_one_line(str(exc))}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except _Terminated as exc:
        return 128 + exc.signum
    except Exception as exc:
        if os.environ.get("IOUKIT_DEBUG"):
            raise
        print(
            f"ioukit {args.command}: internal error: {type(exc).__name__}: {_one_line(str(exc))} "
            "(set IOUKIT_DEBUG=1 for the traceback, and please report it)",
            file=sys.stderr,
        )
        return 1
    return status
