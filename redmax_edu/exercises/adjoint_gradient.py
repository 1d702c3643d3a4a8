"""Grader of the assignment "The adjoint gradient of a BDF1 run" (§3.5, Eq. 3.84-3.95).

A BDF1 run in positions only solves one equation ``g_i(q_i, q_(i-1), q_(i-2); p) = 0`` per
state i = 1..N (the velocity ``qdot_(i-1) = (q_(i-1) - q_(i-2)) / h`` brings in two earlier
states), so ``Hbar = dgbar/dqbar`` is block lower triangular with three block diagonals:
``H[i] = dg_i/dq_i``, ``A[i] = dg_i/dq_(i-1)`` and ``B[i] = dg_i/dq_(i-2)`` (Eq. 3.92). Given
those blocks as arrays indexed by the state (entries that do not exist are zero), the students
write:

* ``adjoint_back_solve(H, A, B, y)`` (N + 1, nq): the adjoint variables, ``Hbar^T z = y`` solved
  from the last state backwards (Eq. 3.95),
  ``z_i = H_i^-T (y_i - A_(i+1)^T z_(i+1) - B_(i+2)^T z_(i+2))``, with ``z_0 = 0``;
* ``initial_state_gradient(z, y, A, B)`` (nq,): ``dPsi/dq_0 = y_0 - A_1^T z_1 - B_2^T z_2``;
* ``parameter_gradient(z, dg_dp, dpsi_dp)`` (np,): ``dPsi/dp = dPsi/dp|_qbar - sum_i (dg_i/dp)^T z_i``
  (Eq. 3.89-3.90).

The checks use random blocks (compared with a dense solve of ``Hbar^T``) and the blocks of a
real BDF1 run of a chain (:func:`redmax_edu.adjoint.simulate_run`, the objective
:class:`~redmax_edu.objectives.Tracking`, two masses and a length as parameters), compared with
:func:`redmax_edu.adjoint.adjoint_gradient` and with central differences of the whole
simulation in the initial position and in the parameters. They name the
usual slips: ``H`` where ``H^T`` belongs, a dropped off-diagonal block, the loop running
forward, the sign of the coupling or of the ``z^T dg/dp`` term, the blocks off by one step.

Examples
--------
>>> from redmax_edu import adjoint
>>> def adjoint_back_solve(H, A, B, y):
...     return adjoint.assemble_hbar(H)
>>> print(check("adjoint_back_solve", adjoint_back_solve).results[0].message)
adjoint_back_solve calls adjoint.assemble_hbar, which this assignment does not let you call (it lets
you call no function of the library): write it yourself.

Taught in book/03_differentiable/05_adjoint.
"""

import numpy as np

from .. import adjoint as library
from .. import implicit
from ..checks import numerical_derivative
from ..objectives import Tracking
from ..parameters import parameter_values, with_parameters
from .calls import call
from .chains import describe_model, random_chain
from .compare import finite_difference_verdict, judge_cases
from .core import Assignment, entry_points

ASSIGNMENT = Assignment(
    "03_adjoint_gradient", "The adjoint gradient of a BDF1 run",
    allowed=[],
)
check_of = ASSIGNMENT.check
check = entry_points(ASSIGNMENT)

#: The parameters of the runs: two masses and a length (np = 3, unlike nq, so that a transpose shows).
PARAMETERS = (("mass", "b0"), ("mass", "b1"), ("length", "b2"))


# --- the inputs: random blocks, or the blocks of a real run --------------------------------------


def random_blocks(rng, N=5, nq=3):
    """``H, A, B`` (N + 1, nq, nq) with nonsymmetric, well-conditioned ``H``, and ``y`` (N + 1, nq)."""
    H, A, B = (np.zeros((N + 1, nq, nq)) for _ in range(3))
    for i in range(1, N + 1):
        H[i] = 2 * np.eye(nq) + 0.5 * rng.standard_normal((nq, nq))
        A[i] = 0.5 * rng.standard_normal((nq, nq))
        if i >= 2:
            B[i] = 0.5 * rng.standard_normal((nq, nq))
    return H, A, B, rng.standard_normal((N + 1, nq))


def _blocks_label(H):
    N, nq = H.shape[0] - 1, H.shape[1]
    return f"random blocks of N = {N} states with nq = {nq}"


class Run:
    """A BDF1 run of a random chain, its blocks, a tracking objective and the library's adjoint gradient."""

    def __init__(self, rng, N=4, h=0.01):
        self.model = random_chain(rng, 3)
        nq = self.model.nq
        self.q0, self.qdot0, self.h = rng.uniform(-1.0, 1.0, nq), rng.standard_normal(nq), h
        self.run = library.simulate_run(self.model, self.q0, self.qdot0, h, N, scheme="bdf1",
                                        reparameterize=False)
        self.observed = self.run.q + 0.1 * rng.standard_normal(self.run.q.shape)
        self.objective = Tracking(self.observed)
        self.gradient = library.adjoint_gradient(self.run, self.objective, PARAMETERS)
        self.H, self.A, self.B = (np.zeros((N + 1, nq, nq)) for _ in range(3))
        for solve in self.run.solves:
            i, r = solve.stencil.index, solve.residual
            self.H[i] = r.H
            self.A[i] = r.dg_dq_j(i - 1)
            if i >= 2:
                self.B[i] = r.dg_dq_j(i - 2)
        self.y = self.run.q - self.observed  # dPsi/dq_i of the tracking objective (weight 1)
        self.label = (f"the blocks of a BDF1 run of {describe_model(self.model)}, N = {N} steps of "
                      f"h = {h:g} s, with a tracking objective")

    def dg_dp(self):
        """``dg_i/dp`` (N + 1, nq, np) by central differences of the library's residual in the parameters."""
        values = parameter_values(self.model, PARAMETERS)
        out = np.zeros((len(self.run.q), self.model.nq, len(PARAMETERS)))
        for solve in self.run.solves:
            s = solve.stencil

            def g(v, s=s):
                model = with_parameters(self.model, PARAMETERS, v)
                return implicit.step_residual(model, s, self.run.q[s.index], self.run.q, v=self.qdot0).g

            out[s.index] = numerical_derivative(g, values)
        return out

    def psi(self, q0=None, values=None):
        """The objective of the run started at ``q0`` (default: the same), of the model with ``PARAMETERS``
        set to ``values`` (default: its own)."""
        model = self.model if values is None else with_parameters(self.model, PARAMETERS, values)
        q0 = self.q0 if q0 is None else q0
        run = library.simulate_run(model, q0, self.qdot0, self.h, len(self.run.solves), scheme="bdf1",
                                   reparameterize=False, newton_tol=1e-13)
        return library.adjoint_gradient(run, self.objective).value


# --- adjoint_back_solve (Eq. 3.95) -----------------------------------------------------------------


def back_solve(H, A, B, y, transpose=True, use_A=True, use_B=True, sign=-1.0, shift=0):
    """The backward loop, right (the defaults) or with one of the usual slips."""
    N = len(H) - 1
    z = np.zeros_like(y, dtype=float)
    for i in range(N, 0, -1):
        rhs = y[i].astype(float).copy()
        if use_A and i + 1 <= N:
            rhs += sign * A[i + 1 - shift].T @ z[i + 1]
        if use_B and i + 2 <= N:
            rhs += sign * B[i + 2 - shift].T @ z[i + 2]
        z[i] = np.linalg.solve(H[i].T if transpose else H[i], rhs)
    return z


def forward_loop(H, A, B, y):
    """The recursion run forward: ``z_i = H_i^-T (y_i - A_i^T z_(i-1) - B_i^T z_(i-2))``."""
    z = np.zeros_like(y, dtype=float)
    for i in range(1, len(H)):
        rhs = y[i] - A[i].T @ z[i - 1] - (B[i].T @ z[i - 2] if i >= 2 else 0)
        z[i] = np.linalg.solve(H[i].T, rhs)
    return z


def dense_back_solve(H, A, B, y):
    """``z`` by one dense solve of ``Hbar^T z = y`` (the reference of the random checks)."""
    N, nq = len(H) - 1, H.shape[1]
    Hbar = np.zeros((N * nq, N * nq))
    for i in range(1, N + 1):
        rows = slice((i - 1) * nq, i * nq)
        Hbar[rows, rows] = H[i]
        if i >= 2:
            Hbar[rows, (i - 2) * nq:(i - 1) * nq] = A[i]
        if i >= 3:
            Hbar[rows, (i - 3) * nq:(i - 2) * nq] = B[i]
    z = np.zeros_like(y, dtype=float)
    z[1:] = np.linalg.solve(Hbar.T, y[1:].ravel()).reshape(N, nq)
    return z


def back_solve_mistakes(H, A, B, y):
    """The usual wrong adjoint variables, with what went wrong."""
    return [
        ("it solves with H_i where H_i^T belongs: Hbar^T z = y, so every block enters transposed, the "
         "diagonal ones too.", lambda: back_solve(H, A, B, y, transpose=False)),
        ("the block B (dg_(i+2)/dq_i, two states back) is dropped: through the velocity "
         "qdot_(i+1) = (q_(i+1) - q_i) / h, state i enters g_(i+2) too.",
         lambda: back_solve(H, A, B, y, use_B=False)),
        ("the block A (dg_(i+1)/dq_i, one state back) is dropped.",
         lambda: back_solve(H, A, B, y, use_A=False)),
        ("the later states' z are not used: the loop must run backwards, from the last state (z_N first), "
         "so that z_(i+1) and z_(i+2) are known when z_i is solved for.",
         lambda: back_solve(H, A, B, y, use_A=False, use_B=False)),
        ("the loop runs forward, z_i from z_(i-1) and z_(i-2) with the blocks of row i: Hbar^T is upper "
         "triangular, so the back-substitution starts at the last state and uses the blocks of the "
         "later rows, A_(i+1)^T z_(i+1) and B_(i+2)^T z_(i+2).", lambda: forward_loop(H, A, B, y)),
        ("the coupling terms have the wrong sign: z_i = H_i^-T (y_i - A_(i+1)^T z_(i+1) - B_(i+2)^T "
         "z_(i+2)).", lambda: back_solve(H, A, B, y, sign=1.0)),
        ("off by one step: the block that couples z_(i+1) back to state i is A_(i+1) = dg_(i+1)/dq_i "
         "(from the later state's row), not A_i; likewise B_(i+2).", lambda: back_solve(H, A, B, y, shift=1)),
    ]


def _back_solve_cases(fn, cases, reference=None, **kwargs):
    y = cases[0][0][3]
    return judge_cases(fn, cases, name="adjoint_back_solve", shape=y.shape,
                       reference=reference or dense_back_solve, mistakes=back_solve_mistakes,
                       what="z", parts={"z_0 (it is zero: state 0 is given, not solved for)": np.s_[0],
                                        "the last state's z_N": np.s_[-1],
                                        "the other states' z": np.s_[1:-1]}, **kwargs)


@check_of("adjoint_back_solve", "one_step", "one step (z_1 = H_1^-T y_1)", 1)
def back_solve_one_step(fn, rng):
    H, A, B, y = random_blocks(rng, N=1)
    return _back_solve_cases(fn, [((H, A, B, y), _blocks_label(H))])


@check_of("adjoint_back_solve", "random", "random blocks", 2)
def back_solve_random(fn, rng):
    cases = []
    for _ in range(3):
        H, A, B, y = random_blocks(rng)
        cases.append(((H, A, B, y), _blocks_label(H)))
    return _back_solve_cases(fn, cases)


@check_of("adjoint_back_solve", "run", "the blocks of a BDF1 run", 2)
def back_solve_run(fn, rng):
    r = Run(rng)
    return _back_solve_cases(fn, [((r.H, r.A, r.B, r.y), r.label)], reference=lambda *a: r.gradient.z)


# --- initial_state_gradient ------------------------------------------------------------------------


def initial_gradient(z, y, A, B):
    """``dPsi/dq_0 = y_0 - A_1^T z_1 - B_2^T z_2``."""
    out = y[0] - A[1].T @ z[1]
    return out - B[2].T @ z[2] if len(z) > 2 else out


def initial_mistakes(z, y, A, B):
    """The usual wrong initial-state gradients, with what went wrong."""
    two = len(z) > 2
    return [
        ("the z terms have the wrong sign: dPsi/dq_0 = y_0 - A_1^T z_1 - B_2^T z_2 (Eq. 3.90).",
         lambda: y[0] + A[1].T @ z[1] + (B[2].T @ z[2] if two else 0)),
        ("the term B_2^T z_2 is missing: q_0 enters g_2 through qdot_1 = (q_1 - q_0) / h.",
         lambda: y[0] - A[1].T @ z[1]),
        ("the blocks are not transposed: it is (dg_i/dq_0)^T z_i, a row of z^T dgbar/dq_0.",
         lambda: y[0] - A[1] @ z[1] - (B[2] @ z[2] if two else 0)),
        ("it is y_0 alone: q_0 also changes every later state, which the terms -A_1^T z_1 - B_2^T z_2 "
         "carry.", lambda: y[0]),
        ("off by one step: the blocks of q_0 are A_1 = dg_1/dq_0 and B_2 = dg_2/dq_0, with z_1 and z_2.",
         lambda: y[0] - A[2].T @ z[2] - (B[3].T @ z[3] if len(z) > 3 else 0)),
    ]


def _initial_cases(fn, cases, reference=None):
    y = cases[0][0][1]
    return judge_cases(fn, cases, name="initial_state_gradient", shape=y.shape[1:],
                       reference=reference or initial_gradient, mistakes=initial_mistakes, what="dPsi/dq_0")


@check_of("initial_state_gradient", "random", "random blocks", 1)
def initial_random(fn, rng):
    cases = []
    for _ in range(2):
        H, A, B, y = random_blocks(rng)
        cases.append(((dense_back_solve(H, A, B, y), y, A, B), _blocks_label(H)))
    return _initial_cases(fn, cases)


@check_of("initial_state_gradient", "run", "a BDF1 run, against the library's adjoint", 1)
def initial_run(fn, rng):
    r = Run(rng)
    return _initial_cases(fn, [((r.gradient.z, r.y, r.A, r.B), r.label)], reference=lambda *a: r.gradient.q0)


@check_of("initial_state_gradient", "finite_differences",
          "against finite differences of the whole simulation, one coordinate at a time", 1)
def initial_finite_differences(fn, rng):
    r = Run(rng)
    got = call(fn, r.gradient.z, r.y, r.A, r.B, name="initial_state_gradient", shape=(r.model.nq,),
               label=r.label)
    numeric = numerical_derivative(r.psi, r.q0)
    names = [f"q_0[{k}]" for k in range(r.model.nq)]
    return finite_difference_verdict(
        got[None, :], numeric[None, :], names, f"initial_state_gradient({r.label}) differs from the central "
        "difference of the objective, the whole BDF1 run repeated from q_0 moved by +-eps e_k,", tol=1e-5)


# --- parameter_gradient (Eq. 3.89-3.90) ------------------------------------------------------------


def parameter_gradient(z, dg_dp, dpsi_dp):
    """``dPsi/dp = dPsi/dp|_qbar - sum_i (dg_i/dp)^T z_i``."""
    return dpsi_dp - np.einsum("ikp,ik->p", dg_dp, z)


def parameter_mistakes(z, dg_dp, dpsi_dp):
    """The usual wrong parameter gradients, with what went wrong."""
    term = np.einsum("ikp,ik->p", dg_dp, z)
    shifted = np.einsum("ikp,ik->p", dg_dp[:-1], z[1:])
    return [
        ("the term z^T dg/dp has the wrong sign: dPsi/dp = dPsi/dp|_qbar - z^T dgbar/dp (Eq. 3.90).",
         lambda: dpsi_dp + term),
        ("the explicit term dPsi/dp|_qbar is missing: the objective may depend on p directly.",
         lambda: -term),
        ("it is dPsi/dp|_qbar alone: p also moves every state, which -z^T dgbar/dp carries.",
         lambda: dpsi_dp),
        ("off by one step: z_i pairs with dg_i/dp, the derivative of the equation of the same state.",
         lambda: dpsi_dp - shifted),
        ("only the last state's term is there: sum (dg_i/dp)^T z_i over every state i.",
         lambda: dpsi_dp - dg_dp[-1].T @ z[-1]),
    ]


def _parameter_label(z, dg_dp, what):
    return f"{what}, N = {len(z) - 1}, nq = {z.shape[1]}, np = {dg_dp.shape[2]}"


def _parameter_cases(fn, cases, reference=None):
    n_p = cases[0][0][2].shape[0]
    return judge_cases(fn, cases, name="parameter_gradient", shape=(n_p,),
                       reference=reference or parameter_gradient, mistakes=parameter_mistakes, what="dPsi/dp")


@check_of("parameter_gradient", "random", "random inputs", 2)
def parameter_random(fn, rng):
    cases = []
    N, nq, n_p = 5, 3, 2
    for _ in range(3):
        z, dg_dp = rng.standard_normal((N + 1, nq)), rng.standard_normal((N + 1, nq, n_p))
        z[0], dg_dp[0] = 0.0, 0.0
        cases.append(((z, dg_dp, rng.standard_normal(n_p)), _parameter_label(z, dg_dp, "random z and dg/dp")))
    return _parameter_cases(fn, cases)


@check_of("parameter_gradient", "run", "a BDF1 run, two masses and a length", 1)
def parameter_run(fn, rng):
    r = Run(rng)
    dg_dp = r.dg_dp()
    label = _parameter_label(r.gradient.z, dg_dp, r.label + " (dg/dp by central differences)")
    return judge_cases(fn, [((r.gradient.z, dg_dp, np.zeros(len(PARAMETERS))), label)],
                       name="parameter_gradient", shape=(len(PARAMETERS),),
                       reference=lambda *a: r.gradient.params, mistakes=parameter_mistakes, what="dPsi/dp",
                       tol=1e-6)


@check_of("parameter_gradient", "finite_differences",
          "against finite differences of the whole simulation, one parameter at a time", 1)
def parameter_finite_differences(fn, rng):
    r = Run(rng)
    dg_dp = r.dg_dp()
    label = _parameter_label(r.gradient.z, dg_dp, r.label + " (dg/dp by central differences)")
    got = call(fn, r.gradient.z, dg_dp, np.zeros(len(PARAMETERS)), name="parameter_gradient",
               shape=(len(PARAMETERS),), label=label)
    numeric = numerical_derivative(lambda v: r.psi(values=v), parameter_values(r.model, PARAMETERS))
    names = [f"the {kind} of body {body}" for kind, body in PARAMETERS]
    return finite_difference_verdict(
        got[None, :], numeric[None, :], names, f"parameter_gradient({label}) differs from the central "
        "difference of the objective, the whole BDF1 run repeated with the parameter moved by +-eps,",
        tol=1e-5)
