"""Checks, their results and reports: the frame every grader of the exercises is built on.

A **check** tests one property of one function a student writes ("exp_se3 on general
twists", worth 2 points). Its body calls the student's function on well-chosen and seeded
random inputs, compares with the library, and either returns (full marks) or ends with a
:class:`Verdict`: a fraction of the points and a message in words. An **assignment**
(:class:`Assignment`) is the list of checks of its functions; each assignment module of this
package creates one.

:func:`run_check` runs one check on a submission in a child process with a time limit
(:mod:`~redmax_edu.exercises.sandbox`) and always returns a :class:`CheckResult`, whatever the
submission does. :meth:`Assignment.report` runs every check of a function (the "check your
answer" cells of the notebooks and the book); :meth:`Assignment.require` runs one check and
raises :class:`CheckFailed` unless it earns full marks (the autograder's test cases).
"""

import textwrap
import zlib
from dataclasses import dataclass

import numpy as np

from .sandbox import TIME_LIMIT, run_isolated

#: The seed of the autograder's inputs; the students' own check cells use seed 0, so that
#: the graded inputs are not the ones a submission was tuned on.
GRADING_SEED = 1

#: Statuses of a result, best first.
STATUSES = ("correct", "partial", "wrong", "unanswered", "timeout", "crashed", "error")


class Verdict(Exception):  # noqa: N818 - a verdict, not an error
    """Ends a check with ``fraction`` of its points and a message saying what is wrong.

    Raised (or returned) by check bodies and by :func:`~redmax_edu.exercises.calls.call`.
    """

    status = "wrong"

    def __init__(self, message, fraction=0.0):
        super().__init__(message)
        self.message = message
        self.fraction = float(min(max(fraction, 0.0), 1.0))
        if 0 < self.fraction < 1:
            self.status = "partial"


class Unanswered(Verdict):
    """The part is not answered yet (the placeholder is still there)."""

    status = "unanswered"


class CheckFailed(AssertionError):
    """Raised by :meth:`Assignment.require` when a check earns less than full marks.

    Its text starts with ``[points/max points]`` (read back by the otter plugin of
    :mod:`~redmax_edu.exercises.otter_plugin`, which turns it into partial credit).
    """

    def __init__(self, result):
        super().__init__(f"[{_num(result.points)}/{_num(result.max_points)} points] {result.line(False)}")
        self.result = result


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
        One of :data:`STATUSES`.
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

    def __init__(self, results, width=100):
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
    :class:`Verdict`, or raises one. ``forbidden`` lists library functions the student is
    asked to write, not to call.
    """

    function: str
    key: str
    title: str
    points: float
    body: object
    forbidden: tuple = ()


def run_check(check, fn, *, seed=0, time_limit=TIME_LIMIT):
    """Run ``check`` on the student's ``fn``; a :class:`CheckResult`, whatever ``fn`` does.

    The inputs are drawn from a generator seeded by ``seed`` and the check's name, so a
    check sees the same inputs every time. The check runs in a child process stopped after
    ``time_limit`` seconds (None: in this process, without a limit).

    Parameters
    ----------
    check : Check
    fn : callable or None
        The student's function; None when it is not defined.
    seed : int
    time_limit : float or None

    Returns
    -------
    CheckResult
    """
    from .calls import library_uses

    def result(fraction, message, status):
        return CheckResult(check.function, check.title, round(check.points * fraction, 2),
                           float(check.points), message, status)

    name = check.function
    if fn is None:
        return result(0, f"{name} is not defined: run the cell that defines it (and check that it "
                         "runs without a syntax error).", "unanswered")
    if not callable(fn):
        return result(0, f"{name} is a {type(fn).__name__}, not a function.", "wrong")
    used = library_uses(fn, check.forbidden)
    if used:
        return result(0, f"{name} uses {' and '.join(used)}, which this exercise asks you to "
                         "write: write it with numpy.", "wrong")
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
    """Run the check's body in this process: ``(fraction, message, status)``."""
    key = zlib.crc32(f"{check.function}/{check.key}".encode())
    rng = np.random.default_rng([seed, key])
    try:
        verdict = check.body(fn, rng)
    except Verdict as raised:
        verdict = raised
    if verdict is None:
        return 1.0, "correct", "correct"
    return verdict.fraction, verdict.message, verdict.status


class Assignment:
    """The checks of one assignment, grouped by the function they test.

    Parameters
    ----------
    name : str
        Short name (the notebook's file name without suffix).
    title : str
    forbidden : dict, optional
        For each function the students write, the library functions it may not call.
    """

    def __init__(self, name, title, forbidden=None):
        self.name = name
        self.title = title
        self.forbidden = dict(forbidden or {})
        self.checks = []

    def check(self, function, key, title, points):
        """Decorator: register ``body(fn, rng)`` as a check of ``function``."""

        def register(body):
            if any(c.function == function and c.key == key for c in self.checks):
                raise ValueError(f"{self.name}: a second check {function}/{key}")
            self.checks.append(Check(function, key, title, float(points), body,
                                     tuple(self.forbidden.get(function, ()))))
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

    def report(self, function, fn, *, seed=0, time_limit=TIME_LIMIT):
        """Run every check of ``function`` on the student's ``fn``: a printable :class:`Report`."""
        return Report([run_check(c, fn, seed=seed, time_limit=time_limit) for c in self.checks_of(function)])

    def require(self, function, key, fn, *, seed=GRADING_SEED, time_limit=TIME_LIMIT):
        """Run one check; raise :class:`CheckFailed` (an ``AssertionError``) unless it earns full marks.

        This is the body of the autograder's test cases: the failure's text starts with
        ``[points/max points]`` and says what is wrong.
        """
        result = run_check(self.find(function, key), fn, seed=seed, time_limit=time_limit)
        if not result.full_marks:
            raise CheckFailed(result)
        return result


def _num(x):
    """A number of points as short text: 2, 0.5, 1.33."""
    return f"{float(x):.2f}".rstrip("0").rstrip(".") if x is not None else "no"


def entry_points(assignment):
    """The ``check`` and ``require`` functions of an assignment module, for its notebook and autograder.

    ``check(function, fn, seed=0, time_limit=None)`` runs every check of ``function`` (the
    "check your answer" cells; ``time_limit`` defaults to
    :data:`~redmax_edu.exercises.sandbox.TIME_LIMIT`); ``require(function, key, fn)`` runs one
    check at :data:`GRADING_SEED` and raises :class:`CheckFailed` unless it earns full marks
    (the autograder's test cases).
    """

    def check(function, fn, *, seed=0, time_limit=None):
        kwargs = {} if time_limit is None else {"time_limit": time_limit}
        return assignment.report(function, fn, seed=seed, **kwargs)

    def require(function, key, fn, *, seed=GRADING_SEED):
        return assignment.require(function, key, fn, seed=seed)

    check.__doc__ = f"Every check of a function of {assignment.name!r} on the student's ``fn``: a report."
    require.__doc__ = f"One check of {assignment.name!r}, as an autograder test case."
    return check, require
