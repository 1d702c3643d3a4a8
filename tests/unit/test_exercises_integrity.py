"""Submissions that do not do the work, tried on every assignment: at most half marks, and a message.

Three classes of cheat, each with several submissions of our own:

* **A, the grader's own code**: the answer comes from ``redmax_edu.exercises`` (the graders ship
  with the package): through the graders' call machinery, their sandbox, the library functions
  a grader module imported, a grader's helper.
* **B, the library by another route**: a call of a library function outside the assignment's
  allow-list through an attribute chain, ``importlib`` with a built name, ``getattr``,
  ``sys.modules``, ``eval``, a numpy callback, ``functools.partial`` and ``map``.
* **C, changing the grader at run time**: a notebook that replaces the checks, the comparisons,
  numpy or the library's reference functions (at its top level, or from inside the function
  while it is checked), or that blinds the call tracer (``sys.setprofile``, through a C
  wrapper, a thread, ``ctypes``, a reloaded module) so as to call the library unseen.

A and B run in this process, through the checks of the "check your answer" cells (the call
tracer is the same as the autograder's). Each cheat returns the right answer, computed by the
reference solution, so that it would earn full marks if it went unseen: the tests fail when
the tracing misses a route. C runs through the trusted grading (``make grade``'s and
Gradescope's), since a notebook may patch its own process at will: each cheat's functions
return a wrong constant of the right shape that would earn full marks if a patch reached the
checks, or compute the answer with the library with the tracer blinded.
"""

import functools
import importlib
import sys
import textwrap

import nbformat
import numpy as np
import pytest

from redmax_edu import lie
from redmax_edu.exercises import ASSIGNMENTS
from redmax_edu.exercises.chains import pendulum
from redmax_edu.exercises.remote import grade_notebook

from .exercise_submissions import SOURCES, reference, solution_cells

NAMES = sorted(SOURCES)
#: Library functions a cheat calls to get at the library: the first outside the assignment's allow-list.
LIBRARY = ("redmax_edu.lie.exp_so3", "redmax_edu.dynamics.mass_matrix", "redmax_edu.lie.log_so3")


@pytest.fixture(scope="module")
def oracles():
    return {name: reference(name) for name in NAMES}


def outside(name):
    """A library function that ``name``'s allow-list does not let a student call: (module, attribute)."""
    policy = ASSIGNMENTS[name].policy
    dotted = next(d for d in LIBRARY if policy.forbids(d))
    return dotted.rsplit(".", 1)


def probe(module, attr):
    """Arguments the library function accepts (its call must happen, not only be attempted), made here."""
    if attr == "exp_so3":
        return (np.full(3, 0.1),)
    if attr == "log_so3":
        return (lie.exp_so3(np.full(3, 0.1)),)
    return (pendulum(), np.zeros(1))


# --- A: the grader's own code ----------------------------------------------------------------------


def through_the_graders_call(right, name, function):
    def cheat(*args):
        from redmax_edu.exercises import calls

        out = np.asarray(right(*args))
        return calls.call(right, *args, name=function, shape=out.shape, label="")
    return cheat


def through_the_graders_sandbox(right, name, function):
    def cheat(*args):
        from redmax_edu.exercises.sandbox import run_isolated

        return run_isolated(lambda: right(*args), time_limit=None).value
    return cheat


def through_a_grader_modules_import(right, name, function):
    grader = importlib.import_module(ASSIGNMENTS[name].checks[0].body.__module__)
    module, attr = outside(name)
    arguments = probe(module, attr)

    def cheat(*args):
        library = [v for v in vars(grader).values() if getattr(v, "__name__", None) == module]
        target = getattr(library[0], attr) if library else getattr(importlib.import_module(module), attr)
        target(*arguments)  # the grader imported it: the student takes it from there
        return right(*args)
    return cheat


def through_a_graders_helper(right, name, function):
    def cheat(*args):
        from redmax_edu.exercises.compare import agrees

        agrees(np.zeros(1), np.zeros(1))  # any function of the graders is the library's code too
        return right(*args)
    return cheat


CLASS_A = [through_the_graders_call, through_the_graders_sandbox, through_a_grader_modules_import,
           through_a_graders_helper]


# --- B: the library by another route ---------------------------------------------------------------


def by_attribute_chain(right, name, function):
    module, attr = outside(name)

    arguments = probe(module, attr)

    def cheat(*args):
        import redmax_edu.dynamics
        import redmax_edu.lie

        functools.reduce(getattr, module.split(".")[1:] + [attr], redmax_edu)(*arguments)
        return right(*args)
    return cheat


def by_importlib_and_a_built_name(right, name, function):
    module, attr = outside(name)
    first, second = attr[:3], attr[3:]
    arguments = probe(module, attr)

    def cheat(*args):
        getattr(importlib.import_module(module.replace("redmax_edu", "redmax_" + "edu")), first + second)(
            *arguments)
        return right(*args)
    return cheat


def by_sys_modules(right, name, function):
    module, attr = outside(name)

    arguments = probe(module, attr)

    def cheat(*args):
        sys.modules[module].__dict__[attr](*arguments)
        return right(*args)
    return cheat


def by_eval(right, name, function):
    module, attr = outside(name)

    arguments = probe(module, attr)

    def cheat(*args):
        eval(f"__import__('{module}', fromlist=['x']).{attr}")(*arguments)
        return right(*args)
    return cheat


def by_a_numpy_callback(right, name, function):
    module, attr = outside(name)
    target = getattr(importlib.import_module(module), attr)

    arguments = probe(module, attr)

    def cheat(*args):
        if attr.endswith("_so3"):
            np.apply_along_axis(target, 0, arguments[0])
        else:
            np.vectorize(lambda _: target(*arguments).sum(), otypes=[float])(np.zeros(1))
        return right(*args)
    return cheat


def by_partial_and_map(right, name, function):
    module, attr = outside(name)
    target = functools.partial(getattr(importlib.import_module(module), attr))

    arguments = probe(module, attr)

    def cheat(*args):
        list(map(target, *([a] for a in arguments)))
        return right(*args)
    return cheat


CLASS_B = [by_attribute_chain, by_importlib_and_a_built_name, by_sys_modules, by_eval, by_a_numpy_callback,
           by_partial_and_map]


@pytest.mark.parametrize("cheat", CLASS_A + CLASS_B, ids=lambda c: c.__name__)
@pytest.mark.parametrize("name", NAMES)
def test_a_call_of_the_graders_or_the_library_is_seen_and_costs_the_function(oracles, name, cheat):
    assignment = ASSIGNMENTS[name]
    total, messages = 0.0, []
    for function in assignment.functions:
        report = assignment.report(function, cheat(oracles[name][function], name, function), time_limit=None)
        total += report.points
        messages.append(str(report))
        text = " ".join(str(report).split())
        # the graders' call machinery starts a profiler of its own: that is reported as tampering
        assert len(set(report.statuses())) == 1 and report.statuses()[0] in ("forbidden", "tampered"), text
        assert ("which this assignment does not let you call" in text
                or "would hide its calls from the grader" in text), text
    assert total <= assignment.points() / 2


def test_without_the_tracer_these_cheats_would_earn_full_marks(oracles):
    # the cheats return the right answers: only the tracing stands between them and full marks
    from redmax_edu.exercises import calls

    for name in ("01_exp_log", "03_forward_dynamics"):
        assignment = ASSIGNMENTS[name]
        for function in assignment.functions:
            fn = by_attribute_chain(oracles[name][function], name, function)
            calls.begin_check(None)
            for check in assignment.checks_of(function):
                calls.begin_check(None)
                assert check.body(fn, np.random.default_rng(0)) is None


# --- C: changing the grader at run time --------------------------------------------------------------

#: Top-level cells of a notebook that would raise its score if the checks ran in its process.
PATCHES = {
    "the checks replaced": """
        import redmax_edu.exercises.core as core
        def full_marks(check, fn, **kwargs):
            return core.CheckResult(check.function, check.title, check.points, check.points, "correct",
                                    "correct")
        core.run_check = full_marks
        core.Assignment.report = lambda self, function, fn, **kw: core.Report(
            [full_marks(c, fn) for c in self.checks_of(function)])
        """,
    "the comparisons loosened": """
        import redmax_edu.exercises.compare as compare
        compare.TOLERANCE = 1e300
        compare.agrees = lambda *args, **kwargs: True
        compare.judge_cases = lambda *args, **kwargs: None
        """,
    "numpy patched": """
        np.allclose = lambda *args, **kwargs: True
        np.linalg.norm = lambda *args, **kwargs: 0.0
        np.max = np.amax = lambda *args, **kwargs: 0.0
        np.isfinite = lambda x: np.ones(np.shape(x), dtype=bool)
        """,
    "the library's references made constant": """
        import inspect, sys
        def constant(f):
            return lambda *args, **kwargs: np.full(np.shape(f(*args, **kwargs)), 0.5)
        for module_name, module in list(sys.modules.items()):
            if module_name.startswith("redmax_edu") and not module_name.startswith("redmax_edu.exercises"):
                for attr, value in list(vars(module).items()):
                    if inspect.isfunction(value) and value.__module__ == module_name:
                        setattr(module, attr, constant(value))
        """,
}
#: Cheats that blind the tracer and call the library: their function calls ``ANSWER(name, *args)``.
BLINDING = {
    "sys.setprofile at the top level": "import sys\nsys.setprofile(None)\n",
    "sys.setprofile through a C wrapper": "import functools, sys\n"
                                          "functools.partial(sys.setprofile, None)()\n",
    "a thread that calls the library": "import threading\nBLIND_THREAD = True\n",
    "ctypes": "import ctypes\nctypes.pythonapi.PyEval_SetProfile(None, None)\n",
    "a reloaded library module": "import importlib, redmax_edu.lie\nimportlib.reload(redmax_edu.lie)\n",
}


def notebook(path, cells):
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(textwrap.dedent(c).strip())
                                         for c in cells])
    nbformat.write(nb, path)
    return path


def rights(name):
    """The solutions, each function renamed ``right_<name>`` (the cheats call them for shapes or answers)."""
    cells = []
    for code in solution_cells(SOURCES[name]):
        for function in ASSIGNMENTS[name].functions:
            code = code.replace(f"def {function}(", f"def right_{function}(")
            code = code.replace(f"{function}(", f"right_{function}(").replace("right_right_", "right_")
        cells.append(code)
    return cells


def setup_cell(name):
    return next(c.source for c in nbformat.read(SOURCES[name], as_version=4).cells if c.cell_type == "code")


def constant_answers(name, patch_inside=None):
    """Functions that return 0.5 everywhere, in the right shape (patching the grader first, if asked)."""
    cells = []
    for function in ASSIGNMENTS[name].functions:
        inside = textwrap.indent(textwrap.dedent(patch_inside), "    ") if patch_inside else ""
        cells.append(f"def {function}(*args):\n{inside}\n"
                     f"    return np.full(np.shape(right_{function}(*args)), 0.5)")
    return cells


LIBRARY_ANSWER = '''
def library_answer(name, *args):
    """The right answer, computed with the library (exp_so3 called: a library call outside the list)."""
    import redmax_edu.lie
    redmax_edu.lie.exp_so3(np.zeros(3))
    return globals()["right_" + name](*args)
'''


def blinded_answers(name, blinding):
    cells = []
    for function in ASSIGNMENTS[name].functions:
        if "thread" in blinding:
            body = (f"    import threading\n    out = []\n    t = threading.Thread(target=lambda: "
                    f"out.append(library_answer('{function}', *args)))\n"
                    "    t.start()\n    t.join()\n    return out[0]")
        else:
            body = f"    return library_answer('{function}', *args)"
        cells.append(f"def {function}(*args):\n{body}")
    return cells


@pytest.fixture(scope="module")
def cheat_results(zygote, tmp_path_factory):
    """Every class-C cheat graded on every assignment by the trusted grading: {(name, cheat): Graded}."""
    folder = tmp_path_factory.mktemp("cheats")
    found = {}
    for name in NAMES:
        base = [setup_cell(name), *rights(name)]
        cheats = {f"{what} (top level)": [*base, patch, *constant_answers(name)]
                  for what, patch in PATCHES.items()}
        cheats["the grader patched from inside the function"] = [
            *base, *constant_answers(name, PATCHES["the comparisons loosened"] + PATCHES["numpy patched"])]
        for what, blinding in BLINDING.items():
            cheats[what] = [*base, LIBRARY_ANSWER, blinding, *blinded_answers(name, what)]
        for what, cells in cheats.items():
            path = notebook(folder / f"{name}-{len(found)}.ipynb", cells)
            found[name, what] = grade_notebook(path, ASSIGNMENTS[name], seed=3, zygote=zygote, time_limit=5)
    return found


CHEATS_C = [f"{what} (top level)" for what in PATCHES] + ["the grader patched from inside the function",
                                                          *BLINDING]


@pytest.mark.parametrize("cheat", CHEATS_C)
@pytest.mark.parametrize("name", NAMES)
def test_a_notebook_that_changes_the_grader_or_blinds_it_earns_at_most_half(cheat_results, name, cheat):
    graded = cheat_results[name, cheat]
    assert not graded.error
    assert graded.points <= graded.max_points / 2, "\n".join(str(r) for r in graded.reports.values())
    text = " ".join(" ".join(str(r) for r in graded.reports.values()).split())
    if cheat in BLINDING:
        assert "would hide its calls from the grader" in text or "library code made while" in text, text
    else:  # each function's report says what is wrong with its constant
        assert all(not report.full_marks and any(r.message != "correct" for r in report.results)
                   for report in graded.reports.values()), text


def test_the_blinding_cheats_compute_right_answers_so_only_the_tracing_stops_them(oracles, tmp_path, zygote):
    # the same notebook without its blinding cell: its library calls are seen, one by one
    name = "01_exp_log"
    path = notebook(tmp_path / "plain.ipynb", [setup_cell(name), *rights(name), LIBRARY_ANSWER,
                                                *blinded_answers(name, "")])
    graded = grade_notebook(path, ASSIGNMENTS[name], seed=3, zygote=zygote)
    text = " ".join(" ".join(str(r) for r in graded.reports.values()).split())
    assert graded.points == 0
    assert "exp_se3 calls lie.exp_so3, which this assignment does not let you call" in text
    # and without the library call they are the solutions: full marks
    path = notebook(tmp_path / "right.ipynb", [setup_cell(name), *rights(name), *(
        f"def {f}(*args):\n    return right_{f}(*args)" for f in ASSIGNMENTS[name].functions)])
    assert grade_notebook(path, ASSIGNMENTS[name], seed=3, zygote=zygote).points == ASSIGNMENTS[name].points()
