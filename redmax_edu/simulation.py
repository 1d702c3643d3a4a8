"""What every integrator family shares: the run's checked start, its recording and its result.

:func:`redmax_edu.integrators.simulate` checks the arguments that every method takes (the
model, the initial state, the span, the applied forces) into a :class:`Start` and hands it to
the family that owns the method's loop: :mod:`redmax_edu.rk45` (the adaptive RK45 paths),
:mod:`redmax_edu.euler` (linearly implicit Euler), :mod:`redmax_edu.implicit` (BDF1, SDIRK2,
BDF2) and :mod:`redmax_edu.variational` (the variational integrators). Each loop records its
samples with a :class:`Recorder` and returns a :class:`Trajectory`; each watches its state
with :func:`check_finite`, shows a :func:`progress_bar` when asked, and lets joints with
singular coordinates leave them with :func:`reparameterize_state` (§2.4.5, §2.4.8).

Taught in book/02_reduced/03_redmax_dynamics and 05_stiffness_damping.
"""

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from ._validate import as_callable, as_flag, as_real, check_count
from .constrained import check_constraint_set, constraint_rows
from .constraints import check_baumgarte
from .dynamics import energies_unchecked
from .kinematics import forward_kinematics_unchecked
from .model import Model

__all__ = ["SimulationError", "Trajectory", "Start", "Recorder", "start", "fixed_steps", "positive",
           "whole_number", "state_entry", "check_finite", "progress_bar", "advance", "reparameterize_state",
           "DIVERGED", "MAX_STEPS", "GRID_RTOL", "DEFAULT_NEWTON_TOL", "DEFAULT_MAX_NEWTON"]

#: A state entry beyond this magnitude (SI units) means the integration has blown up.
DIVERGED = 1e10

#: Relative slack when checking that a span is a whole number of steps or samples.
GRID_RTOL = 1e-9

#: The Newton solves of the implicit and variational schemes have converged when their residual,
#: scaled to a velocity (``|g|_inf / (h max_i M_ii)``, rad/s or m/s), is at most this.
DEFAULT_NEWTON_TOL = 1e-10

#: Newton iterations allowed per solve before the step is reported as failed.
DEFAULT_MAX_NEWTON = 25

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
        The method of :func:`redmax_edu.integrators.simulate` that made the run.
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
    implicit: object = None
    variational: object = None

    @cached_property
    def _recorded(self):
        """``(T, V, E_wi)`` of every sample, each from one forward sweep in the sample's model."""
        T, V = np.empty(len(self.t)), np.empty(len(self.t))
        E = np.empty((len(self.t), self.model.n, 4, 4))
        for k, (q, qdot, model) in enumerate(zip(self.q, self.qdot, self.models, strict=True)):
            kin = forward_kinematics_unchecked(model, q, qdot)
            T[k], V[k] = energies_unchecked(model, q, qdot, kin)
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


# --- the arguments every method takes ------------------------------------------------------------

@dataclass(frozen=True)
class Start:
    """The checked arguments of a run that every integrator family takes.

    Attributes
    ----------
    model : Model
    q, qdot : ndarray, shape (nq,)
        The initial state (copies the run may not share with the caller).
    t0, t1 : float
        The span, ``t1 > t0`` (s).
    method : str
    tau : callable or None
        Applied joint forces ``t -> (nq,)``, checked at ``t0`` and wrapped so that a bad value
        later names 'tau' and the time; None without applied forces or with per-step controls.
    controls : array_like or None
        Per-step controls as given (one row per step; the fixed-step families check their shape).
    progress : bool
    reparameterize : bool
        Whether the loop passes the state through ``model.reparameterize``: asked for, and the
        model has a joint with singular coordinates.
    """

    model: Model
    q: np.ndarray
    qdot: np.ndarray
    t0: float
    t1: float
    method: str
    tau: object
    controls: object
    progress: bool
    reparameterize: bool


def positive(value, name, allow_none=False):
    """``value`` as a positive finite float (None passes when ``allow_none``), or a ValueError naming it."""
    if value is None and allow_none:
        return None
    try:
        x = float(as_real(value, (), name))
    except ValueError:
        raise ValueError(f"argument '{name}' must be a positive number, got {value!r}") from None
    if not (np.isfinite(x) and x > 0):
        raise ValueError(f"argument '{name}' must be a positive number, got {x}")
    return x


def whole_number(value, name, largest):
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


def _tau_function(tau, nq):
    """``tau`` as a callable ``t -> (nq,) array`` (or None), checked on first use."""
    if tau is None:
        return None
    if callable(tau):
        as_callable(tau, "tau", ("t",))

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


def start(model, q0, qdot0, t_span, method, methods, tau, progress, reparameterize, baumgarte,
          per_step=False):
    """Check the arguments every method takes: a :class:`Start`.

    ``methods`` are the valid method names; ``baumgarte`` is checked here for every method
    (:func:`redmax_edu.constraints.check_baumgarte`); ``per_step``: the method takes per-step
    controls, so a 2-D ``tau`` is kept as ``controls`` for the family to check against its number
    of steps. A model with friction is refused by every method but ``"euler"``, and a redundant or
    inconsistent set of constraints fails here, naming the constraint.
    """
    if not isinstance(model, Model):
        raise ValueError(f"argument 'model' must be a Model, got {type(model).__name__}")
    if method not in methods:
        raise ValueError(f"argument 'method' must be one of {', '.join(map(repr, methods))}, got {method!r}")
    nq = model.nq
    q = as_real(q0, (nq,), "q0").copy()
    qdot = as_real(qdot0, (nq,), "qdot0").copy()
    t0, t1 = _check_span(t_span)
    controls = tau if per_step and tau is not None and not callable(tau) and np.ndim(tau) == 2 else None
    tau_fn = None if controls is not None else _tau_function(tau, nq)
    check_baumgarte(baumgarte)
    if tau_fn is not None:
        tau_fn(t0)  # a bad callable fails now, naming 'tau'
    if method != "euler" and model.has_friction:
        raise ValueError(f"argument 'method': {method!r} cannot simulate friction; bilateral staggered "
                         "projections (§2.11) are a velocity-level method: use method='euler', or drop the "
                         "friction (model.with_friction([]) and floor contacts with mu = 0)")
    if model.constraints:  # a redundant or inconsistent set fails now, naming the constraint
        rows = constraint_rows(model, q, qdot, t0)
        check_constraint_set(model, rows, ~rows.inequality)  # (inequalities may overlap: contacts)
    # only joints with singular coordinates can change them (§2.4.5, §2.4.8)
    charts = as_flag(reparameterize, "reparameterize") and any(b.joint.has_charts for b in model.bodies)
    return Start(model, q, qdot, t0, t1, method, tau_fn, controls, as_flag(progress, "progress"), charts)


def whole_count(length, dt, name, what="steps"):
    """The number of intervals ``dt`` in ``length``, or None if it is not a whole number.

    A count above :data:`MAX_STEPS` is refused before anything is allocated or stepped.
    """
    ratio = length / dt
    check_count(ratio, MAX_STEPS, what, name)
    n = int(round(ratio))
    return n if n >= 1 and abs(n * dt - length) <= GRID_RTOL * max(length, dt) else None


def fixed_steps(run, h, sample_dt):
    """``(h, n_steps, stride)`` of a fixed-step method: the step, how many span the run, and how
    many steps each sample is apart; each refused by name unless they fit the span exactly."""
    h = positive(h, "h", allow_none=True)
    sample_dt = positive(sample_dt, "sample_dt", allow_none=True)
    if h is None:
        raise ValueError(f"argument 'h' (the step size) is required for method={run.method!r}")
    n_steps = whole_count(run.t1 - run.t0, h, "h")
    if n_steps is None:
        raise ValueError(f"argument 'h': the span t1 - t0 = {run.t1 - run.t0:g} s is not a whole number of "
                         f"steps h = {h:g} s")
    stride = 1
    if sample_dt is not None:
        stride = whole_count(sample_dt, h, "sample_dt", "steps per sample")
        if stride is None:
            raise ValueError(f"argument 'sample_dt' must be a whole multiple of h = {h:g}, got {sample_dt:g}")
        if n_steps % stride:
            raise ValueError(f"argument 'sample_dt': the {n_steps} steps are not a whole number of "
                             f"samples every {stride} steps")
    return h, n_steps, stride


# --- watching and recording a run ----------------------------------------------------------------

def _owner(model, j):
    """The body owning coordinate ``j`` of ``model`` (or the deformable owning that node coordinate),
    in words: ``"body 'hand'"``."""
    if j < model.nr:
        return f"body {model.names[next(i for i, s in enumerate(model.dofs) if s.start <= j < s.stop)]!r}"
    d = next(d for d, s in enumerate(model.deformable_dofs) if s.start <= j < s.stop)
    return f"deformable {model.deformables[d].name!r}"


def state_entry(model, k):
    """Entry ``k`` of a state ``(q, qdot)`` of ``model`` in words, ``"qdot[3] (body 'hand')"``."""
    j = k % model.nq
    return f"{'q' if k < model.nq else 'qdot'}[{j}] ({_owner(model, j)})"


def check_finite(t, y, method, model, rates="velocity"):
    """Raise a :class:`SimulationError` naming the time and the bodies whose coordinates or
    ``rates`` (``y = (q, rates)``) have blown up. Bodies, not entries: which entry of a body
    passes the bound first may depend on round-off, and the message may be a notebook's output."""
    if y.size and not np.abs(y).max() <= DIVERGED:  # (NaN fails the comparison too)
        remedy = ("use a smaller step 'h', or check for joints whose coordinates reach a singularity "
                  "(with reparameterize=False)" if method == "euler"
                  else "the model may be unstable or stiff; try method='euler'")
        bad = np.flatnonzero(~(np.abs(y) <= DIVERGED)) % model.nq
        owners = ", ".join(dict.fromkeys(_owner(model, int(j)) for j in bad))
        raise SimulationError(f"the simulation blew up at t = {t:.6g} s (a coordinate or {rates} of {owners} "
                              f"is not finite or exceeds {DIVERGED:g}); {remedy}")


class Recorder:
    """Collects samples, one at a time or in blocks, each with the model it is expressed in.

    It keeps the blocks it is given (the loops pass arrays they no longer change) and stacks
    them once at the end: iterating a block row by row would cost more than the RK45 steps of a
    one-body model.
    """

    def __init__(self):
        self.t, self.q, self.qdot, self.models = [], [], [], []

    def add(self, t, q, qdot, model):
        """One sample at time ``t`` with state ``q``, ``qdot`` (nq,) in ``model``."""
        self.add_block((t,), q[None], qdot[None], model)

    def add_block(self, t, q, qdot, model):
        """Samples at the times ``t`` (m,) with states ``q``, ``qdot`` (m, nq) in one model."""
        self.t.append(t)
        self.q.append(q)
        self.qdot.append(qdot)
        self.models.extend([model] * len(t))

    def trajectory(self, method, h, nsteps, nfev, reparameterized, friction_iterations=None, implicit=None,
                   variational=None):
        """The recorded samples as a :class:`Trajectory` with the run's counts and records."""
        return Trajectory(t=np.concatenate(self.t, dtype=float), q=np.concatenate(self.q),
                          qdot=np.concatenate(self.qdot),
                          method=method, models=tuple(self.models), h=h, nsteps=nsteps, nfev=nfev,
                          reparameterized=np.array(reparameterized, dtype=float),
                          friction_iterations=friction_iterations, implicit=implicit,
                          variational=variational)


def reparameterize_state(model, q, qdot):
    """``model.reparameterize`` of a checked state, and whether it changed anything.

    Returns ``(model, q, qdot, changed)``: the model may change with the coordinates when a
    joint switched chart (§2.4.5, §2.4.8).
    """
    new_model, q1, qdot1 = model.reparameterize_unchecked(q, qdot)
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


def progress_bar(enabled, total, method):
    """A tqdm bar over ``total`` seconds of simulated time, or a silent counter when not ``enabled``."""
    if not enabled:
        return _NoProgress(total)
    from tqdm.auto import tqdm

    return tqdm(total=total, desc=f"simulate ({method})", unit="s",
                bar_format="{l_bar}{bar}| {n:.3g}/{total:.3g} s [{elapsed}<{remaining}]")


def advance(bar, dt):
    """Move the progress bar on by ``dt`` seconds without overshooting its total (round-off)."""
    bar.update(max(0.0, min(dt, bar.total - bar.n)))
