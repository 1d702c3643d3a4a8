"""Grader of the assignment "Exponential and composite joints, and joint springs" (§2.4.8-2.6).

The students write three functions, one per page of the book:

* ``spherical_exp_S(q)`` (6, 3): the Jacobian of the ball joint in exponential coordinates,
  ``R = exp([q])``, whose column j unbrackets ``R^T dR/dq_j`` (Eq. 2.48-2.49); in closed
  form ``(I - a [q] + b [q]^2; 0)`` with ``a = (1 - cos t)/t^2``, ``b = (t - sin t)/t^3``,
  ``t = |q|``, and Taylor series near ``q = 0``. Compared with the ``S`` of
  :class:`~redmax_edu.joints.exponential.SphericalExp`.
* ``composite_S(Q2, S1, S2)`` (6, n1 + n2): the Jacobian of two joints in series,
  ``[Ad(Q2^-1) S1, S2]`` (Eq. 2.53-2.54), from the second joint's transform and the two
  joints' Jacobians. Compared with :class:`redmax_edu.joints.Composite` (and the free joints
  built on it, :class:`~redmax_edu.joints.Free2D`, :class:`~redmax_edu.joints.Free3DExp`).
* ``implicit_euler_velocity(M, f, K, D, qdot, h)`` (n,): the new velocity of one step of
  linearly implicit Euler, springs and dampers only, ``(M + h D + h^2 K) qdot1 = M qdot +
  h (f + D qdot)`` (Eq. 2.82-2.86, with ``f`` the whole reduced force of Eq. 2.80, its damper
  term ``-D qdot`` included). Compared with :func:`redmax_edu.dynamics.linearly_implicit_euler_step`
  on chains with joint springs and dampers.

``brac``, ``unbrac``, ``exp_so3``, ``adjoint`` and ``inv_se3`` are allowed. The checks name the
usual slips: the left Jacobian (the ``[q]`` term with the wrong sign, ``dR/dq_j R^T``), the
``[q]^2`` term left out or with its sign flipped, no series near ``q = 0``; ``Ad(Q2)`` for
``Ad(Q2^-1)``, the blocks in the wrong order, ``S1`` not carried into the child frame, only the
rotation of ``Q2`` used; ``h^2 K`` with the wrong sign or left out, the spring linearised with the
old velocity, the damper counted twice or left explicit, Euler's explicit step.

Examples
--------
>>> from redmax_edu.joints import SphericalExp
>>> def spherical_exp_S(q):
...     return SphericalExp().S(q)
>>> print(check("spherical_exp_S", spherical_exp_S).results[0].message)
spherical_exp_S calls joints.base.Joint.S, which this assignment does not let you call (see its list
at the top of the notebook): write it yourself.

Taught in book/02_reduced/04c_exponential_joints, 04d_composite_spline_joints and 05_stiffness_damping.
"""

import dataclasses

import numpy as np

from .. import lie
from ..dynamics import linearly_implicit_euler_step, mass_matrix, reduced_forces
from ..joints import (
    Composite,
    Free2D,
    Free3DExp,
    Planar,
    Prismatic,
    Revolute,
    SphericalEuler,
    SphericalExp,
    Translational,
    Universal,
)
from ..joints.exponential import exp_coefficients
from ..model import Body, Model
from .calls import describe
from .chains import describe_model, random_chain, random_state
from .compare import judge_cases
from .core import Assignment, entry_points

ASSIGNMENT = Assignment(
    "06_joint_types", "Exponential and composite joints, and joint springs",
    allowed=[lie.brac, lie.unbrac, lie.exp_so3, lie.adjoint, lie.inv_se3],
)
check_of = ASSIGNMENT.check
check = entry_points(ASSIGNMENT)

#: The rows of a (6, k) Jacobian written (nu; omega) instead of (omega; nu).
SWAP_ROWS = np.r_[3:6, 0:3]


# --- spherical_exp_S (Eq. 2.48-2.49) --------------------------------------------------------------

BALL = SphericalExp()

SERIES = ("Near q = 0 the closed forms (1 - cos t)/t^2 and (t - sin t)/t^3 are 0/0, and they lose their "
          "digits to cancellation well before (at |q| = 1e-8, 1 - cos t is 0 in floating point): below a "
          "threshold such as t < 1e-2 use their Taylor series a = 1/2 - t^2/24 + t^4/720, "
          "b = 1/6 - t^2/120 + t^4/5040.")


def _ball(K, a, b):
    S = np.zeros((6, 3))
    S[:3] = np.eye(3) + a * K + b * (K @ K)
    return S


def exp_mistakes(q):
    """The usual wrong Jacobians of the exponential-coordinates ball joint, with what went wrong."""
    S, K = BALL.S(q), lie.brac(q)
    a, b = exp_coefficients(q @ q)[:2]  # with their series near q = 0
    found = [
        ("the [q] term has the wrong sign: this is the left Jacobian I + a [q] + b [q]^2 = S^T, the angular "
         "velocity in the parent's frame. S gives it in the child's own frame: [S_j] = R^T dR/dq_j "
         "(Eq. 2.49), not dR/dq_j R^T.", lambda: _ball(K, a, b)),
        ("the second-order term b [q]^2, b = (t - sin t)/t^3, is missing.", lambda: _ball(K, -a, 0.0)),
        ("the [q]^2 term has the wrong sign: S = I - a [q] + b [q]^2.", lambda: _ball(K, -a, -b)),
        ("the rotation block is in the bottom rows: a ball joint turns and does not slide, and the rows of "
         "S are (omega; nu), so S = (S_hat; 0).", lambda: S[SWAP_ROWS]),
    ]
    t = float(np.linalg.norm(q))
    if t > 1e-2:  # closer to 0, S is the identity up to round-off, and other slips say more
        found.append(("it is S at q = 0 (the identity) for every q: S changes with q as I - a [q] + b [q]^2.",
                      lambda: _ball(K, 0.0, 0.0)))
    elif t > 0:
        a_closed, b_closed = (1 - np.cos(t)) / t**2, (t - np.sin(t)) / t**3
        found.append(("it uses the closed forms of a and b this close to q = 0.",
                      lambda: _ball(K, -a_closed, b_closed)))
    return found


def _q_case(q):
    return (q,), f"q = {describe(q)}"


ZERO = _q_case(np.zeros(3))


def _rotation_vector(rng, low, high):
    """A rotation vector of random direction with |q| uniform in [low, high]."""
    u = rng.standard_normal(3)
    return rng.uniform(low, high) * u / np.linalg.norm(u)


def _exp_cases(fn, cases, **kwargs):
    return judge_cases(fn, cases, name="spherical_exp_S", shape=(6, 3), reference=BALL.S,
                       mistakes=exp_mistakes, what="S(q)", nan_hint=SERIES, **kwargs)


@check_of("spherical_exp_S", "zero", "q = 0", 1)
def exp_zero(fn, rng):
    return _exp_cases(fn, [ZERO], hint="At q = 0 S is the identity on top of zeros (the limit of Eq. 2.48).")


@check_of("spherical_exp_S", "axis", "a rotation about one axis (S q = q)", 1)
def exp_axis(fn, rng):
    cases = [_q_case(np.eye(3)[k] * rng.uniform(0.5, 2.5) * rng.choice([-1, 1])) for k in range(3)]
    return _exp_cases(fn, cases, hint="Turning about a fixed axis, the angular velocity is qdot itself: "
                      "S q = q, and [q] q = 0.")


@check_of("spherical_exp_S", "general", "general rotation vectors", 2)
def exp_general(fn, rng):
    cases = [_q_case(_rotation_vector(rng, 0.6, 3.0)) for _ in range(4)]
    return _exp_cases(fn, cases, zero_case=ZERO)


@check_of("spherical_exp_S", "small", "small rotation vectors (series)", 1)
def exp_small(fn, rng):
    cases = [_q_case(_rotation_vector(rng, size, size)) for size in (1e-8, 1e-5, 0.02, 0.3)]
    return _exp_cases(fn, cases, hint="Near q = 0 use the Taylor series of a and b: their closed forms lose "
                      "their digits to cancellation there.")


@check_of("spherical_exp_S", "long", "long rotation vectors, past pi", 1)
def exp_long(fn, rng):
    cases = [_q_case(_rotation_vector(rng, np.pi + 0.1, 1.5 * np.pi)) for _ in range(2)]
    return _exp_cases(fn, cases, hint="Past |q| = pi nothing changes: the same closed form holds until "
                      "the singular sphere |q| = 2 pi.")


# --- composite_S (Eq. 2.53-2.54) ------------------------------------------------------------------

#: The sub-joints the composites are drawn from, by their number of coordinates.
SUB_JOINTS = {
    1: (lambda rng: Revolute(rng.standard_normal(3)), lambda rng: Prismatic(rng.standard_normal(3))),
    2: (lambda rng: Universal(), lambda rng: Planar()),
    3: (lambda rng: SphericalExp(), lambda rng: SphericalEuler("ZYX"), lambda rng: Translational()),
}


def composite_mistakes(Q2, S1, S2):
    """The usual wrong composite Jacobians, with what went wrong."""
    A = lie.adjoint(lie.inv_se3(Q2))
    forward = lie.adjoint(Q2)
    turn = np.kron(np.eye(2), Q2[:3, :3].T)  # the rotation of Ad(Q2^-1) without its [p] block
    return [
        ("it uses Ad(Q2) where Ad(Q2^-1) belongs: joint 1's twist is carried into the child frame, which "
         "sits at Q2 in joint 1's frame, so it is seen through the inverse (Eq. 2.54).",
         lambda: np.hstack([forward @ S1, S2])),
        ("the blocks are in the wrong order: the columns of S follow the coordinates q = (q1, q2), so "
         "joint 1's columns come first.", lambda: np.hstack([S2, A @ S1])),
        ("S1 is not carried into the child frame: joint 1's twist is in its own child frame, which is "
         "joint 2's parent; Ad(Q2^-1) S1 gives it in the composite's child frame.",
         lambda: np.hstack([S1, S2])),
        ("S2 is transformed too: joint 2's child frame is the composite's child frame, so its columns "
         "stay as they are.", lambda: np.hstack([A @ S1, A @ S2])),
        ("only the rotation of Q2 is used: Ad(Q2^-1) also has the block -R^T [p], which turns joint 1's "
         "angular velocity into a linear velocity at the child frame's origin.",
         lambda: np.hstack([turn @ S1, S2])),
        ("it uses Ad(Q2)^T: the transpose of the adjoint maps wrenches, not twists.",
         lambda: np.hstack([forward.T @ S1, S2])),
    ]


def _composite_case(composite, q):
    """``(args, label, want)``: the arguments ``(Q2, S1, S2)`` of a two-joint composite at ``q``, their
    label and the library's S."""
    first, second = composite.joints
    q1, q2 = q[:first.ndof], q[first.ndof:]
    label = f"joint 1 {first.kind} at q1 = {describe(q1)}, joint 2 {second.kind} at q2 = {describe(q2)}"
    return (second.Q(q2), first.S(q1), second.S(q2)), label, composite.S(q)


def _judge(fn, found, *, zero=None, **kwargs):
    """:func:`judge_cases` on ``found`` cases ``(args, label, want)``, each against its own ``want``
    (the library's answer for the model or joint the arguments were taken from); ``zero`` is a
    case of the same form at rest."""
    wanted = {id(args[0]): want for args, _, want in found + ([zero] if zero else [])}
    return judge_cases(fn, [(args, label) for args, label, _ in found],
                       reference=lambda first, *rest: wanted[id(first)],
                       zero_case=zero[:2] if zero else None, **kwargs)


def _composite_cases(fn, found, **kwargs):
    shape = found[0][2].shape
    return _judge(fn, found, name="composite_S", shape=shape, mistakes=composite_mistakes, what="S", **kwargs)


def _random_pair(rng):
    """Two random sub-joints with four coordinates in all (so that every pair's S has one shape)."""
    first = int(rng.integers(1, 4))
    make = [SUB_JOINTS[n][int(rng.integers(len(SUB_JOINTS[n])))] for n in (first, 4 - first)]
    return Composite([m(rng) for m in make])


@check_of("composite_S", "rest", "joint 2 at rest (Q2 = I)", 1)
def composite_rest(fn, rng):
    joint = Composite([Universal(), Revolute(rng.standard_normal(3))])
    found = [_composite_case(joint, np.r_[rng.uniform(-1, 1, 2), 0.0])]
    return _composite_cases(fn, found, hint="With Q2 = I, Ad(Q2^-1) is the identity: S = [S1, S2].")


@check_of("composite_S", "telescope", "a universal joint and a slider (a telescoping arm)", 1)
def composite_telescope(fn, rng):
    joint = Composite([Universal(), Prismatic([0.0, 0.0, 1.0])])
    qs = [rng.uniform(-1, 1, 3) for _ in range(2)]
    return _composite_cases(fn, [_composite_case(joint, q) for q in qs],
                            zero=_composite_case(joint, np.r_[qs[0][:2], 0.0]))


@check_of("composite_S", "general", "random pairs of joints", 2)
def composite_general(fn, rng):
    found = []
    for _ in range(3):
        joint = _random_pair(rng)
        found.append(_composite_case(joint, rng.uniform(-1, 1, joint.ndof)))
    return _composite_cases(fn, found)


@check_of("composite_S", "free2d", "the 2D free joint, planar then revolute (Eq. 2.60)", 1)
def composite_free2d(fn, rng):
    return _composite_cases(fn, [_composite_case(Free2D(), rng.uniform(-1, 1, 3))],
                            hint="The translation columns are turned into the child frame by R_z(theta)^T.")


@check_of("composite_S", "free3d", "the 3D free joint, translation then rotation (Eq. 2.63)", 1)
def composite_free3d(fn, rng):
    return _composite_cases(fn, [_composite_case(Free3DExp(), rng.uniform(-1, 1, 6))],
                            hint="Translation first: S = [[0, S_hat_2], [R_2^T, 0]].")


# --- implicit_euler_velocity (Eq. 2.82-2.86) ------------------------------------------------------


def euler_mistakes(M, f, K, D, qdot, h):
    """The usual wrong velocities of the step, with what went wrong."""
    right = M @ qdot + h * (f + D @ qdot)

    def solve(A, b):
        return np.linalg.solve(A, b)

    return [
        ("h^2 K has the wrong sign: the spring pulls back, tau_K(k+1) = tau_K(k) - h K qdot(k+1) "
         "(Eq. 2.82), so + h^2 K on the left (K = -d tau_K/dq, Eq. 2.85).",
         lambda: solve(M + h * D - h * h * K, right)),
        ("the spring is explicit: h^2 K is missing from the left side; the spring's change over the step, "
         "-h K qdot(k+1) (Eq. 2.82), moves there.", lambda: solve(M + h * D, right)),
        ("the spring is linearised with the old velocity (-h^2 K qdot(k) on the right): q(k+1) - q(k) = "
         "h qdot(k+1), the new velocity, so h^2 K multiplies qdot(k+1) on the left (Eq. 2.82).",
         lambda: solve(M + h * D, right - h * h * K @ qdot)),
        ("the damper is counted twice: f already holds -D qdot(k); the step takes the damper at the new "
         "velocity only, -D qdot(k+1) (Eq. 2.83), so add h D qdot(k) back on the right.",
         lambda: solve(M + h * D + h * h * K, M @ qdot + h * f)),
        ("the damper is explicit: h D is missing from the left side, and the damper is taken at the "
         "new velocity, -D qdot(k+1) (Eq. 2.83).", lambda: solve(M + h * h * K, M @ qdot + h * f)),
        ("h D has the wrong sign: the damper resists the motion, + h D on the left (D = -d tau_D/dqdot, "
         "Eq. 2.85).", lambda: solve(M - h * D + h * h * K, right)),
        ("K is multiplied by h, not h^2: one h from the step of the force, one from q(k+1) - q(k) = "
         "h qdot(k+1).", lambda: solve(M + h * D + h * K, right)),
        ("this is Euler's explicit step (Eq. 2.21), qdot + h M^-1 f: the spring and the damper are taken "
         "at the end of the step, which puts h D + h^2 K on the left (Eq. 2.84).",
         lambda: qdot + solve(M, h * f)),
    ]


def springy(model, rng, stiffness=(5.0, 60.0), damping=(0.2, 3.0)):
    """``model`` with a spring (rest angle random) and a damper in every joint coordinate (0 when the
    range is None)."""
    bodies = []
    for body in model.bodies:
        n = body.joint.ndof
        K = rng.uniform(*stiffness, n) if stiffness is not None else 0.0
        D = rng.uniform(*damping, n) if damping is not None else 0.0
        bodies.append(dataclasses.replace(body, stiffness=K, damping=D, q_rest=rng.uniform(-0.3, 0.3, n)))
    return Model(bodies, gravity=model.gravity)


def _euler_case(model, q, qdot, h):
    """``(args, label, want)``: the arguments ``(M, f, K, D, qdot, h)`` of a model's step, their label and
    the library's new velocity."""
    args = (mass_matrix(model, q), reduced_forces(model, q, qdot), np.diag(model.stiffness),
            np.diag(model.damping), qdot, h)
    label = (f"M and f at q = {describe(q)} of {describe_model(model)}; K = diag{describe(model.stiffness)}, "
             f"D = diag{describe(model.damping)}, qdot = {describe(qdot)}, h = {h:g}")
    return args, label, linearly_implicit_euler_step(model, q, qdot, h)[1]


def _euler_cases(fn, found, **kwargs):
    return _judge(fn, found, name="implicit_euler_velocity", shape=found[0][2].shape, mistakes=euler_mistakes,
                  what="qdot(k+1)", **kwargs)


def _rod(K, D):
    """One uniform rod (1 kg, 1 m) hinged about y at its top end, with a joint spring and damper."""
    T = np.eye(4)
    T[2, 3] = -0.5
    inertia = np.diag([1 / 12, 1 / 12, 1e-3])
    rod = Body("rod", -1, Revolute([0.0, 1.0, 0.0]), np.eye(4), T, 1.0, inertia, stiffness=K, damping=D)
    return Model([rod], gravity=(0.0, 0.0, 0.0))


@check_of("implicit_euler_velocity", "one_hinge", "one hinge with a spring and a damper, no gravity", 1)
def euler_one_hinge(fn, rng):
    model = _rod(float(rng.uniform(20, 80)), float(rng.uniform(0.5, 3)))
    found = [_euler_case(model, rng.uniform(-1, 1, 1), rng.standard_normal(1), h) for h in (0.01, 0.05)]
    return _euler_cases(fn, found, hint="For one hinge without gravity Eq. (2.84) is scalar: "
                        "qdot(k+1) = (M qdot(k) - h K q(k)) / (M + h D + h^2 K), with M = m L^2/3 = 1/3.")


@check_of("implicit_euler_velocity", "bare", "no springs or dampers (Euler's step, Eq. 2.21)", 1)
def euler_bare(fn, rng):
    model = random_chain(rng, 3)
    found = [_euler_case(model, *random_state(rng, model), 0.01) for _ in range(2)]
    return _euler_cases(fn, found, hint="With K = D = 0 nothing is linearised: M qdot(k+1) = M qdot(k) + h f "
                        "(Eq. 2.21).")


@check_of("implicit_euler_velocity", "springs", "springs without dampers", 1)
def euler_springs(fn, rng):
    model = springy(random_chain(rng, 4), rng, damping=None)
    found = [_euler_case(model, *random_state(rng, model), h) for h in (0.01, 0.03)]
    return _euler_cases(fn, found)


@check_of("implicit_euler_velocity", "general", "springs and dampers on chains and trees", 2)
def euler_general(fn, rng):
    found = []
    for branching in (False, True, False):  # four bodies each: six coordinates, one shape
        model = springy(random_chain(rng, 4, branching=branching), rng)
        found.append(_euler_case(model, *random_state(rng, model), round(float(rng.uniform(0.005, 0.05)), 3)))
    return _euler_cases(fn, found)


@check_of("implicit_euler_velocity", "stiff", "stiff springs at a large step", 1)
def euler_stiff(fn, rng):
    model = springy(random_chain(rng, 3), rng, stiffness=(1000.0, 3000.0), damping=(1.0, 5.0))
    found = [_euler_case(model, *random_state(rng, model), 0.05)]
    return _euler_cases(fn, found, hint="At h = 0.05 and K of 1000 to 3000 the h^2 K term dominates the "
                        "left side.")
