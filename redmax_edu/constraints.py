"""Constraints on a reduced-coordinate model: loops, couplings, limits, prescribed motion, contact (§2.8-2.9).

A tree in reduced coordinates satisfies its joints by construction. Everything else a
mechanism needs is added as a *constraint* on the velocities,

    G qdot = w(t)            (equality)      or      C qdot >= w(t)      (inequality),

that the solver enforces with multipliers: ``M_r qddot = f_r + G^T lambda`` (the library's
sign convention, Part 1's Eq. 1.88 with lambda of the opposite sign). A constraint may act

* on the maximal velocities, the body twists ``phi = J qdot``: rows ``G_m`` that become
  reduced rows ``G_m J_mr`` (Eq. 2.102, 2.105-2.106): a loop closure between two bodies, a
  prescribed body twist, a joint velocity measured between two bodies, a floor contact;
* on the reduced coordinates directly, rows ``G_r`` (Eq. 2.107-2.108): a coupling between two
  joint coordinates (equal angles, gears), a joint limit, a prescribed joint (hybrid dynamics,
  §2.9, Eq. 2.113-2.114), a deformable node held to a body point;

and both kinds stack into one set of reduced rows (Eq. 2.109-2.111). Each constraint reports, at a state
``(q, qdot)`` and time ``t``, a :class:`Rows` record: its rows, the velocity-product term ``Gdot qdot``
that the acceleration level needs (Eq. 2.103-2.104), its position error ``g(q, t)`` (zero for a constraint
that only speaks of velocities) and its target ``w(t)`` and ``dw/dt``.
:func:`~redmax_edu.constrained.assemble_constraints` stacks them. With Baumgarte stabilisation (§1.12) the
rows the solvers use are

    acceleration level (RK45):   G qddot = dw/dt - Gdot qdot - 2 alpha (G qdot - w) - beta^2 g,
    velocity level (Euler):      G qdot1 = w + h dw/dt - gamma g       (at the start of the step),

with ``>=`` for inequalities. At the acceleration level an inequality ``c(q) >= 0`` (a limit, a contact)
is *active*, and enters the solve, only where it is violated or touching, ``c <= 0``; at the velocity
level every inequality row enters, and one that still holds (``c > 0``) only keeps the step from crossing
it, ``C qdot1 >= -c / h`` (:meth:`~redmax_edu.constrained.ConstraintRows.velocity_rhs`).

The solves themselves are :func:`redmax_edu.dynamics.constrained_dynamics` and
:func:`redmax_edu.dynamics.linearly_implicit_euler_step`.

Taught in book/02_reduced/08_constraints and 09_hybrid_dynamics.
"""

from dataclasses import dataclass

import numpy as np

from ._validate import ArgumentTypeError, as_callable, as_index, as_real, as_scalar, as_transform
from .lie import ad_unchecked, adjoint_unchecked, gamma, hat_unchecked, inv_se3_unchecked

__all__ = ["Rows", "Constraint", "Loop", "CoordinateCoupling", "JointLimit", "PrescribedJoint",
           "PrescribedBody", "PrescribedJointVelocity", "FloorContact", "NodeAttachment", "check_baumgarte",
           "DEFAULT_BAUMGARTE"]

#: The reference code's stabilisation gains ``(alpha, beta, gamma)`` (1/s): 2 alpha and beta^2
#: at the acceleration level, gamma at the velocity level.
DEFAULT_BAUMGARTE = (5.0, 5.0, 5.0)


def check_baumgarte(gains):
    """The gains ``(alpha, beta, gamma)`` as three non-negative floats, or a ValueError naming 'baumgarte'."""
    g = as_real(gains, (3,), "baumgarte")
    if np.any(g < 0):
        raise ValueError(f"argument 'baumgarte' (alpha, beta, gamma) must be non-negative, got {g.tolist()}")
    return tuple(float(x) for x in g)


@dataclass(frozen=True)
class Rows:
    """What one constraint contributes at a state: ``k`` rows of ``G qdot = w``.

    Attributes
    ----------
    G_r : ndarray (k, nq) or None
        The part acting on ``qdot`` directly.
    G_m : dict of int to ndarray
        The part acting on body twists ``phi_i`` (becomes ``G_m J_mr``).
    bias : ndarray (k,)
        ``Gdot_r qdot + Gdot_m phi``: the velocity products of the rows' own change
        (Eq. 2.104); the assembler adds ``G_m Jdot_mr qdot``.
    error : ndarray (k,)
        The position error ``g(q, t)`` (zeros for a constraint on velocities only).
    w, wdot : ndarray (k,)
        The target ``w(t)`` of ``G qdot`` and its rate.
    """

    G_r: np.ndarray | None
    G_m: dict
    bias: np.ndarray
    error: np.ndarray
    w: np.ndarray
    wdot: np.ndarray


def _zeros(k):
    return np.zeros(k)


class Constraint:
    """Base class. A subclass sets ``inequality`` and ``kind``, and implements :meth:`check`
    (against a model) and :meth:`rows` (at a state)."""

    inequality = False
    kind = "constraint"
    #: True when the constraint has a position error (Baumgarte can pull it back).
    positional = True

    def __init__(self, name=None):
        if name is not None and (not isinstance(name, str) or not name):
            raise ValueError(f"argument 'name' of a {self.kind} must be a non-empty string, got {name!r}")
        self.name = name

    def describe(self, model=None):
        """How error messages name this constraint, e.g. ``loop closure 'rocker'-'ground'``."""
        if self.name is not None:
            return f"{self.kind} {self.name!r}"
        return f"{self.kind} {self._parts(model)}".rstrip()

    def _parts(self, model):
        return ""

    def _body_name(self, model, i):
        if i < 0:
            return "world"
        return repr(model.names[i]) if model is not None and i < model.n else f"body {i}"

    def _check_body(self, model, i, field, allow_world=False):
        low = -1 if allow_world else 0
        if not low <= i < model.n:
            allowed = f"-1 (the world) to {model.n - 1}" if allow_world else f"0 to {model.n - 1}"
            raise ValueError(f"{self.describe()}: field '{field}' is {i}, but the model has {model.n} bodies "
                             f"({allowed})")

    def _check_dof(self, model, body, dof, field="dof"):
        self._check_body(model, body, "body")
        ndof = model.bodies[body].joint.ndof
        if ndof == 0:
            raise ValueError(f"{self.describe(model)}: the joint of body {model.names[body]!r} is "
                             f"{model.bodies[body].joint.kind} and has no coordinate to constrain")
        if not 0 <= dof < ndof:
            raise ValueError(f"{self.describe(model)}: field '{field}' is {dof}, but the "
                             f"{model.bodies[body].joint.kind} joint of body {model.names[body]!r} has "
                             f"{ndof} coordinate(s)")
        return model.dofs[body].start + dof

    def check(self, model):
        """Raise ValueError (naming this constraint) if it does not fit ``model``."""

    def rows(self, model, q, qdot, kin, t):
        """The :class:`Rows` at state ``(q, qdot)`` (with the forward sweep ``kin``) and time ``t``."""
        raise NotImplementedError

    def __repr__(self):
        return f"{type(self).__name__}({self.describe()})"


def _world_point(E, r):
    return E[:3, :3] @ r + E[:3, 3]


def _orthonormal_complement(axis):
    """Two unit vectors orthogonal to ``axis`` and to each other (Eq. 2.101), shape (3, 2)."""
    a = axis / np.linalg.norm(axis)
    v1 = np.zeros(3)
    v1[int(np.argmin(np.abs(a)))] = 1.0  # the coordinate direction least aligned with a
    v2 = np.cross(a, v1)
    v2 /= np.linalg.norm(v2)
    v1 = np.cross(v2, a)
    return np.column_stack([v1 / np.linalg.norm(v1), v2])


class Loop(Constraint):
    """A loop closure: point ``point_a`` of body ``a`` stays on point ``point_b`` of body ``b`` (§2.8).

    With ``axis`` (a direction in body a's frame) only the two components orthogonal to it
    are constrained (Eq. 2.101-2.102): the closure acts as a hinge about that axis, which is
    what a planar linkage needs (three rows would over-constrain it, Eq. 2.100's discussion).
    Without ``axis`` all three components are (a ball joint closing the loop).

    The rows are those of ``g = V^T R_a^T (x_a - x_b)``, the world gap between the two points
    expressed in body a's frame and projected on the columns of ``V`` (the directions
    orthogonal to the axis, or the identity). Measuring the gap in a's frame makes ``G`` the
    exact derivative of ``g`` everywhere; where the points coincide (``g = 0``) the rows equal
    Eq. (2.102)'s world-frame form.

    Parameters
    ----------
    a : int
        Body index (a body, not the world: the directions live in its frame).
    point_a : array_like (3,)
        The point in body a's frame.
    b : int
        Body index, or -1 for a point fixed in the world.
    point_b : array_like (3,)
        The point in body b's frame (in world coordinates when ``b = -1``).
    axis : array_like (3,), optional
        Hinge axis of the closure in body a's frame; :meth:`hinge` takes it from a's joint.
    name : str, optional

    Examples
    --------
    A bent two-link arm whose tip is tied to the world point where it starts cannot move:

    >>> from redmax_edu.joints import Revolute
    >>> from redmax_edu.kinematics import body_poses
    >>> from redmax_edu.model import Body, Model
    >>> T = np.eye(4); T[2, 3] = -0.5                      # each link's centre, 0.5 m below its hinge
    >>> top = np.eye(4); top[2, 3] = -1.0                  # the elbow, 1 m below the shoulder
    >>> link = dict(joint=Revolute([0, 1, 0]), T_joint_body=T, mass=1.0, inertia=0.01 * np.eye(3))
    >>> arm = Model([Body("upper", -1, T_parent_joint=np.eye(4), **link),
    ...              Body("lower", 0, T_parent_joint=top, **link)])
    >>> q = np.array([0.5, -1.0])
    >>> tip = body_poses(arm, q)[1] @ [0, 0, -0.5, 1]      # the lower link's end, in the world
    >>> closed = arm.with_constraints([Loop(1, [0, 0, -0.5], -1, tip[:3], axis=[0, 1, 0])])
    >>> from redmax_edu.dynamics import forward_dynamics
    >>> bool(np.allclose(forward_dynamics(closed, q, [0.0, 0.0]), 0.0))
    True

    Closing the loop of a *straight* arm instead gives dependent rows (the tip can only move
    sideways there), which the solve reports by name:

    >>> tip = body_poses(arm, [0.0, 0.0])[1] @ [0, 0, -0.5, 1]
    >>> forward_dynamics(arm.with_constraints([Loop(1, [0, 0, -0.5], -1, tip[:3], axis=[0, 1, 0])]),
    ...                  [0.0, 0.0], [0.0, 0.0])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: the constraint set is redundant or inconsistent: constraints[0], loop ...: its 2 rows ...
    """

    kind = "loop closure"

    def __init__(self, a, point_a, b, point_b, axis=None, name=None):
        super().__init__(name)
        self.a = as_index(a, "a")
        self.b = as_index(b, "b", minimum=-1)
        self.point_a = as_real(point_a, (3,), "point_a")
        self.point_b = as_real(point_b, (3,), "point_b")
        if self.a == self.b:
            raise ValueError(f"{self.describe()}: bodies 'a' and 'b' are the same body {self.a}")
        if axis is None:
            self.axis, self.V = None, np.eye(3)
        else:
            axis = as_real(axis, (3,), "axis")
            if not np.linalg.norm(axis) > 1e-12:
                raise ValueError(f"{self.describe()}: argument 'axis' must be a nonzero vector")
            self.axis = axis / np.linalg.norm(axis)
            self.V = _orthonormal_complement(self.axis)
        self.nrows = self.V.shape[1]

    @classmethod
    def hinge(cls, model, a, point_a, b, point_b, name=None):
        """A two-row closure about body a's revolute joint axis (the reference's ``ConstraintLoop``)."""
        joint = model.bodies[a].joint
        if getattr(joint, "kind", None) != "revolute":
            raise ValueError(f"Loop.hinge: the joint of body {model.names[a]!r} is {joint.kind}, not "
                             "revolute; give the closure's axis explicitly")
        axis_body = model.T_joint_body[a][:3, :3].T @ joint.axis
        return cls(a, point_a, b, point_b, axis=axis_body, name=name)

    def _parts(self, model):
        return f"{self._body_name(model, self.a)}-{self._body_name(model, self.b)}"

    def check(self, model):
        self._check_body(model, self.a, "a")
        self._check_body(model, self.b, "b", allow_world=True)

    def rows(self, model, q, qdot, kin, t):
        E_a, phi_a = kin.E_wi[self.a], kin.phi[self.a]
        R_a, w_a = E_a[:3, :3], phi_a[:3]
        V = self.V
        xa_w = _world_point(E_a, self.point_a)
        Gam_a = gamma(self.point_a)
        G_m = {}
        s = Gam_a @ phi_a                                        # point a's velocity, a's frame
        acc = hat_unchecked(w_a) @ s                              # its velocity product, a's frame
        if self.b >= 0:
            E_b, phi_b = kin.E_wi[self.b], kin.phi[self.b]
            R_ab = R_a.T @ E_b[:3, :3]
            xb_w = _world_point(E_b, self.point_b)
            Gam_b = gamma(self.point_b)
            G_m[self.b] = -V.T @ R_ab @ Gam_b
            s = s - R_ab @ (Gam_b @ phi_b)
            acc = acc - R_ab @ (hat_unchecked(phi_b[:3]) @ (Gam_b @ phi_b))
        else:
            xb_w = self.point_b
        u = R_a.T @ (xa_w - xb_w)                                # the gap in a's frame
        block = Gam_a.copy()
        block[:, :3] += hat_unchecked(u)                         # d/dt R_a^T = -[w_a] R_a^T
        G_m[self.a] = V.T @ block
        udot = hat_unchecked(u) @ w_a + s
        bias = V.T @ (acc - hat_unchecked(w_a) @ (udot + s))
        k = self.nrows
        return Rows(None, G_m, bias, V.T @ u, _zeros(k), _zeros(k))


class CoordinateCoupling(Constraint):
    """Two joint coordinates tied linearly, ``q_b = ratio q_a + offset`` (§2.8, reduced equality).

    Equal angles (``ratio = 1``), a gear pair (``ratio = -r_a / r_b``), a differential: one row
    ``g = q_b - ratio q_a - offset`` with ``G_r = e_b - ratio e_a`` (Eq. 2.107).

    Parameters
    ----------
    a, b : int
        The bodies whose joints carry the two coordinates.
    ratio : float
    offset : float
    dof_a, dof_b : int
        Which coordinate of each joint (0 for one-coordinate joints).

    Examples
    --------
    >>> c = CoordinateCoupling(0, 1, ratio=0.5)
    >>> c.describe()
    'coupling q[body 1] = 0.5 q[body 0]'
    """

    kind = "coupling"
    nrows = 1

    def __init__(self, a, b, ratio=1.0, offset=0.0, dof_a=0, dof_b=0, name=None):
        super().__init__(name)
        self.a, self.b = as_index(a, "a"), as_index(b, "b")
        self.dof_a, self.dof_b = as_index(dof_a, "dof_a"), as_index(dof_b, "dof_b")
        self.ratio = as_scalar(ratio, "ratio")
        self.offset = as_scalar(offset, "offset")
        if (self.a, self.dof_a) == (self.b, self.dof_b):
            raise ValueError(f"{self.describe()}: couples coordinate {self.dof_a} of body {self.a} "
                             "with itself")

    def _parts(self, model):
        sa, sb = self._body_name(model, self.a), self._body_name(model, self.b)
        tail = f" + {self.offset:g}" if self.offset else ""
        return f"q[{sb}] = {self.ratio:g} q[{sa}]{tail}"

    def check(self, model):
        self._check_dof(model, self.a, self.dof_a, "dof_a")
        self._check_dof(model, self.b, self.dof_b, "dof_b")

    def rows(self, model, q, qdot, kin, t):
        ka, kb = model.dofs[self.a].start + self.dof_a, model.dofs[self.b].start + self.dof_b
        G = np.zeros((1, model.nq))
        G[0, kb] = 1.0
        G[0, ka] -= self.ratio
        error = np.array([q[kb] - self.ratio * q[ka] - self.offset])
        return Rows(G, {}, _zeros(1), error, _zeros(1), _zeros(1))


class JointLimit(Constraint):
    """Bounds ``lower <= q_k <= upper`` on one joint coordinate (§2.8, reduced inequality, Eq. 2.111-2.112).

    One row per finite bound, ``c = q_k - lower >= 0`` and ``c = upper - q_k >= 0``; at the
    acceleration level each is active only when it is reached. ``-inf`` or ``inf`` leaves
    that side free (no row).

    Examples
    --------
    >>> JointLimit(1, -np.pi / 4, np.pi / 4).describe()
    'joint limit [-0.785398, 0.785398] on body 1'
    >>> JointLimit(1, 0.0, np.inf).describe()  # a stop on one side only
    'joint limit [0, inf] on body 1'
    >>> JointLimit(1, 1.0, -1.0)
    Traceback (most recent call last):
    ...
    ValueError: joint limit [1, -1] on body 1: argument 'lower' = 1 is above 'upper' = -1
    """

    kind = "joint limit"
    inequality = True

    def __init__(self, body, lower, upper, dof=0, name=None):
        super().__init__(name)
        self.body, self.dof = as_index(body, "body"), as_index(dof, "dof")
        self.lower, self.upper = _bound(lower, "lower"), _bound(upper, "upper")
        if np.isnan(self.lower) or np.isnan(self.upper):
            raise ValueError(f"{self.describe()}: the bounds must be numbers (use -inf or inf for none)")
        if self.lower > self.upper or self.lower == np.inf or self.upper == -np.inf:
            raise ValueError(f"{self.describe()}: argument 'lower' = {self.lower:g} is above 'upper' = "
                             f"{self.upper:g}")
        self._signs = [sign for sign, bound in ((1.0, self.lower), (-1.0, self.upper)) if np.isfinite(bound)]

    def _parts(self, model):
        return f"[{self.lower:g}, {self.upper:g}] on {self._body_name(model, self.body)}"

    def check(self, model):
        self._check_dof(model, self.body, self.dof)

    def rows(self, model, q, qdot, kin, t):
        k = model.dofs[self.body].start + self.dof
        m = len(self._signs)
        G = np.zeros((m, model.nq))
        G[:, k] = self._signs
        error = np.array([q[k] - self.lower if sign > 0 else self.upper - q[k] for sign in self._signs])
        return Rows(G, {}, _zeros(m), error, _zeros(m), _zeros(m))


def _bound(value, name):
    """A bound of a :class:`JointLimit`: a real number, infinities allowed (a side without a stop)."""
    if isinstance(value, (bool, np.bool_)):
        raise ValueError(f"argument '{name}' must be a number (or -inf, inf), got {value!r}")
    try:
        x = float(np.asarray(value, dtype=float).reshape(()))
    except (TypeError, ValueError):
        raise ValueError(f"argument '{name}' must be a number (or -inf, inf), got {value!r}") from None
    return x


def _function(fn, name, arguments, what):
    """``fn`` if it can be called with ``arguments`` (:func:`~redmax_edu._validate.as_callable`), else
    an error naming the constraint ``what`` and the argument."""
    try:
        return as_callable(fn, name, arguments)
    except ValueError as err:
        raise ArgumentTypeError(f"{what}: {err}") from None


def _motion(fn, t, k, names, what):
    """Call a prescribed-motion function at ``t``; check it returns ``len(names)`` arrays of ``k`` numbers."""
    out = fn(t)
    if not isinstance(out, (tuple, list)) or len(out) != len(names):
        raise ValueError(f"{what}: its function must return a tuple ({', '.join(names)}), got "
                         f"{type(out).__name__}")
    arrays = []
    for x, name in zip(out, names, strict=True):
        a = as_real(x, None, name)
        if a.size != k:
            raise ValueError(f"{what}: its function returned {name} of shape {a.shape} at t = {t:g}; "
                             f"expected {k} number(s)")
        arrays.append(a.reshape(k))
    return arrays


class PrescribedJoint(Constraint):
    """A joint whose motion is given as a function of time: hybrid dynamics (§2.9, Eq. 2.113-2.114).

    ``motion(t)`` returns ``(q, qdot, qddot)`` of the joint's prescribed coordinates. The rows
    are those of the identity (``G_r`` picks the coordinates), the position error is
    ``q - q_p(t)``, and the multipliers are the joint forces that produce the motion
    (``tau_p = G^T lambda``, Eq. 2.113's last sentence).

    Parameters
    ----------
    body : int
        The body whose joint is prescribed.
    motion : callable ``t -> (q, qdot, qddot)``
        Each of shape ``(len(dofs),)``.
    dofs : sequence of int, optional
        Which of the joint's coordinates (default all).

    Examples
    --------
    >>> spin = PrescribedJoint(0, lambda t: ([t], [1.0], [0.0]))
    >>> spin.describe()
    'prescribed joint of body 0'
    """

    kind = "prescribed joint"

    def __init__(self, body, motion, dofs=None, name=None):
        super().__init__(name)
        self.body = as_index(body, "body")
        self.motion = _function(motion, "motion", ("t",), self.describe())  # t -> (q, qdot, qddot)
        self.dofs = None if dofs is None else tuple(as_index(d, "dofs") for d in dofs)

    def _parts(self, model):
        return f"of {self._body_name(model, self.body)}"

    def check(self, model):
        self._check_body(model, self.body, "body")
        ndof = model.bodies[self.body].joint.ndof
        dofs = tuple(range(ndof)) if self.dofs is None else self.dofs
        if not dofs:
            raise ValueError(f"{self.describe(model)}: the {model.bodies[self.body].joint.kind} joint of "
                             f"body {model.names[self.body]!r} has no coordinate to prescribe")
        for d in dofs:
            self._check_dof(model, self.body, d, "dofs")
        if len(set(dofs)) != len(dofs):
            raise ValueError(f"{self.describe(model)}: field 'dofs' repeats a coordinate: {list(dofs)}")

    def columns(self, model):
        """The prescribed coordinates' indices in ``q``."""
        start = model.dofs[self.body].start
        dofs = self.dofs if self.dofs is not None else range(model.bodies[self.body].joint.ndof)
        return np.array([start + d for d in dofs], dtype=int)

    def rows(self, model, q, qdot, kin, t):
        cols = self.columns(model)
        k = len(cols)
        q_p, qdot_p, qddot_p = _motion(self.motion, t, k, ("q", "qdot", "qddot"), self.describe(model))
        G = np.zeros((k, model.nq))
        G[np.arange(k), cols] = 1.0
        return Rows(G, {}, _zeros(k), q[cols] - q_p, qdot_p, qddot_p)


_TWIST_COMPONENTS = ("wx", "wy", "wz", "vx", "vy", "vz")


class PrescribedBody(Constraint):
    """Components of one body's twist given as functions of time and state (maximal hybrid dynamics, §2.9).

    ``target(t, E, phi)`` returns ``(w, wdot)``: the wanted values of the chosen components of
    the body twist ``phi = (omega; nu)`` (body frame) and their time derivatives, given the
    body's world pose ``E`` and current twist (so a velocity given in world axes can be
    rotated into the body's). ``G_m`` selects the components; the constraint is on
    velocities only (no position error to stabilise).

    Parameters
    ----------
    body : int
    components : sequence of int
        Indices 0-5 into ``(omega_x, omega_y, omega_z, nu_x, nu_y, nu_z)``.
    target : callable ``(t, E (4, 4), phi (6,)) -> (w (k,), wdot (k,))``

    Examples
    --------
    >>> PrescribedBody(3, [1, 3, 5], lambda t, E, phi: (np.zeros(3), np.zeros(3))).describe()
    'prescribed twist (wy, vx, vz) of body 3'
    """

    kind = "prescribed twist"
    positional = False

    def __init__(self, body, components, target, name=None):
        super().__init__(name)
        self.body = as_index(body, "body")
        comps = tuple(as_index(c, "components") for c in components)
        if not comps or len(set(comps)) != len(comps) or max(comps) > 5:
            raise ValueError(f"argument 'components' must be distinct indices 0-5 into (omega; nu), got "
                             f"{list(comps)}")
        self.components = comps
        self.target = _function(target, "target", ("t", "E", "phi"), self.describe())  # -> (w, wdot)
        self.nrows = len(comps)

    def _parts(self, model):
        names = ", ".join(_TWIST_COMPONENTS[c] for c in self.components)
        return f"({names}) of {self._body_name(model, self.body)}"

    def check(self, model):
        self._check_body(model, self.body, "body")

    def rows(self, model, q, qdot, kin, t):
        k = self.nrows
        sel = np.zeros((k, 6))
        sel[np.arange(k), self.components] = 1.0
        w, wdot = _motion(lambda s: self.target(s, kin.E_wi[self.body], kin.phi[self.body]), t, k,
                          ("w", "wdot"), self.describe(model))
        return Rows(None, {self.body: sel}, _zeros(k), _zeros(k), w, wdot)


class PrescribedJointVelocity(Constraint):
    """A joint's velocity prescribed through a *maximal* constraint between its two bodies (§2.9).

    The twist of body i relative to its parent p, seen in the joint frame j, is
    ``Ad(E_j_i) phi_i - Ad(E_j_p) phi_p = S qdot_j``. For a joint with a constant ``S``
    (revolute, prismatic) the row ``P (Ad(E_j_i) phi_i - Ad(E_j_p) phi_p) = qdot_p(t)`` with
    ``P = S^+`` (the pseudo-inverse) prescribes its velocity using body twists only, as a
    simulator without joint coordinates would; in reduced coordinates it becomes exactly the
    row ``e_k`` of the joint's coordinate (a check of Eq. 2.105's ``G_m J_mr``). Velocities
    only: there is no position error to stabilise.

    ``velocity(t)`` returns ``(qdot_p, qddot_p)``.

    Examples
    --------
    >>> PrescribedJointVelocity(1, lambda t: (-4 * np.pi, 0.0)).describe()
    'prescribed joint velocity of body 1'
    """

    kind = "prescribed joint velocity"
    nrows = 1
    positional = False

    def __init__(self, body, velocity, name=None):
        super().__init__(name)
        self.body = as_index(body, "body")
        self.velocity = _function(velocity, "velocity", ("t",), self.describe())  # t -> (qdot, qddot)

    def _parts(self, model):
        return f"of {self._body_name(model, self.body)}"

    def check(self, model):
        self._check_body(model, self.body, "body")
        joint = model.bodies[self.body].joint
        if joint.kind not in ("revolute", "prismatic"):
            raise ValueError(f"{self.describe(model)}: the joint of body {model.names[self.body]!r} is "
                             f"{joint.kind}; a joint velocity through a maximal constraint needs a joint "
                             "with a constant S (revolute or prismatic)")

    def rows(self, model, q, qdot, kin, t):
        i, p = self.body, model.parents[self.body]
        S = model.bodies[i].joint.S(np.zeros(1))
        P = np.linalg.pinv(S)                                   # (1, 6)
        A_ji = adjoint_unchecked(model.T_joint_body[i])
        G_m = {i: P @ A_ji}
        bias = np.zeros(1)
        if p >= 0:
            A_jp = adjoint_unchecked(inv_se3_unchecked(kin.E_wj[i]) @ kin.E_wi[p])
            G_m[p] = -P @ A_jp
            V_j = A_ji @ kin.phi[i]                             # the joint frame's twist
            bias = P @ (ad_unchecked(V_j) @ (A_jp @ kin.phi[p]))  # d/dt Ad(E_j_p) = -ad(V_j) Ad(E_j_p)
        qdot_p, qddot_p = _motion(self.velocity, t, 1, ("qdot", "qddot"), self.describe(model))
        return Rows(None, G_m, bias, _zeros(1), qdot_p, qddot_p)


class FloorContact(Constraint):
    """A sphere on a body that must stay above a plane (unilateral contact, a maximal inequality).

    The sphere (``radius``, centre at ``point`` in the body frame) and the plane (a frame whose
    z axis is the normal ``n`` and whose origin lies on it) give ``c = n . (x - o) - radius >= 0``,
    with the row ``n^T R Gamma(point)`` on the body's twist (the normal velocity of the centre,
    which equals that of the touching point). ``mu`` is the friction coefficient that the
    frictional solver (:mod:`redmax_edu.friction.bisp`) uses; the frictionless solves ignore it.

    Examples
    --------
    >>> FloorContact(2, radius=0.01, mu=0.2).describe()
    'floor contact of body 2'
    >>> FloorContact(2, mu=-0.1)
    Traceback (most recent call last):
    ...
    ValueError: floor contact of body 2: argument 'mu' must be >= 0, got -0.1
    """

    kind = "floor contact"
    nrows = 1
    inequality = True

    def __init__(self, body, radius=0.0, point=(0.0, 0.0, 0.0), plane=None, mu=0.0, name=None):
        super().__init__(name)
        self.body = as_index(body, "body")
        self.radius = as_scalar(radius, "radius", minimum=0.0)
        self.point = as_real(point, (3,), "point")
        self.plane = np.eye(4) if plane is None else as_transform(plane, "plane", real=True)
        try:
            self.mu = as_scalar(mu, "mu", minimum=0.0)
        except ValueError as err:
            raise ValueError(f"{self.describe()}: {err}") from None

    def _parts(self, model):
        return f"of {self._body_name(model, self.body)}"

    def check(self, model):
        self._check_body(model, self.body, "body")

    @property
    def normal(self):
        """The plane's unit normal (world), shape (3,)."""
        return self.plane[:3, 2]

    def contact_point(self, E):
        """The sphere's lowest point, in the body frame (where friction acts), shape (3,)."""
        return self.point - self.radius * (E[:3, :3].T @ self.normal)

    def rows(self, model, q, qdot, kin, t):
        E, phi = kin.E_wi[self.body], kin.phi[self.body]
        n, R = self.normal, E[:3, :3]
        Gam = gamma(self.point)
        row = (n @ R) @ Gam
        gap = n @ (_world_point(E, self.point) - self.plane[:3, 3]) - self.radius
        bias = (n @ R) @ (hat_unchecked(phi[:3]) @ (Gam @ phi))
        return Rows(None, {self.body: row[None]}, np.array([bias]), np.array([gap]), _zeros(1), _zeros(1))


class NodeAttachment(Constraint):
    """A deformable node held to a body point by a constraint (§2.7 by constraint, 3 rows).

    The alternative to the exact attachment of :mod:`redmax_edu.deformable` (where an attached
    node is not a coordinate): here the node stays a coordinate and the rows
    ``x_node - (p_i + R_i r) = 0`` hold it, the way the RedMax reference code attaches its
    mass-spring chains (``G_r`` is the identity on the node, ``G_m = -R_i Gamma(r)`` on the body).

    Parameters
    ----------
    deformable : int
        Index into ``model.deformables``.
    node : int
        Node of that chain; it must be free (a coordinate).
    body : int
        Body index, or -1 for a fixed world point.
    point : array_like (3,)
        In the body's frame (world coordinates for ``body = -1``).
    """

    kind = "node attachment"
    nrows = 3

    def __init__(self, deformable, node, body, point, name=None):
        super().__init__(name)
        self.deformable = as_index(deformable, "deformable")
        self.node = as_index(node, "node")
        self.body = as_index(body, "body", minimum=-1)
        self.point = as_real(point, (3,), "point")

    def _parts(self, model):
        return f"of node {self.node} of deformable {self.deformable} to {self._body_name(model, self.body)}"

    def check(self, model):
        if not self.deformable < len(model.deformables):
            raise ValueError(f"{self.describe(model)}: field 'deformable' is {self.deformable}, but the "
                             f"model has {len(model.deformables)} deformable bodies")
        self._check_body(model, self.body, "body", allow_world=True)
        self._columns(model)

    def _columns(self, model):
        free = list(model.deformables[self.deformable].free)
        if self.node not in free:
            raise ValueError(f"{self.describe(model)}: node {self.node} is not a free node of the chain "
                             f"(free nodes: {free}); attach a node that is a coordinate")
        start = model.deformable_dofs[self.deformable].start + 3 * free.index(self.node)
        return np.arange(start, start + 3)

    def rows(self, model, q, qdot, kin, t):
        cols = self._columns(model)
        G = np.zeros((3, model.nq))
        G[:, cols] = np.eye(3)
        if self.body < 0:
            return Rows(G, {}, _zeros(3), q[cols] - self.point, _zeros(3), _zeros(3))
        E, phi = kin.E_wi[self.body], kin.phi[self.body]
        R, Gam = E[:3, :3], gamma(self.point)
        bias = -R @ (hat_unchecked(phi[:3]) @ (Gam @ phi))
        error = q[cols] - _world_point(E, self.point)
        return Rows(G, {self.body: -R @ Gam}, bias, error, _zeros(3), _zeros(3))
