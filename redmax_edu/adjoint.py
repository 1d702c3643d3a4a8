"""The adjoint method: the gradient of an objective of a whole simulation (§3.5, Eq. 3.84-3.106).

An implicit run (:mod:`redmax_edu.implicit`) solves one equation ``g_i(qbar, p) = 0`` per state
i it produces (a BDF1 or BDF2 step, or an SDIRK2 stage). An objective ``Psi(p, qbar)`` of the
states (:mod:`redmax_edu.objectives`) then depends on the parameters ``p`` directly and through
the states, and the implicit function theorem gives (Eq. 3.85-3.87)

    dPsi/dp = dPsi/dp|_qbar - dPsi/dqbar (dgbar/dqbar)^-1 dgbar/dp.

``Hbar = dgbar/dqbar`` is block lower triangular: row i holds ``H_i = dg_i/dq_i`` on the
diagonal and the stencil blocks ``dg_i/dq_j`` of the earlier states j it uses (Eq. 3.92 for
BDF1, Eq. 3.98-3.103 for BDF2 with its SDIRK2 start). Solving "to the left" costs one
back-substitution, whatever the number of parameters (Eq. 3.88-3.90):

    Hbar^T z = y,   y = dPsi/dqbar,           dPsi/dp = dPsi/dp|_qbar - z^T dgbar/dp,

from the last state backwards (Eq. 3.95, 3.106): ``z_i = H_i^-T (y_i - sum_{r > i} (dg_r/dq_i)^T
z_r)``, each solve with the LU factors of ``H_i`` that Newton's method already computed in the
forward run. The parameters:

* the initial state: ``dg_i/dq0`` is a stencil block like any other (state 0 is a state the
  first solves use), and ``dg_i/dqdot0 = dg_dv`` (:class:`redmax_edu.implicit.StepResidual`);
* per-step joint torques ``tau_k``: ``dg_i/dtau_k = -c h^2 1`` for the solves of step k;
* model parameters (:mod:`redmax_edu.parameters`): ``g_i = M x_i - c h^2 (f + tau)`` with ``x_i``
  the stencil's combination of positions, so ``dg_i/dp = dM/dp x_i - c h^2 df/dp`` at the state's
  ``(q_i, qdot_i)``.

Velocities an objective reads are the scheme's own, linear in the positions (and in ``qdot0``):
``qdot_i = (b_new q_i + sum_j b_j q_j) / h + b_v qdot0``, so ``dPsi/dqdot_i`` enters ``y`` through
those coefficients.

Refused (a ``ValueError`` naming the step and the time): a run whose chart switched (it
restarted at a new anchor whose state is a non-smooth function of the previous one), a step whose
active set of contacts or limits changed (the solution is not differentiable there), and models
with constraints at all (differentiating the KKT solve needs ``dG/dq``, which is not
available).

Writeup §3.5. Taught in book/03_differentiable/05_adjoint and 06_optimisation.
"""

from dataclasses import dataclass

import numpy as np
from scipy.linalg import lu_solve

from ._validate import as_flag
from .implicit import SCHEMES, ImplicitRun
from .objectives import Objective, States
from .parameters import parameter_derivatives, parameter_values, resolve_parameters, with_parameters

__all__ = ["AdjointGradient", "run_states", "adjoint_gradient", "assemble_hbar", "simulate_run", "VARIABLES",
           "OptimizationResult", "optimize"]


@dataclass(frozen=True, eq=False)
class AdjointGradient:
    """The objective of a run and its total derivatives, from one adjoint solve.

    Attributes
    ----------
    value : float
        ``Psi``.
    q0, qdot0 : ndarray, shape (nq,)
        ``dPsi/dq^(0)``, ``dPsi/dqdot^(0)``.
    tau : ndarray, shape (m, nq)
        ``dPsi/dtau_k`` for the torques of every step.
    params : ndarray, shape (np,)
        ``dPsi/dp`` for the model parameters asked for.
    z : ndarray, shape (n_states, nq)
        The adjoint variables of every state of the run, one row per row of ``run.q`` (row 0,
        the initial state, is zero: it is given, not solved for); ``z_i`` is how much ``Psi``
        changes per unit of force ``g_i`` added to the equation of state i.
    states : States
        What the objective saw.
    """

    value: float
    q0: np.ndarray
    qdot0: np.ndarray
    tau: np.ndarray
    params: np.ndarray
    z: np.ndarray
    states: States


def _check_run(run):
    if not isinstance(run, ImplicitRun):
        raise ValueError("argument 'run' must be the ImplicitRun of an implicit simulation (simulate(..., "
                         f"method='bdf1' | 'sdirk2' | 'bdf2').implicit), got {type(run).__name__}")
    if run.restarts:
        i = run.restarts[0]
        raise ValueError(f"argument 'run': a joint switched chart at t = {run.t[i]:.6g} s (state {i}), "
                         "and the run restarted from the reparameterised state; the adjoint does not "
                         "differentiate through a chart switch: shorten the run or start it in coordinates "
                         "farther from the switch")
    for s in run.solves:
        if s.active_set_changed:
            raise ValueError(f"argument 'run': in step {s.stencil.step + 1} (t = {s.stencil.t:.6g} s) the "
                             "active set of contacts or limits changed; the motion is not differentiable "
                             "across such a switch, so the adjoint refuses to differentiate through it")
    if run.models[0].constraints:
        raise ValueError("argument 'run': the model has constraints; differentiating a constrained step "
                         "needs the derivatives of the constraint rows (dG/dq), which are not implemented")


def _full_steps(run):
    """The state indices of the initial state and of the end of every step."""
    return [0] + [s.stencil.index for s in run.solves if s.stencil.stage != "alpha"]


def run_states(run, params=()):
    """The :class:`~redmax_edu.objectives.States` of a run: the initial state and the end of every step.

    The states stacked as ``qbar`` and ``qdotbar`` of Eq. (3.83).

    Parameters
    ----------
    run : ImplicitRun
    params : sequence of Parameter or (kind, body[, index]) tuples
        The model parameters the objective may depend on.

    Returns
    -------
    States
    """
    _check_run(run)
    full = _full_steps(run)
    solve_of = {s.stencil.index: s for s in run.solves}
    model = run.models[0]
    nq = model.nq
    qdot = np.array([run.anchors[0]] + [solve_of[i].qdot for i in full[1:]])
    tau = np.array([np.zeros(nq) if solve_of[i].tau is None else solve_of[i].tau for i in full[1:]])
    params = tuple(r.param for r in resolve_parameters(model, params))
    return States(model, run.t[full], run.q[full], qdot, tau.reshape(len(full) - 1, nq), params,
                  parameter_values(model, params))


def adjoint_gradient(run, objective, params=()):
    """``Psi`` of a run and ``dPsi/d(q0, qdot0, tau, p)`` by one back-solve with ``Hbar^T`` (Eq. 3.88-3.90).

    The total derivative of Eq. (3.85)-(3.87), the back-solve from the last state of Eq. (3.94)-(3.95)
    for BDF1 and of Eq. (3.105)-(3.106) for BDF2 with its SDIRK2 start.

    Parameters
    ----------
    run : ImplicitRun
        From :func:`simulate_run` or ``simulate(..., method="bdf1" | "sdirk2" | "bdf2").implicit``.
    objective : Objective
        E.g. ``EndEffectorTarget(...) + Regularizer(...)`` (:mod:`redmax_edu.objectives`).
    params : sequence of Parameter or (kind, body[, index]) tuples
        Model parameters to differentiate in (:mod:`redmax_edu.parameters`).

    Returns
    -------
    AdjointGradient

    Examples
    --------
    A pendulum released at 0.5 rad: how the final angle after 20 BDF2 steps depends on the
    initial angle, by the adjoint and by central differences of the whole simulation.

    >>> from redmax_edu.joints import Revolute
    >>> from redmax_edu.model import Body, Model
    >>> from redmax_edu.objectives import Tracking
    >>> T = np.eye(4); T[2, 3] = -1.0
    >>> bob = Model([Body("bob", -1, Revolute([0, 1, 0]), np.eye(4), T, 2.0, 0.01 * np.eye(3))])
    >>> far = Tracking(np.zeros((21, 1)))         # 1/2 sum_k q_k^2
    >>> g = adjoint_gradient(simulate_run(bob, [0.5], [0.0], 0.01, 20), far)
    >>> e = 1e-6
    >>> fd = (adjoint_gradient(simulate_run(bob, [0.5 + e], [0.0], 0.01, 20), far).value
    ...       - adjoint_gradient(simulate_run(bob, [0.5 - e], [0.0], 0.01, 20), far).value) / (2 * e)
    >>> bool(abs(g.q0[0] - fd) < 1e-6 * abs(fd))
    True

    Writeup §3.5. Taught in book/03_differentiable/05_adjoint.
    """
    if not isinstance(objective, Objective):
        raise ValueError(f"argument 'objective' must be an Objective of redmax_edu.objectives, "
                         f"got {type(objective).__name__}")
    states = run_states(run, params)
    terms = objective(states)
    model, nq = states.model, states.model.nq
    full = _full_steps(run)
    solve_of = {s.stencil.index: s for s in run.solves}
    y = np.zeros_like(run.q)                                  # dPsi/dq of every state (Eq. 3.88)
    y[full] = terms.dq
    g_v = terms.dqdot[0].copy()                               # qdot^(0) is the anchor velocity itself
    for k, i in enumerate(full[1:], start=1):                 # qdot_i = (b_new q_i + sum b_j q_j)/h + b_v v
        s = solve_of[i].stencil
        y[i] += s.b_new / s.h * terms.dqdot[k]
        for j, bj in s.b.items():
            y[j] += bj / s.h * terms.dqdot[k]
        g_v += s.b_v * terms.dqdot[k]
    z = np.zeros_like(run.q)
    g_tau = terms.dtau.copy()
    g_p = terms.dp.copy()
    for solve in reversed(run.solves):                        # Eq. (3.95), (3.106): last state first
        s, r = solve.stencil, solve.residual
        i = s.index
        z[i] = lu_solve(solve.lu, y[i], trans=1, check_finite=False)       # H_i^T z_i = y_i - ...
        for j, block in r.dg_dq.items():                      # the stencil blocks H_(i, j), j < i
            y[j] -= block.T @ z[i]
        if s.uses_velocity:
            g_v -= r.dg_dv.T @ z[i]
        g_tau[s.step] += s.c * s.h * s.h * z[i]               # dg_i/dtau = -c h^2 1
        if len(states.params):
            d = parameter_derivatives(model, states.params, r.q, r.qdot)
            x = s.inertial(r.q, run.q, run.anchors[s.anchor])
            dg_dp = np.einsum("ijk,j->ik", d.dM_dp, x) - s.c * s.h * s.h * d.df_dp
            g_p -= dg_dp.T @ z[i]
    return AdjointGradient(terms.value, y[0], g_v, g_tau.reshape(-1, nq), g_p, z, states)


def assemble_hbar(run):
    """The dense ``Hbar = dgbar/dqbar`` of a run (Eq. 3.93, 3.104), shape (N nq, N nq).

    Block (r, c) is ``dg/dq`` of the solve giving state r + 1 in state c + 1 (state 0, the initial
    one, is not an unknown): ``H`` on the diagonal, the stencil blocks below it. For teaching and
    testing (it grows as N^2); :func:`adjoint_gradient` never forms it.

    Examples
    --------
    >>> from redmax_edu.joints import Revolute
    >>> from redmax_edu.model import Body, Model
    >>> T = np.eye(4); T[2, 3] = -1.0
    >>> bob = Model([Body("bob", -1, Revolute([0, 1, 0]), np.eye(4), T, 2.0, 0.01 * np.eye(3))])
    >>> (assemble_hbar(simulate_run(bob, [0.5], [0.0], 0.01, 5, scheme="bdf1")) != 0).astype(int)
    array([[1, 0, 0, 0, 0],
           [1, 1, 0, 0, 0],
           [1, 1, 1, 0, 0],
           [0, 1, 1, 1, 0],
           [0, 0, 1, 1, 1]])

    Writeup §3.5. Taught in book/03_differentiable/05_adjoint.
    """
    _check_run(run)
    nq, N = run.q.shape[1], len(run.solves)
    out = np.zeros((N * nq, N * nq))
    for solve in run.solves:
        i, r = solve.stencil.index, solve.residual
        rows = slice((i - 1) * nq, i * nq)
        out[rows, rows] = r.H
        for j, block in r.dg_dq.items():
            if j > 0:
                out[rows, (j - 1) * nq:j * nq] = block
    return out


def simulate_run(model, q0, qdot0, h, n_steps, scheme="bdf2", tau=None, **options):
    """Run an implicit scheme for ``n_steps`` steps of size ``h``: the forward solve of the adjoint method.

    Every solve is Newton's method with a line search (Algorithm 12).

    ``simulate(model, q0, qdot0, (0, n_steps h), method=scheme, h=h, tau=tau, **options).implicit``
    (:func:`redmax_edu.integrators.simulate`): the forward solve of the adjoint method, which
    stores every solve with its residual blocks and the LU factors of its ``H``.

    Parameters
    ----------
    model : Model
    q0, qdot0 : array_like, shape (nq,)
    h : float
        Step (s).
    n_steps : int
    scheme : {"bdf1", "sdirk2", "bdf2"}
    tau : array_like, shape (n_steps, nq) or (nq,), optional
        Joint torques per step (or constant).
    **options
        Passed to :func:`~redmax_edu.integrators.simulate` (``newton_tol``, ``reparameterize``, ...).

    Returns
    -------
    ImplicitRun

    Writeup §3.5. Taught in book/03_differentiable/05_adjoint.
    """
    from .integrators import simulate

    if scheme not in SCHEMES:
        raise ValueError(f"argument 'scheme' must be one of {', '.join(map(repr, SCHEMES))}, got {scheme!r}")
    n_steps = int(n_steps)
    if n_steps < 1:
        raise ValueError(f"argument 'n_steps' must be at least 1, got {n_steps}")
    span = (0.0, n_steps * float(h))
    return simulate(model, q0, qdot0, span, method=scheme, h=h, tau=tau, **options).implicit


# --- optimisation through the simulation ------------------------------------------------------

#: What :func:`optimize` can vary, in the order of its flat vector x.
VARIABLES = ("q0", "qdot0", "tau", "params")


@dataclass(frozen=True, eq=False)
class OptimizationResult:
    """The outcome of :func:`optimize`.

    Attributes
    ----------
    x : ndarray
        The optimal flat vector (the variables of ``wrt`` concatenated in :data:`VARIABLES` order).
    value : float
        The objective there.
    values, gradient_norms : ndarray, shape (iterations + 1,)
        The objective and ``|dPsi/dx|`` at the start and after every L-BFGS-B iteration.
    q0, qdot0 : ndarray, shape (nq,)
    tau : ndarray, shape (n_steps, nq)
    model : Model
        With the optimal parameter values.
    run : ImplicitRun
        The simulation at the optimum.
    evaluations : int
        Simulations run (each with its adjoint solve).
    message : str
        scipy's.
    """

    x: np.ndarray
    value: float
    values: np.ndarray
    gradient_norms: np.ndarray
    q0: np.ndarray
    qdot0: np.ndarray
    tau: np.ndarray
    model: object
    run: ImplicitRun
    evaluations: int
    message: str


class _Problem:
    """The flat vector x of :func:`optimize` and the simulation and adjoint behind each value."""

    def __init__(self, model, q0, qdot0, h, n_steps, objective, wrt, scheme, tau, params, options):
        self.model, self.h, self.n_steps, self.objective = model, float(h), int(n_steps), objective
        self.wrt, self.scheme, self.options = wrt, scheme, options
        self.params = tuple(r.param for r in resolve_parameters(model, params))
        nq = model.nq
        tau = np.zeros((self.n_steps, nq)) if tau is None else np.broadcast_to(tau, (self.n_steps, nq))
        self.start = {"q0": np.asarray(q0, float), "qdot0": np.asarray(qdot0, float),
                      "tau": np.array(tau, float), "params": parameter_values(model, params)}
        self.sizes = {name: self.start[name].size for name in wrt}
        self.cache = {}
        self.evaluations = 0

    def unpack(self, x):
        out, k = dict(self.start), 0
        for name in VARIABLES:
            if name in self.wrt:
                n = self.sizes[name]
                out[name] = x[k:k + n].reshape(self.start[name].shape)
                k += n
        return out

    def x0(self):
        return np.concatenate([self.start[name].ravel() for name in VARIABLES if name in self.wrt])

    def model_at(self, v):
        return with_parameters(self.model, self.params, v["params"]) if len(self.params) else self.model

    def evaluate(self, x):
        key = x.tobytes()
        if key not in self.cache:
            from .integrators import SimulationError

            v = self.unpack(x)
            try:
                run = simulate_run(self.model_at(v), v["q0"], v["qdot0"], self.h, self.n_steps, self.scheme,
                                   v["tau"], **self.options)
            except SimulationError as err:
                raise SimulationError(f"the simulation failed at a point L-BFGS-B tried (evaluation "
                                      f"{self.evaluations + 1}, |x| = {np.linalg.norm(x):.3g}): {err}; bound "
                                      "the variables (argument 'bounds') or use a smaller step") from None
            g = adjoint_gradient(run, self.objective, self.params)
            parts = {"q0": g.q0, "qdot0": g.qdot0, "tau": g.tau, "params": g.params}
            grad = np.concatenate([parts[name].ravel() for name in VARIABLES if name in self.wrt])
            self.cache = {key: (g.value, grad, run)}      # keep the last point only
            self.evaluations += 1
        return self.cache[key]


def _bounds(problem, bounds):
    """L-BFGS-B bounds per entry of x: the given (low, high) per variable name, and by default the
    model parameters kept physical (stiffness and damping >= 0, masses and lengths > 0)."""
    out = []
    for name in VARIABLES:
        if name not in problem.wrt:
            continue
        if name in bounds:
            low, high = bounds[name]
            out += [(low, high)] * problem.sizes[name]
        elif name == "params":
            out += [(1e-6 if p.kind in ("mass", "length") else 0.0, None) for p in problem.params]
        else:
            out += [(None, None)] * problem.sizes[name]
    return out


def optimize(model, q0, qdot0, h, n_steps, objective, wrt=("tau",), *, scheme="bdf2", tau=None, params=(),
             bounds=None, maxiter=100, gtol=1e-8, progress=False, **options):
    """Minimise an objective of a simulation with L-BFGS-B, its gradient by the adjoint method.

    The problem of Eq. (3.84), ``minimize Psi(p, qbar(p))``.

    Every evaluation runs the simulation (:func:`simulate_run`) and one adjoint solve
    (:func:`adjoint_gradient`); scipy's ``minimize(method="L-BFGS-B", jac=True)`` does the rest.

    Parameters
    ----------
    model : Model
    q0, qdot0 : array_like, shape (nq,)
        The initial state (the starting guess when varied).
    h : float
        Step (s).
    n_steps : int
    objective : Objective
    wrt : sequence of {"q0", "qdot0", "tau", "params"}
        What to vary: the initial state, the per-step joint torques, the model parameters.
    scheme : {"bdf1", "sdirk2", "bdf2"}
    tau : array_like, shape (n_steps, nq) or (nq,), optional
        The torques (the starting guess when varied; default zero).
    params : sequence of Parameter or (kind, body[, index]) tuples
        The model parameters (their values in ``model`` are the starting guess).
    bounds : dict, optional
        ``{name: (low, high)}`` for every entry of a variable; by default the parameters stay
        physical (stiffness and damping non-negative, masses and lengths positive).
    maxiter : int
        L-BFGS-B iterations.
    gtol : float
        L-BFGS-B's projected-gradient tolerance.
    progress : bool
        Print one line per iteration (iteration, objective, gradient norm); off by default.
    **options
        Passed to :func:`simulate_run` (e.g. ``newton_tol``).

    Returns
    -------
    OptimizationResult

    Examples
    --------
    Identify a pendulum's joint damping from 30 BDF2 steps of its motion:

    >>> from redmax_edu.joints import Revolute
    >>> from redmax_edu.model import Body, Model
    >>> from redmax_edu.objectives import Tracking
    >>> T = np.eye(4); T[2, 3] = -1.0
    >>> bob = Model([Body("bob", -1, Revolute([0, 1, 0]), np.eye(4), T, 2.0, 0.01 * np.eye(3), damping=0.8)])
    >>> observed = run_states(simulate_run(bob, [1.0], [0.0], 0.02, 30)).q
    >>> guess = with_parameters(bob, [("damping", "bob")], [0.1])
    >>> res = optimize(guess, [1.0], [0.0], 0.02, 30, Tracking(observed), wrt=["params"],
    ...                params=[("damping", "bob")])
    >>> bool(abs(res.x[0] - 0.8) < 1e-6)
    True

    Writeup §3.5. Taught in book/03_differentiable/06_optimisation.
    """
    from scipy.optimize import minimize

    wrt = tuple(wrt)
    for name in wrt:
        if name not in VARIABLES:
            raise ValueError(f"argument 'wrt': {name!r} is not one of {VARIABLES}")
    if not wrt:
        raise ValueError("argument 'wrt' must name at least one of " + ", ".join(VARIABLES))
    if ("params" in wrt) != bool(len(params)):
        raise ValueError("argument 'params' must list the model parameters exactly when 'wrt' has 'params'")
    bounds = {} if bounds is None else dict(bounds)
    for name in bounds:
        if name not in wrt:
            raise ValueError(f"argument 'bounds': {name!r} is not varied (wrt = {wrt})")
    progress = as_flag(progress, "progress")
    problem = _Problem(model, q0, qdot0, h, n_steps, objective, wrt, scheme, tau, params, options)
    x0 = problem.x0()
    value, grad, _ = problem.evaluate(x0)
    values, norms = [value], [float(np.linalg.norm(grad))]
    if progress:
        print(f"iteration   0: objective {value:.4e}, |gradient| {norms[0]:.2e}")

    def callback(xk):
        value, grad, _ = problem.evaluate(xk)
        values.append(value)
        norms.append(float(np.linalg.norm(grad)))
        if progress:
            print(f"iteration {len(values) - 1:3d}: objective {value:.4e}, |gradient| {norms[-1]:.2e}")

    result = minimize(lambda x: problem.evaluate(x)[:2], x0, jac=True, method="L-BFGS-B",
                      bounds=_bounds(problem, bounds), callback=callback,
                      options={"maxiter": int(maxiter), "gtol": float(gtol)})
    value, grad, run = problem.evaluate(result.x)
    v = problem.unpack(result.x)
    return OptimizationResult(result.x, value, np.array(values), np.array(norms), v["q0"], v["qdot0"],
                              v["tau"], problem.model_at(v), run, problem.evaluations, str(result.message))
