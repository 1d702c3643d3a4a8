"""The trusted grading of a submitted notebook: its code in a process of its own, the checks in this one.

Run in the process of a notebook, a grader can be patched by the notebook: a cell that
replaces a method of the checks, the library's reference functions, numpy or a tolerance
changes the score. So the autograder (``make grade``, the Gradescope autograder of
:mod:`~redmax_edu.exercises.gradescope`) keeps three processes apart:

* **this process** (the grader) runs the checks, with the library and the references it
  loaded before any submitted code ran, at a secret seed; it never loads an object sent by
  the student's process (replies are JSON, arrays their raw numbers), so nothing the
  notebook does reaches it;
* a **zygote** (:class:`Zygote`), forked from this process before it holds any secret,
  loads every module of the library once and forks, for each submission, a fresh
* **student process**, which installs the call tracer of :mod:`~redmax_edu.exercises.tracing`
  and its tripwires (:func:`harden`) before the first line of the notebook runs, runs the
  notebook's code cells, and then calls the student's functions on the arguments the checks
  send (:class:`Submission`, :class:`RemoteFunction`). The tracer writes each library call to
  the grader at once; after every call the process must show that its tracer still runs (a
  sentinel only the tracer answers, with a token only the grader knows), or the call counts
  as tampered with.

A call that does not return within the check's time limit, or a process that dies, is
stopped or noticed here and the student's process is started again (the notebook re-run)
for the next check. The student's prints go nowhere; its "check your answer" cells do
nothing (:data:`~redmax_edu.exercises.sandbox.STUDENT_PROCESS`).

:func:`grade_notebook` grades one notebook: a :class:`Graded` result, one report per
function and the notes of the run (cells that raised, tampering seen at the top level).
"""

import ast
import base64
import builtins
import contextlib
import importlib
import json
import os
import pickle
import pkgutil
import re
import secrets
import select
import signal
import socket
import struct
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field

import numpy as np

from .._book import setup
from . import sandbox, tracing
from .calls import Outcome, encode_exception, encode_output
from .core import TIME_LIMIT, Report

#: A message: its length (4 bytes, big-endian), then its kind (one byte) and its payload.
_HEADER = struct.Struct(">I")
#: The largest message either side accepts (an output of a few million numbers).
MAX_MESSAGE = 64 << 20
#: Kinds of the student process's messages: a library call, library code made at run time,
#: tampering, the tracer's answer to the sentinel, the handshake, a reply.
_KINDS = {"call": b"C", "new": b"N", "tamper": b"T", "alive": b"A"}
#: Modules a student process may not load for the first time (profilers, raw memory, threads
#: of the interpreter itself): their import is tampering.
_GUARDED_MODULES = frozenset({"_ctypes", "_lsprof", "_xxsubinterpreters", "_testcapi", "_testinternalcapi",
                              "_tracemalloc", "faulthandler"})


class ProtocolError(Exception):
    """The student's process sent something that is not a message of the protocol."""


# --- messages ------------------------------------------------------------------------------------


def _send(sock, kind, payload):
    sock.sendall(_HEADER.pack(1 + len(payload)) + kind + payload)


def _recv_exact(sock, count, deadline):
    chunks, left = [], count
    while left:
        if deadline is not None:
            wait = deadline - time.monotonic()
            if wait <= 0 or not select.select([sock], [], [], wait)[0]:
                raise TimeoutError
        chunk = sock.recv(min(left, 1 << 20))
        if not chunk:
            raise EOFError
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def _recv(sock, deadline=None):
    """``(kind, payload)`` of the next message; EOFError at the end, TimeoutError at the deadline."""
    (length,) = _HEADER.unpack(_recv_exact(sock, 4, deadline))
    if not 1 <= length <= MAX_MESSAGE:
        raise ProtocolError(f"a message of {length} bytes")
    data = _recv_exact(sock, length, deadline)
    return data[:1], data[1:]


def pack_output(encoded):
    """An output encoded by :func:`~redmax_edu.exercises.calls.encode_output`, as JSON-able data."""
    if encoded.get("kind") != "array":
        return encoded
    array = np.array(encoded["array"], order="C")  # (not ascontiguousarray: it makes a number 1-d)
    return {"kind": "array", "dtype": array.dtype.str, "shape": list(array.shape),
            "data": base64.b64encode(array.tobytes()).decode("ascii")}


def unpack_output(data):
    """The inverse of :func:`pack_output`, for data from an untrusted process: only numbers come back.

    Examples
    --------
    >>> unpack_output(pack_output({"kind": "array", "array": np.eye(2)}))["array"]
    array([[1., 0.],
           [0., 1.]])
    >>> unpack_output(pack_output({"kind": "array", "array": np.float64(2.5)}))["array"].shape
    ()
    """
    if not isinstance(data, dict) or not isinstance(data.get("kind"), str):
        raise ProtocolError("an output that is not a dict")
    if data["kind"] != "array":
        return {k: (v if isinstance(v, (str, int)) else str(v)) for k, v in data.items()}
    dtype = np.dtype(str(data["dtype"]))
    shape = tuple(int(n) for n in data["shape"])
    if dtype.kind not in "biufc" or dtype.itemsize > 16 or any(n < 0 for n in shape):
        raise ProtocolError(f"an array of {dtype}")
    raw = base64.b64decode(data["data"], validate=True)
    if len(raw) != dtype.itemsize * int(np.prod(shape, dtype=np.int64)):
        raise ProtocolError("an array whose size does not match its shape")
    return {"kind": "array", "array": np.frombuffer(raw, dtype=dtype).reshape(shape).copy()}


# --- the student's process -------------------------------------------------------------------------


def _sentinel():
    """Called by the student's process after each call; only the tracer answers it (module docstring)."""


def tamper_locations():
    """Where the loaded modules hold a function of :data:`~redmax_edu.exercises.tracing.TAMPERING`:
    ``[(module namespace, attribute, original)]`` (found once, in the zygote)."""
    found = []
    for module in list(sys.modules.values()):
        namespace = getattr(module, "__dict__", None)
        if isinstance(namespace, dict):
            found += [(namespace, attr, value) for attr, value in list(namespace.items())
                      if callable(value) and _is_tampering(value)]
    return found


def _is_tampering(value):
    try:
        return value in tracing.TAMPERING
    except TypeError:  # unhashable
        return False


def harden(emit, locations):
    """Replace the functions at ``locations`` (``tamper_locations``), and the import of
    ``_GUARDED_MODULES``, by tripwires that report themselves and refuse.

    A tripwire is Python code, so the tracer sees it however it is reached (a C wrapper such
    as ``functools.partial`` or ``map`` hides a C function's call); the originals stay only in
    this function's closures.
    """
    def tripwire(what):
        def refused(*args, **kwargs):
            emit("tamper", what)
            raise PermissionError(f"{what} is not available while the notebook is graded")
        return refused

    import _imp

    for name in ("create_builtin", "create_dynamic"):
        original = getattr(_imp, name)

        def guarded(spec, *args, _original=original):
            if getattr(spec, "name", None) in _GUARDED_MODULES:
                emit("tamper", f"the module {spec.name}")
                raise ImportError(f"{spec.name} is not available while the notebook is graded")
            return _original(spec, *args)

        setattr(_imp, name, guarded)
    wires = {}
    for namespace, attr, original in locations:
        if namespace.get(attr) is original:
            namespace[attr] = wires.setdefault(id(original), tripwire(tracing.TAMPERING[original]))


def _student_main(sock, index, forbidden_codes, locations, workdir, drop_privileges):
    """The student's process: trace, harden, then serve the grader's requests until told to stop."""
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(devnull, fd)
    if workdir:
        os.chdir(workdir)
    if drop_privileges and os.getuid() == 0:  # Gradescope runs as root: the notebook as nobody
        os.setgroups([])
        os.setgid(65534)
        os.setuid(65534)
    sandbox.STUDENT_PROCESS = True
    fd, write, header = sock.fileno(), os.write, _HEADER.pack
    kinds = dict(_KINDS)

    def emit(kind, text):
        data = kinds[kind] + text.encode("utf-8", "replace")[:2000]
        message = header(len(data)) + data
        while message:
            message = message[write(fd, message):]

    token = secrets.token_hex(16)
    _send(sock, b"H", json.dumps({"token": token}).encode())
    tracing.start_tracing(emit, index, forbidden_codes, alive=(_sentinel.__code__, token))
    harden(emit, locations)
    namespace = {"__name__": "__main__", "__builtins__": builtins}
    while True:
        try:
            _, payload = _recv(sock)
        except (EOFError, OSError, ProtocolError):
            os._exit(0)
        request = pickle.loads(payload)  # from the grader, which this process trusts
        if request[0] == "exec":
            reply = {"errors": run_cells(request[1], namespace)}
        elif request[0] == "lookup":
            reply = _lookup(namespace, request[1])
        elif request[0] == "call":
            reply = _call(namespace.get(request[1]), request[2])
        else:
            os._exit(0)
        _sentinel()
        _send(sock, b"R", json.dumps(reply).encode())


def _lookup(namespace, name):
    value = namespace.get(name)
    if value is None:
        return {"kind": "missing"}
    return {"kind": "function"} if callable(value) else {"kind": "value", "type": type(value).__name__}


def _call(fn, args):
    try:
        return {"kind": "returned", "value": pack_output(encode_output(tracing.call_student(fn, args)))}
    except KeyboardInterrupt:
        raise
    except BaseException as exc:  # SystemExit too: the grader says what was raised
        return {"kind": "raised", **encode_exception(exc)}


def run_cells(cells, namespace, display=None):
    """Run a notebook's code cells in ``namespace``, each to its end or its first error.

    IPython's magics (``%...``, ``!...``) are skipped. ``display(value)``, if given, receives
    the value of a cell that ends with an expression, as a notebook shows it. Returns the
    errors, one line per cell that raised (``"cell 3: NameError: name 'x' is not defined"``).
    """
    errors = []
    for number, source in enumerate(cells, start=1):
        if source.lstrip().startswith("%%"):
            continue
        lines = [line for line in source.splitlines() if not line.lstrip().startswith(("%", "!"))]
        try:
            tree = ast.parse("\n".join(lines), f"<cell {number}>")
            last = tree.body.pop() if display and tree.body and isinstance(tree.body[-1], ast.Expr) else None
            exec(compile(tree, f"<cell {number}>", "exec"), namespace)
            if last is not None:
                value = eval(compile(ast.Expression(last.value), f"<cell {number}>", "eval"), namespace)
                if value is not None:
                    display(value)
        except KeyboardInterrupt:
            raise
        except BaseException as exc:
            errors.append(f"cell {number}: {type(exc).__name__}: {encode_exception(exc)['text']}")
    return errors


# --- the zygote ------------------------------------------------------------------------------------


class Zygote:
    """A clean process, forked from this one, that loads the library and forks student processes.

    Create it before this process reads any secret (the grading seed): the student processes
    are copies of it. ``watched``: functions outside the library that assignments forbid
    (``redmax_edu.exercises.WATCHED``), traced like the library's. ``drop_privileges``: run
    the notebooks as ``nobody`` when this process runs as root (Gradescope).
    """

    def __init__(self, watched=(), drop_privileges=False):
        self._lock = threading.Lock()
        mine, theirs = socket.socketpair()
        with _forking():
            pid = os.fork()
        if pid == 0:
            try:
                mine.close()
                _zygote_main(theirs, list(watched), drop_privileges)
            finally:
                os._exit(0)
        theirs.close()
        self.pid, self.control = pid, mine
        if _recv(mine)[0] != b"H":
            raise RuntimeError("the grading zygote did not start")

    def spawn(self, workdir):
        """A new student process: ``(pid, socket)``."""
        mine, theirs = socket.socketpair()
        with self._lock:
            socket.send_fds(self.control, [b"spawn " + workdir.encode()], [theirs.fileno()])
            theirs.close()
            pid = int(_recv(self.control)[1])
        return pid, mine

    def reap(self, pid, kill=False):
        """End student process ``pid`` (if ``kill``) and say how it ended."""
        with self._lock:
            _send(self.control, b"Q", f"{'kill' if kill else 'wait'} {pid}".encode())
            return _recv(self.control)[1].decode()

    def close(self):
        with contextlib.suppress(OSError):
            self.control.close()
        with contextlib.suppress(ChildProcessError, OSError):
            os.kill(self.pid, signal.SIGKILL)
            os.waitpid(self.pid, 0)


@contextlib.contextmanager
def _forking():
    import warnings

    with warnings.catch_warnings():  # Python 3.12+ warns that forking a threaded process may deadlock
        warnings.simplefilter("ignore", DeprecationWarning)
        yield


def _zygote_main(control, watched, drop_privileges):
    os.setsid()  # its own process group: nothing of a notebook outlives the grading
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(devnull, fd)
    os.environ["MPLBACKEND"] = "Agg"
    import matplotlib

    matplotlib.use("Agg")
    package = importlib.import_module(tracing.PACKAGE)
    for info in pkgutil.walk_packages(package.__path__, tracing.PACKAGE + "."):
        with contextlib.suppress(Exception):  # a module whose optional dependency is missing
            importlib.import_module(info.name)
    setup(seed=0)  # what a notebook's first cell loads, loaded once here (matplotlib, plotly, ...)
    index = tracing.library_index(watched)
    forbidden = tracing.ctypes_codes()
    locations = tamper_locations()
    _send(control, b"H", b"")
    children = set()
    while True:
        try:
            message, fds, _, _ = socket.recv_fds(control, 4096, 1)
        except OSError:
            message, fds = b"", []
        if not message:
            break
        if message.startswith(b"spawn") and fds:
            workdir = message[6:].decode()
            with _forking():
                pid = os.fork()
            if pid == 0:
                control.close()
                try:
                    _student_main(socket.socket(fileno=fds[0]), index, forbidden, locations, workdir,
                                  drop_privileges)
                finally:
                    os._exit(1)
            os.close(fds[0])
            children.add(pid)
            _send(control, b"P", str(pid).encode())
            continue
        for fd in fds:
            os.close(fd)
        # a length-prefixed request: kill or wait
        text = message[5:].decode() if len(message) > 5 else ""
        action, _, number = text.partition(" ")
        pid = int(number) if number.isdigit() else -1
        status = "it ended"
        if pid in children:
            if action == "kill":
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
            status = _exit_status(pid)
            children.discard(pid)
        _send(control, b"S", status.encode())
    for pid in children:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


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


# --- the grader's side -------------------------------------------------------------------------------


class NotCallable:
    """A name of the notebook bound to something that is not a function (its type in ``type_name``)."""

    def __init__(self, type_name):
        self.type_name = type_name


class RemoteFunction:
    """A function of the student's process, called by the checks through :func:`~.calls.call`."""

    remote = True

    def __init__(self, submission, name):
        self.submission, self.name, self.deadline = submission, name, None

    def __call__(self, *args):
        raise TypeError("a student's function is called through redmax_edu.exercises.calls.call")

    def start_check(self, time_limit):
        """Every call from now on must return before ``time_limit`` seconds have passed (None: no limit)."""
        self.deadline = None if time_limit is None else time.monotonic() + time_limit

    def invoke(self, args):
        return self.submission.invoke(self.name, args, self.deadline)


class Submission:
    """A notebook running in a student process (see the module docstring).

    ``cells``: the sources of its code cells. ``timeout``: seconds for the cells to run.
    ``notes`` collects what the run showed outside the checks: cells that raised, tampering
    at the top level (``tampered`` then holds its message).
    """

    def __init__(self, zygote, cells, timeout=600.0):
        self.zygote, self.cells, self.timeout = zygote, list(cells), timeout
        self.pid = self.sock = None
        self.workdir = tempfile.mkdtemp(prefix="redmax_edu_grading_")
        os.chmod(self.workdir, 0o777)
        self.notes, self.tampered, self.unfinished = [], None, False
        self.started = 0

    def __enter__(self):
        self._start()
        return self

    def __exit__(self, *exc):
        self.close()

    def _start(self):
        self.started += 1
        self.pid, self.sock = self.zygote.spawn(self.workdir)
        deadline = time.monotonic() + self.timeout
        try:
            kind, payload = _recv(self.sock, deadline)
            if kind != b"H":
                raise ProtocolError("no handshake")
            self.token = json.loads(payload)["token"]
            _send(self.sock, b"Q", pickle.dumps(("exec", self.cells)))
            events, reply = self._reply(deadline)
        except TimeoutError:
            self.unfinished = True
            self._end(kill=True)
            return
        except (EOFError, OSError, ProtocolError, ValueError, KeyError) as exc:
            self.tampered = self.tampered or f"its process ended or broke the grader's protocol ({exc})"
            self._end(kill=True)
            return
        if self.started == 1:
            self.notes += [str(e)[:300] for e in reply.get("errors", [])][:10]
        if not self.tampered:
            hiding = [e for e in events if e[0] in ("tamper", "new")]  # its library calls are its business
            message = tracing.Policy(strict=True).violation("the notebook's own code", hiding)
            self.tampered = message[0] if message else None

    def _reply(self, deadline):
        """The events and the reply of the current request; a missing sentinel answer is tampering."""
        events = []
        while True:
            kind, payload = _recv(self.sock, deadline)
            if kind == b"R":
                reply = json.loads(payload)
                if not isinstance(reply, dict):
                    raise ProtocolError("a reply that is not a dict")
                if not events or events[-1] != ("alive", self.token):
                    events.append(("tamper", "something that stopped the grader's call tracer"))
                return [e for e in events if e[0] != "alive"], reply
            names = {value: key for key, value in _KINDS.items()}
            if kind not in names:
                raise ProtocolError(f"a message of kind {kind!r}")
            events.append((names[kind], payload.decode("utf-8", "replace")[:300]))

    def _end(self, kill):
        if self.sock is None:
            return ""
        with contextlib.suppress(OSError):
            self.sock.close()
        self.sock = None
        return self.zygote.reap(self.pid, kill=kill)

    def close(self):
        if self.sock is not None:
            with contextlib.suppress(OSError):
                _send(self.sock, b"Q", pickle.dumps(("exit",)))
            self._end(kill=True)
        import shutil

        shutil.rmtree(self.workdir, ignore_errors=True)

    def function(self, name):
        """The notebook's ``name``: a :class:`RemoteFunction`, a ``NotCallable``, or None."""
        if self.sock is None:
            self._start()
        if self.sock is None:
            return None
        try:
            _send(self.sock, b"Q", pickle.dumps(("lookup", name)))
            _, reply = self._reply(time.monotonic() + 30)
        except (TimeoutError, EOFError, OSError, ProtocolError, ValueError):
            self._end(kill=True)
            return None
        if reply.get("kind") == "function":
            return RemoteFunction(self, name)
        if reply.get("kind") == "value":
            return NotCallable(str(reply.get("type"))[:100])
        return None

    def invoke(self, name, args, deadline):
        """One call of the notebook's ``name``: an :class:`~redmax_edu.exercises.calls.Outcome`."""
        if self.sock is None:
            self._start()
            if self.sock is None:
                return Outcome("died", text="its notebook could not be run again")
        try:
            _send(self.sock, b"Q", pickle.dumps(("call", name, list(args))))
            events, reply = self._reply(deadline)
        except TimeoutError:
            self._end(kill=True)
            return Outcome("timeout")
        except (EOFError, OSError):
            return Outcome("died", text=self._end(kill=False))
        except (ProtocolError, ValueError) as exc:
            self._end(kill=True)
            return Outcome("returned", {"kind": "none"}, events=[("tamper", f"a garbled reply ({exc})")])
        try:
            if reply.get("kind") == "raised":
                return Outcome("raised", error=str(reply.get("error"))[:100],
                               text=str(reply.get("text"))[:300], events=events)
            return Outcome("returned", unpack_output(reply.get("value")), events=events)
        except (ProtocolError, ValueError, TypeError) as exc:
            garbled = ("tamper", f"a garbled reply ({exc})")
            return Outcome("returned", {"kind": "none"}, events=[*events, garbled])


# --- grading a notebook ----------------------------------------------------------------------------


@dataclass
class Graded:
    """One graded notebook: a :class:`~redmax_edu.exercises.core.Report` per function, and notes."""

    assignment: str
    reports: dict = field(default_factory=dict)
    notes: list = field(default_factory=list)
    error: str = ""

    @property
    def points(self):
        return float(sum(r.points for r in self.reports.values()))

    @property
    def max_points(self):
        return float(sum(r.max_points for r in self.reports.values()))


def notebook_cells(path):
    """The sources of a notebook's code cells; ValueError when the file is not a notebook."""
    try:
        with open(path, encoding="utf-8") as f:
            notebook = json.load(f)
        cells = notebook["cells"]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ValueError(f"not a readable notebook ({type(exc).__name__})") from None
    sources = []
    for cell in cells:
        if isinstance(cell, dict) and cell.get("cell_type") == "code":
            source = cell.get("source", "")
            sources.append("".join(source) if isinstance(source, list) else str(source))
    return sources


def grade_notebook(path, assignment, *, seed, zygote, time_limit=TIME_LIMIT, timeout=600.0):
    """Grade the notebook at ``path`` as ``assignment`` (an :class:`~redmax_edu.exercises.core.Assignment`).

    The checks run here at ``seed``; the notebook runs in a student process of ``zygote``
    (a :class:`Zygote`), its cells within ``timeout`` seconds, each check within
    ``time_limit``. Returns a :class:`Graded`.
    """
    graded = Graded(assignment.name)
    try:
        cells = notebook_cells(path)
    except ValueError as exc:
        graded.error = str(exc)
        return graded
    with Submission(zygote, cells, timeout) as submission:
        if submission.unfinished:
            graded.error = (f"grading did not finish within {timeout:g} s: does a cell of the notebook "
                            "itself run forever?")
            return graded
        for function in assignment.functions:
            if submission.tampered:
                results = [_failed(check, submission.tampered, "tampered")
                           for check in assignment.checks_of(function)]
                graded.reports[function] = Report(results)
                continue
            fn = submission.function(function)
            graded.reports[function] = assignment.report(function, fn, seed=seed, time_limit=time_limit)
        graded.notes = list(submission.notes)
        if submission.tampered:
            graded.notes.append(submission.tampered)
        if submission.started > 1:
            graded.notes.append(f"the notebook was run {submission.started} times (its process was stopped "
                                "or ended during a check)")
    return graded


def _failed(check, message, status):
    from .core import CheckResult

    return CheckResult(check.function, check.title, 0.0, float(check.points), message, status)


def slug(text):
    """A file name made of ``text``."""
    return re.sub(r"[^\w.-]+", "_", text).strip("_")[-120:]
