"""Calling a student's function: one guarded call, its library calls watched, its output checked.

Every check calls the submission through :func:`call`, which turns each way a call can go
wrong into a :class:`~redmax_edu.exercises.verdict.Verdict` whose message names the function,
the input and the problem in words:

* the function calls a library function its assignment does not allow, by any route, or
  tries to blind the grader (:mod:`~redmax_edu.exercises.tracing`): the check ends, and the
  function loses every check (:meth:`~redmax_edu.exercises.core.Assignment.report`);
* it raises ``NotImplementedError`` or returns ``None`` or ``...``: not answered yet
  (:class:`~redmax_edu.exercises.verdict.Unanswered`);
* it raises any other exception: which one, with its message, and for which input;
* it returns something that is not an array of numbers (a string, a dict, complex numbers,
  a tuple of several arrays): the type it returned and the shape expected;
* an array of the wrong shape, with a hint for the usual confusions (a column vector for a
  flat one, a 3x3 rotation for a 4x4 transform);
* ``nan`` or ``inf`` entries, with the check's hint about where they usually come from.

The student's function runs where its notebook runs: here, in the "check your answer" cells
(:class:`LocalFunction`), or in a process of its own in the trusted grading
(:mod:`~redmax_edu.exercises.remote`, whose functions have the same ``invoke``). Either way a
call comes back as plain data, an :class:`Outcome`: what the function returned, encoded by
:func:`encode_output` where it ran, or what it raised, and the library calls it made. The
verdict is drawn from that data here, by the grader.
"""

import copy
import sys
import threading
from dataclasses import dataclass, field

import numpy as np

from .sandbox import report_progress
from .tracing import call_student, library_index, start_tracing
from .verdict import Unanswered, Verdict


def describe(x, digits=3):
    """A short, readable text of a number or a small array (3 significant digits).

    Examples
    --------
    >>> describe(np.array([0.0, 1.0, -2.5e-9, np.pi, 0, 0]))
    '(0, 1, -2.5e-09, 3.14, 0, 0)'
    """
    a = np.asarray(x)
    if a.ndim == 0:
        return f"{float(a):.{digits}g}"
    if a.ndim == 1:
        return "(" + ", ".join(f"{float(v) + 0.0:.{digits}g}" for v in a) + ")"
    return "[" + ", ".join(describe(row, digits) for row in a) + "]"


# --- one call of the student's function, as data --------------------------------------------------


@dataclass
class Outcome:
    """What one call of the student's function gave.

    ``kind`` is ``"returned"`` (``value``: the output encoded by :func:`encode_output`),
    ``"raised"`` (``error``: the exception's type name, ``text``: its message), ``"timeout"``
    or ``"died"`` (the process running it ended; ``text`` says how). ``events``: the
    tracer's events during the call (:func:`~redmax_edu.exercises.tracing.start_tracing`).
    """

    kind: str
    value: dict = None
    error: str = ""
    text: str = ""
    events: list = field(default_factory=list)


class Stopped(BaseException):  # noqa: N818 - not an error of the check: the call never came back
    """A call of the student's function did not come back (``kind``: ``"timeout"`` or ``"died"``)."""

    def __init__(self, kind, label, detail=""):
        super().__init__(kind, label, detail)
        self.kind, self.label, self.detail = kind, label, detail


def encode_output(out):
    """What a function returned, as plain data: ``{"kind": "array", "array": ndarray}`` or why not.

    Runs where the function ran (converting to an array may call the student's code);
    :func:`judge_output` reads the result.

    Examples
    --------
    >>> encode_output([1, 2])["array"]
    array([1, 2])
    >>> encode_output("abc")
    {'kind': 'type', 'type': 'str'}
    """
    if out is None:
        return {"kind": "none"}
    if out is Ellipsis:
        return {"kind": "ellipsis"}
    kind = type(out).__name__
    if isinstance(out, (str, bytes, dict, set)) or callable(out):
        return {"kind": "type", "type": kind}
    if isinstance(out, tuple) and len(out) > 1 and all(np.ndim(part) > 0 for part in out):
        return {"kind": "tuple", "count": len(out)}
    try:
        array = np.asarray(out)
    except Exception as exc:  # ragged lists, objects that refuse conversion
        return {"kind": "unconvertible", "type": kind, "error": _text(exc)}
    if array.dtype == object or not (np.issubdtype(array.dtype, np.number) or array.dtype == bool):
        return {"kind": "not_numbers", "type": kind, "dtype": str(array.dtype)}
    return {"kind": "array", "array": np.array(array)}


def encode_exception(exc):
    """An exception raised by the student's function, as plain data (its type's name and message)."""
    return {"error": type(exc).__name__, "text": _text(exc)}


class LocalFunction:
    """A student's function in this process (a notebook's "check your answer" cell)."""

    remote = False

    def __init__(self, fn):
        self.fn = fn

    def invoke(self, args):
        """Call the function on copies of ``args`` with the tracer on: an :class:`Outcome`."""
        args = [copy.deepcopy(a) for a in args]  # a submission that changes its input in place
        events = []
        stop = start_tracing(lambda kind, text: events.append((kind, text)), current_index())
        try:
            out = call_student(self.fn, args)
            outcome = Outcome("returned", encode_output(out))
        except KeyboardInterrupt:
            stop()
            raise
        except BaseException as exc:  # SystemExit too: a call that ends the process is its answer
            outcome = Outcome("raised", **encode_exception(exc))
        stop()
        outcome.events = events
        return outcome


_INDEX = {}


def current_index():
    """The library index (:func:`~redmax_edu.exercises.tracing.library_index`) of the modules loaded now."""
    key = frozenset(name for name in sys.modules if name.startswith("redmax_edu"))
    if _INDEX.get("key") != key:
        _INDEX.update(key=key, index=library_index())
    return _INDEX["index"]


# --- the check being run: its policy and the first violation -------------------------------------

_CHECK = threading.local()  # the check running on this thread (the grader may grade several at once)


def begin_check(policy):
    """Start a check under ``policy`` (a :class:`~redmax_edu.exercises.tracing.Policy`, or None)."""
    _CHECK.policy, _CHECK.broken = policy, None


def violation():
    """``(message, status)`` of the first call of the check that broke its policy, or None."""
    return getattr(_CHECK, "broken", None)


def _judge_events(events, name):
    policy = getattr(_CHECK, "policy", None)
    if policy is None or _CHECK.broken:
        return
    broken = policy.violation(name, events)
    if broken:
        _CHECK.broken = broken
        raise Verdict(broken[0])


def call(fn, *args, name, shape, label, nan_hint=""):
    """Call ``fn(*args)`` on copies of the arguments; the output as a float array of ``shape``.

    Parameters
    ----------
    fn : callable or LocalFunction or remote function
        The student's function.
    *args
        Its arguments (copied, so that a submission that changes its input in place cannot
        change the grader's data).
    name : str
        The function's name in the exercise, for messages (``"exp_se3"``).
    shape : tuple of int
        The shape of the expected output.
    label : str
        The input in words, for messages (``"phi = (0, 0, 1, 0, 0, 0)"``).
    nan_hint : str, optional
        A sentence added when the output holds NaN or inf (where such values usually come from).

    Returns
    -------
    ndarray of float, shape ``shape``

    Raises
    ------
    redmax_edu.exercises.verdict.Verdict
        With a message naming the problem (:class:`~redmax_edu.exercises.verdict.Unanswered` for an
        unanswered part).
    Stopped
        When the call did not come back (a time-out, or the process ended).

    Examples
    --------
    >>> call(lambda x: 2 * x, np.ones(2), name="double", shape=(2,), label="x = (1, 1)")
    array([2., 2.])
    >>> try:
    ...     call(lambda x: x[:1], np.ones(2), name="double", shape=(2,), label="x = (1, 1)")
    ... except Verdict as verdict:
    ...     print(verdict.message)
    double(x = (1, 1)) returned an array of shape (1,); expected shape (2,).
    """
    report_progress(f"called with {label}")
    submitted = fn if hasattr(fn, "invoke") else LocalFunction(fn)
    outcome = submitted.invoke(args)
    _judge_events(outcome.events, name)
    if outcome.kind in ("timeout", "died"):
        raise Stopped(outcome.kind, label, outcome.text)
    if outcome.kind == "raised":
        if outcome.error == "NotImplementedError":
            raise Unanswered(f"{name} is not answered yet (it raises NotImplementedError).")
        if outcome.error == "RecursionError":
            raise Verdict(f"{name}({label}) exceeded Python's recursion limit: does it call itself "
                          "without end?")
        raise Verdict(f"{name}({label}) raised {outcome.error}: {outcome.text}")
    return judge_output(outcome.value, name=name, shape=shape, label=label, nan_hint=nan_hint)


def as_output(out, *, name, shape, label, nan_hint=""):
    """Check a returned value: an array of real numbers of ``shape`` without NaN (see :func:`call`)."""
    return judge_output(encode_output(out), name=name, shape=shape, label=label, nan_hint=nan_hint)


def judge_output(encoded, *, name, shape, label, nan_hint=""):
    """The float array of ``shape`` in an output encoded by :func:`encode_output`.

    Raises :class:`~redmax_edu.exercises.verdict.Verdict` when it is not one.
    """
    where = f"{name}({label})"
    expected = f"an array of shape {shape}"
    kind = encoded.get("kind")
    if kind in ("none", "ellipsis"):
        shown = "None" if kind == "none" else "Ellipsis"
        raise Unanswered(f"{name} returns {shown}: not answered yet, or a return statement is missing.")
    if kind == "type":
        raise Verdict(f"{where} returned a {encoded['type']}; expected {expected}.")
    if kind == "tuple":
        raise Verdict(f"{where} returned a tuple of {encoded['count']} arrays; expected one array of shape "
                      f"{shape}.")
    if kind == "unconvertible":
        raise Verdict(f"{where} returned a {encoded['type']} that is not an array of numbers "
                      f"({encoded['error']}); expected {expected}.")
    if kind != "array":
        raise Verdict(f"{where} returned a {encoded.get('type')} of {encoded.get('dtype')} entries, not "
                      f"numbers; expected {expected}.")
    array = encoded["array"]
    if np.iscomplexobj(array):
        if np.any(array.imag != 0):
            raise Verdict(f"{where} returned complex numbers; expected real numbers, {expected}.")
        array = array.real
    if array.shape != tuple(shape):
        raise Verdict(f"{where} returned an array of shape {array.shape}; expected shape {tuple(shape)}."
                      + _shape_hint(array.shape, tuple(shape)))
    array = array.astype(float)
    if not np.all(np.isfinite(array)):
        what = "NaN (not a number)" if np.any(np.isnan(array)) else "an infinite value"
        raise Verdict(f"{where} returned {what}." + (f" {nan_hint}" if nan_hint else ""))
    return array


def _shape_hint(got, want):
    if len(want) == 1 and len(got) > 1 and int(np.prod(got)) == want[0]:
        return " Return a flat array (np.ravel, or build it with np.concatenate)."
    if len(got) == 2 and got == want[::-1]:
        return " Rows and columns are exchanged."
    if want == (4, 4) and got == (3, 3):
        return " That is a rotation; a rigid transform is 4x4, [[R, p], [0, 1]]."
    if want == (6, 6) and got == (3, 3):
        return " That is one 3x3 block; the matrix has four."
    if len(got) > len(want) and int(np.prod(got)) == int(np.prod(want)):
        return f" It has the right entries in blocks: stack them into one array of shape {want} (np.reshape)."
    if len(got) == 1 and len(want) > 1 and got[0] == int(np.prod(want)):
        return f" It has the right number of entries: reshape it to {want}."
    return ""


def _text(exc, limit=200):
    try:
        text = str(exc)
    except Exception:
        return "(its message could not be printed)"
    return text if len(text) <= limit else text[:limit] + "..."
