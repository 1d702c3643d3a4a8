"""Calling a student's function: one guarded call, its output checked for type, shape and NaN.

Every check calls the submission through :func:`call`, which turns each way a call can go
wrong into a :class:`~redmax_edu.exercises.core.Verdict` whose message names the function,
the input and the problem in words:

* the function raises ``NotImplementedError`` or returns ``None`` or ``...``: not answered
  yet (:class:`~redmax_edu.exercises.core.Unanswered`);
* it raises any other exception: which one, with its message, and for which input;
* it returns something that is not an array of numbers (a string, a dict, complex numbers,
  a tuple of several arrays): the type it returned and the shape expected;
* an array of the wrong shape, with a hint for the usual confusions (a column vector for a
  flat one, a 3x3 rotation for a 4x4 transform);
* ``nan`` or ``inf`` entries, with the check's hint about where they usually come from.

:func:`library_uses` finds the library functions a submission calls that an exercise asks
the student to write, so that calling ``redmax_edu.lie.exp_se3`` does not earn the marks for
writing it.
"""

import copy
import types

import numpy as np

from .core import Unanswered, Verdict
from .sandbox import report_progress


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


def call(fn, *args, name, shape, label, nan_hint=""):
    """Call ``fn(*args)`` on copies of the arguments; the output as a float array of ``shape``.

    Parameters
    ----------
    fn : callable
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
    Verdict
        With a message naming the problem (:class:`Unanswered` for an unanswered part).

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
    try:
        out = fn(*[copy.deepcopy(a) for a in args])
    except NotImplementedError:
        raise Unanswered(f"{name} is not answered yet (it raises NotImplementedError).") from None
    except RecursionError:
        raise Verdict(f"{name}({label}) exceeded Python's recursion limit: does it call itself "
                      "without end?") from None
    except (Exception, SystemExit) as exc:  # not KeyboardInterrupt: that is the user stopping
        raise Verdict(f"{name}({label}) raised {type(exc).__name__}: {_text(exc)}") from None
    return as_output(out, name=name, shape=shape, label=label, nan_hint=nan_hint)


def as_output(out, *, name, shape, label, nan_hint=""):
    """Check a returned value: an array of real numbers of ``shape`` without NaN (see :func:`call`)."""
    where = f"{name}({label})"
    expected = f"an array of shape {shape}"
    if out is None or out is Ellipsis:
        raise Unanswered(f"{name} returns {out!r}: not answered yet, or a return statement is missing.")
    if isinstance(out, (str, bytes, dict, set)) or callable(out):
        raise Verdict(f"{where} returned a {type(out).__name__}; expected {expected}.")
    if isinstance(out, tuple) and len(out) > 1 and all(np.ndim(part) > 0 for part in out):
        raise Verdict(f"{where} returned a tuple of {len(out)} arrays; expected one array of shape {shape}.")
    try:
        array = np.asarray(out)
    except Exception as exc:  # ragged lists, objects that refuse conversion
        raise Verdict(f"{where} returned a {type(out).__name__} that is not an array of numbers "
                      f"({_text(exc)}); expected {expected}.") from None
    if array.dtype == object or not (np.issubdtype(array.dtype, np.number) or array.dtype == bool):
        raise Verdict(f"{where} returned a {type(out).__name__} of {array.dtype} entries, not numbers; "
                      f"expected {expected}.")
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


def library_uses(fn, forbidden):
    """The forbidden functions that ``fn`` is or calls, directly or through functions of its notebook.

    Looks at the names ``fn``'s code refers to (and those of the functions it calls that are
    defined in the same module, such as a student's helper): a global bound to a forbidden
    function, or an attribute of a module (``lie.exp_se3``) that is one.

    Parameters
    ----------
    fn : callable
    forbidden : sequence of callables

    Returns
    -------
    list of str
        Their qualified names (``"redmax_edu.lie.exp_se3"``), empty when none is used.

    Examples
    --------
    >>> from redmax_edu import lie
    >>> def mine(phi):
    ...     return lie.exp_se3(phi)
    >>> library_uses(mine, [lie.exp_se3])
    ['redmax_edu.lie.exp_se3']
    >>> library_uses(lambda phi: np.eye(4), [lie.exp_se3])
    []
    """
    targets = {id(f): f"{getattr(f, '__module__', '?')}.{getattr(f, '__name__', '?')}" for f in forbidden}
    found, seen, stack = [targets[id(fn)]] if id(fn) in targets else [], set(), [fn]
    while stack:
        f = stack.pop()
        if id(f) in seen or not isinstance(f, types.FunctionType):
            continue
        seen.add(id(f))
        names = _names(f.__code__)
        values = [f.__globals__.get(n) for n in names]
        values += [cell.cell_contents for cell in (f.__closure__ or ()) if _filled(cell)]
        for value in values:
            if id(value) in targets:
                found.append(targets[id(value)])
            elif isinstance(value, types.ModuleType):
                attributes = [getattr(value, n, None) for n in names]
                found += [targets[id(a)] for a in attributes if id(a) in targets]
            elif isinstance(value, types.FunctionType) and value.__module__ == f.__module__:
                stack.append(value)
    return sorted(set(found))


def _names(code):
    names = set(code.co_names) | set(code.co_freevars)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _names(const)
    return names


def _filled(cell):
    try:
        cell.cell_contents  # noqa: B018 - an empty closure cell raises ValueError
    except ValueError:
        return False
    return True
