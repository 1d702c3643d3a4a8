"""Time stepping in maximal coordinates: explicit, symplectic and linearly implicit Euler (§1.8).

One step of size h computes new body twists from the velocity-level equations::

    A phi+ = b,   explicit and symplectic Euler (Eq. 1.28):  A = M,  b = M phi + h f
                  linearly implicit Euler, every force
                  linearised (method "implicit"):            A = M - h D - h^2 K,
                                                             b = M phi + h (f - D phi)

(the implicit step linearises every force at the end of the step with its stiffness K and
damping D, gravity and the Coriolis wrench included; ArtiSynth notes §0.9.2. Part 2's
``integrators.simulate(method="euler")`` is a different scheme of the same name, Eq. 2.86,
in which only springs and dampers are implicit), subject to the joints and contacts of the system, and
then moves each pose along its twist on SE(3) (Eq. 1.29)::

    E+ = E exp(h [phi])     with phi the old twist (explicit) or the new one (the others).

Taught in book/01_maximal/08_integration.
"""

import inspect
from dataclasses import dataclass, field

import numpy as np

from .._validate import (
    MAX_MAGNITUDE,
    STEP_COLLAPSE,
    ArgumentTypeError,
    as_index,
    as_instance,
    as_scalar,
    check_count,
)
from ..lie import exp_se3, hat_unchecked
from .solve import check_independent_rows, contact_qp, kkt_solve, pgs_contact

__all__ = ["METHODS", "StepInfo", "Trajectory", "step", "simulate", "simulate_rk45"]

METHODS = ("explicit", "symplectic", "implicit")

#: A twist entry beyond this (rad/s or m/s) means the integration has blown up.
DIVERGED = 1e8

#: Most steps (or RK45 samples) one call may ask for; checked before stepping or allocating.
MAX_STEPS = 10_000_000


@dataclass
class StepInfo:
    """What a step found: the constraint solution (if any), active contacts, joint error."""

    solution: object = None
    active_contacts: int = 0
    joint_error: float = 0.0


def _check_step_args(system, h, method, baumgarte, contact_correction, contact_solver, stiffness):
    """The checked step size and options of :func:`step`: ``h``, ``baumgarte``, ``contact_correction``."""
    from .system import System

    as_instance(system, System, "system")
    if not isinstance(method, str) or method not in METHODS:
        raise ValueError(f"argument 'method' must be one of {METHODS}, got {method!r}")
    try:
        h = as_scalar(h, "h")
    except ValueError as err:
        raise ValueError(f"argument 'h' (the step size) must be positive: {err}") from None
    if not h > 0:
        raise ValueError(f"argument 'h' (the step size) must be positive, got {h}")
    if method == "explicit" and (system.joints or system.contacts):
        raise ValueError("explicit Euler moves with the old velocities, which ignore the constraints: "
                         "use method='symplectic' or 'implicit' with joints or contacts")
    baumgarte = as_scalar(baumgarte, "baumgarte", minimum=0.0)
    contact_correction = as_scalar(contact_correction, "contact_correction", minimum=0.0)
    if contact_solver not in ("qp", "pgs"):
        raise ValueError(f"argument 'contact_solver' must be 'qp' or 'pgs', got {contact_solver!r}")
    if contact_solver == "pgs" and system.joints and system.contacts:
        raise ValueError("contact_solver='pgs' handles contacts only; use 'qp' with joints")
    if not isinstance(stiffness, str) or stiffness not in ("full", "symmetric"):
        raise ValueError(f"argument 'stiffness' must be 'full' or 'symmetric', got {stiffness!r}")
    return h, baumgarte, contact_correction


def _joint_rows(system, E, h, baumgarte):
    """Stacked joint rows ``G``, right-hand sides, compliances, row owners and the largest error."""
    G, r, C, owners, worst = [], [], [], [], 0.0
    for joint in system.joints:
        Gj, e = joint.jacobian(E), joint.error(E)
        if joint.compliance > 0:  # soft constraint, ArtiSynth notes Eq. (0.9)
            gamma = 1.0 / (0.5 + joint.damping / h)
            C.append(np.full(len(e), gamma * joint.compliance / h**2))
            r.append(-gamma * e / h)
        else:  # rigid, with velocity-level Baumgarte stabilisation, Eq. (1.97)
            C.append(np.zeros(len(e)))
            r.append(-baumgarte * e)
        G.append(Gj)
        owners += [joint.label] * len(e)
        worst = max(worst, float(np.abs(e).max()))
    if not G:
        return None
    return np.vstack(G), np.concatenate(r), np.concatenate(C), owners, worst


def contact_rows(system, E, h, correction):
    """Stacked contact normal rows, pyramid rows, right-hand sides and friction coefficients."""
    N, T, r, mu = [], [], [], []
    for contact in system.contacts:
        Nc, Tc, d = contact.rows(E)
        N.append(Nc)
        T.append(Tc)
        # a separated point may approach by at most its gap; a penetrating one is pushed out
        r.append(np.where(d >= 0, -d / h, -correction * d / h))
        mu.append(np.full(len(d), contact.mu))
    N = np.vstack(N)
    return N, np.vstack(T), np.concatenate(r), np.concatenate(mu)


def step(system, E, phi, h, method="symplectic", *, baumgarte=0.0, contact_correction=0.2,
         contact_solver="qp", stiffness="full"):
    """Advance the system by one step of size ``h``.

    New twists from the velocity-level equations (Eq. 1.28 for the explicit and symplectic
    methods), then poses moved along them, ``E exp(h [phi])`` (Eq. 1.29).

    Parameters
    ----------
    system : System
    E : array_like, shape (n, 4, 4)
    phi : array_like, shape (n, 6)
    h : float
    method : {"explicit", "symplectic", "implicit"}
        "implicit" is linearly implicit Euler with every force linearised (Part 1's scheme).
    baumgarte : float
        Rate ``gamma`` (1/s) of velocity-level Baumgarte stabilisation of rigid joints,
        ``G phi+ = -gamma g`` (Eq. 1.97); 0 is plain velocity-level constraints, which drift.
    contact_correction : float
        Fraction of a contact's penetration removed per step.
    contact_solver : {"qp", "pgs"}
        The single friction QP (§1.13) or projected Gauss-Seidel with box friction
        (ArtiSynth notes §0.16; contacts only, no joints).
    stiffness : {"full", "symmetric"}
        What the implicit step linearises the forces with: their stiffness ``K`` (exact, not
        symmetric), or its symmetric part ``(K + K^T) / 2``, as a solver that wants a symmetric
        matrix would (ArtiSynth notes §0.23; what that costs is measured in
        book/appendix/engineer_nonsymmetric). Only used by ``method="implicit"``.

    Returns
    -------
    E, phi : ndarray
        The new state.
    info : StepInfo
    """
    h, baumgarte, contact_correction = _check_step_args(system, h, method, baumgarte, contact_correction,
                                                        contact_solver, stiffness)
    E, phi = system.check_state(E, phi)
    return _step(system, E, phi, h, method, baumgarte, contact_correction, contact_solver, stiffness)


def _step(system, E, phi, h, method, baumgarte, contact_correction, contact_solver, stiffness):
    """:func:`step` of a checked state and checked options."""
    M = system.mass_matrix()
    Phi = phi.ravel()
    if method == "implicit":
        terms = system.evaluate(E, phi)
        K = terms.K if stiffness == "full" else 0.5 * (terms.K + terms.K.T)
        A = M - h * terms.D - h * h * K
        b = M @ Phi + h * (terms.f - terms.D @ Phi)
    else:
        A, b = M, M @ Phi + h * system.wrench(E, phi)
    if not (np.abs(A) <= MAX_MAGNITUDE).all() or not (np.abs(b) <= MAX_MAGNITUDE).all():
        raise ValueError(f"the forces overflow at this state (largest |phi| = {np.abs(phi).max():.3g}, "
                         f"largest |p| = {np.abs(E[:, :3, 3]).max():.3g}): arguments 'E' and 'phi' are "
                         "too large for a step")
    info = StepInfo()
    joints = _joint_rows(system, E, h, baumgarte)
    if joints is not None:
        G, r_G, C, owners, info.joint_error = joints
        hard = C == 0
        check_independent_rows(G[hard], [o for o, rigid in zip(owners, hard, strict=True) if rigid])
    if system.contacts:
        N, T, r_N, mu = contact_rows(system, E, h, contact_correction)
        info.active_contacts = len(N)
        if contact_solver == "pgs":
            T2 = np.vstack([T[4 * i: 4 * i + 2] for i in range(len(N))]) if len(N) else None
            info.solution = pgs_contact(A, b, N, r_N, T2, mu)
        else:
            G_, rG_ = (None, None) if joints is None else (G, r_G)
            info.solution = contact_qp(A, b, G_, rG_, N, r_N, T if np.any(mu > 0) else None, mu)
        new_Phi = info.solution.phi
    elif joints is not None:
        info.solution = kkt_solve(A, b, G, r_G, C)
        new_Phi = info.solution.phi
    elif method != "implicit":
        new_Phi = b / np.diag(M)  # A = M, diagonal (Eq. 1.24)
    else:
        try:
            new_Phi = np.linalg.solve(A, b)
        except np.linalg.LinAlgError:
            raise ValueError(f"the step matrix is singular (h = {h:g}, method {method!r}): the forces' "
                             "stiffness cancels the mass; reduce 'h'") from None
    new_phi = new_Phi.reshape(phi.shape)
    if not np.isfinite(new_phi).all() or np.abs(new_phi).max() > DIVERGED:
        raise ValueError(f"the step diverged (a body twist exceeds {DIVERGED:g}): reduce 'h' or "
                         f"use method='implicit'")
    move = phi if method == "explicit" else new_phi
    new_E = np.stack([E[i] @ exp_se3(h * move[i]) for i in range(system.n)])  # Eq. (1.29)
    return new_E, new_phi, info


#: The keyword options of :func:`step` with their defaults, which :func:`simulate` passes on.
_STEP_OPTIONS = {name: p.default for name, p in inspect.signature(step).parameters.items()
                 if p.kind is p.KEYWORD_ONLY}


@dataclass
class Trajectory:
    """A simulated motion: times (T,), poses (T, n, 4, 4), twists (T, n, 6) and energies (T,).

    ``joint_error`` (T,) is the largest position-level joint violation at each time;
    ``info`` holds the StepInfo of every step (``len(t) - 1`` of them).
    """

    t: np.ndarray
    E: np.ndarray
    phi: np.ndarray
    kinetic: np.ndarray
    potential: np.ndarray
    joint_error: np.ndarray
    info: list = field(default_factory=list)

    @property
    def energy(self):
        """Kinetic plus potential energy, shape (T,)."""
        return self.kinetic + self.potential


def _joint_error(system, E):
    return float(max((np.abs(j.error(E)).max() for j in system.joints), default=0.0))


def simulate(system, E0, phi0, h, steps, method="symplectic", **step_options):
    """Take ``steps`` steps of size ``h`` from ``(E0, phi0)``; returns a :class:`Trajectory`.

    Keyword options are passed to :func:`step`.

    Examples
    --------
    A ball dropped from rest falls g t^2 / 2, up to the O(h) error of Euler's method:

    >>> from redmax_edu.maximal.body import RigidBody
    >>> from redmax_edu.maximal.system import System
    >>> system = System([RigidBody("ball", 1.0, [0.1, 0.1, 0.1])])
    >>> traj = simulate(system, *system.rest_state(), h=0.01, steps=100)
    >>> round(float(traj.E[-1, 0, 2, 3]), 3)
    -4.954
    """
    unknown = sorted(set(step_options) - set(_STEP_OPTIONS))
    if unknown:
        raise ArgumentTypeError(f"simulate got an unknown step option {unknown[0]!r}; the options are "
                                f"{', '.join(_STEP_OPTIONS)}")
    options = dict(_STEP_OPTIONS, **step_options)
    h, options["baumgarte"], options["contact_correction"] = _check_step_args(system, h, method, **options)
    E, phi = system.check_state(E0, phi0)
    check_count(as_index(steps, "steps"), MAX_STEPS, "steps", "steps")
    Es, phis, infos = [E], [phi], []
    for _ in range(steps):
        E, phi, info = _step(system, E, phi, h, method, **options)
        Es.append(E)
        phis.append(phi)
        infos.append(info)
    Es, phis = np.array(Es), np.array(phis)
    return Trajectory(
        t=h * np.arange(steps + 1), E=Es, phi=phis,
        kinetic=np.array([system.kinetic_energy(p) for p in phis]),
        potential=np.array([system.potential_energy(e) for e in Es]),
        # each step measured its starting state's joint error; only the last state is new
        joint_error=np.array([info.joint_error for info in infos] + [_joint_error(system, Es[-1])]),
        info=infos,
    )


def _nearest_rotation(R):
    U, _, Vt = np.linalg.svd(R)
    return U @ Vt


def _part(system, k):
    """Entry k of an RK45 state of :func:`simulate_rk45` (12 numbers of each pose, then 6 of each
    twist) in words: ``"the twist of body 'box'"``."""
    n = system.n
    what, i = ("pose", k // 12) if k < 12 * n else ("twist", (k - 12 * n) // 6)
    return f"the {what} of body {system.bodies[i].name!r}"


def _watch(system, solver, t_end, steps, max_steps, rtol, atol, last_step):
    """Stop an RK45 run of :func:`simulate_rk45` that blows up (a pose that is not finite, a twist
    beyond :data:`DIVERGED`), whose step collapses (:data:`~redmax_edu._validate.STEP_COLLAPSE`) or
    that takes more than ``max_steps`` steps, with a ValueError naming the time and the body. A
    step is collapsing when it is not larger than ``last_step``, the one before (a first step may
    be tiny, then grow)."""
    y, t = solver.y, solver.t
    twist = np.arange(len(y)) >= 12 * system.n
    bad = np.flatnonzero(~np.isfinite(y) | (twist & (np.abs(y) > DIVERGED)))
    if bad.size:
        k = int(bad[0])
        limit = f" or exceeds {DIVERGED:g}" if twist[k] else ""
        raise ValueError(f"the simulation blew up at t = {t:.6g} s: {_part(system, k)} is not finite{limit}")
    if solver.status == "running" and last_step >= solver.step_size < STEP_COLLAPSE * t_end:
        k = int(np.argmax(np.abs(solver.f) / (atol + rtol * np.abs(y))))
        raise ValueError(f"the simulation blew up at t = {t:.6g} s: RK45's step size collapsed to "
                         f"{solver.step_size:.3g} s (below {STEP_COLLAPSE:g} of the span), driven by "
                         f"{_part(system, k)}; a force may grow without bound")
    if steps > max_steps:
        raise ValueError(f"RK45 needed more than max_steps = {max_steps} steps and reached only t = {t:.6g} "
                         f"s of {t_end:g} s (last step {solver.step_size:.3g} s): the bodies spin or vibrate "
                         "too fast for the tolerances; raise max_steps or loosen rtol")


def simulate_rk45(system, E0, phi0, t_end, samples=201, rtol=1e-10, atol=1e-12, max_steps=20_000):
    """Integrate an unconstrained system with adaptive Runge-Kutta (scipy's RK45).

    The state is the 12 numbers of each pose (``R`` and ``p``) and its twist, with
    ``dR/dt = R [omega]``, ``dp/dt = R nu`` (Eq. 1.8-1.9) and ``M dphi/dt = f`` (Eq. 1.21).
    RK45 does not keep ``R`` exactly orthonormal; at tight tolerances the drift is far
    below the library's rotation tolerance, and the returned poses are projected back onto
    SO(3). A reference solution for the fixed-step methods. RK45 is driven step by step (the
    samples are those of ``solve_ivp(..., t_eval=...)``) so that a run that blows up, whose
    step collapses or that needs more than ``max_steps`` steps stops with a ValueError naming
    the time and the body.

    Parameters
    ----------
    system : System
        Without joints or contacts.
    E0, phi0 : array_like, shapes (n, 4, 4) and (n, 6)
        The initial poses and body twists.
    t_end : float
        The run covers ``[0, t_end]`` (s).
    samples : int
        Equally spaced samples from 0 to ``t_end``, both included.
    rtol, atol : float
        RK45's tolerances.
    max_steps : int
        Most RK45 steps the run may take.

    Returns
    -------
    Trajectory
    """
    from scipy.integrate import RK45

    from .system import System

    as_instance(system, System, "system")
    t_end = as_scalar(t_end, "t_end", minimum=0.0, strict=True)
    check_count(as_index(samples, "samples", minimum=2), MAX_STEPS, "samples", "samples")
    max_steps = check_count(as_index(max_steps, "max_steps", minimum=1), MAX_STEPS, "steps", "max_steps")
    rtol, atol = as_scalar(rtol, "rtol", 0.0, strict=True), as_scalar(atol, "atol", 0.0, strict=True)
    if system.joints or system.contacts:
        raise ValueError("simulate_rk45 handles unconstrained systems only (no joints or contacts)")
    E0, phi0 = system.check_state(E0, phi0)
    n = system.n
    M = system.mass_matrix()
    bottom = np.zeros((n, 1, 4))  # the last row [0, 0, 0, 1] of every pose
    bottom[:, 0, 3] = 1.0

    def unpack(y):
        return np.concatenate([y[: 12 * n].reshape(n, 3, 4), bottom], axis=1), y[12 * n:].reshape(n, 6)

    def rhs(_, y):
        E, phi = unpack(y)
        brac_phi = np.zeros((n, 4, 4))  # [phi] of each body, Eq. (1.6)
        brac_phi[:, :3, :3] = hat_unchecked(phi[:, :3])
        brac_phi[:, :3, 3] = phi[:, 3:]
        dE = E[:, :3, :] @ brac_phi  # dR/dt = R [omega], dp/dt = R nu
        return np.concatenate([dE.ravel(), system.wrench(E, phi) / np.diag(M)])  # M is diagonal (Eq. 1.24)

    y0 = np.concatenate([E0[:, :3, :].ravel(), phi0.ravel()])
    t_eval = np.linspace(0.0, t_end, samples)
    solver = RK45(rhs, 0.0, y0, t_end, rtol=rtol, atol=atol)
    ys, k, steps, last_step = [], 0, 0, 0.0
    while solver.status == "running":
        message = solver.step()
        steps += 1
        if solver.status == "failed":
            raise ValueError(f"RK45 failed at t = {solver.t:.6g} s: {message}")
        _watch(system, solver, t_end, steps, max_steps, rtol, atol, last_step)
        last_step = solver.step_size
        k_end = int(np.searchsorted(t_eval, solver.t, side="right"))
        if k_end > k:  # the samples in this step, from the interpolant solve_ivp uses for t_eval
            ys.extend(solver.dense_output()(t_eval[k:k_end]).T)
            k = k_end
    Es, phis = [], []
    for y in ys:
        E, phi = unpack(y)
        E[:, :3, :3] = [_nearest_rotation(R) for R in E[:, :3, :3]]
        Es.append(E)
        phis.append(phi)
    Es, phis = np.array(Es), np.array(phis)
    return Trajectory(t=t_eval, E=Es, phi=phis,
                      kinetic=np.array([system.kinetic_energy(p) for p in phis]),
                      potential=np.array([system.potential_energy(e) for e in Es]),
                      joint_error=np.zeros(len(t_eval)))

