"""Checks, their results and reports: the frame every grader of the exercises is built on.

A **check** tests one property of one function a student writes ("exp_se3 on general
twists", worth 2 points). Its body calls the student's function on well-chosen and seeded
random inputs, compares with the library, and either returns (full marks) or ends with a
:class:`Verdict`: a fraction of the points and a message in words. An **assignment**
(:class:`Assignment`) is the list of checks of its functions and its allow-list, the
library functions its students may call (:class:`~redmax_edu.exercises.tracing.Policy`);
each assignment module of this package creates one.

:func:`run_check` runs one check on a submission and always returns a :class:`CheckResult`,
whatever the submission does: in a child process with a time limit
(:mod:`~redmax_edu.exercises.sandbox`) when the student's function lives in this process (the
"check your answer" cells of the notebooks and the book), in this process when it lives in a
process of its own (the trusted grading of :mod:`~redmax_edu.exercises.remote`, which
stops a call that runs too long). :meth:`Assignment.report` runs every check of a function;
a function that calls the library outside the allow-list, or tries to blind the grader,
loses every check.
"""

import sys
import textwrap
import zlib
from dataclasses import dataclass, replace

import numpy as np

from . import sandbox
from .calls import Stopped, begin_check, current_index, violation
from .sandbox import TIME_LIMIT, run_isolated
from .tracing import Policy
from .verdict import Unanswered, Verdict

__all__ = ["Assignment", "Check", "CheckResult", "Report", "Unanswered", "Verdict", "entry_points",
           "run_check"]

#: The width of a printed report, in characters: it fits the output area of a code cell in
#: the book's pages and in Jupyter without a horizontal scroll bar.
REPORT_WIDTH = 80

#: Statuses of a result, best first. "forbidden": the function called a library function its
#: assignment does not allow; "tampered": it tried to hide its calls from the grader.
STATUSES = ("correct", "partial", "wrong", "unanswered", "timeout", "crashed", "error", "forbidden",
            "tampered")


@dataclass(frozen=True)
class CheckResult:
    """The outcome of one check on one submission.

    Attributes
    ----------
    function : str
        The function the check tests (``"exp_se3"``).
    title : str
        What the check tests, in words (``"general twists"``; no colon, which ends a title
        in the messages).
    points, max_points : float
        Points earned and possible.
    message : str
        ``"correct"``, or what is wrong, in words.
    status : str
        One of ``STATUSES`` (above).
    """

    function: str
    title: str
    points: float
    max_points: float
    message: str
    status: str

    @property
    def full_marks(self):
        return self.points >= self.max_points

    def line(self, with_points=True):
        """One line (wrapped by the report): ``1/2  general twists: omega and nu are swapped ...``."""
        text = f"{self.title}: {self.message}"
        return f"{_num(self.points)}/{_num(self.max_points)}  {text}" if with_points else text


class Report:
    """The results of several checks, printed as a short, wrapped list.

    Examples
    --------
    >>> report = Report([CheckResult("f", "zero input", 1, 1, "correct", "correct"),
    ...                  CheckResult("f", "general inputs", 0.5, 2, "wrong for 3 of 4 inputs.", "partial")])
    >>> print(report)
    f: 1.5 of 3 points
      1/1    zero input: correct
      0.5/2  general inputs: wrong for 3 of 4 inputs.
    >>> report.points, report.max_points
    (1.5, 3.0)

    When every check of a function fails for one reason, the reason is printed once:

    >>> print(Report([CheckResult("f", t, 0, 1, "f is not answered yet.", "unanswered") for t in "ab"]))
    f: 0 of 2 points
      every check: f is not answered yet.
    """

    def __init__(self, results, width=REPORT_WIDTH):
        self.results = list(results)
        self.width = width

    @property
    def points(self):
        return float(sum(r.points for r in self.results))

    @property
    def max_points(self):
        return float(sum(r.max_points for r in self.results))

    @property
    def full_marks(self):
        return all(r.full_marks for r in self.results)

    def statuses(self):
        """The status of each result, in order."""
        return [r.status for r in self.results]

    def __str__(self):
        lines = []
        for function in dict.fromkeys(r.function for r in self.results):
            mine = [r for r in self.results if r.function == function]
            got, out_of = sum(r.points for r in mine), sum(r.max_points for r in mine)
            lines.append(f"{function}: {_num(got)} of {_num(out_of)} points")
            if len(mine) > 1 and len({r.message for r in mine}) == 1 and not mine[0].full_marks:
                # one cause for every check (not answered, not defined, the library called): once
                lines += textwrap.wrap(f"every check: {mine[0].message}", self.width, initial_indent="  ",
                                       subsequent_indent="    ", break_on_hyphens=False)
                continue
            scores = [f"{_num(r.points)}/{_num(r.max_points)}" for r in mine]
            column = max(len(s) for s in scores) + 2
            for score, r in zip(scores, mine, strict=True):
                first = "  " + score.ljust(column)
                lines += textwrap.wrap(f"{r.title}: {r.message}", self.width, initial_indent=first,
                                       subsequent_indent=" " * (len(first) + 2), break_on_hyphens=False)
        return "\n".join(lines)

    __repr__ = __str__


@dataclass(frozen=True)
class Check:
    """One check of one function of an assignment (see the module docstring).

    ``body(fn, rng)`` tests the student's ``fn`` and returns None (full marks) or a
    :class:`Verdict`, or raises one. ``policy``: the assignment's allow-list.
    """

    function: str
    key: str
    title: str
    points: float
    body: object
    policy: Policy = None


def run_check(check, fn, *, seed=0, time_limit=TIME_LIMIT):
    """Run ``check`` on the student's ``fn``; a :class:`CheckResult`, whatever ``fn`` does.

    The inputs are drawn from a generator seeded by ``seed`` and the check's name, so a
    check sees the same inputs every time. A function of this process runs in a child
    process stopped after ``time_limit`` seconds (None: in this process, without a limit);
    a function of another process (:mod:`~redmax_edu.exercises.remote`) is called from here,
    each call stopped when the check has run ``time_limit`` seconds.

    Parameters
    ----------
    check : Check
    fn : callable or remote function or None
        The student's function; None when it is not defined.
    seed : int
    time_limit : float or None

    Returns
    -------
    CheckResult
    """
    def result(fraction, message, status):
        return CheckResult(check.function, check.title, round(check.points * fraction, 2),
                           float(check.points), message, status)

    name = check.function
    if fn is None:
        return result(0, f"{name} is not defined: run the cell that defines it (and check that it "
                         "runs without a syntax error).", "unanswered")
    if not callable(fn):
        return result(0, f"{name} is a {getattr(fn, 'type_name', type(fn).__name__)}, not a function.",
                      "wrong")
    if getattr(fn, "remote", False):
        fn.start_check(time_limit)
        try:
            return result(*_evaluate(check, fn, seed))
        except Stopped as stopped:
            outcome = sandbox.Outcome(stopped.kind, detail=stopped.detail,
                                      last_progress=f"called with {stopped.label}")
    else:
        current_index()  # built here once, not in every child
        outcome = run_isolated(lambda: _evaluate(check, fn, seed), time_limit)
    if outcome.status == "done":
        return result(*outcome.value)
    where = f" when {outcome.last_progress}" if outcome.last_progress else ""
    if outcome.status == "timeout":
        return result(0, f"{name} did not return within {_num(time_limit)} s{where}: an endless loop? "
                         "(The check was stopped.)", "timeout")
    if outcome.status == "died":
        return result(0, f"{name} ended the Python process{where} ({outcome.detail}).", "crashed")
    return result(0, f"the check could not finish ({outcome.detail}). This is a fault of the "
                     "grader, not of your answer: please report it.", "error")


def _evaluate(check, fn, seed):
    """Run the check's body here: ``(fraction, message, status)``; a call outside the allow-list wins."""
    key = zlib.crc32(f"{check.function}/{check.key}".encode())
    rng = np.random.default_rng([seed, key])
    policy = check.policy
    if policy is not None and getattr(fn, "remote", False):
        policy = policy.strict_copy()
    begin_check(policy)
    try:
        verdict = check.body(fn, rng)
    except Verdict as raised:
        verdict = raised
    broken = violation()
    if broken:
        return 0.0, *broken
    if verdict is None:
        return 1.0, "correct", "correct"
    return verdict.fraction, verdict.message, verdict.status


class Assignment:
    """The checks of one assignment, grouped by the function they test, and its allow-list.

    Parameters
    ----------
    name : str
        Short name (the notebook's file name without suffix).
    title : str
    allowed : sequence, optional
        The library functions, classes and modules the students may call from their code
        (see :class:`~redmax_edu.exercises.tracing.Policy`); any other function of
        ``redmax_edu`` costs the function that called it every check.
    forbidden_outside : sequence of str, optional
        Functions outside the library the students may not call (``"scipy.linalg.expm"``).
    prepare : callable, optional
        Called once before checks run (work that the checks' child processes then inherit).
    """

    def __init__(self, name, title, allowed=(), forbidden_outside=(), prepare=None):
        self.name = name
        self.title = title
        self.policy = Policy(allowed, forbidden_outside)
        self.prepare = prepare
        self.checks = []

    def check(self, function, key, title, points):
        """Decorator: register ``body(fn, rng)`` as a check of ``function``."""

        def register(body):
            if any(c.function == function and c.key == key for c in self.checks):
                raise ValueError(f"{self.name}: a second check {function}/{key}")
            self.checks.append(Check(function, key, title, float(points), body, self.policy))
            return body

        return register

    @property
    def functions(self):
        """The functions the students write, in the order of their checks."""
        return list(dict.fromkeys(c.function for c in self.checks))

    def checks_of(self, function):
        found = [c for c in self.checks if c.function == function]
        if not found:
            raise ValueError(f"assignment {self.name!r} has no function {function!r}; "
                             f"it has {self.functions}")
        return found

    def find(self, function, key):
        """The check ``key`` of ``function``."""
        for c in self.checks_of(function):
            if c.key == key:
                return c
        keys = [c.key for c in self.checks_of(function)]
        raise ValueError(f"{function} has no check {key!r}; its checks are {keys}")

    def points(self, function=None):
        """Total points of the assignment, or of one function."""
        checks = self.checks if function is None else self.checks_of(function)
        return float(sum(c.points for c in checks))

    def allowed_text(self):
        """The allow-list in two sentences, as the student notebooks show it."""
        outside = sorted(self.policy.forbidden_outside)
        other = f" (or {', '.join(outside)})" if outside else ""
        if self.policy.shown:
            listed = ", ".join(self.policy.shown)
            first = f"From your code you may call these functions of redmax_edu: {listed}."
        else:
            first = "From your code you may call no function of redmax_edu: numpy is yours."
        which = "any other" if self.policy.shown else "any"
        return (f"{first} A call of {which} function of redmax_edu{other}, by any route, costs the "
                "function that makes it all its points.")

    def report(self, function, fn, *, seed=0, time_limit=TIME_LIMIT):
        """Run every check of ``function`` on the student's ``fn``: a printable :class:`Report`.

        A function that called the library outside the allow-list, or tried to hide its
        calls, in any check loses every check, with that check's message.
        """
        if self.prepare is not None:
            self.prepare()
        results = [run_check(c, fn, seed=seed, time_limit=time_limit) for c in self.checks_of(function)]
        broken = next((r for r in results if r.status in ("forbidden", "tampered")), None)
        if broken is not None:
            results = [replace(r, points=0.0, message=broken.message, status=broken.status) for r in results]
        return Report(results)


def _num(x):
    """A number of points as short text: 2, 0.5, 1.33."""
    return f"{float(x):.2f}".rstrip("0").rstrip(".") if x is not None else "no"


def entry_points(assignment):
    """The ``check`` function of an assignment module, for its notebook's "check your answer" cells.

    ``check(function)`` runs every check of ``function`` on the notebook's function of that
    name (the caller's global), ``check(function, fn)`` on ``fn``; ``seed`` (default 0: the
    graded inputs come from another, secret seed) and ``time_limit`` (default
    :data:`~redmax_edu.exercises.sandbox.TIME_LIMIT`) as in :func:`run_check`. A function that
    is not defined yet gets a sentence saying so. While the trusted grading runs the notebook
    (:mod:`~redmax_edu.exercises.remote`), the check cells do nothing.
    """

    def check(function, fn=None, *, seed=0, time_limit=None):
        if sandbox.STUDENT_PROCESS:
            return None
        if fn is None:
            fn = sys._getframe(1).f_globals.get(function)
        kwargs = {} if time_limit is None else {"time_limit": time_limit}
        return assignment.report(function, fn, seed=seed, **kwargs)

    check.__doc__ = f"Every check of a function of {assignment.name!r} on the student's function: a report."
    return check
