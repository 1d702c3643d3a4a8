"""The pieces of the graders: the sandbox, the call tracer, guarded calls, the comparisons, reports."""

import functools
import os
import sys
import time

import numpy as np
import pytest

from redmax_edu import lie
from redmax_edu.exercises import Assignment, Report, Unanswered, Verdict, run_check
from redmax_edu.exercises.calls import LocalFunction, as_output, call, describe
from redmax_edu.exercises.compare import (
    agrees,
    asymmetry,
    direction_mismatches,
    generic_mistakes,
    judge_cases,
    named_mistake,
    scale_factor,
    swap_halves,
    wrong_parts,
)
from redmax_edu.exercises.sandbox import can_isolate, report_progress, run_isolated
from redmax_edu.exercises.tracing import Policy, library_index

pytestmark = pytest.mark.skipif(not can_isolate(), reason="checks run in forked children (POSIX only)")


# --- the sandbox -------------------------------------------------------------------------------


def test_the_child_returns_its_value():
    outcome = run_isolated(lambda: {"points": 1.5})
    assert (outcome.status, outcome.value) == ("done", {"points": 1.5})


def test_an_endless_loop_is_stopped_at_the_time_limit_and_says_where_it_was():
    def work():
        report_progress("called with phi = 0")
        while True:
            pass

    start = time.monotonic()
    outcome = run_isolated(work, time_limit=0.3)
    assert time.monotonic() - start < 2.0
    assert (outcome.status, outcome.last_progress) == ("timeout", "called with phi = 0")


def test_a_child_that_ends_the_process_is_reported_with_its_status():
    outcome = run_isolated(lambda: os._exit(7))
    assert (outcome.status, outcome.detail) == ("died", "it exited with status 7")
    outcome = run_isolated(lambda: os.kill(os.getpid(), 9))
    assert (outcome.status, outcome.detail) == ("died", "it was ended by SIGKILL")


def test_an_exception_of_the_check_comes_back_as_an_error():
    outcome = run_isolated(lambda: [][1])
    assert outcome.status == "error" and outcome.detail.startswith("IndexError")


def test_a_check_run_from_another_thread_still_works():
    import threading

    found = []
    worker = threading.Thread(target=lambda: found.append(run_isolated(lambda: 42)))
    worker.start()
    worker.join()
    assert (found[0].status, found[0].value) == ("done", 42)


def test_without_a_time_limit_the_function_runs_here():
    marker = []
    assert run_isolated(lambda: marker.append(1) or len(marker), time_limit=None).value == 1
    assert marker == [1]  # the same process: its side effects stay


# --- guarded calls -----------------------------------------------------------------------------


def verdict_of(fn, *args, shape=(2,), **kwargs):
    with pytest.raises(Verdict) as raised:
        call(fn, *args, name="f", shape=shape, label="x = 1", **kwargs)
    return raised.value


@pytest.mark.parametrize(("fn", "kind", "message"), [
    (lambda x: None, Unanswered, "f returns None: not answered yet, or a return statement is missing."),
    (lambda x: ..., Unanswered, "f returns Ellipsis: not answered yet"),
    (lambda x: 1 / 0, Verdict, "f(x = 1) raised ZeroDivisionError: division by zero"),
    (lambda x: "abc", Verdict, "f(x = 1) returned a str; expected an array of shape (2,)."),
    (lambda x: {"a": 1}, Verdict, "f(x = 1) returned a dict"),
    (lambda x: [1, [2, 3]], Verdict, "f(x = 1) returned a list that is not an array of numbers"),
    (lambda x: np.array([1j, 0]), Verdict, "f(x = 1) returned complex numbers"),
    (lambda x: np.ones((2, 1)), Verdict, "shape (2, 1); expected shape (2,). Return a flat"),
    (lambda x: np.array([1.0, np.inf]), Verdict, "f(x = 1) returned an infinite value."),
    (lambda x: (np.ones(2), np.ones(2)), Verdict, "returned a tuple of 2 arrays; expected one array"),
])
def test_each_bad_call_is_said_in_words(fn, kind, message):
    verdict = verdict_of(fn, 1.0)
    assert type(verdict) is kind
    assert message in verdict.message


def test_the_nan_hint_follows_the_nan():
    verdict = verdict_of(lambda x: np.array([np.nan, 0]), 1.0, nan_hint="0/0 at zero?")
    assert verdict.message == "f(x = 1) returned NaN (not a number). 0/0 at zero?"


def test_shape_hints_for_the_usual_confusions():
    assert "That is a rotation" in verdict_of(lambda x: np.eye(3), 1.0, shape=(4, 4)).message
    transposed = verdict_of(lambda x: np.ones((3, 2)), 1.0, shape=(2, 3))
    assert "Rows and columns are exchanged" in transposed.message


def test_numbers_in_any_container_are_accepted():
    assert as_output([1, 2], name="f", shape=(2,), label="").dtype == float
    assert as_output(np.array([1 + 0j, 2]), name="f", shape=(2,), label="").tolist() == [1.0, 2.0]


def test_describe_prints_three_digits_and_no_negative_zero():
    assert describe([-0.0, 1 / 3, 12345.0]) == "(0, 0.333, 1.23e+04)"
    assert describe(np.eye(2)) == "[(1, 0), (0, 1)]"


# --- the call tracer ------------------------------------------------------------------------------


def library_calls(fn, *args):
    """The library functions ``fn(*args)`` entered from outside the library, as the graders see them."""
    return [text for kind, text in LocalFunction(fn).invoke(args).events if kind == "call"]


def via_importlib(phi):
    import importlib

    return importlib.import_module("redmax_" + "edu.lie").exp_se3(phi)


def via_built_name(phi):
    return getattr(lie, "exp_" + "se3")(phi)


def via_modules_dict(phi):
    return sys.modules["redmax_edu.lie"].__dict__["exp_se3"](phi)


def via_attribute_chain(phi):
    import redmax_edu.exercises

    return redmax_edu.exercises.exp_log.lie.exp_se3(phi)  # the grader's own import of the library


def via_numpy_callback(phi):
    return np.apply_along_axis(lie.exp_se3, 0, phi)


def via_partial_and_map(phi):
    return list(map(functools.partial(lie.exp_se3), [phi]))[0]


def via_eval(phi):
    return eval("lie.exp_se3")(phi)


class Wrapper:
    __call__ = staticmethod(lie.exp_se3)


@pytest.mark.parametrize("route", [via_importlib, via_built_name, via_modules_dict, via_attribute_chain,
                                   via_numpy_callback, via_partial_and_map, via_eval, Wrapper(), lie.exp_se3,
                                   functools.partial(lie.exp_se3)])
def test_a_library_call_is_seen_whatever_its_route(route):
    assert "redmax_edu.lie.exp_se3" in library_calls(route, np.arange(6) / 7)


def test_the_library_calling_itself_is_not_a_call_of_the_student():
    # lie.adjoint uses brac inside: one entry, the function the student called
    assert library_calls(lambda E: lie.adjoint(E), np.eye(4)) == ["redmax_edu.lie.adjoint"]
    assert library_calls(lambda E: E @ E, np.eye(4)) == []


def test_the_library_calling_itself_through_python_or_numpy_is_not_a_call_of_the_student():
    # dynamics_derivatives reaches a joint's functools.cached_property: functools calls the library
    from redmax_edu.derivatives import dynamics_derivatives
    from redmax_edu.exercises.chains import pendulum

    model = pendulum()
    calls = library_calls(lambda q: dynamics_derivatives(model, q, 0 * q).M, np.full(1, 0.3))
    assert calls == ["redmax_edu.derivatives.dynamics_derivatives"]


def test_a_library_function_handed_to_an_allowed_one_is_seen():
    from redmax_edu.checks import numerical_derivative

    calls = library_calls(lambda phi: numerical_derivative(lie.exp_se3, phi), np.arange(6) / 7)
    assert calls == ["redmax_edu.checks.numerical_derivative", "redmax_edu.lie.exp_se3"]


def test_a_grader_function_is_a_library_call_too():
    from redmax_edu.exercises import adjoint_gradient

    calls = library_calls(lambda *a: adjoint_gradient.random_blocks(np.random.default_rng(0)))
    assert calls == ["redmax_edu.exercises.adjoint_gradient.random_blocks"]


def set_no_profile(*args):
    sys.setprofile(None)


def set_profile_by_a_built_name(*args):
    getattr(sys, "setprof" + "ile")(None)


def look_at_every_object(*args):
    import gc

    return len(gc.get_objects())


def start_a_thread(*args):
    import _thread

    _thread.start_new_thread(lie.exp_se3, (np.zeros(6),))


@pytest.mark.parametrize(("fn", "what"), [(set_no_profile, "sys.setprofile"),
                                          (set_profile_by_a_built_name, "sys.setprofile"),
                                          (look_at_every_object, "gc.get_objects"),
                                          (start_a_thread, "a new thread (_thread.start_new_thread)")])
def test_a_call_that_would_blind_the_tracer_is_reported(fn, what):
    previous = sys.getprofile()
    try:
        events = LocalFunction(fn).invoke(()).events
    finally:
        sys.setprofile(previous)
    assert ("tamper", what) in events


def test_the_index_names_functions_methods_properties_and_nested_code():
    from redmax_edu.model import Body, Model

    index = library_index()
    assert index[id(lie.exp_se3.__code__)][1] == "redmax_edu.lie.exp_se3"
    assert index[id(Model.children.__code__)][1] == "redmax_edu.model.Model.children"
    assert index[id(Body.spatial_inertia.fget.__code__)][1] == "redmax_edu.model.Body.spatial_inertia"
    nested = [name for _, name in index.values() if ".<locals>." in name]
    assert nested and all(name.startswith("redmax_edu.") for name in nested)


def test_the_policy_allows_its_functions_classes_and_modules_and_watches_outside_names():
    from redmax_edu import kinematics
    from redmax_edu.model import Model

    policy = Policy([lie.brac, Model, kinematics], forbidden_outside=["scipy.linalg.expm"])
    assert not policy.forbids("redmax_edu.lie.brac") and policy.forbids("redmax_edu.lie.exp_se3")
    assert not policy.forbids("redmax_edu.model.Model.children")
    assert not policy.forbids("redmax_edu.kinematics.forward_kinematics")
    assert policy.forbids("scipy.linalg.expm") and not policy.forbids("scipy.linalg.solve")
    message, status = policy.violation("f", [("call", "redmax_edu.lie.brac"), ("call", "redmax_edu.lie.ad")])
    assert status == "forbidden" and message.startswith("f calls lie.ad, which this assignment does not let")
    assert policy.violation("f", [("tamper", "sys.setprofile")])[1] == "tampered"
    assert Policy([lie.brac]).violation("f", [("new", "redmax_edu.lie.brac")]) is None
    assert Policy([lie.brac], strict=True).violation("f", [("new", "redmax_edu.lie.brac")])[1] == "tampered"


# --- comparisons and diagnoses -----------------------------------------------------------------


def test_agreement_is_relative_to_the_size_of_the_answer():
    assert agrees([1e6], [1e6 + 1e-4]) and not agrees([1.0], [1.0 + 1e-6])
    assert not agrees(np.ones(2), np.ones(3))


def test_the_generic_mistakes_of_a_twist_and_a_6x6_matrix():
    phi = np.arange(1.0, 7.0)
    assert named_mistake(swap_halves(phi), phi, generic_mistakes(phi)).startswith("omega and nu are swapped")
    A = np.arange(36.0).reshape(6, 6)
    assert named_mistake(-A.T, A, generic_mistakes(A, "A")) == "it is minus the transpose of A."
    assert named_mistake(A + 1, A, generic_mistakes(A, "A")) is None


def test_two_fitting_mistakes_are_both_said():
    want = np.diag([1.0, 2.0])
    got = -want
    message = named_mistake(got, want, [("first.", -want), ("second.", lambda: -want)])
    assert message == "first. (Equivalently: second.)"


def test_a_candidate_equal_to_the_right_answer_names_nothing():
    want = np.eye(3)
    assert named_mistake(want, want, [("transposed.", want.T)]) is None


def test_scale_factors_and_wrong_blocks():
    want = np.arange(1.0, 7.0)
    assert scale_factor(-0.5 * want, want) == -0.5
    assert scale_factor(want, want) is None
    E = lie.exp_se3(np.arange(1.0, 7.0) / 7)
    bad = E.copy()
    bad[:3, 3] += 1
    assert wrong_parts(bad, E) == ("the translation E[:3, 3] is wrong; the rotation block E[:3, :3] "
                                   "and the bottom row E[3, :] are right.")
    assert wrong_parts(E + 1, E) == ""  # everything is wrong: nothing to point at


def test_asymmetry_names_the_worst_pair():
    K = np.eye(3)
    K[0, 2] = 0.5
    assert asymmetry(K, "K") == "K is not symmetric: K[0, 2] = 0.5 but K[2, 0] = 0."
    assert asymmetry(K + K.T, "K") is None


def test_direction_mismatches_name_the_coordinates():
    numeric = np.random.default_rng(0).standard_normal((2, 2, 3))
    analytic = numeric.copy()
    analytic[..., 1] *= -1
    assert direction_mismatches(analytic, numeric, ["x", "y", "z"]) == ["y"]
    assert direction_mismatches(numeric, numeric) == []


def test_judge_cases_counts_failures_for_partial_credit_and_says_right_at_zero():
    cases = [((np.array([x]),), f"x = {x}") for x in (1.0, 2.0, 3.0, 4.0)]

    def cube_at_4(x):
        return x**2 if x[0] < 3.5 else x**3  # wrong at one input

    verdict = judge_cases(cube_at_4, cases, name="square", shape=(1,), reference=lambda x: x**2,
                          zero_case=((np.zeros(1),), "x = 0"))
    assert verdict.fraction == 0.75 and verdict.status == "partial"
    assert verdict.message == ("square(x = 4.0) is wrong (largest error 48): it is the right square times 4. "
                               "It is right at x = 0 and wrong elsewhere: a term that vanishes there is "
                               "wrong. Wrong for 1 of 4 inputs.")
    assert judge_cases(lambda x: x**2, cases, name="square", shape=(1,), reference=lambda x: x**2) is None


@pytest.mark.parametrize(("fn", "shown"), [(lambda x: x, "an array of shape (1,)"),
                                           (lambda x: (x, 2 * x), "a tuple of 2 arrays")])
def test_judge_cases_says_how_a_stacked_output_is_built_when_it_is_not(fn, shown):
    cases = [((np.array([1.0]),), "x = 1")]
    stacked = "x and 2 x together, np.concatenate([x, 2 * x])"
    with pytest.raises(Verdict) as raised:
        judge_cases(fn, cases, name="pair", shape=(2,), reference=lambda x: np.r_[x, 2 * x], stacked=stacked)
    assert shown in raised.value.message and raised.value.message.endswith(f" Return {stacked}.")
    with pytest.raises(Verdict) as plain:  # without the option, no such advice
        judge_cases(fn, cases, name="pair", shape=(2,), reference=lambda x: np.r_[x, 2 * x])
    assert "Return x and 2 x" not in plain.value.message


# --- checks, reports, assignments --------------------------------------------------------------


def toy_assignment():
    toy = Assignment("toy", "A toy", allowed=[lie.adjoint])

    @toy.check("double", "half", "half credit", 2)
    def half(fn, rng):
        return Verdict("half right.", fraction=0.5)

    @toy.check("double", "ok", "always right", 1)
    def ok(fn, rng):
        return None

    @toy.check("double", "values", "values", 1)
    def values(fn, rng):
        x = rng.standard_normal(2)
        return judge_cases(fn, [((x,), "x")], name="double", shape=(2,), reference=lambda x: 2 * x)

    @toy.check("double", "bug", "a bug of the grader", 1)
    def bug(fn, rng):
        return {}["missing"]

    return toy


def test_a_report_adds_partial_credit_and_survives_a_bug_of_the_grader():
    report = toy_assignment().report("double", lambda x: 2 * x)
    assert [(r.points, r.status) for r in report.results] == [(1.0, "partial"), (1.0, "correct"),
                                                              (1.0, "correct"), (0.0, "error")]
    assert report.points == 3 and report.max_points == 5
    assert "This is a fault of the grader, not of your answer" in report.results[3].message
    assert str(report).splitlines()[0] == "double: 3 of 5 points"


def test_a_call_outside_the_allow_list_costs_every_check():
    report = toy_assignment().report("double", lambda x: 2 * x + 0 * lie.brac(np.zeros(3))[0, :2])
    assert report.points == 0 and set(report.statuses()) == {"forbidden"}
    # the check that called it ("values") and the three that never called the function at all
    assert " ".join(str(report).split()) == ("double: 0 of 5 points every check: double calls lie.brac, "
                                             "which this assignment does not let you call (it lets you call "
                                             "only lie.adjoint): write it yourself.")


def test_a_second_check_of_the_same_name_is_refused():
    toy = toy_assignment()
    with pytest.raises(ValueError, match="a second check double/ok"):
        toy.check("double", "ok", "again", 1)(lambda fn, rng: None)


def test_run_check_of_a_looping_function_reports_a_timeout():
    check = toy_assignment().find("double", "values")

    def double(x):
        while True:
            pass

    result = run_check(check, double, time_limit=0.3)
    assert (result.points, result.status) == (0, "timeout")
    assert result.message == ("double did not return within 0.3 s when called with x: an endless loop? "
                              "(The check was stopped.)")


def test_report_lines_wrap_under_their_text():
    long = "word " * 40
    from redmax_edu.exercises import CheckResult

    text = str(Report([CheckResult("f", "t", 0, 1, long.strip(), "wrong")], width=60))
    lines = text.splitlines()
    assert lines[1].startswith("  0/1  t: word") and all(len(line) <= 60 for line in lines)
    assert all(line.startswith("         ") for line in lines[2:])
