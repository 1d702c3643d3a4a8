"""Grader of the assignment "Springs, prescribed joints and friction" (§2.7, §2.9, §2.11).

Three functions, one per page of Part 2 that extends the reduced equations:

* ``spring_stiffness(x, rest_lengths, stiffness)``: the stiffness ``K = df/dx`` (3k, 3k) of a
  chain of ``k`` nodes joined by the strain springs of Eq. (2.92)-(2.93), with per segment
  ``d(t u)/d(dx) = (K/L^2) u u^T + (t/l)(I - u u^T)`` placed with the signs of Eq. (2.93);
  compared with :meth:`redmax_edu.deformable.DeformableSpring.elastic` (no damping). The usual
  slips: the transverse term left out, ``u u^T`` and ``I - u u^T`` exchanged, the rest length
  ignored, ``K/L`` for ``K/L^2``, the off-diagonal blocks with the diagonal's sign, a flipped sign.
* ``hybrid_dynamics(model, q, qdot, body, qddot_p)``: the accelerations and the joint forces
  when the joint of ``body`` follows the accelerations ``qddot_p`` (Eq. 2.113, this book's
  sign ``M_r qddot = f_r + G^T lambda``), stacked ``(qddot, tau)``; compared with
  :func:`redmax_edu.dynamics.constrained_dynamics` on the model with a
  :class:`~redmax_edu.constraints.PrescribedJoint` whose path passes through the state (so
  that Baumgarte's terms vanish). The usual slips: ``qddot_p`` applied as a force, the
  writeup's sign of the multiplier, the torque left out, forward dynamics of the free model
  with the prescribed entries overwritten, ``f_r`` left out.
* ``friction_impulse(M, t, v, alpha, mu)``: the friction stage of staggered projections
  (Algorithm 7, Eq. 2.121) for one tangent row ``t``: the impulse ``beta`` that minimises
  ``W beta^2 / 2 + c beta`` with ``|beta| <= mu alpha``, ``W = t M^-1 t``, ``c = t v``;
  compared with :func:`redmax_edu.friction.staggered.friction_qp`. The usual slips: the bound
  not scaled by ``mu``, the impulse clipped to ``[0, mu alpha]``, the sign that accelerates
  the sliding, ``M`` where ``M^-1`` belongs, no bound at all.

``mass_matrix`` and ``reduced_forces`` (§2.3) and the model's attributes are allowed; the
rest is numpy.

Examples
--------
>>> from redmax_edu.friction.staggered import friction_qp
>>> def friction_impulse(M, t, v, alpha, mu):
...     W = t @ np.linalg.solve(M, t)
...     return friction_qp(np.array([[W]]), np.array([t @ v]), np.array([mu * alpha]))[0]
>>> print(check("friction_impulse", friction_impulse).results[0].message)
friction_impulse calls friction.staggered.friction_qp, which this assignment does not let you call
(see its list at the top of the notebook): write it yourself.

Taught in book/02_reduced/07_deformable, 09_hybrid_dynamics and 11_friction.
"""

import numpy as np

from .. import dynamics, lie
from ..constraints import PrescribedJoint
from ..deformable import DeformableSpring
from ..friction.staggered import friction_qp
from ..inertia import cuboid
from ..model import Model
from .calls import call, describe
from .chains import describe_model, pendulum, random_chain, random_state
from .compare import asymmetry, judge_cases
from .core import Assignment, Verdict, entry_points

ASSIGNMENT = Assignment(
    "07_nodes_hybrid_friction", "Springs, prescribed joints and friction",
    allowed=[dynamics.mass_matrix, dynamics.reduced_forces, Model],
)
check_of = ASSIGNMENT.check
check = entry_points(ASSIGNMENT)


# --- spring_stiffness (§2.7, Eq. 2.92-2.93) ------------------------------------------------------


def stiffness_reference(x, rest_lengths, stiffness):
    """``K = df/dx`` of the undamped chain, by :class:`~redmax_edu.deformable.DeformableSpring`."""
    chain = DeformableSpring(x, stiffness, 1.0, rest_lengths=rest_lengths)
    return chain.elastic(x, np.zeros_like(x)).K


def _assemble(blocks, diagonal=-1.0, off=1.0):
    """A chain's (3k, 3k) matrix from per-segment 3x3 blocks ``d(t u)/d(dx)``: ``diagonal`` times
    the block on each end node's diagonal, ``off`` times it between the two ends."""
    k = len(blocks) + 1
    K = np.zeros((k, 3, k, 3))
    for s, B in enumerate(blocks):
        K[s, :, s] += diagonal * B
        K[s + 1, :, s + 1] += diagonal * B
        K[s, :, s + 1] += off * B
        K[s + 1, :, s] += off * B
    return K.reshape(3 * k, 3 * k)


def stiffness_mistakes(x, rest_lengths, stiffness):
    """The usual wrong stiffness matrices, with what went wrong."""
    segments = []
    for s, L in enumerate(rest_lengths):
        d = x[s + 1] - x[s]
        l = np.linalg.norm(d)
        u = d / l
        segments.append((L, l, np.outer(u, u), stiffness * (l - L) / L / L))
    I3 = np.eye(3)

    def of(block, **kwargs):
        return lambda: _assemble([block(L, l, uu, t) for L, l, uu, t in segments], **kwargs)

    def right(L, l, uu, t):
        return stiffness / L**2 * uu + t / l * (I3 - uu)

    return [
        ("the transverse term (t / l)(I - u u^T) is missing: when a node moves across the spring, the "
         "direction u turns, and the force t u turns with it.",
         of(lambda L, l, uu, t: stiffness / L**2 * uu)),
        ("u u^T and I - u u^T are exchanged: the change of the tension acts along the spring, "
         "(K / L^2) u u^T, and the turning of the direction across it, (t / l)(I - u u^T).",
         of(lambda L, l, uu, t: stiffness / L**2 * (I3 - uu) + t / l * uu)),
        ("the rest length is ignored: the tension is t = K eps / L with the strain eps = (l - L) / L, "
         "which vanishes at the rest length (this is the matrix of a spring of rest length 0).",
         of(lambda L, l, uu, t: stiffness / L**2 * I3)),
        ("the axial term is K / L, not K / L^2: the tension t = K (l - L) / L^2 changes by K / L^2 "
         "per unit of stretch.", of(lambda L, l, uu, t: stiffness / L * uu + t / l * (I3 - uu))),
        ("the blocks between the two ends of a spring have the sign of the diagonal blocks: node s feels "
         "+t u and node s+1 -t u (Eq. (2.93)), so moving node s+1 changes f_s by +B and f_{s+1} by -B.",
         of(right, off=-1.0)),
        ("the blocks between the two ends of a spring are missing: the force on node s depends on where "
         "node s+1 is (Eq. (2.93)).", of(right, off=0.0)),
    ]


def _chain(rng, k, stretch=0.2):
    """Nodes ``x`` (k, 3) of a random chain, its rest lengths and stiffness, and a label."""
    steps = rng.standard_normal((k - 1, 3))
    x = np.vstack([np.zeros(3), np.cumsum(steps, axis=0)]) + rng.standard_normal(3)
    lengths = np.linalg.norm(steps, axis=1)
    rest = lengths * (1 + rng.uniform(-stretch, stretch, k - 1))
    stiffness = float(rng.uniform(1.0, 20.0))
    return (x, rest, stiffness), f"{k} nodes x = {describe(x)}, rest lengths {describe(rest)}, " \
                                 f"stiffness {stiffness:.3g}"


def _stiffness_cases(fn, cases, **kwargs):
    k = len(cases[0][0][0])
    return judge_cases(fn, cases, name="spring_stiffness", shape=(3 * k, 3 * k),
                       reference=stiffness_reference,
                       mistakes=stiffness_mistakes, what="the stiffness matrix", **kwargs)


@check_of("spring_stiffness", "rest", "one spring along x at its rest length", 1)
def stiffness_rest(fn, rng):
    L, stiffness = float(rng.uniform(0.5, 2.0)), float(rng.uniform(1.0, 20.0))
    x = np.array([[0.0, 0, 0], [L, 0, 0]])
    return _stiffness_cases(fn, [((x, np.array([L]), stiffness),
                                  f"2 nodes {L:.3g} m apart along x, rest length {L:.3g}, "
                                  f"stiffness {stiffness:.3g}")],
                            hint="At its rest length the tension is 0: only (K / L^2) u u^T is left, "
                            "K / L^2 in the x-x entries.")


@check_of("spring_stiffness", "stretched", "one stretched spring turned in space", 1)
def stiffness_stretched(fn, rng):
    cases = [_chain(rng, 2, stretch=0.3) for _ in range(2)]
    (x, rest, stiffness), label = cases[0]
    at_rest = ((x, np.array([np.linalg.norm(x[1] - x[0])]), stiffness), "the same spring at its rest length")
    return _stiffness_cases(fn, cases, zero_case=at_rest)


@check_of("spring_stiffness", "chains", "chains of 3 to 5 nodes", 2)
def stiffness_chains(fn, rng):
    verdicts = [_stiffness_cases(fn, [_chain(rng, k)]) for k in (3, 4, 5)]
    failed = [v for v in verdicts if v is not None]
    if not failed:
        return None
    return Verdict(failed[0].message + f" Wrong for {len(failed)} of 3 chains.", fraction=1 - len(failed) / 3)


@check_of("spring_stiffness", "symmetric", "symmetric, and no force from moving the whole chain", 1)
def stiffness_symmetric(fn, rng):
    (x, rest, stiffness), label = _chain(rng, 4)
    K = call(fn, x, rest, stiffness, name="spring_stiffness", shape=(12, 12), label=label)
    problem = asymmetry(K, "K")
    if problem:
        return Verdict(f"spring_stiffness({label}): {problem} The forces are minus the gradient of the "
                       "energy (Eq. (2.92)), so K = df/dx is minus its Hessian: symmetric.")
    shift = np.tile(np.eye(3), (4, 1))  # each column moves every node by the same step
    moved = np.abs(K @ shift).max()
    if moved > 1e-9 * max(1.0, np.abs(K).max()):
        return Verdict(f"spring_stiffness({label}): moving every node by the same step changes the forces "
                       f"(K times that step has entries up to {moved:.2g}): the springs only feel the "
                       "differences x_{s+1} - x_s, so each block row of K sums to zero.")
    return None


# --- hybrid_dynamics (§2.9, Eq. 2.113) ----------------------------------------------------------


def hybrid_reference(model, q, qdot, body, qddot_p, tau=None):
    """``(qddot, tau)`` by :func:`~redmax_edu.dynamics.constrained_dynamics` with the joint of
    ``body`` prescribed on a path through the state (Baumgarte's terms vanish); ``tau``: extra
    joint forces (for the mistakes)."""
    dofs = model.dofs[body]
    path = (q[dofs].copy(), qdot[dofs].copy(), np.array(qddot_p, float))
    driven = model.with_constraints([PrescribedJoint(body, lambda t: path)])
    solution = dynamics.constrained_dynamics(driven, q, qdot, tau)
    return np.concatenate([solution.x, solution.generalized_force(0)])


def hybrid_mistakes(model, q, qdot, body, qddot_p):
    """The usual wrong hybrid solves, with what went wrong."""
    M, f = dynamics.mass_matrix(model, q), dynamics.reduced_forces(model, q, qdot)
    dofs = model.dofs[body]
    right = hybrid_reference(model, q, qdot, body, qddot_p)
    n = model.nq

    def with_tau(qddot, tau):
        return np.concatenate([qddot, tau])

    as_force = np.zeros(n)
    as_force[dofs] = qddot_p
    free = np.linalg.solve(M, f)
    overwritten = free.copy()
    overwritten[dofs] = qddot_p
    return [
        ("the prescribed accelerations are applied as a joint force (M_r qddot = f_r + tau with "
         "tau = qddot_p): the row G qddot = qddot_p prescribes the acceleration, and the multiplier is "
         "the force that produces it.", lambda: with_tau(np.linalg.solve(M, f + as_force), as_force)),
        ("the joint force has the wrong sign: this book writes M_r qddot = f_r + G^T lambda (Eq. (2.113), "
         "our sign), so tau = G^T lambda is the force the joint's motor applies; the writeup's lambda is "
         "its negative. The accelerations are right.", lambda: with_tau(right[:n], -right[n:])),
        ("the joint force is missing (zero): the multiplier lambda of the prescribed rows is the force the "
         "motion needs, tau = G^T lambda. The accelerations are right.",
         lambda: with_tau(right[:n], 0 * right[n:])),
        ("the free joints accelerate as if nothing drove the prescribed one (forward dynamics, then the "
         "prescribed entries overwritten): the joints are coupled through M_r, so solve the KKT system "
         "of Eq. (2.113) for all accelerations and the multiplier together.",
         lambda: with_tau(overwritten, 0 * free)),
        ("the free joints accelerate as if nothing drove the prescribed one (forward dynamics, then the "
         "prescribed entries overwritten): the joints are coupled through M_r, so solve the KKT system "
         "of Eq. (2.113) for all accelerations and the multiplier together.",
         lambda: with_tau(overwritten, M @ overwritten - f)),
        ("f_r is left out: the top rows of Eq. (2.113) are M_r qddot = f_r + G^T lambda, with gravity and "
         "the velocity terms in f_r.",
         lambda: hybrid_reference(model, q, qdot, body, qddot_p, tau=-f)),
    ]


def _hybrid_label(model, q, qdot, body, qddot_p):
    return (f"{describe_model(model)}, q = {describe(q)}, qdot = {describe(qdot)}, the joint of body "
            f"{body} ({model.bodies[body].joint.kind}) prescribed, qddot_p = {describe(qddot_p)}")


def _hybrid_case(rng, model, body):
    q, qdot = random_state(rng, model)
    qddot_p = rng.standard_normal(model.bodies[body].joint.ndof)
    args = (model, q, qdot, body, qddot_p)
    return args, _hybrid_label(*args)


def _hybrid_cases(fn, cases, **kwargs):
    n = cases[0][0][0].nq
    return judge_cases(fn, cases, name="hybrid_dynamics", shape=(2 * n,), reference=hybrid_reference,
                       mistakes=hybrid_mistakes, what="(qddot, tau)",
                       stacked="the accelerations and the joint forces together, "
                               "np.concatenate([qddot, tau])",
                       **kwargs)


@check_of("hybrid_dynamics", "pendulum", "the pendulum driven by its hinge", 1)
def hybrid_pendulum(fn, rng):
    model = pendulum()
    cases = []
    for q, v, a in ((np.pi / 2, 0.0, 0.0), (0.4, 1.5, -2.0)):
        args = (model, np.array([q]), np.array([v]), 0, np.array([a]))
        cases.append((args, _hybrid_label(*args)))
    return _hybrid_cases(fn, cases, hint="With its only joint prescribed, the pendulum accelerates as asked "
                         "and the motor applies tau = M_r qddot_p - f_r: held at rest horizontal, m g L = "
                         "19.62 N m.")


@check_of("hybrid_dynamics", "hinge", "chains with one hinge or slider prescribed", 2)
def hybrid_hinge(fn, rng):
    model = random_chain(rng, 4)
    cases = [_hybrid_case(rng, model, body) for body in (0, 2, 3)]
    return _hybrid_cases(fn, cases)


@check_of("hybrid_dynamics", "ball", "a ball joint prescribed (three rows)", 1)
def hybrid_ball(fn, rng):
    model = random_chain(rng, 3)
    return _hybrid_cases(fn, [_hybrid_case(rng, model, 1) for _ in range(2)])


@check_of("hybrid_dynamics", "torque", "the joint force acts on the prescribed joint only", 1)
def hybrid_torque(fn, rng):
    model = random_chain(rng, 4, branching=True)
    args, label = _hybrid_case(rng, model, 1)
    n, dofs = model.nq, model.dofs[1]
    out = call(fn, *args, name="hybrid_dynamics", shape=(2 * n,), label=label)
    qddot, tau = out[:n], out[n:]
    others = np.delete(tau, np.arange(n)[dofs])
    scale = max(1.0, float(np.abs(out).max()))
    if np.abs(others).max() > 1e-9 * scale:
        return Verdict(f"hybrid_dynamics({label}): tau has entries up to {np.abs(others).max():.2g} on "
                       "joints that are not prescribed: tau = G^T lambda, and G's rows pick the prescribed "
                       "coordinates only.")
    if np.abs(qddot[dofs] - args[4]).max() > 1e-9 * scale:
        return Verdict(f"hybrid_dynamics({label}): the prescribed joint does not accelerate as prescribed: "
                       "the bottom rows of Eq. (2.113) ask G qddot = qddot_p.")
    return None


# --- friction_impulse (§2.11, Eq. 2.121) ---------------------------------------------------------


def friction_reference(M, t, v, alpha, mu):
    """The friction stage for one tangent row, by :func:`~redmax_edu.friction.staggered.friction_qp`."""
    W = t @ np.linalg.solve(M, t)
    return friction_qp(np.array([[W]]), np.array([t @ v]), np.array([mu * alpha]))[0]


def friction_mistakes(M, t, v, alpha, mu):
    """The usual wrong friction impulses, with what went wrong."""
    W, c = t @ np.linalg.solve(M, t), t @ v
    bound = mu * alpha
    return [
        ("the bound is not scaled by mu: Coulomb's law bounds the friction impulse by mu alpha.",
         np.clip(-c / W, -alpha, alpha)),
        ("the impulse is clipped to [0, mu alpha]: friction may push either way along t, |beta| <= mu alpha.",
         np.clip(-c / W, 0.0, bound)),
        ("the friction accelerates the sliding: the impulse that stops the row is beta = -c / W (c = t v), "
         "of the sign opposite to the sliding velocity.", np.clip(c / W, -bound, bound)),
        ("it uses M where M^-1 belongs: an impulse beta changes the velocity by M^-1 t beta, so the row's "
         "mobility is W = t M^-1 t (Eq. (2.121)).", np.clip(-c / (t @ M @ t), -bound, bound)),
        ("the bound is missing: Coulomb's law lets the friction impulse reach mu alpha and no more; this "
         "impulse stops the sliding whatever it costs.", -c / W),
        ("the sliding is taken from the velocity alone, without the mobility W = t M^-1 t: the impulse that "
         "stops the row is -c / W.", np.clip(-c, -bound, bound)),
    ]


def _point(rng, speed):
    """A point mass (3 coordinates) on a floor, sliding along a tangent row at ``speed`` (t v)."""
    m = float(rng.uniform(0.5, 3.0))
    angle = rng.uniform(0, 2 * np.pi)
    t = np.array([np.cos(angle), np.sin(angle), 0.0])
    v = speed * t + rng.standard_normal(3) * [0.0, 0.0, 0.1]
    return m * np.eye(3), t, v, f"a point of mass {m:.3g} kg"


def _body(rng, speed):
    """A rigid body (6 coordinates) touching at a corner ``r``: the tangent row ``t = Gamma(r)^T d``."""
    sides = rng.uniform(0.2, 1.0, 3)
    mass = float(rng.uniform(0.5, 3.0))
    M = cuboid(sides, mass=mass).spatial_inertia()
    corner = sides / 2 * rng.choice([-1.0, 1.0], 3)
    direction = rng.standard_normal(3)
    t = lie.gamma(corner).T @ (direction / np.linalg.norm(direction))
    phi = rng.standard_normal(6)
    v = phi + (speed - t @ phi) / (t @ t) * t
    return M, t, v, f"a {mass:.3g} kg box touching at a corner"


def _friction_case(rng, kind, speed, alpha, mu):
    M, t, v, what = kind(rng, speed)
    label = f"{what}, t = {describe(t)}, t v = {speed:.3g}, alpha = {alpha:.3g}, mu = {mu:.3g}"
    return (M, t, v, alpha, mu), label


def _friction_cases(fn, cases, **kwargs):
    return judge_cases(fn, cases, name="friction_impulse", shape=(), reference=friction_reference,
                       mistakes=friction_mistakes, what="the friction impulse", **kwargs)


@check_of("friction_impulse", "sliding", "a point that keeps sliding (the bound holds it back)", 1)
def friction_sliding(fn, rng):
    cases = [_friction_case(rng, _point, s * rng.uniform(1.0, 3.0), rng.uniform(0.1, 0.5),
                            rng.uniform(0.2, 0.8)) for s in (1.0, -1.0)]
    return _friction_cases(fn, cases, hint="A point sliding fast enough keeps sliding, held back by the "
                           "whole bound: |beta| = mu alpha, against the sliding.")


@check_of("friction_impulse", "sticking", "a point that stops (the friction inside its bound)", 1)
def friction_sticking(fn, rng):
    cases = [_friction_case(rng, _point, s * rng.uniform(0.01, 0.05), rng.uniform(0.5, 1.0),
                            rng.uniform(0.5, 0.8)) for s in (1.0, -1.0)]
    return _friction_cases(fn, cases,
                           hint="A slow point stops: beta = -(t v) / (t M^-1 t), inside its bound.")


@check_of("friction_impulse", "body", "a box touching at a corner, sliding or stopping", 2)
def friction_body(fn, rng):
    cases = [_friction_case(rng, _body, s, rng.uniform(0.1, 1.0), rng.uniform(0.2, 0.8))
             for s in (0.02, -0.03, 2.0, -3.0)]
    return _friction_cases(fn, cases)


@check_of("friction_impulse", "none", "no friction (mu = 0) or no load (alpha = 0)", 1)
def friction_none(fn, rng):
    cases = [_friction_case(rng, _body, 1.0, 0.5, 0.0), _friction_case(rng, _point, -1.0, 0.0, 0.5)]
    return _friction_cases(fn, cases, hint="With mu alpha = 0 there is no friction: beta = 0.")


@check_of("friction_impulse", "coulomb", "the friction opposes the sliding and stays within mu alpha", 1)
def friction_coulomb(fn, rng):
    for _ in range(4):
        speed = float(rng.choice([-1.0, 1.0]) * rng.uniform(0.01, 3.0))
        args, label = _friction_case(rng, _body, speed, rng.uniform(0.1, 1.0), rng.uniform(0.2, 0.8))
        M, t, v, alpha, mu = args
        beta = float(call(fn, M, t, v, alpha, mu, name="friction_impulse", shape=(), label=label))
        if abs(beta) > mu * alpha * (1 + 1e-9) + 1e-12:
            return Verdict(f"friction_impulse({label}) = {beta:.3g}: more than the bound mu alpha = "
                           f"{mu * alpha:.3g}. Coulomb's law: |beta| <= mu alpha.")
        if beta * speed > 0:
            return Verdict(f"friction_impulse({label}) = {beta:.3g} has the sign of the sliding velocity "
                           f"t v = {speed:.3g}: friction opposes the sliding, it never speeds it up.")
        after = speed + beta * (t @ np.linalg.solve(M, t))
        if after * speed < -1e-9 * abs(speed):
            return Verdict(f"friction_impulse({label}) = {beta:.3g} reverses the sliding (t v becomes "
                           f"{after:.3g}): friction can stop a sliding contact, never send it back.")
    return None
