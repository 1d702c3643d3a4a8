"""The graders of the assignments: full marks for the solutions, the named message for each mistake.

For every assignment: the reference solutions (read from the source notebooks) earn
full marks at several seeds; every mutant of ``exercise_submissions`` (a common mistake,
written as a student would) earns less and gets its own message; every broken submission
(raises, loops, sleeps, NaN, wrong type, ends the process) gets a clear message and a zero
within the time limit, and the grader survives it.
"""

import time

import numpy as np
import pytest

from redmax_edu import lie
from redmax_edu.exercises import (
    ASSIGNMENTS,
    adjoint,
    adjoint_gradient,
    bdf1_newton,
    discrete_euler_lagrange,
    exp_log,
    force_derivatives,
    forward_dynamics,
    jacobian_derivative,
    jacobian_products,
    joint_derivative,
    joint_types,
    kkt_step,
    lagrangian_arm,
    mass_matrix_derivative,
    nodes_hybrid_friction,
    poses_points,
    recursive,
    reduced_jacobian,
    spatial_inertia,
    step_contact,
    universal_joint,
)

from .exercise_submissions import (
    ADJOINT_MUTANTS,
    BROKEN,
    EXP_LOG_MUTANTS,
    FORCE_MUTANTS,
    JACOBIAN_MUTANTS,
    JACOBIAN_PRODUCT_MUTANTS,
    KKT_MUTANTS,
    POSES_MUTANTS,
    ROOT,
    SPATIAL_INERTIA_MUTANTS,
    UNIVERSAL_MUTANTS,
    reference,
)
from .exercise_submissions_differentiable import (
    ADJOINT_GRADIENT_MUTANTS,
    BDF1_MUTANTS,
    DEL_MUTANTS,
    JACOBIAN_DERIVATIVE_MUTANTS,
    JOINT_DERIVATIVE_MUTANTS,
    MASS_DERIVATIVE_MUTANTS,
)
from .exercise_submissions_dynamics import FORWARD_DYNAMICS_MUTANTS, LAGRANGIAN_MUTANTS, RECURSIVE_MUTANTS
from .exercise_submissions_joint_types import JOINT_TYPES_MUTANTS
from .exercise_submissions_nodes_hybrid_friction import NODES_HYBRID_FRICTION_MUTANTS
from .exercise_submissions_step_contact import STEP_CONTACT_MUTANTS

MODULES = {"01_exp_log": exp_log, "02_adjoint": adjoint, "03_force_derivatives": force_derivatives,
           "04_kkt_step": kkt_step, "01_joint_Q_S_Sdot": universal_joint, "02_jacobian": reduced_jacobian,
           "03_forward_dynamics": forward_dynamics, "04_recursive": recursive,
           "01_joint_derivative": joint_derivative, "02_bdf1_newton_step": bdf1_newton,
           "03_adjoint_gradient": adjoint_gradient, "01_lagrangian_arm": lagrangian_arm,
           "05_spatial_inertia": spatial_inertia, "05_jacobian_products": jacobian_products,
           "04_jacobian_derivative": jacobian_derivative, "05_mass_matrix_derivative": mass_matrix_derivative,
           "01_discrete_euler_lagrange": discrete_euler_lagrange, "06_poses_and_points": poses_points,
           "07_step_and_contact": step_contact, "06_joint_types": joint_types,
           "07_nodes_hybrid_friction": nodes_hybrid_friction}
MUTANTS = {"01_exp_log": EXP_LOG_MUTANTS, "02_adjoint": ADJOINT_MUTANTS,
           "03_force_derivatives": FORCE_MUTANTS, "04_kkt_step": KKT_MUTANTS,
           "01_joint_Q_S_Sdot": UNIVERSAL_MUTANTS, "02_jacobian": JACOBIAN_MUTANTS,
           "03_forward_dynamics": FORWARD_DYNAMICS_MUTANTS, "04_recursive": RECURSIVE_MUTANTS,
           "01_joint_derivative": JOINT_DERIVATIVE_MUTANTS, "02_bdf1_newton_step": BDF1_MUTANTS,
           "03_adjoint_gradient": ADJOINT_GRADIENT_MUTANTS, "01_lagrangian_arm": LAGRANGIAN_MUTANTS,
           "05_spatial_inertia": SPATIAL_INERTIA_MUTANTS, "05_jacobian_products": JACOBIAN_PRODUCT_MUTANTS,
           "04_jacobian_derivative": JACOBIAN_DERIVATIVE_MUTANTS,
           "05_mass_matrix_derivative": MASS_DERIVATIVE_MUTANTS,
           "01_discrete_euler_lagrange": DEL_MUTANTS, "06_poses_and_points": POSES_MUTANTS,
           "07_step_and_contact": STEP_CONTACT_MUTANTS, "06_joint_types": JOINT_TYPES_MUTANTS,
           "07_nodes_hybrid_friction": NODES_HYBRID_FRICTION_MUTANTS}
#: The instructors' guide (also the book's page for instructors, book/appendix/instructors.md).
README = ROOT / "exercises" / "README.md"
#: A short time limit for the looping submissions: a correct check takes milliseconds.
QUICK = 0.5


@pytest.fixture(scope="module", params=sorted(MODULES))
def assignment(request):
    return request.param


@pytest.fixture(scope="module")
def references():
    return {name: reference(name) for name in MODULES}


def report_text(report):
    """Every message of a report, unwrapped (the printed report wraps its lines)."""
    return " ".join(f"{r.title}: {r.message}" for r in report.results)


@pytest.mark.parametrize("seed", [0, 1, 2, 3, 4])
def test_the_reference_solutions_earn_full_marks(assignment, references, seed):
    module, solutions = MODULES[assignment], references[assignment]
    for function in module.ASSIGNMENT.functions:
        report = module.check(function, solutions[function], seed=seed)
        assert report.full_marks, str(report)
        assert report.statuses() == ["correct"] * len(report.results)


def test_every_check_has_points_and_a_title_without_colon(assignment):
    checks = ASSIGNMENTS[assignment].checks
    assert len(checks) >= 9
    for check in checks:
        assert check.points > 0
        assert ":" not in check.title, "a colon ends the title in the messages"


def test_each_assignment_has_at_least_five_mutants(assignment):
    assert len(MUTANTS[assignment]) >= 5
    assert set(f for f, _, _ in MUTANTS[assignment].values()) == set(ASSIGNMENTS[assignment].functions)


@pytest.mark.parametrize(("assignment_name", "mutant"),
                         [(a, m) for a in sorted(MUTANTS) for m in sorted(MUTANTS[a])])
def test_every_mutant_gets_its_message_and_less_than_full_marks(assignment_name, mutant):
    function, fn, message = MUTANTS[assignment_name][mutant]
    report = MODULES[assignment_name].check(function, fn)
    assert report.points < report.max_points, str(report)
    assert message in report_text(report), str(report)
    assert all(r.status in ("correct", "partial", "wrong") for r in report.results), str(report)


@pytest.mark.parametrize("name", sorted(BROKEN))
@pytest.mark.parametrize(("assignment_name", "function"),
                         [("01_exp_log", "exp_se3"), ("02_adjoint", "adjoint_dot")])
def test_a_broken_submission_gets_a_clear_message_within_the_time_limit(assignment_name, function, name):
    fn, message, status = BROKEN[name]
    start = time.monotonic()
    limit = QUICK if status == "timeout" else 5.0  # a short limit only where it is what is tested
    report = MODULES[assignment_name].check(function, fn, time_limit=limit)
    elapsed = time.monotonic() - start
    checks = len(report.results)
    assert elapsed < checks * limit + 5, f"{elapsed:.1f} s for {checks} checks"
    assert report.points == 0
    assert all(message in r.message for r in report.results), str(report)
    assert set(report.statuses()) == {status}


@pytest.mark.parametrize("name", ["raises", "loops", "returns_text", "returns_none", "kills_the_process"])
@pytest.mark.parametrize(("assignment_name", "function"),
                         [("03_forward_dynamics", "reduced_forces"), ("04_recursive", "body_accelerations"),
                          ("01_lagrangian_arm", "coriolis_matrix"),
                          ("01_joint_derivative", "universal_dS_dq"),
                          ("02_bdf1_newton_step", "bdf1_newton_step"),
                          ("03_adjoint_gradient", "initial_state_gradient")])
def test_the_model_and_derivative_checks_survive_broken_submissions(assignment_name, function, name):
    # the checks that call the submission themselves (symmetry, finite differences, C qdot, repeated
    # Newton steps, a whole simulation's differences) included
    fn, message, status = BROKEN[name]
    report = MODULES[assignment_name].check(function, fn, time_limit=QUICK if status == "timeout" else 5.0)
    assert report.points == 0
    assert all(message in r.message for r in report.results), str(report)
    assert set(report.statuses()) == {status}


def test_a_submission_that_is_not_defined_or_not_a_function_is_said_so():
    report = exp_log.check("exp_se3", None)
    assert report.statuses() == ["unanswered"] * 5
    assert "exp_se3 is not defined" in str(report)
    report = exp_log.check("exp_se3", np.eye(4))
    assert "exp_se3 is a ndarray, not a function" in str(report)


def test_the_placeholder_is_reported_as_unanswered_once():
    def exp_se3(phi):
        raise NotImplementedError("write exp_se3")

    report = exp_log.check("exp_se3", exp_se3)
    assert report.points == 0 and set(report.statuses()) == {"unanswered"}
    assert str(report) == ("exp_se3: 0 of 6 points\n"
                           "  every check: exp_se3 is not answered yet (it raises NotImplementedError).")


def test_calling_the_library_earns_nothing(references):
    solutions = references["02_adjoint"]

    def adjoint_dot(E, phi):  # the library's rate behind a student's name
        return lie.adjoint_dot(E, phi)

    report = adjoint.check("adjoint_dot", adjoint_dot)
    assert report.points == 0
    assert ("adjoint_dot calls lie.adjoint_dot, which this assignment does not let you call (it lets you "
            "call only lie.brac): write it yourself.") in report_text(report)
    # the student's own functions may call each other
    assert adjoint.check("adjoint_dot", solutions["adjoint_dot"]).full_marks


def test_a_list_of_lists_is_accepted_and_an_input_changed_in_place_does_not_matter(references):
    log = references["01_exp_log"]["log_se3"]

    def log_se3(E):
        phi = log(E)
        E[:] = 0.0  # vandalises its input: the grader passed a copy
        return phi.tolist()

    assert exp_log.check("log_se3", log_se3).full_marks


def test_prints_of_a_submission_stay_out_of_the_report(references, capfd):
    exp = references["01_exp_log"]["exp_se3"]

    def exp_se3(phi):
        print("debugging", phi)
        return exp(phi)

    assert exp_log.check("exp_se3", exp_se3).full_marks
    assert "debugging" not in capfd.readouterr().out


def test_the_checks_see_the_same_inputs_every_time_and_other_ones_at_another_seed():
    def exp_se3(phi):
        raise ValueError(f"phi = {np.round(phi, 6).tolist()}")

    first = [r.message for r in exp_log.check("exp_se3", exp_se3).results]
    again = [r.message for r in exp_log.check("exp_se3", exp_se3).results]
    graded = [r.message for r in exp_log.check("exp_se3", exp_se3, seed=1).results]
    assert first == again
    assert first[0] == graded[0]  # the zero twist is the zero twist
    assert first[3] != graded[3]  # general twists: other random ones


def test_a_check_cell_names_an_unknown_check_or_function():
    with pytest.raises(ValueError, match=r"exp_se3 has no check 'nope'; its checks are \['zero'"):
        exp_log.ASSIGNMENT.find("exp_se3", "nope")
    with pytest.raises(ValueError, match="has no function 'expm'"):
        exp_log.check("expm", None)


def test_a_check_cell_run_before_its_answer_cell_says_so_in_a_sentence():
    report = exp_log.check("exp_se3")  # no exp_se3 in this module's globals: the cell above was not run
    assert str(report).splitlines() == [
        "exp_se3: 0 of 6 points",
        "  every check: exp_se3 is not defined: run the cell that defines it (and check",
        "    that it runs without a syntax error)."]


def test_the_finite_difference_check_gives_credit_per_direction():
    report = adjoint.check("adjoint_dot", ADJOINT_MUTANTS["adjoint_dot_no_R_nu"][1])
    fd = report.results[-1]
    assert fd.title.startswith("against finite differences")
    assert (fd.points, fd.max_points, fd.status) == (0.5, 1.0, "partial")
    assert "The terms of nu are wrong." in fd.message


def test_a_wrong_half_turn_is_judged_by_the_round_trip_and_either_axis_sign_is_right(references):
    log = references["01_exp_log"]["log_se3"]

    def log_se3(E):  # the other logarithm at angle pi: -pi n, with its own linear part
        phi = log(E)
        if np.isclose(np.linalg.norm(phi[:3]), np.pi):
            w = -phi[:3]
            W = lie.brac(w)
            phi = np.concatenate([w, (np.eye(3) - W / 2 + W @ W / np.pi**2) @ E[:3, 3]])
        return phi

    result = exp_log.check("log_se3", log_se3).results
    assert [r.full_marks for r in result if r.title.startswith("half turns")] == [True]


def test_the_instructors_guide_shows_a_report_as_the_grader_prints_it():
    readme = README.read_text(encoding="utf-8")
    report = str(adjoint.check("adjoint", ADJOINT_MUTANTS["adjoint_R_p"][1]))
    assert f"```text\n{report}\n```" in readme


def test_the_instructors_table_gives_each_assignment_its_functions_points_and_checks():
    readme = README.read_text(encoding="utf-8")
    rows = {}
    for line in readme.splitlines():
        cells = [c.strip() for c in line.strip("|").split("|")]
        if len(cells) == 5 and cells[0].endswith(".ipynb`"):
            rows[cells[0].strip("`").split("/")[1].removesuffix(".ipynb")] = cells
    assert set(rows) == set(ASSIGNMENTS), "one row per assignment"
    for name, (_, _, writes, points, checks) in rows.items():
        functions = ASSIGNMENTS[name].functions
        assert [f"`{f}`" in writes for f in functions] == [True] * len(functions), name
        assert points == " + ".join(f"{ASSIGNMENTS[name].points(f):g}" for f in functions), name
        counts = [sum(c.function == f for c in ASSIGNMENTS[name].checks) for f in functions]
        assert checks == " + ".join(map(str, counts)), name
