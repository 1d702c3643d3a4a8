"""Simulating a reduced-coordinate model in time: :func:`simulate`, the door to every integrator.

(Writeup §2.8 and §3.4; the integrators of the RedMax reference and of Part 3.)

:func:`simulate` checks the arguments every method takes (:func:`redmax_edu.simulation.start`)
and hands the run to the family that owns the method's loop:

``"rk45"``, ``"rk45_recursive"``
    :mod:`redmax_edu.rk45`: the adaptive Dormand-Prince 5(4) pair on ``M_r qddot = f_r``
    (Eq. 2.19), the reference's ``ode45`` path, with ``qddot`` from the dense solve (reference
    type 2) or from recursive forward dynamics in O(n) (Algorithm 9; type 1).
``"euler"``
    :mod:`redmax_edu.euler`: linearly implicit Euler, springs and dampers only, with a fixed
    step ``h`` (Eq. 2.84-2.86; reference type 3), and bilateral staggered projections for a
    model with friction (§2.11).
``"bdf1"``, ``"sdirk2"``, ``"bdf2"``
    :mod:`redmax_edu.implicit`: the fully implicit schemes of §3.4 with a fixed step ``h``, each
    step solved by Newton's method with a line search (Algorithm 12) in positions only,
    constraints held at the position level.
``"vi2"``, ``"vi4"``, ``"vi6"``
    :mod:`redmax_edu.variational`: variational integrators (the appendix of Fan, Schultz and
    Murphey, WAFR 2018): the discrete Euler-Lagrange equations of the action with s = 1, 2, 3 Lobatto control
    points per step, in position-momentum form, solved by Newton's method.

Every family lets joints with singular coordinates leave them (§2.4.5, §2.4.8) before each step
(the variational schemes excepted), and records a :class:`~redmax_edu.simulation.Trajectory`
that keeps the model of every sample. :func:`observed_order` measures the order of a fixed-step
method against a tight RK45 run.

Taught in book/02_reduced/03_redmax_dynamics and 05_stiffness_damping.
"""

from dataclasses import dataclass

import numpy as np

from . import euler, implicit, rk45, variational
from ._validate import as_index, as_real
from .constraints import DEFAULT_BAUMGARTE
from .rk45 import DEFAULT_SAMPLE_DT, ODE_ACCELERATIONS
from .simulation import DIVERGED, GRID_RTOL, SimulationError, Trajectory, start

__all__ = ["METHODS", "ODE_ACCELERATIONS", "SimulationError", "Trajectory", "simulate",
           "DEFAULT_SAMPLE_DT", "DIVERGED", "OrderStudy", "reference_run", "observed_order"]

#: The method names :func:`simulate` accepts, by the family that owns their loop.
METHODS = (*ODE_ACCELERATIONS, "euler", *implicit.SCHEMES, *variational.SCHEMES)


def simulate(model, q0, qdot0, t_span, method="rk45", h=None, tau=None, rtol=1e-4, atol=1e-6,
             sample_dt=None, progress=False, *, reparameterize=True, max_step=None, max_steps=20_000,
             baumgarte=DEFAULT_BAUMGARTE, newton_tol=implicit.DEFAULT_NEWTON_TOL,
             max_newton=implicit.DEFAULT_MAX_NEWTON, del_method="recursive"):
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
        ``"sdirk2"``, ``"bdf2"``: fully implicit with step ``h``, solved by Newton's method with a
        line search (§3.4, Algorithm 12, :mod:`redmax_edu.implicit`); ``qdot`` is each scheme's own
        velocity. ``"vi2"``, ``"vi4"``, ``"vi6"``: variational integrators of order 2, 4, 6
        (discrete Euler-Lagrange equations with s = 1, 2, 3 Lobatto control points, solved by
        Newton, :mod:`redmax_edu.variational`); ``qdot`` is ``M^-1 p``, no chart switches.
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
    run = start(model, q0, qdot0, t_span, method, METHODS, tau, progress, reparameterize, baumgarte,
                per_step=method in implicit.SCHEMES or method in variational.SCHEMES)
    if method in ODE_ACCELERATIONS:
        return rk45.integrate(run, h, sample_dt, rtol, atol, max_step, max_steps, baumgarte)
    if method == "euler":
        return euler.integrate(run, h, sample_dt, baumgarte)
    if method in implicit.SCHEMES:
        return implicit.integrate(run, h, sample_dt, newton_tol, max_newton)
    return variational.integrate(run, h, sample_dt, newton_tol, max_newton, del_method)


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
    if not isinstance(ref, Trajectory) or abs(ref.t[-1] - t_end) > GRID_RTOL * t_end:
        raise ValueError(f"argument 'reference' must be a Trajectory ending at t_end = {t_end:g} s")
    errors = []
    for h in steps:
        run = simulate(model, q0, qdot0, (0.0, t_end), method, h=h, sample_dt=t_end, **options)
        errors.append(np.abs(np.r_[run.q[-1] - ref.q[-1], run.qdot[-1] - ref.qdot[-1]]).max())
    errors = np.array(errors)
    order = float(np.polyfit(np.log(steps[-fitted:]), np.log(errors[-fitted:]), 1)[0])
    return OrderStudy(method, steps, errors, order, fitted)
