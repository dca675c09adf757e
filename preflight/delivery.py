"""Output that cannot be delivered never crashes a run and never changes its verdict (docs/exit-codes.md).

The console entry point (``cli.console_main``) uses both halves:

- :func:`guard_streams`: a closed stdin, stdout or stderr (``>&-``, ``<&-``) is opened on /dev/null, and
  stdout and stderr become :class:`GuardedStream` s: a write or a flush that fails (``>/dev/full``, a reader
  gone: ``| head -1``) loses the output instead of raising. Lost stdout is one line on stderr (none for a
  broken pipe: the reader chose to stop); lost stderr has nowhere to be told.
- :func:`write_file`: an output file the user asked for (report.json, ``--junit``, ``--prometheus``...) that
  cannot be written is one line on stderr and is remembered; :func:`exit_code` then turns an OK verdict into
  COULD_NOT_TELL (a hook asked for a file it did not get) and leaves every other code as it is.

>>> from pathlib import Path
>>> write_file("the junit report /proc/x/j.xml", lambda: Path("/proc/x/j.xml").write_text(""), unwritten := [])
>>> unwritten, exit_code(0, unwritten), exit_code(1, unwritten), exit_code(0, [])
(['the junit report /proc/x/j.xml'], 4, 1, 0)
"""

from __future__ import annotations

import io
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from preflight import exit_codes

T = TypeVar("T")

UNWRITTEN: list[str] = []  # the output files of this process that could not be written


def write_file(what: str, write: Callable[[], T], unwritten: list[str] | None = None) -> T | None:
    """``write()``'s value; when it raises OSError: one line on stderr naming ``what``, ``what`` remembered in
    ``unwritten`` (default :data:`UNWRITTEN`, which :func:`exit_code` reads), and None."""
    try:
        return write()
    except OSError as exc:
        sys.stderr.write(f"preflight: cannot write {what}: {exc.strerror or exc}\n")
        (UNWRITTEN if unwritten is None else unwritten).append(what)
        return None


def write_atomic(path: Path, text: str) -> Path:
    """Write ``text`` to ``path`` through a temporary file beside it and a rename, so that a reader (a scheduler,
    ``judge`` on a shared volume, node_exporter's textfile collector) never sees half a file; the temporary file
    is removed when the write fails. The path.

    >>> import tempfile
    >>> folder = Path(tempfile.mkdtemp())
    >>> write_atomic(folder / "a.json", "{}\\n").read_text(), [p.name for p in folder.iterdir()]
    ('{}\\n', ['a.json'])
    """
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return path


def exit_code(code: str | int | None, unwritten: list[str] | None = None) -> str | int | None:
    """The process's exit code: the command's, except that an OK one (0, None) becomes COULD_NOT_TELL when a
    requested output file was not written. Never PROBLEMS (the drain code) nor INTERNAL for an output."""
    missing = UNWRITTEN if unwritten is None else unwritten
    return exit_codes.COULD_NOT_TELL if missing and code in (None, exit_codes.OK) else code


class GuardedStream(io.TextIOWrapper):
    """A text stream on ``fd`` whose writes and flushes never raise: on the first failure the output is lost
    (``fd`` is pointed at /dev/null, so nothing buffered can fail again) and ``on_loss(reason)`` is called once.

    >>> read, write = os.pipe()
    >>> os.close(read)
    >>> said = []
    >>> out = GuardedStream(write, said.append)
    >>> out.write("verdict\\n"), out.flush(), said
    (8, None, ['broken pipe'])
    """

    def __init__(self, fd: int, on_loss: Callable[[str], object], encoding: str = "utf-8",
                 errors: str = "strict", line_buffering: bool = False, lost: str = "") -> None:
        super().__init__(io.BufferedWriter(io.FileIO(fd, "w", closefd=False)), encoding=encoding, errors=errors,
                         line_buffering=line_buffering)
        self._fd, self._on_loss = fd, on_loss
        self._lost, self._told = lost, False  # lost: why nothing reaches the reader; told: on_loss was called

    def write(self, s: str) -> int:
        if self._lost:
            if s:
                self._lose(self._lost)
            return len(s)
        try:
            return super().write(s)
        except (OSError, ValueError) as exc:
            self._lose(_why(exc))
            return len(s)

    def flush(self) -> None:
        try:
            super().flush()
        except (OSError, ValueError) as exc:
            self._lose(_why(exc))

    def _lose(self, why: str) -> None:
        """Say it once; from now on everything goes to /dev/null."""
        if self._told:
            return
        self._told, self._lost = True, why
        _to_devnull(self._fd)
        self._on_loss(why)


def _silent(why: str) -> None:
    """stderr's loss handler: there is nowhere left to say it."""


def _why(exc: BaseException) -> str:
    """What a failed write says about the loss.

    >>> import errno
    >>> _why(BrokenPipeError(errno.EPIPE, "Broken pipe")), _why(OSError(errno.ENOSPC, "No space left on device"))
    ('broken pipe', 'No space left on device')
    """
    if isinstance(exc, BrokenPipeError):
        return "broken pipe"
    return (exc.strerror if isinstance(exc, OSError) else None) or str(exc) or type(exc).__name__


def _closed(fd: int) -> bool:
    try:
        os.fstat(fd)
        return False
    except OSError:
        return True


def _to_devnull(fd: int) -> None:
    """Point ``fd`` at /dev/null (open or closed before)."""
    null = os.open(os.devnull, os.O_RDWR)
    if null != fd:
        os.dup2(null, fd)
        os.close(null)


def tell_stdout_loss(why: str) -> None:
    """The one line on stderr when stdout's output is lost; nothing for a broken pipe (``| head``)."""
    if why != "broken pipe":
        sys.stderr.write(f"preflight: cannot write to stdout ({why}); the exit code is still the verdict\n")


def guard_streams() -> None:
    """Make the standard streams safe for the rest of the process (see the module docstring)."""
    closed = [fd for fd in (0, 1, 2) if _closed(fd)]  # in order: os.open takes the lowest free descriptor
    for fd in closed:
        _to_devnull(fd)
    if sys.stdin is None or 0 in closed:
        sys.stdin = open(0, encoding="utf-8", errors="replace", closefd=False)  # the process's, never closed
    for fd, name, on_loss in ((2, "stderr", _silent), (1, "stdout", tell_stdout_loss)):
        old = getattr(sys, name)
        if isinstance(old, GuardedStream):
            continue
        like = old if isinstance(old, io.TextIOWrapper) else None
        if like is not None:
            like.flush()
        stream = GuardedStream(fd, on_loss, encoding=like.encoding if like else "utf-8",
                               errors=(like.errors if like else None) or ("backslashreplace" if fd == 2 else "strict"),
                               line_buffering=like.line_buffering if like else fd == 2,
                               lost="closed" if fd in closed else "")
        setattr(sys, name, stream)
