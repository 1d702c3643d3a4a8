"""Graders of the classroom assignments: checks that say in words what is wrong.

Each assignment of ``exercises/`` has a module here holding its checks
(:class:`~redmax_edu.exercises.core.Assignment`): ``exp_log`` (§1.3), ``adjoint`` (§1.5),
``spatial_inertia`` (§1.7), ``force_derivatives`` (§1.9), ``kkt_step`` (§1.10),
``poses_points`` (§1.1, §1.2, §1.4), ``step_contact`` (§1.8, §1.11-1.13),
``universal_joint`` (§2.4), ``reduced_jacobian`` (§2.2), ``forward_dynamics`` (§2.3),
``joint_types`` (§2.4.8, §2.4.9, §2.5), ``nodes_hybrid_friction`` (§2.7, §2.9, §2.11),
``jacobian_products`` (§2.10) and ``recursive`` (§2.12, with :mod:`~redmax_edu.exercises.chains`,
the models they are graded on), ``jacobian_derivative`` (§3.1), ``joint_derivative`` (§3.2),
``mass_matrix_derivative`` (§3.3), ``bdf1_newton`` (§3.4), ``adjoint_gradient`` (§3.5),
``lagrangian_arm`` (the companion chapter), ``discrete_euler_lagrange`` (chapter 5).
The same checks serve three readers:

* the student, in the "check your answer" cell after each exercise:
  ``exp_log.check("exp_se3")`` prints a :class:`~redmax_edu.exercises.core.Report`;
* the autograder (:mod:`~redmax_edu.exercises.remote`), which runs a submitted notebook in a
  process of its own and the checks in its own process, at a secret seed;
* the tests, which give every check the reference solution and its mutants.

The pieces, one idea each: :mod:`~redmax_edu.exercises.core` (checks, results, reports),
:mod:`~redmax_edu.exercises.sandbox` (a child process per check, with a time limit),
:mod:`~redmax_edu.exercises.tracing` (which library functions the student's code calls; an
assignment's allow-list), :mod:`~redmax_edu.exercises.calls` (one guarded call of the
student's function, its library calls judged, its output's type, shape and NaN checked),
:mod:`~redmax_edu.exercises.inputs` (the random poses and twists of the Part 1 graders, named in
words), :mod:`~redmax_edu.exercises.compare` (naming the mistake: candidate wrong answers, constant
factors, wrong blocks, asymmetry, finite-difference directions),
:mod:`~redmax_edu.exercises.remote` (the trusted grading of a notebook) and
:mod:`~redmax_edu.exercises.gradescope` (the autograder's entry point on Gradescope).

Nothing here needs otter-grader: the student notebooks run with the library alone.
"""

from . import (
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
from .core import (
           Assignment,
           Check,
           CheckResult,
           Report,
           Unanswered,
           Verdict,
           run_check,
)
from .sandbox import TIME_LIMIT

#: Every assignment, by name (the source notebook's file name in exercises/).
ASSIGNMENTS = {module.ASSIGNMENT.name: module.ASSIGNMENT
               for module in (exp_log, adjoint, force_derivatives, kkt_step, spatial_inertia,  # Part 1
                              poses_points, step_contact,
                              universal_joint, reduced_jacobian, forward_dynamics, recursive,  # Part 2
                              jacobian_products, joint_types, nodes_hybrid_friction,
                              joint_derivative, bdf1_newton, adjoint_gradient, jacobian_derivative,  # Part 3
                              mass_matrix_derivative,
                              lagrangian_arm,  # the companion chapter
                              discrete_euler_lagrange)}  # chapter 5

#: The functions outside the library that some assignment forbids (``scipy.linalg.expm``): the
#: trusted grading traces them too (:class:`~redmax_edu.exercises.remote.Zygote`).
WATCHED = sorted({name for a in ASSIGNMENTS.values() for name in a.policy.forbidden_outside})

__all__ = ["ASSIGNMENTS", "WATCHED", "Assignment", "Check", "CheckResult", "Report", "TIME_LIMIT",
           "Unanswered", "Verdict", "adjoint", "adjoint_gradient", "bdf1_newton",
           "discrete_euler_lagrange", "exp_log", "force_derivatives", "forward_dynamics",
           "jacobian_derivative", "jacobian_products", "joint_derivative", "joint_types", "kkt_step",
           "lagrangian_arm", "mass_matrix_derivative", "nodes_hybrid_friction", "poses_points", "recursive",
           "reduced_jacobian", "run_check", "spatial_inertia", "step_contact", "universal_joint"]
