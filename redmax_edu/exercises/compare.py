"""Comparing a student's output with the library's, and naming the mistake in words.

A wrong answer is rarely random: it is the right answer transformed by a known slip. This
module holds one function per kind of diagnosis, shared by every assignment:

* :func:`named_mistake`: the output equals one of a list of *candidate wrong answers*,
  computed from the same input (the transpose, omega and nu swapped, the adjoint of the
  inverse, ...), each with its message; :func:`generic_mistakes` gives the candidates that
  apply to any output of a given shape;
* :func:`scale_factor`: the output is the right one times a constant (a sign, a factor 2);
* :func:`wrong_parts`: which named blocks of the output are wrong and which are right
  (the rotation block of a transform, the angular part of a twist);
* :func:`asymmetry`: a matrix that should be symmetric is not, and where;
* :func:`direction_mismatches`: the coordinates along which a derivative disagrees with
  finite differences;
* :func:`judge_cases`: run a function on a list of inputs, count the failures, and explain
  the first one with all of the above (including "right at zero and wrong elsewhere").
"""

import re

import numpy as np

from .calls import call
from .core import Verdict

#: Default tolerance of a comparison, relative to the size of the expected output (at least 1).
#: A correct closed form is accurate to about 1e-15; a wrong one is off by order 1.
TOLERANCE = 1e-9

#: The coordinates of a twist (or of a perturbation of a pose along one), by index.
TWIST_COORDINATES = ("omega_x", "omega_y", "omega_z", "nu_x", "nu_y", "nu_z")

#: Named blocks of outputs of common shapes, for :func:`wrong_parts`.
PARTS = {
    (4, 4): {"the rotation block E[:3, :3]": np.s_[:3, :3], "the translation E[:3, 3]": np.s_[:3, 3],
             "the bottom row E[3, :]": np.s_[3, :]},
    (6,): {"the angular part (entries 0-2)": np.s_[:3], "the linear part (entries 3-5)": np.s_[3:]},
    (6, 6): {"the top-left block": np.s_[:3, :3], "the top-right block": np.s_[:3, 3:],
             "the bottom-left block": np.s_[3:, :3], "the bottom-right block": np.s_[3:, 3:]},
}


def max_error(got, want):
    """The largest entry of ``|got - want|``."""
    return float(np.max(np.abs(np.asarray(got, float) - np.asarray(want, float)), initial=0.0))


def agrees(got, want, tol=TOLERANCE):
    """``max|got - want| <= tol * max(1, max|want|)``: equal up to round-off for outputs of order 1.

    Examples
    --------
    >>> agrees([1.0, 2.0], [1.0, 2.0 + 1e-12]), agrees([1.0, 2.0], [1.0, 2.1])
    (True, False)
    """
    want = np.asarray(want, float)
    if np.shape(got) != want.shape:
        return False
    return max_error(got, want) <= tol * max(1.0, float(np.max(np.abs(want), initial=0.0)))


def swap_halves(a):
    """A 6-vector or 6x6 matrix written for the other order of a twist: ``(nu, omega)``."""
    a = np.asarray(a)
    p = np.r_[3:6, 0:3]
    return a[p] if a.ndim == 1 else a[np.ix_(p, p)]


def generic_mistakes(want, what="the expected matrix"):
    """Candidate wrong answers that apply to any output of ``want``'s shape, with their messages.

    Parameters
    ----------
    want : ndarray
        The right output.
    what : str
        How to call it in a message ("the adjoint").

    Returns
    -------
    list of (str, ndarray)
    """
    want = np.asarray(want, float)
    found = [(f"it is minus {what}: a sign is flipped.", -want)]
    if want.ndim == 2 and want.shape[0] == want.shape[1]:
        found.append((f"it is the transpose of {what}.", want.T))
        found.append((f"it is minus the transpose of {what}.", -want.T))
    if want.shape in ((6,), (6, 6)):
        found.append(("omega and nu are swapped: a twist is (omega, nu), angular part first "
                      "(this output is written for the order (nu, omega)).", swap_halves(want)))
    return found


def named_mistake(got, want, candidates, tol=TOLERANCE):
    """The message of the candidate wrong answer that ``got`` equals, or None.

    A candidate that happens to equal the right answer at this input says nothing and is
    skipped. When two candidates fit (at a pure rotation, the transpose of the adjoint is
    also the adjoint of the inverse), both are said. ``candidates`` holds ``(message,
    value)`` pairs; a value may be a callable without arguments.

    Examples
    --------
    >>> want = np.array([[1.0, 2.0], [3.0, 4.0]])
    >>> named_mistake(want.T, want, generic_mistakes(want))
    'it is the transpose of the expected matrix.'
    """
    found = []
    for message, value in candidates:
        if callable(value):
            value = value()
        if agrees(got, value, tol) and not agrees(want, value, tol) and message not in found:
            found.append(message)
    if not found:
        return None
    return found[0] if len(found) == 1 else f"{found[0]} (Equivalently: {found[1]})"


def scale_factor(got, want, tol=TOLERANCE):
    """The constant ``s`` with ``got = s want`` when there is one (and it is not 1), else None.

    Examples
    --------
    >>> scale_factor(2 * np.arange(4.0), np.arange(4.0))
    2.0
    >>> scale_factor(np.arange(4.0) ** 2, np.arange(4.0)) is None
    True
    """
    got, want = np.asarray(got, float), np.asarray(want, float)
    norm = float(np.sum(want * want))
    if norm == 0:
        return None
    s = float(np.sum(got * want) / norm)
    if abs(s - 1) < 1e-6 or abs(s) < 1e-6 or not agrees(got, s * want, tol):
        return None
    return round(s, 6)


def wrong_parts(got, want, parts=None, tol=TOLERANCE):
    """A sentence saying which named blocks of ``got`` are wrong and which are right, or ``""``.

    Examples
    --------
    >>> want = np.arange(6.0)
    >>> wrong_parts(want + [0, 0, 0, 1, 0, 0], want)
    'the linear part (entries 3-5) is wrong; the angular part (entries 0-2) is right.'
    """
    parts = PARTS.get(np.shape(want)) if parts is None else parts
    if not parts:
        return ""
    got, want = np.asarray(got, float), np.asarray(want, float)
    scale = max(1.0, float(np.max(np.abs(want), initial=0.0)))
    wrong = [name for name, index in parts.items() if max_error(got[index], want[index]) > tol * scale]
    right = [name for name in parts if name not in wrong]
    if not wrong or not right:
        return ""
    return f"{_join(wrong)} {'is' if len(wrong) == 1 else 'are'} wrong; {_join(right)} " \
           f"{'is' if len(right) == 1 else 'are'} right."


def asymmetry(M, name="the matrix", tol=TOLERANCE):
    """A sentence saying where ``M`` fails to be symmetric, or None when it is symmetric.

    Examples
    --------
    >>> print(asymmetry(np.array([[1.0, 2.0], [0.0, 1.0]]), "K"))
    K is not symmetric: K[0, 1] = 2 but K[1, 0] = 0.
    >>> asymmetry(np.eye(2)) is None
    True
    """
    M = np.asarray(M, float)
    gap = np.abs(M - M.T)
    if gap.max(initial=0.0) <= tol * max(1.0, float(np.abs(M).max(initial=0.0))):
        return None
    i, j = np.unravel_index(np.argmax(gap), gap.shape)
    i, j = min(i, j), max(i, j)
    return f"{name} is not symmetric: {name}[{i}, {j}] = {M[i, j]:.3g} but {name}[{j}, {i}] = {M[j, i]:.3g}."


def direction_mismatches(analytic, numeric, names=None, tol=1e-6):
    """The coordinates ``k`` along which ``analytic[..., k]`` and ``numeric[..., k]`` disagree.

    Parameters
    ----------
    analytic, numeric : ndarray, shape (..., n)
        A derivative with its direction index last (``checks.numerical_derivative``'s layout).
    names : sequence of str, optional
        The names of the n directions; default ``"coordinate k"``.
    tol : float
        Relative tolerance per direction (the finite differences' error is about 1e-9).

    Returns
    -------
    list of str

    Examples
    --------
    >>> numeric = np.stack([np.eye(2), 2 * np.eye(2)], axis=-1)
    >>> direction_mismatches(numeric * [1, -1], numeric, ["x", "y"])
    ['y']
    """
    n = np.shape(numeric)[-1]
    names = list(names) if names is not None else [f"coordinate {k}" for k in range(n)]
    return [names[k] for k in range(n) if not agrees(analytic[..., k], numeric[..., k], tol)]


def judge_cases(fn, cases, *, name, shape, reference=None, accept=None, mistakes=None, what=None,
                zero_case=None, tol=TOLERANCE, nan_hint="", hint="", parts=None, stacked=""):
    """Run ``fn`` on each case, compare, and explain the first failure; None when all pass.

    Parameters
    ----------
    fn : callable
        The student's function.
    cases : list of (tuple, str)
        Arguments and their label in words.
    name : str
        The function's name in messages.
    shape : tuple
        Its output's shape.
    reference : callable, optional
        ``reference(*args)``: the right output.
    accept : callable, optional
        ``accept(got, *args) -> bool``, for outputs that are right in more than one way
        (a logarithm at angle pi). Used instead of comparing with ``reference``, which then
        only serves the diagnosis.
    mistakes : callable, optional
        ``mistakes(*args)``: candidate wrong answers ``[(message, value), ...]`` for this input.
    what : str, optional
        What the output is, for the generic messages ("the adjoint").
    zero_case : (tuple, str), optional
        The input "at rest" (zero twist, identity pose). When a failing ``fn`` is right there,
        the message says so: a frequent sign of a missing term.
    tol : float
    nan_hint : str
        Added to the message when the output holds NaN or inf.
    hint : str
        Added to the message of a failure (what usually goes wrong with these inputs).
    parts : dict, optional
        Named blocks of the output for :func:`wrong_parts` (default: :data:`PARTS` by shape).
    stacked : str
        For an output that stacks several results into one array: how ("the new twists and
        the multipliers together, np.concatenate([Phi, lam])"), said when ``fn`` returns a
        tuple or an array of another shape (one of the results alone, say).

    Returns
    -------
    Verdict or None
        The fraction of cases passed and a message explaining the first failure.
    """
    failures, first = 0, None
    for args, label in cases:
        try:
            got = call(fn, *args, name=name, shape=shape, label=label, nan_hint=nan_hint)
        except Verdict as verdict:
            if stacked and re.search(r"returned (a tuple|an array of shape)", verdict.message):
                verdict.message += f" Return {stacked}."
                verdict.args = (verdict.message,)
            raise
        want = reference(*args) if reference is not None else None
        ok = accept(got, *args) if accept is not None else agrees(got, want, tol)
        if not ok:
            failures += 1
            if first is None:
                first = (args, label, got, want)
    if not failures:
        return None
    args, label, got, want = first
    message, named = f"{name}({label}) is wrong", None
    if want is not None:
        message += f" (largest error {max_error(got, want):.2g})"
        candidates = list(mistakes(*args)) if mistakes else []
        what = what or f"the right {name}"
        named = named_mistake(got, want, candidates + generic_mistakes(want, what), tol)
        explanation = named or explain(got, want, (), what, tol, parts)
        message += f": {explanation}" if explanation else "."
    else:
        message += "."
    if zero_case is not None and not named:  # a named mistake says more than where it shows
        zero_args, zero_label = zero_case
        zero_want = reference(*zero_args) if reference is not None else None
        try:
            at_zero = call(fn, *zero_args, name=name, shape=shape, label=zero_label)
        except Verdict:  # wrong at rest too, in its own way: the check of that input says how
            at_zero = None
        right_at_zero = at_zero is not None and (
            accept(at_zero, *zero_args) if accept is not None else agrees(at_zero, zero_want, tol))
        if right_at_zero:
            message += (f" It is right at {zero_label} and wrong elsewhere: a term that vanishes "
                        "there is wrong.")
    if len(cases) > 1:
        message += f" Wrong for {failures} of {len(cases)} inputs."
    if hint:
        message += f" {hint}"
    return Verdict(message, fraction=1 - failures / len(cases))


def explain(got, want, candidates=(), what="the right answer", tol=TOLERANCE, parts=None):
    """The best explanation of a wrong ``got``: a named mistake, a constant factor, or the wrong blocks."""
    named = named_mistake(got, want, list(candidates) + generic_mistakes(want, what), tol)
    if named:
        return named
    s = scale_factor(got, want, tol)
    if s is not None:
        return f"it is {what} times {s:g}."
    return wrong_parts(got, want, parts, tol=tol)


def _join(names):
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def finite_difference_verdict(analytic, numeric, names, what, tol=1e-6):
    """Credit per direction for a derivative checked against finite differences; None when all agree.

    Parameters
    ----------
    analytic, numeric : ndarray, shape (..., n)
        The student's derivative and the central differences, direction index last.
    names : sequence of str
        The n directions ("body 0 omega_x", "q_2").
    what : str
        The comparison in words, the start of the message ("K differs from the central
        differences of the wrench").
    tol : float

    Returns
    -------
    Verdict or None
        The fraction of directions that agree, and a message naming those that do not.

    Examples
    --------
    >>> numeric = np.stack([np.eye(2), 2 * np.eye(2)], axis=-1)
    >>> print(finite_difference_verdict(numeric * [1, 0], numeric, ["x", "y"], "D is wrong").message)
    D is wrong along y; it agrees along x.
    """
    wrong = direction_mismatches(analytic, numeric, names, tol)
    if not wrong:
        return None
    right = [name for name in names if name not in wrong]
    message = f"{what} along {', '.join(wrong)}"
    message += f"; it agrees along {', '.join(right)}." if right else " (every direction)."
    return Verdict(message, fraction=len(right) / len(names))
