"""Linearly implicit Euler in time: the reference's Euler path (its type 3, Eq. 2.84-2.86).

Each step is :func:`redmax_edu.dynamics.linearly_implicit_euler_step`: springs and dampers only
(joint and maximal) are linearised at the end of the step, gravity and the velocity terms stay
explicit, so stiff springs and strong damping stay stable at steps where RK45 would crawl. A
model with Coulomb friction (``model.friction``, or floor contacts with ``mu > 0``) steps with
bilateral staggered projections instead (§2.11, :func:`redmax_edu.friction.bisp.frictional_euler_step`),
warm-started with the previous step's friction. This is not Part 1's scheme
(``maximal.simulate(method="implicit")``, linearly implicit Euler with every force linearised,
Coriolis and gravity included).

Taught in book/02_reduced/05_stiffness_damping.
"""

import numpy as np

from .dynamics import euler_step_unchecked
from .friction.bisp import frictional_euler_step_unchecked
from .simulation import (
    Recorder,
    SimulationError,
    advance,
    check_finite,
    fixed_steps,
    progress_bar,
    reparameterize_state,
)
from .singularity import SingularMassMatrixError

__all__ = ["integrate"]


def integrate(run, h, sample_dt=None, baumgarte=(5.0, 5.0, 5.0)):
    """Integrate a :class:`redmax_edu.simulation.Start` with step ``h``, a sample every ``sample_dt``
    (a whole multiple of ``h``, default every step); ``baumgarte`` holds the constraints at the
    velocity level with its ``gamma`` (§2.8)."""
    h, n_steps, stride = fixed_steps(run, h, sample_dt)
    model, q, qdot, t0, tau_fn = run.model, run.q, run.qdot, run.t0, run.tau
    rec = Recorder()
    rec.add(t0, q, qdot, model)
    switches = []
    frictional = model.has_friction
    iterations, beta = [], None
    with progress_bar(run.progress, n_steps * h, "euler") as bar:
        for k in range(1, n_steps + 1):
            if run.reparameterize:  # at the start of every step, as the reference does
                model, q, qdot, changed = reparameterize_state(model, q, qdot)
                if changed:
                    switches.append(t0 + (k - 1) * h)
            t = t0 + k * h
            tau = None if tau_fn is None else tau_fn(t)  # applied torques at the END of the step
            try:
                if frictional:  # bilateral staggered projections, warm-started with the last friction
                    q, qdot, info = frictional_euler_step_unchecked(model, q, qdot, h, tau, t - h, baumgarte,
                                                                    beta)
                    beta = info.beta
                    iterations.append(info.iterations)
                else:
                    q, qdot = euler_step_unchecked(model, q, qdot, h, tau, t - h, baumgarte)
            except np.linalg.LinAlgError as err:
                raise SimulationError(f"linearly implicit Euler failed in the step to t = {t:.6g} s: "
                                      f"singular system ({err})") from None
            except SingularMassMatrixError as err:
                raise SimulationError(f"linearly implicit Euler failed in the step to t = {t:.6g} s: "
                                      f"{err}") from None
            check_finite(t, np.concatenate([q, qdot]), "euler", model)
            if k % stride == 0:
                rec.add(t, q, qdot, model)
            advance(bar, h)
    return rec.trajectory("euler", h, n_steps, n_steps, switches,
                          np.array(iterations, dtype=int) if frictional else None)
