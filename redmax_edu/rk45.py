"""RK45 on the RedMax equations of motion: the reference's ``ode45`` paths (its types 1 and 2).

``M_r qddot = f_r`` (Eq. 2.19) as a first-order system ``y = (q, qdot)``,
``ydot = (qdot, qddot)``, integrated by the adaptive Dormand-Prince 5(4) pair of
:class:`scipy.integrate.RK45` (the solver behind ``solve_ivp(method="RK45")`` and the
counterpart of MATLAB's ``ode45``). ``"rk45"`` takes ``qddot`` from the dense solve of
:func:`redmax_edu.dynamics.forward_dynamics` (reference type 2), ``"rk45_recursive"`` from
recursive forward dynamics in O(n) (Algorithm 9, :func:`redmax_edu.recursive.recursive_forward_dynamics`;
reference type 1). The result is sampled on a fixed grid by the solver's dense output, as the
reference's CSV files are (every 0.01 s).

RK45 is driven step by step so that a blow-up reports its time, a progress bar can follow,
and a chart switch can restart the solver in new coordinates. Without a switch the result
equals ``solve_ivp(..., method="RK45", t_eval=grid, max_step=max_step)``.

Taught in book/02_reduced/03_redmax_dynamics.
"""

import numpy as np

from ._validate import STEP_COLLAPSE, as_real
from .constraints import check_baumgarte
from .dynamics import forward_dynamics_unchecked
from .recursive import recursive_forward_dynamics_unchecked
from .simulation import (
    GRID_RTOL,
    MAX_STEPS,
    Recorder,
    SimulationError,
    advance,
    check_finite,
    positive,
    progress_bar,
    reparameterize_state,
    state_entry,
    whole_count,
    whole_number,
)
from .singularity import SingularMassMatrixError

__all__ = ["ODE_ACCELERATIONS", "DEFAULT_SAMPLE_DT", "integrate"]

#: Joint accelerations ``qddot = f(model, q, qdot, tau)`` of the methods that hand the
#: equations of motion to an ODE solver, called with a checked state (float arrays of shape
#: (nq,)), ``tau`` an (nq,) array or None, and keywords ``t`` (time) and ``baumgarte`` (the
#: checked gains of the constraints): the lean cores of the public functions (``"rk45"``: that
#: of :func:`redmax_edu.dynamics.forward_dynamics`, reference type 2; ``"rk45_recursive"``:
#: that of :func:`redmax_edu.recursive.recursive_forward_dynamics`, type 1).
ODE_ACCELERATIONS = {"rk45": forward_dynamics_unchecked,
                     "rk45_recursive": recursive_forward_dynamics_unchecked}

#: Sampling interval of RK45 output when neither ``sample_dt`` nor ``h`` is given (s): the
#: grid of the reference CSV files.
DEFAULT_SAMPLE_DT = 0.01


def _check_atol(atol, nq):
    a = as_real(atol, ((), (2 * nq,)), "atol")
    if np.any(a <= 0):
        raise ValueError(f"argument 'atol' must be positive, got {a.tolist()}")
    return float(a) if a.ndim == 0 else a


def _grid(t0, t1, h, sample_dt):
    """The sample times: every ``sample_dt`` (else ``h``, else 0.01 s) from t0, then t1."""
    dt = sample_dt if sample_dt is not None else (h if h is not None else DEFAULT_SAMPLE_DT)
    dt_name = "sample_dt" if sample_dt is not None else ("h" if h is not None else "t_span")
    n = whole_count(t1 - t0, dt, dt_name, "samples")
    if n is not None:
        grid = t0 + dt * np.arange(n + 1)
        grid[-1] = t1
        return grid
    inner = t0 + dt * np.arange(int(np.ceil((t1 - t0) / dt)))  # the whole intervals clearly before t1
    return np.append(inner[inner < t1 - GRID_RTOL * dt], t1)


def _collapsed(solver, model, rtol, atol):
    """Raise the :class:`SimulationError` of a step that shrank below :data:`STEP_COLLAPSE` of the
    span, naming the entry of the state that changes fastest against its tolerance."""
    y, rate = solver.y, np.abs(solver.f)
    k = int(np.argmax(rate / (atol + rtol * np.abs(y))))
    raise SimulationError(f"the simulation blew up at t = {solver.t:.6g} s: RK45's step size collapsed to "
                          f"{solver.step_size:.3g} s (below {STEP_COLLAPSE:g} of the span), driven by "
                          f"{state_entry(model, k)}, which changes at {rate[k]:.3g} per second; the model "
                          "may be unstable, at a singularity, or driven by a force that grows without bound")


def integrate(run, h=None, sample_dt=None, rtol=1e-4, atol=1e-6, max_step=None, max_steps=20_000,
              baumgarte=(5.0, 5.0, 5.0)):
    """Integrate a :class:`redmax_edu.simulation.Start` with RK45; the arguments as in
    :func:`redmax_edu.integrators.simulate` (``h`` only sets the sampling interval here).

    RK45 steps the first-order system ``d/dt (q, qdot) = (qdot, M_r^-1 f_r)`` (Eq. 2.22)."""
    model, method = run.model, run.method
    if method == "rk45_recursive" and model.deformables:
        raise ValueError("argument 'method': 'rk45_recursive' does not handle deformable bodies (their "
                         "nodes are not part of the tree); use method='rk45'")
    grid = _grid(run.t0, run.t1, positive(h, "h", allow_none=True), positive(sample_dt, "sample_dt", True))
    rtol, atol = positive(rtol, "rtol"), _check_atol(atol, model.nq)
    max_step = positive(max_step, "max_step", allow_none=True) or (run.t1 - run.t0) / 10
    return _integrate(run, grid, ODE_ACCELERATIONS[method], rtol, atol, max_step,
                      whole_number(max_steps, "max_steps", MAX_STEPS), check_baumgarte(baumgarte))


def _integrate(run, grid, accel, rtol, atol, max_step, max_steps, baumgarte):
    from scipy.integrate import RK45

    model, q, qdot, t0, t1, method = run.model, run.q, run.qdot, run.t0, run.t1, run.method
    nq, tau_fn = model.nq, run.tau
    current = {"model": model, "nfev": 0}

    def rhs(t, y):
        current["nfev"] += 1
        if not np.isfinite(y).all():  # a stage that blew up (accel does not check its arguments)
            check_finite(t, y, method, current["model"])
        tau = None if tau_fn is None else tau_fn(t)
        try:
            qddot = accel(current["model"], y[:nq], y[nq:], tau, t=t, baumgarte=baumgarte)
        except np.linalg.LinAlgError as err:
            raise SimulationError(f"forward dynamics failed at t = {t:.6g} s: the mass matrix is "
                                  f"singular or not positive definite ({err})") from None
        except SingularMassMatrixError as err:
            raise SimulationError(f"forward dynamics failed at t = {t:.6g} s: {err}") from None
        return np.concatenate([y[nq:], qddot])

    rec = Recorder()
    rec.add(t0, q, qdot, model)
    switches = []
    if run.reparameterize:
        model, q, qdot, changed = reparameterize_state(model, q, qdot)
        current["model"] = model
        if changed:
            switches.append(t0)
    solver = RK45(rhs, t0, np.concatenate([q, qdot]), t1, rtol=rtol, atol=atol, max_step=max_step)
    k, nsteps, last_step = 1, 0, 0.0  # next grid sample, accepted steps, the step before (none yet)
    with progress_bar(run.progress, t1 - t0, method) as bar:
        while solver.status == "running":
            t_old = solver.t
            message = solver.step()
            if solver.status == "failed":
                raise SimulationError(f"RK45 failed at t = {solver.t:.6g} s: {message}")
            nsteps += 1
            check_finite(solver.t, solver.y, method, current["model"])
            shrinking = last_step >= solver.step_size  # (a first step may be tiny, then grow)
            if solver.status == "running" and shrinking and solver.step_size < STEP_COLLAPSE * (t1 - t0):
                _collapsed(solver, current["model"], rtol, atol)
            last_step = solver.step_size
            if nsteps > max_steps:
                raise SimulationError(f"RK45 needed more than max_steps = {max_steps} steps and reached only "
                                      f"t = {solver.t:.6g} s (last step {solver.step_size:.3g} s); the "
                                      "problem is probably stiff: use method='euler'")
            k_end = int(np.searchsorted(grid, solver.t, side="right"))
            if k_end > k:  # the samples in this step, from the interpolant solve_ivp uses for t_eval
                y = solver.dense_output()(grid[k:k_end])
                rec.add_block(grid[k:k_end], y[:nq].T, y[nq:].T, current["model"])
                k = k_end
            advance(bar, solver.t - t_old)
            if run.reparameterize and solver.status == "running":
                y = solver.y
                model, q, qdot, changed = reparameterize_state(current["model"], y[:nq], y[nq:])
                if changed:  # restart the solver in the new coordinates, keeping its step size
                    switches.append(solver.t)
                    current["model"] = model
                    solver = RK45(rhs, solver.t, np.concatenate([q, qdot]), t1, rtol=rtol, atol=atol,
                                  max_step=max_step, first_step=min(solver.step_size, t1 - solver.t))
    return rec.trajectory(method, None, nsteps, current["nfev"], switches)
