"""Running a check on a student's code in a child process, with a time limit.

A submission may loop forever, exhaust the recursion limit, call ``sys.exit``, print a
million lines or crash the interpreter. None of that may stop the grader. So each check runs
in a **forked child process**: the child inherits the whole notebook (the student's
functions and whatever they use, with nothing to pickle), runs the check, and sends back one
small picklable value through a pipe. The parent waits at most ``time_limit`` seconds, then
kills the child with SIGKILL, which works whatever the child is doing (a Python loop, a
long numpy call, a sleep). A child that dies without answering is reported with its exit
status.

While it runs, the child may report what it is doing (:func:`report_progress`, called before
each call of the student's function), so that a time-out can say *which call* did not
return.

The child's standard output and error go to a buffer that is thrown away: prints in a
submission never reach the report, and the child never writes to a Jupyter kernel's
sockets. Warnings are silenced in the child, so a division by zero gives the ``nan`` the
student would see in a notebook (and a clear "returned NaN" message), whatever warning
filters the grading process has (pytest turns ``RuntimeWarning`` into errors).

Where ``os.fork`` does not exist (Windows), or when ``time_limit`` is None, the check runs
in this process, without a time limit.
"""

import contextlib
import io
import os
import signal
import time
import warnings
from dataclasses import dataclass
from multiprocessing.connection import Pipe

#: The default time limit of one check, in seconds. A correct answer needs a few
#: milliseconds per check; the limit only bounds how long an endless loop costs.
TIME_LIMIT = 5.0

_progress = None  # the child's progress channel (a Connection), None outside a child

#: True in the process that runs a notebook for the trusted grading (:mod:`~redmax_edu.exercises.remote`):
#: its "check your answer" cells do nothing there.
STUDENT_PROCESS = False


@dataclass(frozen=True)
class Outcome:
    """What came back from :func:`run_isolated`.

    ``status`` is ``"done"`` (``value`` holds the return value), ``"timeout"``, ``"died"``
    (the child ended without answering; ``detail`` gives its exit status) or ``"error"``
    (the function raised; ``detail`` gives the exception). ``last_progress`` is the last
    text the child passed to :func:`report_progress`, or ``""``.
    """

    status: str
    value: object = None
    detail: str = ""
    last_progress: str = ""


def report_progress(text):
    """Tell the parent what the child is about to do (a no-op outside a child process)."""
    if _progress is not None:
        try:
            _progress.send(("progress", str(text)))
        except (OSError, ValueError):  # the parent is gone or the pipe is full: nothing to do
            pass


def can_isolate():
    """True when checks can run in a child process with a time limit (POSIX systems)."""
    return hasattr(os, "fork")


@contextlib.contextmanager
def quiet():
    """Silence prints and warnings of the code run inside."""
    with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()), \
            contextlib.redirect_stderr(io.StringIO()):
        warnings.simplefilter("ignore")
        yield


def run_isolated(func, time_limit=TIME_LIMIT):
    """Run ``func()`` in a forked child and return its :class:`Outcome` within ``time_limit`` s.

    ``func`` must return a picklable value. Exceptions it raises come back as
    ``status == "error"``.

    Examples
    --------
    >>> run_isolated(lambda: 6 * 7).value
    42
    >>> def forever():
    ...     while True:
    ...         pass
    >>> run_isolated(forever, time_limit=0.2).status
    'timeout'
    """
    if time_limit is None or not can_isolate():
        try:
            with quiet():
                return Outcome("done", func())
        except Exception as exc:
            return Outcome("error", detail=f"{type(exc).__name__}: {exc}")
    reader, writer = Pipe(duplex=False)
    with warnings.catch_warnings():  # Python 3.12+ warns that forking a threaded process
        warnings.simplefilter("ignore", DeprecationWarning)  # (a Jupyter kernel) may deadlock
        pid = os.fork()
    if pid == 0:  # the child: never returns
        _child(func, reader, writer)
    writer.close()
    try:
        return _wait_for_child(pid, reader, time_limit)
    finally:
        reader.close()


def _child(func, reader, writer):
    global _progress
    code = 0
    try:
        reader.close()
        _progress = writer
        signal.signal(signal.SIGINT, signal.SIG_DFL)  # a kernel interrupt ends the child too
        with quiet():
            try:
                message = ("done", func())
            except BaseException as exc:  # SystemExit and KeyboardInterrupt included
                message = ("error", f"{type(exc).__name__}: {_short(exc)}")
        try:
            writer.send(message)
        except Exception as exc:  # an unpicklable value: a bug of the check, said plainly
            writer.send(("error", f"the check's result could not be sent back ({exc})"))
    except BaseException:
        code = 1
    finally:
        os._exit(code)  # no atexit handlers, no flushing of the parent's (kernel's) streams


def _wait_for_child(pid, reader, time_limit):
    deadline = time.monotonic() + time_limit
    last = ""
    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0 or not reader.poll(remaining):
            _kill(pid)
            return Outcome("timeout", last_progress=last)
        try:
            kind, payload = reader.recv()
        except (EOFError, OSError):
            return Outcome("died", detail=_exit_status(pid), last_progress=last)
        if kind == "progress":
            last = payload
            continue
        _reap(pid)
        if kind == "done":
            return Outcome("done", payload, last_progress=last)
        return Outcome("error", detail=payload, last_progress=last)


def _kill(pid):
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)
    _reap(pid)


def _reap(pid):
    with contextlib.suppress(ChildProcessError):
        os.waitpid(pid, 0)


def _exit_status(pid):
    try:
        _, status = os.waitpid(pid, 0)
    except ChildProcessError:
        return "it ended without a status"
    if os.WIFSIGNALED(status):
        number = os.WTERMSIG(status)
        try:
            name = signal.Signals(number).name
        except ValueError:
            name = f"signal {number}"
        return f"it was ended by {name}"
    return f"it exited with status {os.WEXITSTATUS(status)}"


def _short(exc, limit=300):
    """The text of an exception, cut to ``limit`` characters."""
    try:
        text = str(exc)
    except Exception:
        text = "(its message could not be printed)"
    return text if len(text) <= limit else text[:limit] + "..."
