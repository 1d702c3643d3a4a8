"""Fully implicit integrators of RedMax: BDF1, SDIRK2 and BDF2 solved by Newton's method (§3.4).

Every step of the three schemes, and each of the two stages of an SDIRK2 step, solves one
nonlinear equation for a new position ``q_new`` (Eq. 3.64, 3.69, 3.74, 3.80). Written in
positions only (the form the adjoint of §3.5 needs, Eq. 3.91-3.103), all of them share one shape,

    g(q_new) = M(q_new) (q_new - sum_j a_j q_j - a_v h v) - c h^2 (f(q_new, qdot_new) + tau),
    qdot_new = (b_new q_new + sum_j b_j q_j) / h + b_v v,

in which the ``q_j`` are earlier positions of the run, ``v`` is the velocity given at the run's
*anchor* state (the initial velocity ``qdot0``, or the state where the run restarted after a
chart switch), ``f`` is the total force of Eq. (3.58) and ``tau`` the applied joint forces at
the new time. A :class:`Stencil` holds the numbers ``c``, ``a_j``, ``a_v``, ``b_new``, ``b_j``,
``b_v`` of one solve; :func:`scheme_stencils` gives those of a scheme, startup steps included.

**The API the adjoint builds on**

States are numbered in the order they are solved for: 0 is the initial state, then every
solve adds one (for SDIRK2 and the first step of BDF2 the stage ``q^(alpha)`` comes before
``q^(1)``). :func:`step_residual` gives one solve's residual ``g``, its Jacobian ``H`` and the
blocks ``dg_dq[j]``, ``dg_dv``, ``dg_dtau`` of Eq. (3.65), (3.69), (3.74), (3.80).
:func:`redmax_edu.integrators.simulate` with ``method="bdf1" | "sdirk2" | "bdf2"`` returns a
Trajectory whose ``implicit`` attribute is an :class:`ImplicitRun`: the positions of every
state (``q``, stages included), the anchors' velocities, and one :class:`NewtonSolve` per
solve with its stencil, its Newton history, the LU factors of ``H`` at the solution (``lu``,
for ``scipy.linalg.lu_solve``), the residual record there and, with constraints, the active
rows, their multipliers and whether the active set changed in the step. With per-step controls
(``tau`` of shape (n_steps, nq)) row ``stencil.step`` is the ``tau`` of a solve.

**The schemes (alpha = (2 - sqrt 2) / 2)**

``bdf1``
    ``q1 = q0 + h qdot1`` with ``qdot1 = qdot0 + h M^-1 F1`` (Eq. 3.60-3.65).
``sdirk2``
    two stages per step (Eq. 3.66-3.75): ``q_a = q0 + alpha h qdot_a``, then
    ``q1 = q0 + (1 - alpha) h qdot_a + alpha h qdot1``; L-stable, second order.
``bdf2``
    ``q1 = 4/3 q0 - 1/3 q_-1 + 2/3 h qdot1`` (Eq. 3.76-3.81), started by one SDIRK2 step;
    its first two steps use the SDIRK2 velocity ``qdot^(1)`` (Eq. 3.101-3.102).

Each scheme's velocity is a linear combination of positions (Eq. 3.61, 3.68, 3.72, 3.78); the
stencils are built by substituting those combinations, so the startup cases of Eq. (3.92) and
(3.101)-(3.103) come out of the same code as the steady ones.

**Newton's method (Algorithm 12)**

From the predictor ``q_n + theta h qdot_n`` (theta the fraction of the step the solve spans),
Newton steps ``dq = -H^-1 g`` with a backtracking line search: the step length halves (down to
2^-10) until ``|g|`` falls by at least ``1e-4`` of the step length (Armijo on ``|g|_2``). The
residual is measured as the velocity error it amounts to, ``|g|_inf / (h max_i M_ii)`` (``g`` is
a mass matrix times a position change, and each scheme divides position changes by about ``h``
to get its velocity, so a position-level tolerance would let the velocity error grow as the step
shrinks), and the solve has converged when it is at most ``newton_tol`` (default 1e-10 rad/s or
m/s), or when the Newton step has fallen to round-off (``16 eps (1 + |q|_inf)``) with the
residual within 1e3 of the tolerance (if no step length passes the Armijo test, the trial with
the smallest residual is taken). A solve that has not converged after ``max_newton``
iterations raises :class:`~redmax_edu.simulation.SimulationError` with the time, the step and
the residual.

**Constraints (§2.8-2.9)**

Equalities with a position error (loop closures, couplings, prescribed joints, node
attachments) are held at the position level: the solve is the KKT system
``g(q) - G^T mu = 0``, ``e(q, t_new) = 0`` with ``G = de/dq`` the constraint rows and
``mu = c h^2 lambda`` the scaled multipliers, by Newton on ``[H -G^T; G 0]``. A constraint
known only at the velocity level (a prescribed twist, a prescribed joint velocity) enters as
the linear condition ``G qdot_new = w(t_new)``, scaled by ``h / b_new`` so that its Jacobian is
``G`` too. The derivatives of the rows themselves (``dG/dq``) are not available, so with
constraints the Newton matrix omits ``d(G^T mu)/dq`` and convergence is linear, at a rate that
shrinks with ``h^2 |lambda|``. Inequalities (joint limits, frictionless floor contacts) use an
active set within the step: a violated row is added, a row whose multiplier pulls is dropped,
and the solve repeats; ``NewtonSolve.active_set_changed`` records whether the set that ends
the step differs from the one that started it (differentiating through such a step is not
meaningful). Friction is refused: use ``method="euler"``.

**Charts**

As the explicit integrators do, the state goes through ``model.reparameterize`` before every
step. When a chart switches, the history (earlier positions, in the old chart) no longer
matches the new coordinates; the run then *restarts*: the reparameterised state becomes a new
anchor (a new state number, its velocity the scheme's velocity mapped to the new chart), and
BDF2 takes one SDIRK2 step from it, as at the start. A restart keeps the order of the scheme
(SDIRK2 is second order) and each stretch between restarts remains a positions-only run;
mapping the history into the new chart instead would need the chart change at earlier states,
far from where it was decided. ``ImplicitRun.restarts`` lists the anchors. A joint at a
singular chart (with ``reparameterize=False``) or a singular Newton matrix raises a
``ValueError`` naming the joint.

**Where the writeup (as transcribed) reads differently**

* Eq. (3.98): the damping term of ``dg^(1)/dq^(alpha)`` is ``(1 - alpha) h D``, not
  ``(1 - alpha)/alpha h D``: ``dqdot^(1)/dq^(alpha) = -(1 - alpha)/(alpha^2 h)`` times
  ``-alpha^2 h^2 D``. The other blocks of Eq. (3.92), (3.100) and (3.103) agree with the
  stencils (tests/unit/test_implicit.py checks each against the typeset coefficients and all of
  them against central differences).
* Eq. (3.92) and (3.103) leave out the blocks of the initial state, ``dg/dq^(0)`` and
  ``dg/dqdot^(0)``, constants of the forward run but what a gradient with respect to the
  initial state needs: they are ``dg_dq[0]`` and ``dg_dv`` here.

Taught in book/03_differentiable/04_implicit_integrators.
"""

from dataclasses import dataclass

import numpy as np
from scipy.linalg import lu_factor

from ._validate import as_real
from .constrained import constraint_rows
from .derivatives import dynamics_derivatives_unchecked
from .simulation import (
    DEFAULT_MAX_NEWTON,
    DEFAULT_NEWTON_TOL,
    Recorder,
    SimulationError,
    advance,
    check_finite,
    fixed_steps,
    positive,
    progress_bar,
    reparameterize_state,
    whole_number,
)
from .singularity import SingularMassMatrixError, explain_singular, singular_joints_unchecked

__all__ = ["ALPHA", "SCHEMES", "Stencil", "StepResidual", "NewtonSolve", "ImplicitRun", "scheme_stencils",
           "step_residual", "DEFAULT_NEWTON_TOL", "DEFAULT_MAX_NEWTON"]

#: The SDIRK2 coefficient ``(2 - sqrt 2) / 2`` (Eq. 3.66).
ALPHA = (2.0 - np.sqrt(2.0)) / 2.0

#: The implicit schemes :func:`redmax_edu.integrators.simulate` accepts.
SCHEMES = ("bdf1", "sdirk2", "bdf2")

#: Line search: Armijo constant and smallest step length.
_ARMIJO = 1e-4
_MIN_STEP_LENGTH = 2.0 ** -10

#: A Newton step this small relative to ``1 + |q|_inf`` is round-off: the solve stops there (if
#: the residual is within 1e3 of the tolerance, which round-off in ``g`` can keep it from reaching).
_ROUNDOFF = 16 * np.finfo(float).eps

#: Active-set rounds per step.
_MAX_ACTIVE_ROUNDS = 10


@dataclass(frozen=True, eq=False)
class Stencil:
    """The numbers of one solve's equation in positions only (see the module docstring).

    ``g = M (q_new - sum_j a[j] q_j - a_v h v) - c h^2 (f(q_new, qdot_new) + tau)`` with
    ``qdot_new = (b_new q_new + sum_j b[j] q_j) / h + b_v v``.

    Attributes
    ----------
    index : int
        The state this solve gives (states numbered in solve order, 0 the initial state).
    step : int
        The integrator step it belongs to (0-based; both SDIRK2 stages of a step share it).
    t : float
        The time of the new state (s), where ``tau`` and the constraints are evaluated.
    h : float
        The step size (s) of the scheme (a stage uses ``alpha h`` through the coefficients).
    c : float
        Coefficient of ``h^2 (f + tau)``: 1 (BDF1), alpha^2 (SDIRK2), 4/9 (BDF2).
    a, b : dict of int to float
        Coefficients of the earlier positions in the inertial term and in ``h qdot_new``.
    b_new : float
        Coefficient of ``q_new`` in ``h qdot_new``.
    a_v, b_v : float
        Coefficients of the anchor velocity ``v`` (zero when it does not enter).
    anchor : int
        The state whose given velocity ``v`` is.
    scheme : str
        ``"bdf1"``, ``"sdirk2"`` or ``"bdf2"``.
    stage : str
        ``"step"``, or ``"alpha"`` / ``"final"`` for the two SDIRK2 stages.
    """

    index: int
    step: int
    t: float
    h: float
    c: float
    a: dict
    b: dict
    b_new: float
    a_v: float
    b_v: float
    anchor: int
    scheme: str
    stage: str = "step"

    @property
    def history(self):
        """The earlier states the equation depends on, in increasing order."""
        return tuple(sorted(set(self.a) | set(self.b)))

    @property
    def uses_velocity(self):
        """Whether the anchor velocity ``v`` enters the equation."""
        return self.a_v != 0.0 or self.b_v != 0.0

    def velocity(self, q_new, positions, v=None):
        """``qdot_new`` of this solve (nq,) from the new and earlier positions and ``v``."""
        out = self.b_new * q_new
        for j, bj in self.b.items():
            out = out + bj * positions[j]
        out = out / self.h
        return out + self.b_v * v if self.b_v else out

    def inertial(self, q_new, positions, v=None):
        """``q_new - sum_j a_j q_j - a_v h v`` (nq,), the vector ``M`` multiplies."""
        out = q_new.copy()
        for j, aj in self.a.items():
            out -= aj * positions[j]
        return out - self.a_v * self.h * v if self.a_v else out


@dataclass(frozen=True, eq=False)
class StepResidual:
    """One solve's residual at ``q_new`` and its derivatives: the blocks of the adjoint's ``H-bar``.

    Attributes
    ----------
    stencil : Stencil
    q, qdot : ndarray, shape (nq,)
        The new position and the scheme's velocity there.
    g : ndarray, shape (nq,)
        The residual (without constraint forces).
    H : ndarray, shape (nq, nq)
        ``dg/dq_new = M + dM/dq (q_new - sum_j a_j q_j - a_v h v) - c h b_new D - c h^2 K``
        (Eq. 3.65, 3.69, 3.74, 3.80).
    M, D, K : ndarray, shape (nq, nq)
        The mass matrix and ``df/dqdot``, ``df/dq`` (Eq. 3.58) at ``(q, qdot)``.
    """

    stencil: Stencil
    q: np.ndarray
    qdot: np.ndarray
    g: np.ndarray
    H: np.ndarray
    M: np.ndarray
    D: np.ndarray
    K: np.ndarray

    def dg_dq_j(self, j):
        """``dg/dq_j = -a_j M - c h b_j D`` (nq, nq) for an earlier state j (zeros if it does not enter)."""
        s = self.stencil
        return -s.a.get(j, 0.0) * self.M - s.c * s.h * s.b.get(j, 0.0) * self.D

    @property
    def dg_dq(self):
        """``{j: dg/dq_j}`` for every earlier state of the stencil (Eq. 3.92, 3.98, 3.100, 3.103)."""
        return {j: self.dg_dq_j(j) for j in self.stencil.history}

    @property
    def dg_dv(self):
        """``dg/dv = -a_v h M - c h^2 b_v D`` (nq, nq): ``dg/dqdot0`` when the anchor is the initial state."""
        s = self.stencil
        return -s.a_v * s.h * self.M - s.c * s.h * s.h * s.b_v * self.D

    @property
    def dg_dtau(self):
        """``dg/dtau = -c h^2 1`` (nq, nq)."""
        s = self.stencil
        return -s.c * s.h * s.h * np.eye(len(self.g))

    @property
    def scale(self):
        """``h max_i M_ii``: ``g`` divided by it is the velocity error it amounts to (rad/s or m/s)."""
        return self.stencil.h * float(np.max(np.abs(np.diag(self.M))))


@dataclass(frozen=True, eq=False)
class NewtonSolve:
    """One Newton solve (Algorithm 12 with a line search: a step, or an SDIRK2 stage) as recorded.

    Attributes
    ----------
    stencil : Stencil
    q, qdot : ndarray (nq,)
        The accepted position and the scheme's velocity.
    residuals : ndarray (iterations + 1,)
        The scaled residual ``|g - G^T mu|_inf / (h max M_ii)`` (and the constraint errors over
        h) at the predictor and after each iteration (rad/s or m/s).
    step_lengths : ndarray (iterations,)
        The line search's step length of each iteration (1 for a full Newton step).
    residual : StepResidual
        At the accepted position: ``g``, ``H``, ``M``, ``D``, ``K`` and the blocks.
    lu : tuple
        ``scipy.linalg.lu_factor(H)`` at the accepted position (for the adjoint's back-solve).
    tau : ndarray (nq,) or None
        The applied joint forces of the solve.
    model : Model
        The model (chart) the state is expressed in.
    G : ndarray (k, nq) or None
        With constraints: the rows held in the solve (equalities and active inequalities).
    multipliers : ndarray (k,) or None
        Their constraint forces ``lambda`` (``M qddot = f + tau + G^T lambda``).
    active : ndarray (m,) bool or None
        Which inequality rows were active at the end of the solve.
    active_set_changed : bool
        Whether they differ from the rows active when the solve started.
    """

    stencil: Stencil
    q: np.ndarray
    qdot: np.ndarray
    residuals: np.ndarray
    step_lengths: np.ndarray
    residual: StepResidual
    lu: tuple
    tau: np.ndarray | None
    model: object
    G: np.ndarray | None = None
    multipliers: np.ndarray | None = None
    active: np.ndarray | None = None
    active_set_changed: bool = False

    @property
    def iterations(self):
        """Newton iterations taken."""
        return len(self.step_lengths)


@dataclass(frozen=True, eq=False)
class ImplicitRun:
    """Everything an implicit run solved, in state order (see the module docstring).

    Attributes
    ----------
    scheme : str
    h : float
    t : ndarray, shape (n_states,)
        Time of every state (stages included): the initial state and one per solve.
    q : ndarray, shape (n_states, nq)
        Position of every state; row i in the chart of ``models[i]``.
    models : tuple of Model
    anchors : dict of int to ndarray, shape (nq,)
        The velocity given at each anchor state: ``{0: qdot0}``, plus one entry per restart.
    solves : tuple of NewtonSolve
        One per solved state, in order (``solves[k].stencil.index`` is its state).
    restarts : tuple of int
        The anchor states created by chart switches.
    """

    scheme: str
    h: float
    t: np.ndarray
    q: np.ndarray
    models: tuple
    anchors: dict
    solves: tuple
    restarts: tuple = ()

    @property
    def iterations(self):
        """Newton iterations per step, shape (n_steps,) (an SDIRK2 step counts both stages)."""
        steps = max((s.stencil.step for s in self.solves), default=-1) + 1
        out = np.zeros(steps, dtype=int)
        for s in self.solves:
            out[s.stencil.step] += s.iterations
        return out

    @property
    def active_set_changes(self):
        """The steps (0-based) in which a solve changed its active set of inequalities."""
        return tuple(sorted({s.stencil.step for s in self.solves if s.active_set_changed}))


# --- stencils --------------------------------------------------------------------------------

def _combine(*terms):
    """``sum coef * form`` of linear forms (dicts from state index, or "v", to coefficient)."""
    out = {}
    for coef, form in terms:
        for key, value in form.items():
            out[key] = out.get(key, 0.0) + coef * value
    return {k: v for k, v in out.items() if v != 0.0}


def _stencil(index, step, t, h, c, inertial, hv_new, anchor, scheme, stage):
    """A :class:`Stencil` from the forms of ``sum_j a_j q_j + a_v h v`` and of ``h qdot_new``."""
    a = {k: float(v) for k, v in inertial.items() if k != "v"}
    b = {k: float(v) for k, v in hv_new.items() if k not in ("v", index)}
    return Stencil(index=index, step=step, t=float(t), h=float(h), c=float(c), a=a, b=b,
                   b_new=float(hv_new[index]), a_v=float(inertial.get("v", 0.0)),
                   b_v=float(hv_new.get("v", 0.0)), anchor=anchor, scheme=scheme, stage=stage)


class _Stencils:
    """Builds the stencils of a run solve by solve, keeping ``h qdot`` of every state as a linear form.

    ``hv[i]`` is ``h qdot_i`` as a combination of positions (and ``"v"``, the anchor velocity
    times h). Substituting these forms into each scheme's equations gives the positions-only
    stencils (Eq. 3.91, 3.96-3.102).
    """

    def __init__(self, scheme, h, t0):
        self.scheme, self.h = scheme, h
        self.t = [t0]
        self.hv = [{"v": 1.0}]
        self.anchor = 0
        self.last = 0          # the last full-step state
        self.previous = None   # the full-step state before it (BDF2), None right after an anchor

    def restart(self, t):
        """A new anchor state at time t (its position and velocity given); returns its index."""
        index = len(self.hv)
        self.t.append(t)
        self.hv.append({"v": 1.0})
        self.anchor = self.last = index
        self.previous = None
        return index

    def _new(self, t, hv_new):
        index = len(self.hv)
        self.t.append(t)
        self.hv.append(hv_new)
        return index

    def next_step(self, step):
        """The stencils of integrator step ``step`` (one, or two for an SDIRK2 step)."""
        h, n = self.h, self.last
        t1 = self.t[n] + h
        if self.scheme == "bdf1":                                   # Eq. (3.61), (3.64)
            m = len(self.hv)
            hv = _combine((1.0, {m: 1.0}), (-1.0, {n: 1.0}))
            inertial = _combine((1.0, {n: 1.0}), (1.0, self.hv[n]))
            out = [_stencil(m, step, t1, h, 1.0, inertial, hv, self.anchor, "bdf1", "step")]
            self._new(t1, hv)
        elif self.scheme == "sdirk2" or self.previous is None:     # Eq. (3.68)-(3.74)
            A = ALPHA
            ma = len(self.hv)
            hva = _combine((1.0 / A, {ma: 1.0}), (-1.0 / A, {n: 1.0}))
            stage = _stencil(ma, step, self.t[n] + A * h, h, A * A,
                             _combine((1.0, {n: 1.0}), (A, self.hv[n])), hva, self.anchor,
                             self.scheme, "alpha")
            self._new(self.t[n] + A * h, hva)
            m = len(self.hv)
            hv = _combine((1.0 / A, {m: 1.0}), (-1.0 / A, {n: 1.0}), (-(1.0 - A) / A, hva))
            inertial = _combine((1.0, {n: 1.0}), (2 * A - 1.0, self.hv[n]), (2 * (1.0 - A), hva))
            out = [stage, _stencil(m, step, t1, h, A * A, inertial, hv, self.anchor, self.scheme, "final")]
            self._new(t1, hv)
        else:                                                       # Eq. (3.78), (3.80)
            p = self.previous
            m = len(self.hv)
            hv = _combine((1.5, {m: 1.0}), (-2.0, {n: 1.0}), (0.5, {p: 1.0}))
            inertial = _combine((4 / 3, {n: 1.0}), (-1 / 3, {p: 1.0}), (8 / 9, self.hv[n]),
                                (-2 / 9, self.hv[p]))
            out = [_stencil(m, step, t1, h, 4 / 9, inertial, hv, self.anchor, "bdf2", "step")]
            self._new(t1, hv)
        self.previous, self.last = n, len(self.hv) - 1
        return out


def scheme_stencils(scheme, h, n_steps, t0=0.0):
    """The stencils of ``n_steps`` steps of a scheme run without chart switches, in solve order.

    In positions only: BDF1 (Eq. 3.59-3.62), SDIRK2 (Eq. 3.66-3.68, 3.71-3.72), BDF2 (Eq. 3.76-3.78).

    Parameters
    ----------
    scheme : {"bdf1", "sdirk2", "bdf2"}
    h : float
        Step size (s).
    n_steps : int
    t0 : float
        Start time (s).

    Returns
    -------
    list of Stencil
        One per solve: n_steps for BDF1, 2 n_steps for SDIRK2, n_steps + 1 for BDF2 (its
        SDIRK2 start has two stages).

    Examples
    --------
    The steady BDF2 step is Eq. (3.99): ``q_new - 8/3 q_k + 22/9 q_k-1 - 8/9 q_k-2 + 1/9 q_k-3``,
    and its velocity Eq. (3.78):

    >>> s = scheme_stencils("bdf2", 0.01, 6)[-1]
    >>> {j: round(-a, 6) for j, a in s.a.items()}
    {6: -2.666667, 5: 2.444444, 4: -0.888889, 3: 0.111111}
    >>> s.b_new, s.b, s.c
    (1.5, {6: -2.0, 5: 0.5}, 0.4444444444444444)

    Taught in book/03_differentiable/04_implicit_integrators.
    """
    if scheme not in SCHEMES:
        raise ValueError(f"argument 'scheme' must be one of {', '.join(map(repr, SCHEMES))}, got {scheme!r}")
    builder = _Stencils(scheme, float(h), float(t0))
    return [s for k in range(int(n_steps)) for s in builder.next_step(k)]


# --- the residual and its derivatives -------------------------------------------------------

def _residual(free, stencil, q_new, positions, v, tau):
    """:func:`step_residual` of checked arguments; ``free`` is the model without constraints."""
    qdot = stencil.velocity(q_new, positions, v)
    d = dynamics_derivatives_unchecked(free, q_new, qdot)
    s = stencil
    x = s.inertial(q_new, positions, v)
    F = d.f if tau is None else d.f + tau
    g = d.M @ x - s.c * s.h * s.h * F
    H = d.M + np.einsum("ijk,j->ik", d.dM_dq, x) - s.c * s.h * s.b_new * d.D - s.c * s.h * s.h * d.K
    return StepResidual(s, q_new, qdot, g, H, d.M, d.D, d.K)


def _free(model):
    """The model without its constraints (their forces enter the KKT system, not ``f``)."""
    return model.with_constraints(()) if model.constraints else model


def step_residual(model, stencil, q_new, positions, v=None, tau=None):
    """The residual ``g`` of one implicit solve, its Jacobian ``H`` and the blocks of its stencil.

    ``g``: Eq. (3.63)-(3.64), (3.69), (3.73)-(3.74), (3.79)-(3.80) in positions only (Eq. 3.91, 3.96-3.97,
    3.101-3.102); ``H`` takes the force's derivative through the velocity (Eq. 3.70, 3.75, 3.81).

    Parameters
    ----------
    model : Model
        With nq coordinates. Its constraints, if any, are not part of ``g`` (their forces are
        the KKT system's, see the module docstring).
    stencil : Stencil
        From :func:`scheme_stencils` or ``ImplicitRun.solves[k].stencil``.
    q_new : array_like, shape (nq,)
    positions : sequence or mapping
        ``positions[j]`` is the position (nq,) of every state j in ``stencil.history``
        (e.g. ``ImplicitRun.q``).
    v : array_like, shape (nq,), optional
        The anchor velocity (``qdot0`` for the anchor 0); required when ``stencil.uses_velocity``.
    tau : array_like, shape (nq,), optional
        Applied joint forces.

    Returns
    -------
    StepResidual
        ``g``, ``H``, ``M``, ``D``, ``K``, and the blocks ``dg_dq`` (a dict over the history),
        ``dg_dv``, ``dg_dtau``.

    Examples
    --------
    The first BDF1 step of a pendulum from rest: ``g = M (q1 - q0) - h^2 f(q1, (q1 - q0) / h)``.

    >>> from redmax_edu.joints import Revolute
    >>> from redmax_edu.model import Body, Model
    >>> T = np.eye(4); T[2, 3] = -1.0
    >>> bob = Model([Body("bob", -1, Revolute([0, 1, 0]), np.eye(4), T, 2.0, 0.01 * np.eye(3))])
    >>> first = scheme_stencils("bdf1", 0.01, 1)[0]
    >>> r = step_residual(bob, first, [0.5], {0: np.array([0.5])}, v=[0.0])
    >>> round(float(r.g[0]), 12), round(float(2 * 9.81 * np.sin(0.5) * 1e-4), 12)
    (0.000940632907, 0.000940632907)
    >>> sorted(r.dg_dq), r.dg_dtau
    ([0], array([[-0.0001]]))

    Taught in book/03_differentiable/04_implicit_integrators.
    """
    if not isinstance(stencil, Stencil):
        raise ValueError(f"argument 'stencil' must be a Stencil, got {type(stencil).__name__}")
    nq = model.nq
    q_new = as_real(q_new, (nq,), "q_new")
    try:
        hist = {j: as_real(positions[j], (nq,), f"positions[{j}]") for j in stencil.history}
    except (KeyError, IndexError):
        raise ValueError(f"argument 'positions' must give the position of every state in the stencil's "
                         f"history {list(stencil.history)}") from None
    if stencil.uses_velocity:
        if v is None:
            raise ValueError(f"argument 'v' (the velocity at anchor state {stencil.anchor}) is required: "
                             "it enters this stencil")
        v = as_real(v, (nq,), "v")
    tau = None if tau is None else as_real(tau, (nq,), "tau")
    return _residual(_free(model), stencil, q_new, hist, v, tau)


# --- Newton's method -------------------------------------------------------------------------

@dataclass
class _Step:
    """What one solve needs: the models, its stencil and history, the controls and constraint state."""

    model: object
    free: object
    stencil: Stencil
    positions: object
    v: np.ndarray | None
    tau: np.ndarray | None
    active: np.ndarray | None = None        # inequality rows active when the solve starts
    charts: bool = False
    tol: float = DEFAULT_NEWTON_TOL
    max_iter: int = DEFAULT_MAX_NEWTON
    evaluations: int = 0                    # residual evaluations (dynamics_derivatives calls)


def _fail(step, message):
    s = step.stencil
    where = f" (SDIRK2 stage {s.stage})" if s.stage != "step" else ""
    raise SimulationError(f"{s.scheme.upper()} Newton solve failed in step {s.step + 1}{where}, "
                          f"t = {s.t:.6g} s: {message}")


def _singular(step, q, what):
    raise SingularMassMatrixError(explain_singular(step.model, q, what))


def _evaluate(step, q):
    """The residual record at q, or a ValueError naming a joint at a singular chart."""
    if step.charts and singular_joints_unchecked(step.model, q):
        _singular(step, q, "the mass matrix of the implicit step")
    step.evaluations += 1
    try:
        return _residual(step.free, step.stencil, q, step.positions, step.v, step.tau)
    except SingularMassMatrixError:
        raise
    except ValueError as err:
        _fail(step, str(err))


def _constraint_system(step, r, mask):
    """The held rows at ``r.q``: their Jacobian G (k, nq) and residual e (k,) in position units."""
    rows = _rows_at(step, r.q)
    positional = np.concatenate([np.full(b.stop - b.start, c.positional)
                                 for c, b in zip(step.model.constraints, rows.blocks, strict=True)])
    scale = step.stencil.h / step.stencil.b_new
    e = np.where(positional, rows.error, scale * (rows.G @ r.qdot - rows.w))
    return rows, rows.G[mask], e[mask]


def _norm(r, e, h):
    """The scaled residual of the KKT system, ``max(|g - G^T mu|_inf / (h max M_ii), |e|_inf / h)``
    (``r`` is already divided by ``h max M_ii``)."""
    return max(float(np.abs(r).max(initial=0.0)), float(np.abs(e).max(initial=0.0)) / h)


def _newton(step, q, mask):
    """Newton with line search for one solve with the rows ``mask`` held (all False: none)."""
    r = _evaluate(step, q)
    k = int(mask.sum()) if mask is not None else 0
    mu = np.zeros(k)

    def system(r, mu):
        if not k:
            return r.g, np.zeros(0), None
        _, G, e = _constraint_system(step, r, mask)
        return r.g - G.T @ mu, e, G

    R, e, G = system(r, mu)
    h = step.stencil.h
    norms, lengths = [_norm(R / r.scale, e, h)], []
    while norms[-1] > step.tol:
        if len(lengths) == step.max_iter:
            _fail(step, f"Newton did not converge in {step.max_iter} iterations: the scaled residual is "
                        f"{norms[-1]:.3g} (tolerance {step.tol:g}); use a smaller step 'h'")
        nq = len(q)
        A = r.H if not k else np.block([[r.H, -G.T], [G, np.zeros((k, k))]])
        with np.errstate(all="ignore"):
            try:
                dx = -np.linalg.solve(A, np.concatenate([R, e]))
            except np.linalg.LinAlgError:
                _singular(step, q, "the Newton matrix H of the implicit step" + (" with its constraint rows"
                                                                               if k else ""))
        if not np.isfinite(dx).all():
            _singular(step, q, "the Newton matrix H of the implicit step")
        dq, dmu = dx[:nq], dx[nq:]
        if np.abs(dq).max() <= _ROUNDOFF * (1.0 + np.abs(q).max()) and norms[-1] <= 1e3 * step.tol:
            break                                             # converged to round-off
        length, best = 1.0, None
        merit = np.sqrt(np.sum(R * R) + np.sum((r.scale / h * e) ** 2))
        while True:                                           # backtracking line search
            trial = _evaluate(step, q + length * dq)
            tmu = mu + length * dmu
            tR, te, tG = system(trial, tmu)
            tmerit = np.sqrt(np.sum(tR * tR) + np.sum((trial.scale / h * te) ** 2))
            if best is None or tmerit < best[0]:
                best = (tmerit, length, trial, tmu, tR, te, tG)
            if tmerit <= (1.0 - _ARMIJO * length) * merit or length <= _MIN_STEP_LENGTH:
                break
            length /= 2
        _, length, r, mu, R, e, G = best
        q = r.q
        lengths.append(length)
        norms.append(_norm(R / r.scale, e, h))
    return r, mu, G, np.array(norms), np.array(lengths)


def _rows_at(step, q):
    """The model's constraint rows at position q, with the solve's velocity and time."""
    return constraint_rows(step.model, q, step.stencil.velocity(q, step.positions, step.v), step.stencil.t)


def _solve(step, q_guess):
    """One solve, with the active set of the inequalities when the model has any: a :class:`NewtonSolve`."""
    model = step.model
    if not model.constraints:
        r, mu, G, norms, lengths = _newton(step, q_guess, None)
        return _record(step, r, norms, lengths, None, None, None, False)
    rows = _rows_at(step, q_guess)
    ineq = rows.inequality
    active = step.active if step.active is not None else (rows.error[ineq] <= 0.0)
    start = active.copy()
    tol_c = max(10 * step.tol, 1e-9)
    for _ in range(_MAX_ACTIVE_ROUNDS):
        mask = ~ineq.copy()
        mask[ineq] = active
        r, mu, G, norms, lengths = _newton(step, q_guess, mask)
        rows = _rows_at(step, r.q)
        held_ineq = ineq[mask]
        mu_ineq = mu[held_ineq]
        pulling = mu_ineq < -1e-9 * max(1.0, float(np.abs(mu).max(initial=0.0)))
        violated = (rows.error[ineq] < -tol_c) & ~active
        if not pulling.any() and not violated.any():
            break
        idx = np.flatnonzero(active)
        new = active.copy()
        new[idx[pulling]] = False
        new |= violated
        active = new
        q_guess = r.q
    else:
        _fail(step, f"the active set of the inequalities did not settle in {_MAX_ACTIVE_ROUNDS} rounds")
    lam = mu / (step.stencil.c * step.stencil.h ** 2)
    return _record(step, r, norms, lengths, G, lam, active, bool((active != start).any()))


def _record(step, r, norms, lengths, G, lam, active, changed):
    with np.errstate(all="ignore"):
        lu = lu_factor(r.H, check_finite=False)
    u = np.abs(np.diag(lu[0]))
    if not (np.isfinite(u).all() and u.min() > 1e-14 * max(1.0, u.max())):
        _singular(step, r.q, "the Newton matrix H of the implicit step")
    return NewtonSolve(step.stencil, r.q, r.qdot, norms, lengths, r, lu, step.tau, step.model, G, lam,
                       active, changed)


# --- the driver ------------------------------------------------------------------------------

def _tau_at(tau_fn, per_step):
    """``tau`` of a solve from its step and time: a row of the per-step controls, or tau_fn(t)."""
    if per_step is not None:
        return lambda step, t: per_step[step]
    if tau_fn is None:
        return lambda step, t: None
    return lambda step, t: tau_fn(t)


def integrate(run, h, sample_dt=None, newton_tol=DEFAULT_NEWTON_TOL, max_newton=DEFAULT_MAX_NEWTON):
    """Integrate a :class:`redmax_edu.simulation.Start` with the scheme ``run.method`` and step ``h``;
    the arguments as in :func:`redmax_edu.integrators.simulate`. Returns a Trajectory with its
    :class:`ImplicitRun`. Each solve: Newton with a line search (Algorithm 12)."""
    h, n_steps, stride = fixed_steps(run, h, sample_dt)
    per_step = None if run.controls is None else as_real(run.controls, (n_steps, run.model.nq), "tau")
    newton_tol, max_newton = positive(newton_tol, "newton_tol"), whole_number(max_newton, "max_newton", 1000)
    model, q, qdot, t0, scheme = run.model, run.q, run.qdot, run.t0, run.method
    reparameterize = run.reparameterize
    charts = any(b.joint.has_charts for b in model.bodies)
    if charts and singular_joints_unchecked(model, q) and not reparameterize:
        raise SingularMassMatrixError(explain_singular(model, q, "the mass matrix at the initial state"))
    tau_at = _tau_at(run.tau, per_step)
    builder = _Stencils(scheme, h, t0)
    Q, V, models, anchors = [q], [qdot], [model], {0: qdot}
    solves, restarts, switches = [], [], []
    free, active, nfev = _free(model), None, 0
    rec = Recorder()
    rec.add(t0, q, qdot, model)
    with progress_bar(run.progress, n_steps * h, scheme) as bar:
        for k in range(n_steps):
            n = builder.last
            if reparameterize and charts:  # at the start of every step, as the explicit methods do
                new, qn, vn, changed = reparameterize_state(models[n], Q[n], V[n])
                if changed:                # a new anchor in the new chart (see the module docstring)
                    switches.append(builder.t[n])
                    index = builder.restart(builder.t[n])
                    Q.append(qn)
                    V.append(vn)
                    models.append(new)
                    anchors[index] = vn
                    restarts.append(index)
                    model, free = new, _free(new)
            for stencil in builder.next_step(k):
                guess = Q[-1] + (stencil.t - builder.t[len(Q) - 1]) * V[-1]
                v = anchors[stencil.anchor] if stencil.uses_velocity else None
                step = _Step(model, free, stencil, Q, v, tau_at(k, stencil.t), active, charts, newton_tol,
                             max_newton)
                solve = _solve(step, guess)
                nfev += step.evaluations
                active = solve.active
                check_finite(stencil.t, np.concatenate([solve.q, solve.qdot]), scheme, model)
                solves.append(solve)
                Q.append(solve.q)
                V.append(solve.qdot)
                models.append(model)
            if (k + 1) % stride == 0:
                rec.add(builder.t[-1], Q[-1], V[-1], model)
            advance(bar, h)
    record = ImplicitRun(scheme, h, np.array(builder.t), np.array(Q), tuple(models), anchors, tuple(solves),
                         tuple(restarts))
    return rec.trajectory(scheme, h, n_steps, nfev, switches, implicit=record)
