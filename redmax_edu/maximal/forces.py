"""Forces on rigid bodies in maximal coordinates, each with its stiffness and damping matrices (§1.9).

A force acting on a system of n bodies returns three arrays (:class:`.ForceTerms`):

* ``f``, shape (6n,): one wrench ``(torque, force)`` per body, in body coordinates;
* ``K = df/dq``, shape (6n, 6n): its derivative with respect to the poses, where body i's
  pose moves along its own body twist, ``E_i exp([dq_i])`` (the perturbation of Eq. 1.11);
* ``D = df/dphi``, shape (6n, 6n): its derivative with respect to the body twists.

Implicit integrators need ``K`` and ``D`` (§1.8, §3.4); the reduced-coordinate chapters map
all three through the Jacobian. Every ``K`` and ``D`` here is tested against finite
differences with :mod:`redmax_edu.checks`.

Most forces are *point forces*: a world-frame force ``F(x, v)`` that depends on the
positions and velocities of a few points attached to bodies (springs, contact, gravity).
For all of them one routine, :func:`assemble_point_forces`, applies the material
Jacobian of Eq. (1.12)-(1.13) and the rotation identities of Eq. (1.33) and (1.43); each
force only supplies ``F`` and its derivatives with respect to the points. The closed
forms of the writeup (Eq. 1.32, 1.35, 1.44, 1.47, 1.52, 1.66 ...) are what this routine
produces for the particular ``F`` of each force.

Taught in book/01_maximal/09_forces.
"""

from dataclasses import dataclass, field

import numpy as np
import scipy.linalg

from .._validate import (
    ArgumentTypeError,
    as_callable,
    as_index,
    as_instance,
    as_positive_definite,
    as_real,
    as_scalar,
    as_transform,
)
from ..lie import (
    ad_unchecked,
    gamma,
    hat_unchecked,
    left_jacobian_inverse_so3,
    log_so3,
    right_jacobian_inverse_so3,
)
from ..units import GRAVITY

__all__ = [
    "ForceTerms", "Force", "Attachment", "point_kinematics", "assemble_point_forces",
    "gravity_terms", "Gravity", "PointForce", "BodyDamping", "coriolis_terms", "Coriolis", "PointSpring",
    "Spring", "LinearSpringDamper", "CableLaw", "GroundPenalty", "FrameSpring", "stiffness_skew_part",
]


@dataclass
class ForceTerms:
    """A generalised force and its derivatives: ``f`` (6n,), ``K`` (6n, 6n), ``D`` (6n, 6n)."""

    f: np.ndarray
    K: np.ndarray
    D: np.ndarray

    @classmethod
    def zeros(cls, n):
        """The terms of no force on n bodies."""
        return cls(np.zeros(6 * n), np.zeros((6 * n, 6 * n)), np.zeros((6 * n, 6 * n)))

    def __add__(self, other):
        return ForceTerms(self.f + other.f, self.K + other.K, self.D + other.D)

    def add_body_terms(self, bodies, f=None, K=None, D=None):
        """Add wrenches ``f`` (k, 6) on ``bodies`` (k,) and diagonal blocks ``K`` and ``D`` (k, 6, 6).

        A body may be listed more than once (several points on it); its terms add up.
        """
        n = len(self.f) // 6
        if f is not None:
            np.add.at(self.f.reshape(n, 6), bodies, f)
        for total, blocks in ((self.K, K), (self.D, D)):
            if blocks is not None:
                np.add.at(total.reshape(n, 6, n, 6), (bodies, slice(None), bodies), blocks)


class Force:
    """Base class of the forces of this module.

    Subclasses implement :meth:`evaluate`; conservative ones also :meth:`potential_energy`.
    ``bodies`` lists the indices of the bodies the force touches (``-1`` is the world).
    """

    bodies = ()

    def evaluate(self, E, phi):
        """The force terms for poses ``E`` (n, 4, 4) and body twists ``phi`` (n, 6)."""
        raise NotImplementedError

    def wrench(self, E, phi):
        """The wrenches ``f`` (6n,) alone, ``evaluate(E, phi).f``: for the explicit integrators,
        which need no ``K`` or ``D``. A force whose derivatives cost much overrides it."""
        return self.evaluate(E, phi).f

    def potential_energy(self, E):
        """The potential energy at poses ``E`` (zero for forces without one)."""
        return 0.0

    def check_bodies(self, n):
        """Raise ValueError if the force refers to a body that a system of n bodies lacks."""
        for b in self.bodies:
            if not -1 <= b < n:
                raise ValueError(f"{type(self).__name__} refers to body {b}, but the system has "
                                 f"bodies 0..{n - 1} (and -1 for the world)")


@dataclass(frozen=True)
class Attachment:
    """A point fixed to a body: ``r`` in body coordinates, or a world point when ``body == -1``.

    ``Gamma`` is its constant ``Gamma(r)`` (Eq. 1.12), computed once.
    """

    body: int
    r: np.ndarray = field(default_factory=lambda: np.zeros(3))
    Gamma: np.ndarray = field(init=False, repr=False, compare=False)

    def __post_init__(self):
        if isinstance(self.body, (bool, np.bool_)) or not isinstance(self.body, (int, np.integer)) \
                or self.body < -1:
            raise ValueError(f"attachment body must be an index >= -1 (-1 is the world), got {self.body!r}")
        object.__setattr__(self, "r", as_real(self.r, (3,), "r"))
        object.__setattr__(self, "Gamma", gamma(self.r))


class _StackedPoints(tuple):
    """A tuple of Attachment with their arrays stacked once, for array operations.

    ``r`` (m, 3) of every point; of the points on bodies (not the world): ``on``, their
    positions in the tuple (k,), ``body`` (k,) and ``Gamma`` (k, 3, 6). The forces keep
    their fixed points in one; a plain sequence is stacked when it is used.
    """

    def __new__(cls, attachments):
        points = super().__new__(cls, attachments)
        on = [a for a, att in enumerate(points) if att.body >= 0]
        points.r = np.array([att.r for att in points]).reshape(-1, 3)
        points.on = np.array(on, dtype=int)
        points.body = np.array([points[a].body for a in on], dtype=int)
        points.Gamma = np.array([points[a].Gamma for a in on]).reshape(-1, 3, 6)
        return points


def _stacked(attachments):
    return attachments if isinstance(attachments, _StackedPoints) else _StackedPoints(attachments)


def _times(A, x):
    """``A_k @ x_k`` for stacks of matrices (k, i, j) and vectors (k, j)."""
    return (A @ x[:, :, None])[:, :, 0]


def point_kinematics(E, phi, attachments):
    """World positions ``x = R r + p`` and velocities ``v = R Gamma(r) phi`` of attached points (Eq. 1.12).

    The positions are those of Eq. (1.2).

    Parameters
    ----------
    E : ndarray, shape (n, 4, 4)
    phi : ndarray, shape (n, 6)
    attachments : sequence of Attachment, length m

    Returns
    -------
    x, v : ndarray, shape (m, 3)

    Examples
    --------
    >>> E, phi = np.eye(4)[None], np.array([[0, 0, 1.0, 0, 0, 0]])
    >>> x, v = point_kinematics(E, phi, [Attachment(0, [1.0, 0, 0])])
    >>> x[0], v[0]
    (array([1., 0., 0.]), array([0., 1., 0.]))
    """
    points = _stacked(attachments)
    on, body = points.on, points.body
    x = points.r.copy()  # world points stay where they are
    v = np.zeros((len(points), 3))
    R = E[body, :3, :3]
    x[on] = _times(R, points.r[on]) + E[body, :3, 3]
    v[on] = _times(R, _times(points.Gamma, phi[body]))
    return x, v


def assemble_point_forces(E, phi, attachments, F, dF_dx=None, dF_dv=None, derivatives=True):
    """Map world forces at attached points to maximal coordinates, with their K and D.

    Point a on body i (body coordinates ``r``) receives the world force ``F[a]``; its
    wrench on body i is ``J_a^T F[a]`` with the material Jacobian ``J_a = R_i Gamma(r)``
    (Eq. 1.12-1.13). Differentiating, three effects appear:

    * the rotation inside ``J_a^T``: ``d(R^T F)/d(theta) = [R^T F]`` (Eq. 1.33);
    * the force's dependence on point positions, ``dF/dx_b`` times ``dx_b/dq = J_b``;
    * its dependence on point velocities, ``dF/dv_b`` times ``dv_b/dq = -R [Gamma(r) phi]``
      on the rotational part (Eq. 1.43) and ``dv_b/dphi = J_b``.

    With the points' Jacobians stacked into one matrix ``J`` (3m, 6n) (the rows of a world
    point are zero), the last two are the chain rule ``J^T (dF/dx) J``, ``J^T (dF/dv) dv/dq``
    and ``J^T (dF/dv) J``.

    Parameters
    ----------
    E : ndarray, shape (n, 4, 4)
    phi : ndarray, shape (n, 6)
    attachments : sequence of Attachment, length m
    F : ndarray, shape (m, 3)
        World force at each point.
    dF_dx, dF_dv : ndarray, shape (m, 3, m, 3), optional
        ``dF_dx[a, :, b, :]`` is the derivative of ``F[a]`` with respect to the world
        position of point b (likewise velocity). Omitted means zero.
    derivatives : bool
        False: ``f`` only (``K`` and ``D`` are left zero), for :meth:`Force.wrench`.

    Returns
    -------
    ForceTerms

    Examples
    --------
    A constant world force at the centre of mass is gravity's wrench, Eq. (1.34):

    >>> E = np.eye(4)[None]
    >>> terms = assemble_point_forces(E, np.zeros((1, 6)), [Attachment(0)], np.array([[0, 0, -9.81]]))
    >>> terms.f
    array([ 0.  ,  0.  ,  0.  ,  0.  ,  0.  , -9.81])

    Taught in book/01_maximal/09_forces.
    """
    points = _stacked(attachments)
    n, m = len(E), len(points)
    out = ForceTerms.zeros(n)
    on, body, G = points.on, points.body, points.Gamma
    R = E[body, :3, :3]
    F_on = F[on]
    out.add_body_terms(body, _times(np.swapaxes(R @ G, 1, 2), F_on))  # J_a^T F_a, Eq. (1.13)
    if not derivatives:
        return out
    K_rot = np.zeros((len(on), 6, 6))
    K_rot[:, :, :3] = np.swapaxes(G, 1, 2) @ hat_unchecked(_times(np.swapaxes(R, 1, 2), F_on))  # Eq. (1.33)
    out.add_body_terms(body, K=K_rot)
    if dF_dx is None and dF_dv is None:
        return out
    J = np.zeros((m, 3, n, 6))  # the material Jacobians, one (3, 6) block per point, Eq. (1.12)
    J[on, :, body, :] = R @ G
    J = J.reshape(3 * m, 6 * n)
    if dF_dx is not None:
        out.K += J.T @ dF_dx.reshape(3 * m, 3 * m) @ J
    if dF_dv is not None:
        dv_dq = np.zeros((m, 3, n, 6))
        dv_dq[on, :, body, :3] = -R @ hat_unchecked(_times(G, phi[body]))  # Eq. (1.43)
        JT_dF = J.T @ dF_dv.reshape(3 * m, 3 * m)
        out.K += JT_dF @ dv_dq.reshape(3 * m, 6 * n)
        out.D += JT_dF @ J
    return out


def _index(body, name="body", minimum=0):
    """A body index (an int, not a bool or a float) ``>= minimum``, checked by the shared checks."""
    return as_index(body, name, minimum)


def _two_bodies(bodies, what):
    """Refuse a spring whose ends all sit on one body (or all in the world): its forces cancel
    there, so it would silently do nothing. ``what`` names the arguments at fault."""
    if len(set(bodies)) == 1:
        where = "the world (-1)" if bodies[0] == -1 else f"body {bodies[0]}"
        raise ValueError(f"{what} on {where}: a spring from a body to itself exerts no net force or "
                         "torque; attach one end to another body or to the world (-1)")


def _nonnegative(value, name):
    return as_scalar(value, name, minimum=0.0)


def gravity_terms(R, weights):
    """Gravity's wrenches on k bodies and their stiffness blocks (Eq. 1.34-1.35).

    Body i of rotation ``R_i`` and weight ``m_i g`` (a world force at its centre of mass)
    feels ``(0, R_i^T m_i g)`` in body coordinates, which depends on the pose through the
    rotation only: ``K_i = [[0, 0], [[R_i^T m_i g], 0]]``, and ``D = 0``.

    Parameters
    ----------
    R : ndarray, shape (k, 3, 3)
    weights : ndarray, shape (k, 3)
        ``m_i g`` in world coordinates.

    Returns
    -------
    f : ndarray, shape (k, 6)
    K : ndarray, shape (k, 6, 6)
    """
    w = _times(np.swapaxes(R, 1, 2), weights)  # R^T m g
    f = np.zeros((len(w), 6))
    f[:, 3:] = w
    K = np.zeros((len(w), 6, 6))
    K[:, 3:, :3] = hat_unchecked(w)
    return f, K


class Gravity(Force):
    """Gravity on one body: the world force ``m g`` at its centre of mass (Eq. 1.34-1.35).

    In body coordinates the wrench is ``(0, R^T m g)``: it depends on the pose through the
    rotation only, so ``K = [[0, 0], [[R^T m g], 0]]`` and ``D = 0`` (:func:`gravity_terms`).
    Potential energy ``-m g . p``.

    Examples
    --------
    >>> g = Gravity(0, mass=2.0)
    >>> g.evaluate(np.eye(4)[None], np.zeros((1, 6))).f
    array([  0.  ,   0.  ,   0.  ,   0.  ,   0.  , -19.62])
    """

    def __init__(self, body, mass, g=GRAVITY):
        self.body = _index(body)
        self.mass = as_scalar(mass, "mass", minimum=0.0, strict=True)
        self.g = as_real(g, (3,), "g")
        self.bodies = (self.body,)

    def evaluate(self, E, phi):
        out = ForceTerms.zeros(len(E))
        f, K = gravity_terms(E[[self.body], :3, :3], (self.mass * self.g)[None])
        out.add_body_terms([self.body], f, K)
        return out

    def potential_energy(self, E):
        return -self.mass * float(self.g @ E[self.body, :3, 3])


class PointForce(Force):
    """A constant world-direction force ``k a`` pulling at a body point (Eq. 1.30-1.32).

    The wrench is ``k Gamma^T R^T a`` and the stiffness ``K = k [[[r][R^T a], 0], [[R^T a], 0]]``;
    not symmetric, because the force does not depend on translations. Potential energy
    ``-k a . x`` (Eq. 1.31).
    """

    def __init__(self, body, r, direction, k=1.0):
        self.point = Attachment(_index(body), r)
        k = as_scalar(k, "k")
        self.F = k * as_real(direction, (3,), "direction")
        self.bodies = (self.point.body,)
        self._points = _StackedPoints([self.point])

    def evaluate(self, E, phi):
        return assemble_point_forces(E, phi, self._points, self.F[None])

    def potential_energy(self, E):
        x, _ = point_kinematics(E, np.zeros((len(E), 6)), self._points)
        return -float(self.F @ x[0])


class BodyDamping(Force):
    """Viscous damping of a body's twist, ``f = -d phi`` with ``D = -d I`` (§1.9.1).

    ``d`` damps the angular and the linear part alike; give ``linear`` to damp the linear
    part with its own coefficient, ``f = -(d omega, d_linear nu)``. (One number for both is
    unit-dependent: the angular part is a torque per rad/s, the linear a force per m/s, so a
    coefficient that suits both in one unit system splits into two in another.)

    Examples
    --------
    >>> BodyDamping(0, 2.0, linear=3.0).evaluate(np.eye(4)[None], np.ones((1, 6))).f
    array([-2., -2., -2., -3., -3., -3.])
    """

    def __init__(self, body, d, linear=None):
        self.body = _index(body)
        self.d = _nonnegative(d, "d")
        self.linear = self.d if linear is None else _nonnegative(linear, "linear")
        self.coefficients = np.repeat([self.d, self.linear], 3)
        self.bodies = (self.body,)

    def evaluate(self, E, phi):
        out = ForceTerms.zeros(len(E))
        s = slice(6 * self.body, 6 * self.body + 6)
        out.f[s] = -self.coefficients * phi[self.body]
        out.D[s, s] = -np.diag(self.coefficients)
        return out


def coriolis_terms(M, phi, derivatives=True):
    """The quadratic velocity wrenches ``ad(phi_i)^T M_i phi_i`` of k bodies and their damping blocks.

    The wrench of the Newton-Euler equations (Eq. 1.21, 1.36), ``-(omega x I omega, omega x m nu)``
    for a body-centred frame (Eq. 1.23). ``K = 0`` and, with the body momentum
    ``M phi = (I omega, m nu)`` (Eq. 1.39), ``D = ad(phi)^T M + [[[I omega], [m nu]], [[m nu], 0]]``
    (Eq. 1.37-1.38 worked out).

    Parameters
    ----------
    M : ndarray, shape (k, 6, 6)
        Spatial inertias.
    phi : ndarray, shape (k, 6)
        Body twists.
    derivatives : bool
        False: ``f`` only (``D`` is None).

    Returns
    -------
    f : ndarray, shape (k, 6)
    D : ndarray, shape (k, 6, 6), or None
    """
    h = _times(M, phi)  # body momenta (I omega, m nu)
    adT = np.swapaxes(ad_unchecked(phi), 1, 2)
    if not derivatives:
        return _times(adT, h), None
    dad = np.zeros((len(h), 6, 6))  # d(ad(phi)^T h)/dphi at fixed h
    dad[:, :3, :3] = hat_unchecked(h[:, :3])
    dad[:, :3, 3:] = dad[:, 3:, :3] = hat_unchecked(h[:, 3:])
    return _times(adT, h), adT @ M + dad


class Coriolis(Force):
    """The quadratic velocity wrench ``ad(phi)^T M phi`` of the Newton-Euler equations (Eq. 1.21, 1.36).

    It comes from writing the dynamics in the moving body frame. ``K = 0`` and, with
    ``M phi = (I omega, m nu)`` (Eq. 1.39),
    ``D = ad(phi)^T M + [[[I omega], [m nu]], [[m nu], 0]]`` (:func:`coriolis_terms`).
    """

    def __init__(self, body, M):
        self.body = _index(body)
        self.M = as_positive_definite(M, (6, 6), "M", real=True, semidefinite=True)  # a point mass too
        self.bodies = (self.body,)

    def evaluate(self, E, phi):
        out = ForceTerms.zeros(len(E))
        f, D = coriolis_terms(self.M[None], phi[[self.body]])
        out.add_body_terms([self.body], f, D=D)
        return out


class PointSpring(Force):
    """A zero-rest-length linear spring with isotropic damping between two points (Eq. 1.40-1.48).

    The world force on the first point is ``k_s (x_2 - x_1) + k_d (v_2 - v_1)``, and its
    opposite acts on the second. Either point may be fixed in the world (body -1).
    Potential energy ``k_s |x_2 - x_1|^2 / 2`` (Eq. 1.41).
    """

    def __init__(self, first, second, stiffness, damping=0.0):
        self.points = _StackedPoints((as_instance(first, Attachment, "first"),
                                      as_instance(second, Attachment, "second")))
        _two_bodies((first.body, second.body), "arguments 'first' and 'second' are both")
        self.ks = _nonnegative(stiffness, "stiffness")
        self.kd = _nonnegative(damping, "damping")
        self.bodies = tuple(p.body for p in self.points)
        sign = np.array([[-1.0, 1.0], [1.0, -1.0]])  # d F_a / d x_b pattern, constant
        self._dF_dx = np.einsum("ab,ij->aibj", sign, self.ks * np.eye(3))
        self._dF_dv = np.einsum("ab,ij->aibj", sign, self.kd * np.eye(3)) if self.kd else None

    def evaluate(self, E, phi):
        return self._terms(E, phi, derivatives=True)

    def wrench(self, E, phi):
        return self._terms(E, phi, derivatives=False).f

    def _terms(self, E, phi, derivatives):
        x, v = point_kinematics(E, phi, self.points)
        F1 = self.ks * (x[1] - x[0]) + self.kd * (v[1] - v[0])
        return assemble_point_forces(E, phi, self.points, np.array([F1, -F1]), self._dF_dx, self._dF_dv,
                                     derivatives)

    def potential_energy(self, E):
        x, _ = point_kinematics(E, np.zeros((len(E), 6)), self.points)
        return 0.5 * self.ks * float((x[1] - x[0]) @ (x[1] - x[0]))


class LinearSpringDamper:
    """Scalar law ``f = k eps + d deps`` with strain ``eps = (l - L)/L`` (Eq. 1.81-1.82).

    Calling the law with ``(l, ldot)`` returns ``(f, df/dl, df/dldot)``; ``f > 0`` is tension.
    """

    def __init__(self, k, d=0.0, rest_length=1.0):
        self.k = _nonnegative(k, "k")
        self.d = _nonnegative(d, "d")
        self.L = as_scalar(rest_length, "rest_length", minimum=0.0, strict=True)

    def __call__(self, l, ldot):
        return (self.k * (l - self.L) + self.d * ldot) / self.L, self.k / self.L, self.d / self.L

    def energy(self, l):
        """Elastic energy ``k (l - L)^2 / (2 L)`` (the integral of the elastic part of f)."""
        return 0.5 * self.k * (l - self.L) ** 2 / self.L


class CableLaw(LinearSpringDamper):
    """A cable: the spring-damper law while stretched, nothing while slack (Eq. 1.83)."""

    def __call__(self, l, ldot):
        if l <= self.L:
            return 0.0, 0.0, 0.0
        return super().__call__(l, ldot)

    def energy(self, l):
        return super().energy(l) if l > self.L else 0.0


class Spring(Force):
    """A spring along a path of points on bodies, driven by a scalar law ``f(l, ldot)`` (Eq. 1.62-1.80).

    With two points this is the generic spring of §1.9.7; with more, the path is routed
    through "via" points (§1.9.8): the length ``l`` and rate ``ldot`` are sums over
    segments, and the one scalar tension ``f`` pulls every point toward its neighbours
    along the unit segment directions ``u_k = (x_{k+1} - x_k)/l_k``. With
    :class:`CableLaw` it is the multi-point cable of §1.9.10.

    Parameters
    ----------
    points : sequence of Attachment (at least 2)
    law : callable ``law(l, ldot) -> (f, df/dl, df/dldot)``, e.g. :class:`LinearSpringDamper`
    """

    def __init__(self, points, law):
        if not isinstance(points, (list, tuple)):
            raise ArgumentTypeError(f"argument 'points' must be a list of Attachment, "
                                    f"got {type(points).__name__}")
        self.points = _StackedPoints(as_instance(p, Attachment, f"points[{k}]") for k, p in enumerate(points))
        if len(self.points) < 2:
            raise ValueError(f"argument 'points' needs at least 2 attachments, got {len(self.points)}")
        _two_bodies([p.body for p in self.points], "argument 'points' has every attachment")
        self.law = as_callable(law, "law", ("l", "ldot"))  # -> (f, df/dl, df/dldot)
        self.bodies = tuple(p.body for p in self.points)

    def _geometry(self, E, phi):
        x, v = point_kinematics(E, phi, self.points)
        dx, dv = np.diff(x, axis=0), np.diff(v, axis=0)
        lk = np.linalg.norm(dx, axis=1)
        if np.any(lk == 0):
            raise ValueError("spring segment of zero length: its direction is undefined")
        u = dx / lk[:, None]
        l, ldot = float(lk.sum()), float(np.einsum("ki,ki->", u, dv))  # Eq. (1.73)-(1.74)
        return dv, lk, u, l, ldot

    def length(self, E, phi=None):
        """Total path length ``l`` and its rate ``ldot`` (Eq. 1.73-1.74)."""
        phi = np.zeros((len(E), 6)) if phi is None else phi
        return self._geometry(E, phi)[3:]

    def evaluate(self, E, phi):
        dv, lk, u, l, ldot = self._geometry(E, phi)
        m = len(self.points)
        f, f_l, f_ldot = self.law(l, ldot)
        # segment k pulls point k along +u_k and point k+1 along -u_k; dirs[a] is the sum
        # of these unit pulls on point a, which is also d l / d x_a with the sign flipped
        dirs = np.zeros((m, 3))
        dirs[:-1] += u
        dirs[1:] -= u
        F = f * dirs
        dl_dx = -dirs
        P = np.eye(3)[None] - u[:, :, None] * u[:, None, :]  # (I - u u^T) per segment
        w = np.einsum("kij,kj->ki", P, dv) / lk[:, None]  # d ldot_k / d dx_k
        dld_dx = np.zeros((m, 3))
        dld_dx[:-1] -= w
        dld_dx[1:] += w
        dld_dv = dl_dx  # d ldot / d v_a has the same pattern as d l / d x_a
        df_dx = f_l * dl_dx + f_ldot * dld_dx
        df_dv = f_ldot * dld_dv
        dF_dx = np.einsum("ai,bj->aibj", dirs, df_dx)
        dF_dv = np.einsum("ai,bj->aibj", dirs, df_dv)
        for k in range(m - 1):  # d u_k / d x: +P_k/l_k for x_{k+1}, -P_k/l_k for x_k
            du = P[k] / lk[k]
            for a, sa in ((k, 1.0), (k + 1, -1.0)):  # u_k acts on point a with sign sa
                dF_dx[a, :, k + 1, :] += sa * f * du
                dF_dx[a, :, k, :] -= sa * f * du
        return assemble_point_forces(E, phi, self.points, F, dF_dx, dF_dv)

    def potential_energy(self, E):
        energy = getattr(self.law, "energy", None)
        return 0.0 if energy is None else float(energy(self.length(E)[0]))


class GroundPenalty(Force):
    """Penalty contact and friction between points on a body and a ground plane (Eq. 1.49-1.61).

    For each point x with signed distance ``d = n . (x - x_g) < 0`` (penetration) the world
    force is the sum of

    * a normal spring ``-k_n d n`` (it pushes out: the writeup's Eq. 1.49 writes the same
      force with the opposite sign convention for d),
    * normal damping ``-k_d N v`` with ``N = n n^T`` (Eq. 1.53),
    * friction on the tangential velocity ``a = T v``, ``T = I - N`` (Eq. 1.55): the static
      spring ``-k_t a`` (Eq. 1.56), or, when that would exceed it, dynamic friction of
      magnitude ``mu |f_n|`` along ``-a/|a|`` (Eq. 1.59).

    Points above the ground feel nothing. Potential energy ``k_n d^2 / 2`` per point.
    """

    def __init__(self, body, points, kn, kd=0.0, kt=0.0, mu=0.0, plane_point=(0, 0, 0),
                 plane_normal=(0, 0, 1)):
        self.body = _index(body)
        pts = np.atleast_2d(as_real(points, None, "points"))
        if pts.ndim != 2 or pts.shape[1] != 3:
            raise ValueError(f"argument 'points' must have shape (m, 3), got {pts.shape}")
        self.points = _StackedPoints(Attachment(self.body, p) for p in pts)
        self.kn, self.kd = _nonnegative(kn, "kn"), _nonnegative(kd, "kd")
        self.kt, self.mu = _nonnegative(kt, "kt"), _nonnegative(mu, "mu")
        self.xg = as_real(plane_point, (3,), "plane_point")
        n = as_real(plane_normal, (3,), "plane_normal")
        if np.linalg.norm(n) == 0:
            raise ValueError("argument 'plane_normal' must be nonzero")
        self.n = n / np.linalg.norm(n)
        self.bodies = (self.body,)

    def evaluate(self, E, phi):
        x, v = point_kinematics(E, phi, self.points)
        m = len(self.points)
        F = np.zeros((m, 3))
        dF_dx = np.zeros((m, 3, m, 3))
        dF_dv = np.zeros((m, 3, m, 3))
        N = np.outer(self.n, self.n)
        T = np.eye(3) - N
        depth = (x - self.xg) @ self.n
        for a in np.flatnonzero(depth < 0):  # the penetrating points
            fn = -self.kn * float(depth[a])  # normal force magnitude (>= 0)
            F[a] = fn * self.n - self.kd * (N @ v[a])
            dF_dx[a, :, a, :] = -self.kn * N
            dF_dv[a, :, a, :] = -self.kd * N
            tangential = T @ v[a]
            speed = np.linalg.norm(tangential)
            if self.kt * speed <= self.mu * fn:  # static (spring-like) friction, Eq. (1.56)
                F[a] -= self.kt * tangential
                dF_dv[a, :, a, :] -= self.kt * T
            elif speed > 0:  # dynamic friction, Eq. (1.59)-(1.61)
                t = tangential / speed
                F[a] -= self.mu * fn * t
                dF_dx[a, :, a, :] += self.mu * self.kn * np.outer(t, self.n)
                A = (np.eye(3) - np.outer(t, t)) / speed  # dt/da, Eq. (1.60)
                dF_dv[a, :, a, :] -= self.mu * fn * A @ T
        return assemble_point_forces(E, phi, self.points, F, dF_dx, dF_dv)

    def potential_energy(self, E):
        x, _ = point_kinematics(E, np.zeros((len(E), 6)), self.points)
        d = (x - self.xg) @ self.n
        return 0.5 * self.kn * float(np.sum(np.minimum(d, 0.0) ** 2))


class FrameSpring(Force):
    """A six-degree-of-freedom spring between two frames (ArtiSynth notes §0.22).

    Frame 1 is fixed to body a (pose ``E_a_1`` in a's coordinates) and frame 2 to body b
    (``E_b_2``; b = -1 means frame 2 is fixed in the world at ``E_b_2``). The translational
    part is a zero-rest-length spring and damper between the frame origins; the rotational
    part applies the torque ``k_r theta`` to frame 1 (and its opposite to frame 2), where
    ``theta = log(R_1^T R_2)`` is the rotation vector of frame 2 relative to frame 1, plus
    damping ``d_r`` on the relative angular velocity. Differentiating ``theta`` brings in
    the inverse Jacobians of SO(3): a rotation of body a moves ``theta`` by
    ``-J_l^-1(theta)`` and one of body b by ``+J_r^-1(theta)``.
    Potential energy ``(k_t |x_2 - x_1|^2 + k_r |theta|^2) / 2``.
    """

    def __init__(self, a, E_a_1, b, E_b_2, kt, kr, dt=0.0, dr=0.0):
        self.a, self.b = _index(a, "a"), _index(b, "b", minimum=-1)
        _two_bodies((self.a, self.b), "arguments 'a' and 'b' are both")
        self.E_a_1 = as_transform(E_a_1, "E_a_1")
        self.E_b_2 = as_transform(E_b_2, "E_b_2")
        self.kr, self.dr = _nonnegative(kr, "kr"), _nonnegative(dr, "dr")
        self.translation = PointSpring(Attachment(self.a, self.E_a_1[:3, 3]),
                                       Attachment(self.b, self.E_b_2[:3, 3]), kt, dt)
        self.bodies = (self.a, self.b)

    def _rotations(self, E):
        Ra1, Rb2 = self.E_a_1[:3, :3], self.E_b_2[:3, :3]
        Ra = E[self.a, :3, :3]
        Rb = E[self.b, :3, :3] if self.b >= 0 else np.eye(3)
        theta = log_so3((Ra @ Ra1).T @ (Rb @ Rb2))
        return Ra, Rb, Ra1, Rb2, theta

    def evaluate(self, E, phi):
        out = self.translation.evaluate(E, phi)
        Ra, Rb, Ra1, Rb2, theta = self._rotations(E)
        sa = slice(6 * self.a, 6 * self.a + 3)
        wa = phi[self.a, :3]
        wb = phi[self.b, :3] if self.b >= 0 else np.zeros(3)
        Rab = Ra.T @ Rb
        # elastic torque, in body coordinates of a (and of b below)
        out.f[sa] += self.kr * Ra1 @ theta
        out.K[sa, sa] -= self.kr * Ra1 @ left_jacobian_inverse_so3(theta) @ Ra1.T
        # damping torque d_r (omega_b - omega_a) seen in a
        out.f[sa] += self.dr * (Rab @ wb - wa)
        out.K[sa, sa] += self.dr * hat_unchecked(Rab @ wb)
        out.D[sa, sa] -= self.dr * np.eye(3)
        if self.b < 0:
            return out
        sb = slice(6 * self.b, 6 * self.b + 3)
        Jr_inv = right_jacobian_inverse_so3(theta)
        out.K[sa, sb] += self.kr * Ra1 @ Jr_inv @ Rb2.T
        out.f[sb] -= self.kr * Rb2 @ theta
        out.K[sb, sa] += self.kr * Rb2 @ left_jacobian_inverse_so3(theta) @ Ra1.T
        out.K[sb, sb] -= self.kr * Rb2 @ Jr_inv @ Rb2.T
        out.K[sa, sb] -= self.dr * Rab @ hat_unchecked(wb)
        out.D[sa, sb] += self.dr * Rab
        out.f[sb] -= self.dr * (wb - Rab.T @ wa)
        out.K[sb, sb] += self.dr * hat_unchecked(Rab.T @ wa)
        out.K[sb, sa] -= self.dr * Rab.T @ hat_unchecked(wa)
        out.D[sb, sb] -= self.dr * np.eye(3)
        out.D[sb, sa] += self.dr * Rab.T
        return out

    def potential_energy(self, E):
        theta = self._rotations(E)[-1]
        return self.translation.potential_energy(E) + 0.5 * self.kr * float(theta @ theta)


def stiffness_skew_part(f):
    """``K - K^T`` of a conservative force's stiffness, from its wrenches alone (ArtiSynth notes §0.23).

    ``K`` differentiates the wrenches along body twists, ``E_i exp([dq_i])``, and twists do
    not commute: ``exp([a]) exp([b]) = exp([a + b + [a, b] / 2 + ...])``. For a force with a
    potential, ``K`` is the (symmetric) Hessian of the energy in exponential coordinates plus
    half of a matrix built from the wrench alone; per body,
    ``(K - K^T)[i, j] = f_b . ad(e_j) e_i`` (``ad`` of Eq. 1.19, ``e_i`` the unit twists).
    It vanishes where the wrench does (at an equilibrium), and damping or Coriolis terms
    add to it.

    Parameters
    ----------
    f : array_like, shape (6n,)
        The wrenches of a force on n bodies, body-major, in body coordinates.

    Returns
    -------
    ndarray, shape (6n, 6n)
        Block diagonal and antisymmetric.

    Examples
    --------
    A pure force along x on one body: its skew part couples rotations with translations.

    >>> A = stiffness_skew_part([0.0, 0, 0, 1.0, 0, 0])
    >>> bool(np.allclose(A, -A.T)), float(A[4, 2]), float(A[2, 4])
    (True, -1.0, 1.0)

    Taught in book/appendix/engineer_nonsymmetric.
    """
    f = as_real(f, None, "f")
    if f.ndim != 1 or len(f) % 6:
        raise ValueError(f"argument 'f' must hold one 6-vector wrench per body (length 6n), "
                         f"got shape {f.shape}")
    n = len(f) // 6
    ad_units = ad_unchecked(np.eye(6))  # ad(e_j), j = 0..5
    blocks = np.einsum("bk,jki->bij", f.reshape(n, 6), ad_units)  # f_b . ad(e_j) e_i
    return scipy.linalg.block_diag(*blocks) if n else np.zeros((0, 0))
