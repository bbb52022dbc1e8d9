"""The `tokreg` console script (and `python -m tokreg`): Ctrl-C handling installed before
anything heavy is imported, so that an interruption at any moment, start-up included, ends in
one line on stderr and exit status 130, never a traceback.

The first Ctrl-C raises KeyboardInterrupt as usual (once the command's thread is out of any
import it is in: `_first` says why), and the command says in one line what it
had done (cli/app.py asks the registry whether its write was committed). A second Ctrl-C while
that line is being made stops the process at once: every write is all-or-nothing, so that is
safe, and the line says how to see what the registry holds. Once a command has its outcome
(`finished`), Ctrl-C is ignored and the process exits with that outcome. Only the standard
library is imported here, and only what the interpreter has already loaded before the handler
is in place (os, signal, sys, and importlib's own _imp, _thread and _frozen_importlib);
anything else after it.

A file read through a memory map (`tokreg tokenize`'s plain inputs, the built-encoder cache)
that another program cuts short meanwhile raises SIGBUS, which no code can recover from: the
core's handler, installed next, says so in one line and exits with status 135 (128 + SIGBUS, as
a shell reports it) instead of the shell's bare "Bus error".
"""

from __future__ import annotations

import _frozen_importlib as _bootstrap  # importlib's core, always loaded
import _imp
import _thread
import os
import signal
import sys
from typing import TYPE_CHECKING, Any, Optional

if TYPE_CHECKING:
    from types import FrameType

_installed = False
#: Set by a command (`leave_at_once`) whose files, connections and threads are all closed or
#: ended by the time its context closes, so that nothing needs the interpreter's teardown.
_at_once = False


def _first(signum: int, frame: Optional[FrameType]) -> None:
    signal.signal(signal.SIGINT, _second)
    if _importing() and _RETRY is not None:
        # Not inside an import: a KeyboardInterrupt raised between a lock's acquire and the
        # block that releases it leaves that lock held for good, and the registry's opening
        # thread, importing too (cli/opening.py), then waits for it forever, as does the
        # command's thread, which waits for that one. The interrupt is raised once this
        # thread's imports are done (a few milliseconds); a second Ctrl-C meanwhile still
        # stops the process at once.
        signal.signal(_RETRY, _retry)
        signal.setitimer(signal.ITIMER_REAL, RETRY_SECONDS)
        return
    raise KeyboardInterrupt


def _retry(signum: int, frame: Optional[FrameType]) -> None:
    if _importing():
        signal.setitimer(signal.ITIMER_REAL, RETRY_SECONDS)
        return
    raise KeyboardInterrupt


#: The signal that brings back an interrupt put off while an import was under way (a timer's).
_RETRY: Optional[signal.Signals] = getattr(signal, "SIGALRM", None)
RETRY_SECONDS = 0.002


def _importing() -> bool:
    """Whether this thread is inside Python's import machinery: it holds the global import lock
    or owns a module's lock, or a module lock's own guard is taken (held for a few instructions,
    by whichever thread: when it is taken here, while this thread runs, it is almost surely
    this thread's; putting an interrupt off for nothing costs milliseconds)."""
    if _imp.lock_held():
        return True
    me = _thread.get_ident()
    for ref in list(getattr(_bootstrap, "_module_locks", {}).values()):  # (a copy made under the GIL)
        lock = ref()
        if lock is None:
            continue
        if getattr(lock, "owner", None) == me:
            return True
        locked = getattr(getattr(lock, "lock", None), "locked", None)
        if locked is not None and locked():
            return True
    return False


def _second(signum: int, frame: Optional[FrameType]) -> None:
    os.write(
        2,
        b"tokreg: error: interrupted again; stopped at once (every write is all-or-nothing: "
        b"`tokreg list` shows what the registry holds)\n",
    )
    os._exit(130)


def finished() -> None:
    """The command has its outcome (done, failed, or interrupted and said so): from here on
    Ctrl-C is ignored. Does nothing unless the console script installed its handler."""
    if _installed:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        if _RETRY is not None:  # an interrupt put off (see _first) is not raised now either
            signal.setitimer(signal.ITIMER_REAL, 0)


def _unraisable(u: Any) -> None:
    # A KeyboardInterrupt that lands in a finalizer is reported by the command's own line.
    if not isinstance(u.exc_value, KeyboardInterrupt):
        sys.__unraisablehook__(u)


class _QuietSqlalchemy:
    """An import hook that, when SQLAlchemy is first imported, gives its loggers a handler that
    drops what they say, then steps aside (it finds nothing itself). SQLAlchemy logs (with a
    traceback) an interruption that lands while it returns a connection to its pool; the command
    reports the interruption itself, in one line. Set up on SQLAlchemy's import rather than at
    start-up: `tokreg train` into an existing SQLite registry never imports it, and importing
    `logging` for it cost a fresh process a few milliseconds. It stays in `sys.meta_path` (inert)
    once used: removing it while another thread walks that list could make it skip a finder."""

    def __init__(self) -> None:
        self._done = False

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> None:
        if name == "sqlalchemy" and not self._done:
            self._done = True
            _quiet_sqlalchemy()

    @classmethod
    def install(cls) -> None:
        """The hook in place, or its work done now when SQLAlchemy is loaded already (a process
        that imported it before calling `main`)."""
        if "sqlalchemy" in sys.modules:
            _quiet_sqlalchemy()
        else:
            sys.meta_path.insert(0, cls())


def _quiet_sqlalchemy() -> None:
    import logging  # here: see _QuietSqlalchemy (SQLAlchemy imports it too)

    logging.getLogger("sqlalchemy").addHandler(logging.NullHandler())
    logging.getLogger("sqlalchemy").propagate = False


def leave_at_once() -> None:
    """Called by a command that leaves nothing open once it returns and the group has closed its
    registry (`tokreg train`): when it succeeds, the process then ends without the interpreter's
    teardown (`_leave`). Does nothing unless the console script runs the command."""
    global _at_once
    _at_once = True


def main() -> None:
    global _installed, _at_once
    _at_once = False
    try:
        signal.signal(signal.SIGINT, _first)
        _installed = True
        sys.unraisablehook = _unraisable
        _QuietSqlalchemy.install()
        from . import _core  # the extension alone (1 ms); the commands import it anyway

        _core.say_and_exit_on_bus_error(BUS_ERROR_LINE, BUS_ERROR_EXIT)
        # After the handler: these imports take most of start-up. The cyclic collector is paused
        # while they run (as cli/app.py does for a command's modules): they make thousands of
        # objects that live on and form no garbage, which it would walk again and again (about
        # 10% of their CPU, 2-3 ms).
        import gc

        paused = gc.isenabled()
        gc.disable()
        try:
            from .cli import main as cli_main  # (see above)
        finally:
            if paused:
                gc.enable()
    except KeyboardInterrupt:
        finished()
        sys.stderr.write("tokreg: error: interrupted while starting; nothing was written to the registry\n")
        _exit_interrupted()
    try:
        cli_main()
    except SystemExit as e:
        if e.code == Interrupted_EXIT:
            _exit_interrupted()
        if _at_once and not e.code:
            _leave()
        raise


#: What a SIGBUS says (see the module's docstring) and the status it leaves with.
BUS_ERROR_LINE = (
    b"tokreg: error: a file being read was cut short by another program meanwhile (bus error on a "
    b"memory-mapped page); stopped at once (every write to the registry is all-or-nothing): run "
    b"the command again once the file is complete\n"
)
BUS_ERROR_EXIT = 135

#: The exit status of an interrupted command (errors.Interrupted.exit_code; not imported: see above).
Interrupted_EXIT = 130


def _leave() -> None:
    """Ends the process with status 0 at once, after a command that asked for it succeeded
    (`leave_at_once`): the interpreter's teardown (freeing every loaded module's objects one by
    one) cost a `tokreg train` about 10-20 ms of CPU and 30-100 ms of wall on a loaded machine,
    after its work was done and said. Only when nothing can need that teardown: no exit handler
    registered (`atexit`: a profiler, a coverage tool, an embedding program's cleanup), no thread
    but daemons left running besides this one, and stdout and stderr flushed without an error;
    else it returns, and the process exits the usual way (which reports a failed flush)."""
    # Here: the module imports nothing before its handler is in place (see its docstring).
    import atexit
    import threading

    main_thread = threading.main_thread()
    if atexit._ncallbacks() or any(t is not main_thread and not t.daemon for t in threading.enumerate()):
        return
    try:
        for stream in (sys.stdout, sys.stderr):
            if stream is not None:
                stream.flush()
    except (OSError, ValueError):
        return
    os._exit(0)


def _exit_interrupted() -> None:
    """Leaves with status 130 now that the one line is said. Not `sys.exit`: CPython (3.11)
    remembers a KeyboardInterrupt that passed through any `eval` of a string (namedtuple does
    that while modules import) even when it was caught, and at exit kills the process with
    SIGINT instead of returning the status."""
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(Interrupted_EXIT)
