"""A variational integrator's run: Newton's method on each step's equations, and the loop.

:func:`~redmax_edu.variational.integrate` is the family of
``simulate(..., method="vi2" | "vi4" | "vi6")``.

Taught in book/05_variational/01_what_is_preserved.
"""

from dataclasses import dataclass

import numpy as np

from .._validate import as_real
from ..recursive import inverse_inertia
from ..simulation import (
    DEFAULT_MAX_NEWTON,
    DEFAULT_NEWTON_TOL,
    Recorder,
    SimulationError,
    advance,
    check_finite,
    fixed_steps,
    positive,
    progress_bar,
    whole_number,
)
from ..singularity import SingularMassMatrixError, explain_singular, singular_joints_unchecked
from .direction import newton_direction
from .quadrature import SCHEMES, Quadrature, lobatto
from .residual import (
    DEL_METHODS,
    check_variational_model,
    dense_residual,
    mass,
    node_forces,
    recursive_residual,
)

__all__ = ["VariationalSolve", "VariationalRun", "integrate"]


#: A Newton step this small relative to ``1 + |q|_inf`` is round-off (as in :mod:`redmax_edu.implicit`).
_ROUNDOFF = 16 * np.finfo(float).eps


@dataclass(frozen=True, eq=False)
class VariationalSolve:
    """One step's Newton solve.

    Attributes
    ----------
    step : int
        0-based step index.
    t : float
        Time at the start of the step (s).
    q : ndarray, shape (s + 1, nq)
        The control points (row 0 ``q_k``, row s ``q_(k+1)``).
    p : ndarray, shape (nq,)
        ``p_(k+1)``.
    residuals : ndarray, shape (iterations + 1,)
        The scaled residual ``|r|_inf / max_i M_ii(q_k)`` (rad/s or m/s) at the predictor and
        after every Newton iteration.
    """

    step: int
    t: float
    q: np.ndarray
    p: np.ndarray
    residuals: np.ndarray

    @property
    def iterations(self):
        """Newton iterations taken."""
        return len(self.residuals) - 1


@dataclass(frozen=True, eq=False)
class VariationalRun:
    """Everything a variational run solved.

    Attributes
    ----------
    scheme : str
        ``"vi2"``, ``"vi4"`` or ``"vi6"``.
    quadrature : Quadrature
    h : float
    t : ndarray, shape (n_steps + 1,)
    q, p : ndarray, shape (n_steps + 1, nq)
        Positions and discrete momenta at the step boundaries.
    solves : tuple of VariationalSolve
    """

    scheme: str
    quadrature: Quadrature
    h: float
    t: np.ndarray
    q: np.ndarray
    p: np.ndarray
    solves: tuple

    @property
    def iterations(self):
        """Newton iterations per step, shape (n_steps,)."""
        return np.array([s.iterations for s in self.solves], dtype=int)

    @property
    def final_residuals(self):
        """The scaled residual each step ended with, shape (n_steps,) (rad/s or m/s)."""
        return np.array([s.residuals[-1] for s in self.solves])


def _fail(scheme, k, t, message):
    raise SimulationError(f"{scheme.upper()} Newton solve failed in step {k + 1}, t = {t:.6g} s: {message}")


def _solve_step(model, quad, q0, p0, h, t, taus, tol, max_iter, scheme, k, method, velocity0, pose0=None):
    """Newton on one step's DEL from the predictor ``q0 + c h v0``; returns (DELResidual, residuals).

    ``pose0``: the :class:`Pose` of ``q0`` (recursive method), if known; every iterate reuses it
    and the residual's scale.
    """
    def evaluate(X):
        if method == "dense":
            return dense_residual(model, quad, q0, p0, X, h, taus)
        return recursive_residual(model, quad, q0, p0, X, h, taus, pose0, scale)

    scale = None
    X = q0[None] + np.outer(quad.c[1:], h * velocity0)
    res = evaluate(X)
    if method != "dense":
        scale = res.scale
        if pose0 is None:
            pose0 = res.sweeps.pose.point(0)
    norms = [res.scaled]
    while norms[-1] > tol:
        if len(norms) > max_iter:
            _fail(scheme, k, t, f"Newton did not converge in {max_iter} iterations: the scaled residual "
                                f"is {norms[-1]:.3g} (tolerance {tol:g}); use a smaller step 'h'")
        try:
            dx = newton_direction(res)
        except ValueError as err:
            _fail(scheme, k, t, str(err))
        if not np.isfinite(dx).all():
            _fail(scheme, k, t, "the Newton direction is not finite; use a smaller step 'h'")
        X = X + dx
        if singular_joints_unchecked(model, X[-1]):
            raise SingularMassMatrixError(explain_singular(model, X[-1], f"the mass matrix in step {k + 1}"))
        res = evaluate(X)
        norms.append(res.scaled)
        if np.abs(dx).max() <= _ROUNDOFF * (1.0 + np.abs(X).max()) and norms[-1] <= 1e3 * tol:
            break                                         # converged to round-off
    return res, np.array(norms)


def _velocity(model, q, p, method):
    """``M(q)^-1 p``: a dense solve, or Algorithm 10 in O(n) for the recursive method."""
    if method == "dense":
        return np.linalg.solve(mass(model, q), p)
    return inverse_inertia(model, q) @ p


def integrate(run, h, sample_dt=None, newton_tol=DEFAULT_NEWTON_TOL, max_newton=DEFAULT_MAX_NEWTON,
              method="recursive"):
    """Integrate a :class:`redmax_edu.simulation.Start` with the scheme ``run.method`` and step ``h``;
    ``method`` is the arguments' ``del_method``, the others as in
    :func:`redmax_edu.integrators.simulate`. Returns a Trajectory with its :class:`VariationalRun`."""
    h, n_steps, stride = fixed_steps(run, h, sample_dt)
    per_step = None if run.controls is None else as_real(run.controls, (n_steps, run.model.nq), "tau")
    newton_tol, max_newton = positive(newton_tol, "newton_tol"), whole_number(max_newton, "max_newton", 1000)
    model, q, qdot, t0, scheme, tau_fn = run.model, run.q, run.qdot, run.t0, run.method, run.tau
    if method not in DEL_METHODS:
        raise ValueError(f"argument 'del_method' must be one of {DEL_METHODS}, got {method!r}")
    check_variational_model(model)
    if singular_joints_unchecked(model, q):
        raise SingularMassMatrixError(explain_singular(model, q, "the mass matrix at the initial state"))
    quad = lobatto(SCHEMES[scheme])
    nq = model.nq
    p = mass(model, q) @ qdot
    v = qdot
    T, Qs, Ps, solves = [t0], [q], [p], []
    rec = Recorder()
    rec.add(t0, q, qdot, model)
    pose = None                                           # of q_k, when the last step computed it
    with progress_bar(run.progress, n_steps * h, scheme) as bar:
        for k in range(n_steps):
            t = t0 + k * h
            tau = per_step[k] if per_step is not None else tau_fn
            taus = node_forces(tau, quad, t, h, nq)
            res, norms = _solve_step(model, quad, q, p, h, t, taus, newton_tol, max_newton, scheme, k,
                                     method, v, pose)
            q, p = res.q[-1].copy(), res.p_next
            if method != "dense":
                pose = res.sweeps.pose.point(quad.s)       # q_(k+1) is the last control point
            check_finite(t + h, np.concatenate([q, p]), scheme, model, "momentum")
            v = _velocity(model, q, p, method)
            solves.append(VariationalSolve(k, t, res.q, p, norms))
            T.append(t0 + (k + 1) * h)
            Qs.append(q)
            Ps.append(p)
            if (k + 1) % stride == 0:
                rec.add(T[-1], q, v, model)
            advance(bar, h)
    record = VariationalRun(scheme, quad, h, np.array(T), np.array(Qs), np.array(Ps), tuple(solves))
    nfev = int(sum(s.iterations + 1 for s in solves))
    return rec.trajectory(scheme, h, n_steps, nfev, [], variational=record)
