"""Simulating a reduced-coordinate model in time: the integrators of the RedMax reference.

(Writeup §2.8; the book's chapter on it is not yet written.)

The RedMax supplemental (seed 002) runs every scene with one of three integrator types;
:func:`simulate` offers them by name:

``"rk45"``
    RedMax forward dynamics, ``M_r qddot = f_r`` (Eq. 2.19), as a first-order system
    ``y = (q, qdot)``, ``ydot = (qdot, qddot)``, integrated by the adaptive Dormand-Prince
    5(4) pair of :class:`scipy.integrate.RK45` (the solver behind
    ``solve_ivp(method="RK45")`` and the counterpart of MATLAB's ``ode45``; reference type 2).
    The result is sampled on a fixed grid by the solver's dense output, as the reference's
    CSV files are (every 0.01 s).
``"rk45_recursive"``
    The same ODE and solver, with ``qddot`` from recursive forward dynamics (Algorithm 9,
    :func:`redmax_edu.recursive.recursive_forward_dynamics`) in O(n) instead of a dense
    solve with ``M_r`` (reference type 1); constraints by the dual problem of §2.12 in O(n)
    per constraint row, prescribed joints by Algorithm 9 itself. For models without
    deformable bodies.
``"euler"``
    Linearly implicit Euler, springs and dampers only, at the velocity level with a fixed
    step ``h`` (Eq. 2.84-2.86; reference type 3): the spring and damper forces (joint and
    maximal) are linearised at the end of the step, gravity and the velocity terms stay
    explicit, so stiff springs and strong damping stay stable at steps where RK45 would
    crawl. This is not Part 1's scheme (``maximal.simulate(method="implicit")``, linearly
    implicit Euler with every force linearised, Coriolis and gravity included).

``"bdf1"``, ``"sdirk2"``, ``"bdf2"``
    The fully implicit schemes of §3.4 with a fixed step ``h``, each step solved by Newton's
    method with a line search (Algorithm 12) in positions only, constraints held at the
    position level: :mod:`redmax_edu.implicit`.

``"vi2"``, ``"vi4"``, ``"vi6"``
    Variational integrators (seed 003): the discrete Euler-Lagrange equations of the action
    with s = 1, 2, 3 Lobatto control points per step, in position-momentum form, solved by
    Newton's method: :mod:`redmax_edu.variational`.

All methods let joints with singular coordinates leave them (§2.4.5, §2.4.8): before each
step the state goes through ``model.reparameterize(q, qdot)``, which switches an
Euler-angle chart or shortens a long rotation vector; the model may change with it, so a
:class:`Trajectory` keeps the model of every sample.

Taught in book/02_reduced/03_redmax_dynamics and 05_stiffness_damping.
"""

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from ._validate import as_index, as_real, check_count
from .constraints import DEFAULT_BAUMGARTE, check_baumgarte, check_constraint_set, constraint_rows
from .contact import _frictional_euler_step
from .dynamics import SingularMassMatrixError, _energies, _euler_step, _forward_dynamics
from .implicit import DEFAULT_MAX_NEWTON, DEFAULT_NEWTON_TOL, SCHEMES, ImplicitRun, _integrate_implicit
from .kinematics import _forward_kinematics
from .model import Model
from .recursive import _recursive_forward_dynamics
from .variational import SCHEMES as VARIATIONAL_SCHEMES
from .variational import VariationalRun, _integrate_variational

__all__ = ["METHODS", "ODE_ACCELERATIONS", "SimulationError", "Trajectory", "simulate",
           "DEFAULT_SAMPLE_DT", "DIVERGED", "OrderStudy", "reference_run", "observed_order"]

#: Joint accelerations ``qddot = f(model, q, qdot, tau)`` of the methods that hand the
#: equations of motion to an ODE solver, called with a checked state (float arrays of shape
#: (nq,)), ``tau`` an (nq,) array or None, and keywords ``t`` (time) and ``baumgarte`` (the
#: checked gains of the constraints): :func:`simulate` checks its arguments once, so these are
#: the lean cores of the public functions (``"rk45"``: that of
#: :func:`redmax_edu.dynamics.forward_dynamics`, reference type 2; ``"rk45_recursive"``:
#: that of :func:`redmax_edu.recursive.recursive_forward_dynamics`, type 1).
ODE_ACCELERATIONS = {"rk45": _forward_dynamics, "rk45_recursive": _recursive_forward_dynamics}

#: The method names :func:`simulate` accepts: the RK45 paths, linearly implicit Euler and the
#: fully implicit schemes of :mod:`redmax_edu.implicit`.
METHODS = (*ODE_ACCELERATIONS, "euler", *SCHEMES, *VARIATIONAL_SCHEMES)

#: Sampling interval of RK45 output when neither ``sample_dt`` nor ``h`` is given (s): the
#: grid of the reference CSV files.
DEFAULT_SAMPLE_DT = 0.01

#: A state entry beyond this magnitude (SI units) means the integration has blown up.
DIVERGED = 1e10

#: Relative slack when checking that a span is a whole number of steps or samples.
_GRID_RTOL = 1e-9

#: Most steps (Euler) or samples (either method) one call may ask for: each sample stores the
#: state and every body's pose, so ten million of them already take gigabytes. The count is
#: checked before anything is allocated or stepped.
MAX_STEPS = 10_000_000


class SimulationError(ValueError):
    """The integration failed or blew up; the message says at which time and suggests a remedy.

    A ``ValueError`` like every error of the library, so ``except ValueError`` catches it.
    """


@dataclass(frozen=True, eq=False)
class Trajectory:
    """A simulated motion of a model with n bodies and nq coordinates, sampled at nt times.

    Attributes
    ----------
    t : ndarray, shape (nt,)
        Sample times (s).
    q, qdot : ndarray, shape (nt, nq)
        Joint coordinates and velocities; row k is in the coordinates of ``models[k]``.
    T, V : ndarray, shape (nt,)
        Kinetic and potential energy (J), the values of :func:`redmax_edu.dynamics.energies`.
    E_wi : ndarray, shape (nt, n, 4, 4)
        World poses of the bodies (independent of any chart change).
    method : str
        ``"rk45"``, ``"rk45_recursive"``, ``"euler"``, ``"bdf1"``, ``"sdirk2"`` or ``"bdf2"``.
    models : tuple of Model, length nt
        The model each sample is expressed in; it changes only when a joint switched chart.
    h : float or None
        The fixed step of ``"euler"`` and the implicit schemes; None for the adaptive RK45 methods.
    nsteps : int
        Integrator steps taken (accepted steps for RK45).
    nfev : int
        Evaluations of the equations of motion (right-hand sides for RK45, linear solves
        for Euler, residuals with their derivatives for the implicit schemes).
    friction_iterations : ndarray (nsteps,) or None
        With friction (``"euler"`` on a model with ``model.friction`` or frictional floor
        contacts): the staggered-projection iterations of each step (§2.11).
    reparameterized : ndarray, shape (k,)
        Times at which ``model.reparameterize`` changed the coordinates.
    implicit : ImplicitRun or None
        For ``"bdf1"``, ``"sdirk2"``, ``"bdf2"``: every Newton solve with its stencil, iterations,
        residuals and factors (:class:`redmax_edu.implicit.ImplicitRun`); ``qdot`` is then the
        scheme's own velocity.
    variational : VariationalRun or None
        For ``"vi2"``, ``"vi4"``, ``"vi6"``: the discrete momenta, control points and Newton
        records (:class:`redmax_edu.variational.VariationalRun`); ``qdot`` is ``M^-1 p``.

    Notes
    -----
    ``T``, ``V`` and ``E_wi`` are evaluated on first access, by one forward sweep per sample
    (the simulation itself needs none of them, and a long run has many samples).
    """

    t: np.ndarray
    q: np.ndarray
    qdot: np.ndarray
    method: str
    models: tuple
    h: float | None
    nsteps: int
    nfev: int
    reparameterized: np.ndarray
    friction_iterations: np.ndarray | None = None
    implicit: ImplicitRun | None = None
    variational: VariationalRun | None = None

    @cached_property
    def _recorded(self):
        """``(T, V, E_wi)`` of every sample, each from one forward sweep in the sample's model."""
        T, V = np.empty(len(self.t)), np.empty(len(self.t))
        E = np.empty((len(self.t), self.model.n, 4, 4))
        for k, (q, qdot, model) in enumerate(zip(self.q, self.qdot, self.models, strict=True)):
            kin = _forward_kinematics(model, q, qdot)
            T[k], V[k] = _energies(model, q, qdot, kin)
            E[k] = kin.E_wi
        return T, V, E

    # T, V and E_wi are documented with the attributes above (a docstring here would repeat them)
    @property
    def T(self):
        return self._recorded[0]

    @property
    def V(self):
        return self._recorded[1]

    @property
    def E_wi(self):
        return self._recorded[2]

    @property
    def H(self):
        """Total energy relative to the start, ``T + V - V(t0)`` (J), shape (nt,): the reference CSVs' H."""
        return self.T + self.V - self.V[0]

    @property
    def model(self):
        """The model at the first sample."""
        return self.models[0]

    @property
    def final_model(self):
        """The model at the last sample (differs from :attr:`model` after a chart switch)."""
        return self.models[-1]

    def __len__(self):
        return len(self.t)

    def __repr__(self):
        return (f"Trajectory(method={self.method!r}, nt={len(self.t)}, t=[{self.t[0]:g}, {self.t[-1]:g}], "
                f"nq={self.q.shape[1]}, nsteps={self.nsteps})")


# --- argument checks ------------------------------------------------------------------------

def _positive(value, name, allow_none=False):
    if value is None and allow_none:
        return None
    try:
        x = float(as_real(value, (), name))
    except ValueError:
        raise ValueError(f"argument '{name}' must be a positive number, got {value!r}") from None
    if not (np.isfinite(x) and x > 0):
        raise ValueError(f"argument '{name}' must be a positive number, got {x}")
    return x


def _count(value, name, largest):
    """An integer from 1 to ``largest``, or a ValueError naming the argument."""
    if not isinstance(value, (int, np.integer)) or isinstance(value, bool) or not 1 <= value <= largest:
        raise ValueError(f"argument '{name}' must be an integer from 1 to {largest:,}, got {value!r}")
    return int(value)


def _check_span(t_span):
    try:
        span = as_real(t_span, (2,), "t_span")
    except ValueError as err:
        raise ValueError(f"{err} (a pair (t0, t1))") from None
    t0, t1 = float(span[0]), float(span[1])
    if not t1 > t0:
        raise ValueError(f"argument 't_span' must have t1 > t0, got ({t0}, {t1}); "
                         "integration runs forward in time")
    return t0, t1


def _whole_count(length, dt, name, what="steps"):
    """The number of intervals ``dt`` in ``length``, or None if it is not a whole number.

    A count above :data:`MAX_STEPS` is refused before anything is allocated or stepped.
    """
    ratio = length / dt
    check_count(ratio, MAX_STEPS, what, name)
    n = int(round(ratio))
    return n if n >= 1 and abs(n * dt - length) <= _GRID_RTOL * max(length, dt) else None


def _tau_function(tau, nq):
    """``tau`` as a callable ``t -> (nq,) array`` (or None), checked on first use."""
    if tau is None:
        return None
    if callable(tau):
        def checked(t):
            value = tau(t)
            try:
                return as_real(value, (nq,), "tau")
            except ValueError as err:
                raise ValueError(f"argument 'tau': tau({t:g}) returned a bad value: "
                                 f"{str(err).replace(chr(39) + 'tau' + chr(39), 'it')}") from None
        return checked
    const = as_real(tau, (nq,), "tau")
    return lambda t: const


def _check_atol(atol, nq):
    a = as_real(atol, ((), (2 * nq,)), "atol")
    if np.any(a <= 0):
        raise ValueError(f"argument 'atol' must be positive, got {a.tolist()}")
    return float(a) if a.ndim == 0 else a


def _check_finite(t, y, method):
    if y.size and not np.abs(y).max() <= DIVERGED:  # (NaN fails the comparison too)
        remedy = ("use a smaller step 'h', or check for joints whose coordinates reach a singularity "
                  "(with reparameterize=False)" if method == "euler"
                  else "the model may be unstable or stiff; try method='euler'")
        raise SimulationError(f"the simulation blew up at t = {t:.6g} s (a coordinate or velocity is "
                              f"not finite or exceeds {DIVERGED:g}); {remedy}")


# --- recording -------------------------------------------------------------------------------

class _Recorder:
    """Collects samples, one at a time or in blocks, each with the model it is expressed in.

    It keeps the blocks it is given (the drivers pass arrays they no longer change) and stacks
    them once at the end: iterating a block row by row would cost more than the RK45 steps of a
    one-body model.
    """

    def __init__(self):
        self.t, self.q, self.qdot, self.models = [], [], [], []

    def add(self, t, q, qdot, model):
        self.add_block((t,), q[None], qdot[None], model)

    def add_block(self, t, q, qdot, model):
        """Samples at the times ``t`` (m,) with states ``q``, ``qdot`` (m, nq) in one model."""
        self.t.append(t)
        self.q.append(q)
        self.qdot.append(qdot)
        self.models.extend([model] * len(t))

    def trajectory(self, method, h, nsteps, nfev, reparameterized, friction_iterations=None, implicit=None,
                   variational=None):
        return Trajectory(t=np.concatenate(self.t, dtype=float), q=np.concatenate(self.q),
                          qdot=np.concatenate(self.qdot),
                          method=method, models=tuple(self.models), h=h, nsteps=nsteps, nfev=nfev,
                          reparameterized=np.array(reparameterized, dtype=float),
                          friction_iterations=friction_iterations, implicit=implicit,
                          variational=variational)


def _reparameterize(model, q, qdot):
    """``model.reparameterize`` of a checked state and whether it changed anything."""
    new_model, q1, qdot1 = model._reparameterize(q, qdot)
    changed = new_model is not model or not (np.array_equal(q1, q) and np.array_equal(qdot1, qdot))
    return new_model, q1, qdot1, changed


class _NoProgress:
    """The progress bar of a run that shows none: it only counts (tqdm costs a 0.1 s import)."""

    def __init__(self, total):
        self.total, self.n = total, 0.0

    def update(self, dt):
        self.n += dt

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def _progress_bar(enabled, total, method):
    if not enabled:
        return _NoProgress(total)
    from tqdm.auto import tqdm

    return tqdm(total=total, desc=f"simulate ({method})", unit="s",
                bar_format="{l_bar}{bar}| {n:.3g}/{total:.3g} s [{elapsed}<{remaining}]")


# --- the two drivers -------------------------------------------------------------------------

def _advance(bar, dt):
    """Move the progress bar on by ``dt`` seconds without overshooting its total (round-off)."""
    bar.update(max(0.0, min(dt, bar.total - bar.n)))


def _integrate_ode(model, q, qdot, t0, t1, grid, tau_fn, accel, rtol, atol, max_step, progress,
                   reparameterize, max_steps, method, baumgarte):
    from scipy.integrate import RK45

    nq = model.nq
    current = {"model": model, "nfev": 0}

    def rhs(t, y):
        current["nfev"] += 1
        if not np.isfinite(y).all():  # a stage that blew up (accel does not check its arguments)
            _check_finite(t, y, method)
        tau = None if tau_fn is None else tau_fn(t)
        try:
            qddot = accel(current["model"], y[:nq], y[nq:], tau, t=t, baumgarte=baumgarte)
        except np.linalg.LinAlgError as err:
            raise SimulationError(f"forward dynamics failed at t = {t:.6g} s: the mass matrix is "
                                  f"singular or not positive definite ({err})") from None
        except SingularMassMatrixError as err:
            raise SimulationError(f"forward dynamics failed at t = {t:.6g} s: {err}") from None
        return np.concatenate([y[nq:], qddot])

    rec = _Recorder()
    rec.add(t0, q, qdot, model)
    switches = []
    if reparameterize:
        model, q, qdot, changed = _reparameterize(model, q, qdot)
        current["model"] = model
        if changed:
            switches.append(t0)
    solver = RK45(rhs, t0, np.concatenate([q, qdot]), t1, rtol=rtol, atol=atol, max_step=max_step)
    k, nsteps = 1, 0  # next grid sample, accepted steps
    with _progress_bar(progress, t1 - t0, method) as bar:
        while solver.status == "running":
            t_old = solver.t
            message = solver.step()
            if solver.status == "failed":
                raise SimulationError(f"RK45 failed at t = {solver.t:.6g} s: {message}")
            nsteps += 1
            _check_finite(solver.t, solver.y, method)
            if nsteps > max_steps:
                raise SimulationError(f"RK45 needed more than max_steps = {max_steps} steps and reached only "
                                      f"t = {solver.t:.6g} s (last step {solver.step_size:.3g} s); the "
                                      "problem is probably stiff: use method='euler'")
            k_end = int(np.searchsorted(grid, solver.t, side="right"))
            if k_end > k:  # the samples in this step, from the interpolant solve_ivp uses for t_eval
                y = solver.dense_output()(grid[k:k_end])
                rec.add_block(grid[k:k_end], y[:nq].T, y[nq:].T, current["model"])
                k = k_end
            _advance(bar, solver.t - t_old)
            if reparameterize and solver.status == "running":
                y = solver.y
                model, q, qdot, changed = _reparameterize(current["model"], y[:nq], y[nq:])
                if changed:  # restart the solver in the new coordinates, keeping its step size
                    switches.append(solver.t)
                    current["model"] = model
                    solver = RK45(rhs, solver.t, np.concatenate([q, qdot]), t1, rtol=rtol, atol=atol,
                                  max_step=max_step, first_step=min(solver.step_size, t1 - solver.t))
    return rec.trajectory(method, None, nsteps, current["nfev"], switches)


def _has_friction(model):
    """Whether the steps need BISP (§2.11): joint or closure friction, or floor contacts with mu > 0."""
    return bool(model.friction) or any(getattr(c, "mu", 0.0) > 0 for c in model.constraints)


def _integrate_euler(model, q, qdot, t0, n_steps, h, stride, tau_fn, progress, reparameterize, baumgarte):
    rec = _Recorder()
    rec.add(t0, q, qdot, model)
    switches = []
    frictional = _has_friction(model)
    iterations, beta = [], None
    with _progress_bar(progress, n_steps * h, "euler") as bar:
        for k in range(1, n_steps + 1):
            if reparameterize:  # at the start of every step, as the reference does
                model, q, qdot, changed = _reparameterize(model, q, qdot)
                if changed:
                    switches.append(t0 + (k - 1) * h)
            t = t0 + k * h
            tau = None if tau_fn is None else tau_fn(t)  # applied torques at the END of the step
            try:
                if frictional:  # bilateral staggered projections, warm-started with the last friction
                    q, qdot, info = _frictional_euler_step(model, q, qdot, h, tau, t - h, baumgarte, beta)
                    beta = info.beta
                    iterations.append(info.iterations)
                else:
                    q, qdot = _euler_step(model, q, qdot, h, tau, t - h, baumgarte)
            except np.linalg.LinAlgError as err:
                raise SimulationError(f"linearly implicit Euler failed in the step to t = {t:.6g} s: "
                                      f"singular system ({err})") from None
            except SingularMassMatrixError as err:
                raise SimulationError(f"linearly implicit Euler failed in the step to t = {t:.6g} s: "
                                      f"{err}") from None
            _check_finite(t, np.concatenate([q, qdot]), "euler")
            if k % stride == 0:
                rec.add(t, q, qdot, model)
            _advance(bar, h)
    return rec.trajectory("euler", h, n_steps, n_steps, switches,
                          np.array(iterations, dtype=int) if frictional else None)


def simulate(model, q0, qdot0, t_span, method="rk45", h=None, tau=None, rtol=1e-4, atol=1e-6,
             sample_dt=None, progress=False, *, reparameterize=True, max_step=None, max_steps=20_000,
             baumgarte=DEFAULT_BAUMGARTE, newton_tol=DEFAULT_NEWTON_TOL, max_newton=DEFAULT_MAX_NEWTON,
             del_method="recursive"):
    """Integrate the RedMax equations of motion from ``(q0, qdot0)`` over ``t_span``.

    Parameters
    ----------
    model : Model
        With n bodies and nq coordinates.
    q0, qdot0 : array_like, shape (nq,)
        The initial state.
    t_span : (float, float)
        Start and end time ``(t0, t1)``, ``t1 > t0`` (s).
    method : {"rk45", "rk45_recursive", "euler", "bdf1", "sdirk2", "bdf2", "vi2", "vi4", "vi6"}
        ``"rk45"``: adaptive Dormand-Prince on ``M_r qddot = f_r`` (Eq. 2.19), the reference's
        ``ode45`` path. ``"rk45_recursive"``: the same with ``qddot`` from recursive forward
        dynamics (Algorithm 9, O(n); no deformable bodies). ``"euler"``: linearly implicit
        Euler, springs and dampers only, with step ``h`` (Eq. 2.84-2.86). ``"bdf1"``,
        ``"sdirk2"``, ``"bdf2"``: fully implicit with step ``h``, solved by Newton (§3.4,
        :mod:`redmax_edu.implicit`); ``qdot`` is each scheme's own velocity. ``"vi2"``,
        ``"vi4"``, ``"vi6"``: variational integrators of order 2, 4, 6 (discrete Euler-Lagrange
        equations with s = 1, 2, 3 Lobatto control points, solved by Newton,
        :mod:`redmax_edu.variational`); ``qdot`` is ``M^-1 p``, no chart switches.
    h : float, optional
        The step of ``"euler"`` and the implicit schemes (required; ``t1 - t0`` must be a
        whole number of steps). For the RK45 methods it only sets the sampling interval when
        ``sample_dt`` is not given.
    tau : None, array_like (nq,), callable ``t -> (nq,)``, or array_like (n_steps, nq)
        Applied joint forces (N m for revolute, N for prismatic coordinates). RK45 evaluates
        a callable wherever it evaluates the dynamics; Euler evaluates it at the *end* time
        of each step, as the reference does, and the implicit schemes at the new time of each
        step and stage. The implicit schemes also take per-step controls, one row per step
        (both stages of an SDIRK2 step use the step's row).
    rtol, atol : float
        RK45's relative and absolute error tolerances (default: the reference's ``ode45``
        settings). ``atol`` may also be an array of shape (2 nq,), one per entry of
        ``(q, qdot)``. Unused by Euler.
    sample_dt : float, optional
        Interval of the returned samples. RK45: default ``h`` if given, else 0.01 s (the
        reference CSVs); the samples come from the solver's dense output and do not change
        its steps; if the span is not a whole number of intervals, ``t1`` is added. Euler:
        a whole multiple of ``h``, default ``h`` (every step).
    progress : bool
        Show a tqdm progress bar (off by default, so notebook outputs stay reproducible).
    reparameterize : bool
        Pass the state through ``model.reparameterize`` before every step (§2.4.5, §2.4.8).
        The reference's ``ode45`` path does not; its Euler path does. RK45 samples inside a
        step are in the coordinates the step started with.
    max_step : float, optional
        Largest RK45 step (s); default a tenth of the span, the default ``MaxStep`` of
        MATLAB's and Octave's ``ode45`` (scipy's own default is unbounded).
    max_steps : int
        RK45 gives up (with a hint that the problem is stiff) after this many steps.
    baumgarte : (alpha, beta, gamma)
        Stabilisation gains of the model's constraints (§2.8, §1.12): RK45 solves them at the
        acceleration level with ``2 alpha`` and ``beta^2``, Euler at the velocity level with
        ``gamma``. Default the reference's ``(5, 5, 5)`` (1/s). Unused without constraints
        and by the implicit schemes, which hold the constraints at the position level.
    newton_tol : float
        Implicit schemes: Newton stops when ``|g|_inf / (h max M_ii)`` is at most this (rad/s or m/s).
    max_newton : int
        Implicit schemes: Newton iterations allowed per solve.
    del_method : {"recursive", "dense"}
        Variational schemes: the DEL residual and Newton direction by the O(n) recursions
        (default) or from the assembled dense Jacobian (the same iterates to round-off).

    Returns
    -------
    Trajectory
        Samples at ``t0``, then every ``sample_dt`` up to ``t1``.

    Raises
    ------
    ValueError
        Naming the argument that is wrong (shape, sign, unknown method, missing ``h``).
    SimulationError
        (a ValueError) if the solver fails or the state stops being finite; the message
        gives the time.

    Notes
    -----
    RK45 is driven step by step (``scipy.integrate.RK45``, the solver that
    ``solve_ivp(method="RK45")`` loops over) so that a blow-up reports its time, a progress
    bar can follow, and a chart switch can restart the solver in new coordinates. Without
    a switch the result equals ``solve_ivp(..., method="RK45", t_eval=grid, max_step=max_step)``.

    Examples
    --------
    A pendulum released from the horizontal: RK45 conserves the energy to about its
    tolerance, linearly implicit Euler (springs and dampers only) dissipates it.

    >>> from redmax_edu.joints import Revolute
    >>> from redmax_edu.model import Body, Model
    >>> T = np.eye(4); T[0, 3] = 0.5
    >>> rod = Body("rod", -1, Revolute([0, 1, 0]), np.eye(4), T, 1.0, [1e-4, 0.0834, 0.0834])
    >>> model = Model([rod])
    >>> ode = simulate(model, [0.0], [0.0], (0.0, 2.0))
    >>> ode.t.shape, ode.q.shape, ode.E_wi.shape
    ((201,), (201, 1), (201, 1, 4, 4))
    >>> bool(abs(ode.H).max() < 1e-3 * ode.T.max())
    True
    >>> euler = simulate(model, [0.0], [0.0], (0.0, 2.0), method="euler", h=0.01)
    >>> bool(euler.H[-1] < 0)
    True

    Taught in book/02_reduced/03_redmax_dynamics and 05_stiffness_damping.
    """
    if not isinstance(model, Model):
        raise ValueError(f"argument 'model' must be a Model, got {type(model).__name__}")
    if method not in METHODS:
        raise ValueError(f"argument 'method' must be one of {', '.join(map(repr, METHODS))}, got {method!r}")
    if method == "rk45_recursive" and model.deformables:
        raise ValueError("argument 'method': 'rk45_recursive' does not handle deformable bodies (their "
                         "nodes are not part of the tree); use method='rk45'")
    nq = model.nq
    q = as_real(q0, (nq,), "q0").copy()
    qdot = as_real(qdot0, (nq,), "qdot0").copy()
    t0, t1 = _check_span(t_span)
    h = _positive(h, "h", allow_none=True)
    sample_dt = _positive(sample_dt, "sample_dt", allow_none=True)
    # only joints with singular coordinates can change them (§2.4.5, §2.4.8)
    reparameterize = bool(reparameterize) and any(b.joint.has_charts for b in model.bodies)
    fixed_step = method in SCHEMES or method in VARIATIONAL_SCHEMES
    per_step = (fixed_step and tau is not None and not callable(tau) and np.ndim(tau) == 2)
    tau_fn = None if per_step else _tau_function(tau, nq)
    baumgarte = check_baumgarte(baumgarte)
    if tau_fn is not None:
        tau_fn(t0)  # a bad callable fails now, naming 'tau'
    if method != "euler" and _has_friction(model):
        raise ValueError(f"argument 'method': {method!r} cannot simulate friction; bilateral staggered "
                         "projections (§2.11) are a velocity-level method: use method='euler', or drop the "
                         "friction (model.with_friction([]) and floor contacts with mu = 0)")
    if model.constraints:  # a redundant or inconsistent set fails now, naming the constraint
        rows = constraint_rows(model, q, qdot, t0)
        check_constraint_set(model, rows, ~rows.inequality)  # (inequalities may overlap: contacts)
    if method == "euler" or fixed_step:
        if h is None:
            raise ValueError(f"argument 'h' (the step size) is required for method={method!r}")
        n_steps = _whole_count(t1 - t0, h, "h")
        if n_steps is None:
            raise ValueError(f"argument 'h': the span t1 - t0 = {t1 - t0:g} s is not a whole number of "
                             f"steps h = {h:g} s")
        stride = 1
        if sample_dt is not None:
            stride = _whole_count(sample_dt, h, "sample_dt", "steps per sample")
            if stride is None:
                raise ValueError(f"argument 'sample_dt' must be a whole multiple of h = {h:g}, "
                                 f"got {sample_dt:g}")
            if n_steps % stride:
                raise ValueError(f"argument 'sample_dt': the {n_steps} steps are not a whole number of "
                                 f"samples every {stride} steps")
        if method in VARIATIONAL_SCHEMES:
            controls = as_real(tau, (n_steps, nq), "tau") if per_step else None
            newton = (_positive(newton_tol, "newton_tol"), _count(max_newton, "max_newton", 1000))
            return _integrate_variational(model, q, qdot, t0, n_steps, h, stride, tau_fn, controls, method,
                                          bool(progress), *newton, del_method)
        if method in SCHEMES:
            controls = as_real(tau, (n_steps, nq), "tau") if per_step else None
            newton = (_positive(newton_tol, "newton_tol"), _count(max_newton, "max_newton", 1000))
            return _integrate_implicit(model, q, qdot, t0, n_steps, h, stride, tau_fn, controls, method,
                                       bool(progress), bool(reparameterize), *newton)
        return _integrate_euler(model, q, qdot, t0, n_steps, h, stride, tau_fn, bool(progress),
                                bool(reparameterize), baumgarte)
    rtol = _positive(rtol, "rtol")
    atol = _check_atol(atol, nq)
    max_step = _positive(max_step, "max_step", allow_none=True) or (t1 - t0) / 10
    max_steps = _count(max_steps, "max_steps", MAX_STEPS)
    dt = sample_dt if sample_dt is not None else (h if h is not None else DEFAULT_SAMPLE_DT)
    dt_name = "sample_dt" if sample_dt is not None else ("h" if h is not None else "t_span")
    n = _whole_count(t1 - t0, dt, dt_name, "samples")
    if n is not None:
        grid = t0 + dt * np.arange(n + 1)
        grid[-1] = t1
    else:  # the whole intervals that end clearly before t1, then t1 itself
        inner = t0 + dt * np.arange(int(np.ceil((t1 - t0) / dt)))
        grid = np.append(inner[inner < t1 - _GRID_RTOL * dt], t1)
    return _integrate_ode(model, q, qdot, t0, t1, grid, tau_fn, ODE_ACCELERATIONS[method], rtol, atol,
                          max_step, bool(progress), bool(reparameterize), int(max_steps), method, baumgarte)


@dataclass
class OrderStudy:
    """Fixed-step runs of one method against a tight RK45 reference: errors and observed order.

    ``steps`` (s) and ``errors`` (the largest entry of ``|q - q_ref|`` and ``|qdot - qdot_ref|``
    at the end time, rad or m and per second) have one entry per run; ``order`` is the slope of
    ``log(error)`` against ``log(h)`` over the last ``fitted`` runs.
    """

    method: str
    steps: np.ndarray
    errors: np.ndarray
    order: float
    fitted: int


def reference_run(model, q0, qdot0, t_end, *, rtol=1e-12, atol=1e-13):
    """The end state of an RK45 run at tight tolerances, the yardstick of :func:`observed_order`."""
    return simulate(model, q0, qdot0, (0.0, t_end), rtol=rtol, atol=atol, sample_dt=t_end)


def observed_order(model, q0, qdot0, t_end, method, steps, *, reference=None, fit=None, **options):
    """Run ``method`` from ``(q0, qdot0)`` over ``[0, t_end]`` with each step ``h`` in ``steps``.

    Parameters
    ----------
    model, q0, qdot0 : Model, array_like (nq,), array_like (nq,)
        As for :func:`simulate`.
    t_end : float
        The time the errors are measured at (s); a whole number of every step.
    method : str
        A fixed-step method of :func:`simulate` (``"euler"``, ``"bdf1"``, ..., ``"vi6"``).
    steps : sequence of float
        At least two steps (s), largest first.
    reference : Trajectory, optional
        A run ending at ``t_end`` to measure against (default :func:`reference_run`): pass one
        to share it between methods.
    fit : int, optional
        Fit the slope over the last ``fit`` steps only (default all), where the error has
        reached its asymptotic regime.
    **options
        Passed on to :func:`simulate` (``newton_tol``, ``tau``, ...).

    Returns
    -------
    OrderStudy

    Examples
    --------
    >>> from redmax_edu.scenes import hanging_chain
    >>> rods = hanging_chain(2, length=1.0)
    >>> study = observed_order(rods, [0.5, -0.3], [0.0, 0.0], 0.2, "bdf1", [0.004, 0.002, 0.001])
    >>> bool(abs(study.order - 1.0) < 0.15)
    True

    Taught in book/03_differentiable/04_implicit_integrators and book/05_variational/.
    """
    if method in ODE_ACCELERATIONS or method not in METHODS:
        raise ValueError(f"argument 'method' must be a fixed-step method of simulate "
                         f"({', '.join(m for m in METHODS if m not in ODE_ACCELERATIONS)}), got {method!r}")
    steps = as_real(steps, None, "steps")
    if steps.ndim != 1 or len(steps) < 2 or np.any(steps <= 0) or np.any(np.diff(steps) >= 0):
        raise ValueError(f"argument 'steps' must hold at least two positive steps, largest first, got "
                         f"{steps.tolist()}")
    fitted = len(steps) if fit is None else as_index(fit, "fit", 2)
    if fitted > len(steps):
        raise ValueError(f"argument 'fit' is {fitted}, but 'steps' holds only {len(steps)} steps")
    ref = reference_run(model, q0, qdot0, t_end) if reference is None else reference
    if not isinstance(ref, Trajectory) or abs(ref.t[-1] - t_end) > _GRID_RTOL * t_end:
        raise ValueError(f"argument 'reference' must be a Trajectory ending at t_end = {t_end:g} s")
    errors = []
    for h in steps:
        run = simulate(model, q0, qdot0, (0.0, t_end), method, h=h, sample_dt=t_end, **options)
        errors.append(np.abs(np.r_[run.q[-1] - ref.q[-1], run.qdot[-1] - ref.qdot[-1]]).max())
    errors = np.array(errors)
    order = float(np.polyfit(np.log(steps[-fitted:]), np.log(errors[-fitted:]), 1)[0])
    return OrderStudy(method, steps, errors, order, fitted)
