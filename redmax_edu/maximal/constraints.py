"""Joints and contacts as constraints on body twists (§1.10-1.13).

A joint keeps two bodies' twists related at a joint frame. Expressed in the joint frame j
(attached to body a), the relative twist of a with respect to b is

    delta_phi_j = A_j_a phi_a - A_j_a A_a_0 A_0_b phi_b          (Eq. 1.84)

and each joint type sets some of its six rows to zero: all of them for a weld, all but
the rotation about z for a hinge, the three translations for a ball joint. Contacts ask
the velocity of a touching point along the contact normal to be non-negative (Eq. 1.91)
and, with friction, bound the tangential impulse by a pyramid (Eq. 1.100-1.101).

Constraints hold at the velocity level, so positions drift; ``error`` gives the
position-level violation used by Baumgarte stabilisation (Eq. 1.97).

Taught in book/01_maximal/10_joints and book/01_maximal/11_contact.
"""

from dataclasses import dataclass, field

import numpy as np

from .._validate import as_array, as_index, as_real, as_scalar, as_transform
from ..lie import adjoint, adjoint_unchecked, gamma, inv_se3, inv_se3_unchecked, left_jacobian_inverse_so3

__all__ = ["JOINT_ROWS", "Joint", "GroundContact", "BodyContact", "pyramid_directions"]

#: Constrained rows of the relative twist (omega_x, omega_y, omega_z, nu_x, nu_y, nu_z) in
#: the joint frame, per joint type. The free motions are about/along the joint's z axis.
JOINT_ROWS = {
    "fixed": (0, 1, 2, 3, 4, 5),
    "revolute": (0, 1, 3, 4, 5),  # free: rotation about z
    "prismatic": (0, 1, 2, 3, 4),  # free: translation along z
    "cylindrical": (0, 1, 3, 4),  # free: rotation about and translation along z
    "spherical": (3, 4, 5),  # free: all rotations
    "planar": (0, 1, 5),  # free: translation in the xy plane, rotation about z
}


@dataclass(frozen=True)
class Joint:
    """A joint between body ``a`` and body ``b`` (``b = -1``: the world), as constraint rows.

    Parameters
    ----------
    kind : str
        A key of :data:`JOINT_ROWS`.
    a, b : int
        Body indices; ``b`` may be -1 for the world.
    E_a_j : array_like, shape (4, 4)
        The joint frame in body a's coordinates.
    E_b_j : array_like, shape (4, 4)
        The joint frame in body b's coordinates (a world pose when ``b = -1``); at
        assembly both describe the same frame.
    name : str
    compliance : float
        Inverse stiffness ``alpha >= 0`` of a soft constraint (ArtiSynth notes §0.11); 0 is rigid.
    damping : float
        Damping time ``beta >= 0`` of a soft constraint.

    Examples
    --------
    >>> E = np.stack([np.eye(4), np.eye(4)])
    >>> hinge = Joint.at("revolute", 0, 1, np.eye(4), E)
    >>> hinge.jacobian(E).shape
    (5, 12)
    """

    kind: str
    a: int
    b: int
    E_a_j: np.ndarray
    E_b_j: np.ndarray
    name: str = ""
    compliance: float = 0.0
    damping: float = 0.0
    rows: tuple = field(init=False)
    _A_j_a: np.ndarray = field(init=False, repr=False, compare=False)

    def __post_init__(self):
        label = self.label
        if self.kind not in JOINT_ROWS:
            raise ValueError(f"{label}: unknown kind {self.kind!r}; choose one of {sorted(JOINT_ROWS)}")
        if not isinstance(self.kind, str):
            raise ValueError(f"{label}: argument 'kind' must be a string, got {type(self.kind).__name__}")
        if not isinstance(self.name, str):
            raise ValueError(f"{label}: argument 'name' must be a string, got {type(self.name).__name__}")
        if isinstance(self.a, bool) or not isinstance(self.a, (int, np.integer)) or self.a < 0:
            raise ValueError(f"{label}: body 'a' must be an index >= 0, got {self.a!r}")
        if (isinstance(self.b, bool) or not isinstance(self.b, (int, np.integer)) or self.b < -1
                or self.b == self.a):
            raise ValueError(f"{label}: body 'b' must be another body's index or -1 (world), got {self.b!r}")
        for attr in ("E_a_j", "E_b_j"):
            try:
                object.__setattr__(self, attr, as_transform(getattr(self, attr), attr))
            except ValueError as err:
                raise ValueError(f"{label}: {err}") from None
        for attr in ("compliance", "damping"):
            try:
                value = as_scalar(getattr(self, attr), attr, minimum=0.0)
            except ValueError as err:
                msg = str(err).replace(repr(attr), attr).replace("argument ", "")
                raise ValueError(f"{label}: {msg}") from None
            object.__setattr__(self, attr, value)
        object.__setattr__(self, "rows", JOINT_ROWS[self.kind])
        object.__setattr__(self, "_A_j_a", adjoint(inv_se3(self.E_a_j)))  # constant: body a to joint frame

    @property
    def label(self):
        """How error messages name the joint."""
        if self.name:
            return f"joint {self.name!r}"
        return f"{self.kind} joint between bodies {self.a} and {self.b}"

    @classmethod
    def at(cls, kind, a, b, E_w_j, E, **kwargs):
        """A joint whose frame has world pose ``E_w_j`` when the bodies have poses ``E`` (n, 4, 4)."""
        E_w_j = as_transform(E_w_j, "E_w_j")
        E = as_real(E, None, "E")
        a_, b_ = as_index(a, "a"), as_index(b, "b", minimum=-1)
        if E.ndim != 3 or E.shape[1:] != (4, 4) or max(a_, b_) >= len(E):
            raise ValueError(f"argument 'E' must have shape (n, 4, 4) with n > {max(a_, b_)}, got {E.shape}")
        E_a_j = inv_se3(E[a]) @ E_w_j
        E_b_j = E_w_j if b < 0 else inv_se3(E[b]) @ E_w_j
        return cls(kind, a, b, E_a_j, E_b_j, **kwargs)

    def jacobian(self, E):
        """The constraint rows of Eq. (1.84), ``G`` of shape (len(rows), 6 n): ``G Phi = delta_phi_j``.

        The blocks sit in the columns of bodies a and b, as the rows of Eq. (1.85) line up.

        ``E`` (n, 4, 4) are rigid poses, as :meth:`redmax_edu.maximal.system.System.check_state`
        returns them.
        """
        n = len(E)
        G = np.zeros((6, 6 * n))
        G[:, 6 * self.a: 6 * self.a + 6] = self._A_j_a
        if self.b >= 0:
            A_a_b = adjoint_unchecked(inv_se3_unchecked(E[self.a]) @ E[self.b])  # A_a_0 A_0_b
            G[:, 6 * self.b: 6 * self.b + 6] = -self._A_j_a @ A_a_b
        return G[list(self.rows)]

    def error(self, E):
        """Position-level violation: the constrained rows of ``log(E_jb^-1 E_ja)``.

        ``E_ja`` and ``E_jb`` are the world poses of the joint frame as carried by body a
        and by body b. The error is zero while the joint holds, and its rate is
        ``jacobian(E) @ Phi`` there, which is what Baumgarte stabilisation (Eq. 1.97) needs.
        """
        E_ja = E[self.a] @ self.E_a_j
        E_jb = self.E_b_j if self.b < 0 else E[self.b] @ self.E_b_j
        return log_se3_unchecked(inv_se3_unchecked(E_jb) @ E_ja)[list(self.rows)]


def log_se3_unchecked(E):
    """:func:`redmax_edu.lie.log_se3` of a trusted rigid transform: the same formulas, without its checks.

    Every step takes the logarithm of each joint's error transform (:meth:`Joint.error`),
    and log_se3's checks (a transform, then a rotation, each with ``R^T R`` and ``det R``)
    cost more than the logarithm. The rotation vector is log_so3's: from the skew part of
    ``R`` up to pi/2, beyond from its symmetric part; the linear part solves ``V nu = p``
    with :func:`redmax_edu.lie.left_jacobian_inverse_so3`. (A helper for lie.py, beside its
    other ``*_unchecked`` functions.)

    Examples
    --------
    >>> from redmax_edu.lie import exp_se3, log_se3
    >>> E = exp_se3([0.1, -2.5, 0.3, 1.0, 2.0, -0.5])
    >>> bool(np.array_equal(log_se3_unchecked(E), log_se3(E)))
    True
    """
    R = E[:3, :3]
    s = 0.5 * np.array([R[2, 1] - R[1, 2], R[0, 2] - R[2, 0], R[1, 0] - R[0, 1]])  # sin(t) n
    c = 0.5 * (np.trace(R) - 1.0)  # cos(t)
    t = np.arctan2(np.linalg.norm(s), c)
    if c > 0:
        t2 = t * t
        sin_over = 1 - t2 / 6 * (1 - t2 / 20 * (1 - t2 / 42)) if t < 1e-2 else np.sin(t) / t  # as lie's
        w = s / sin_over
    else:
        B = 0.5 * (R + R.T) - c * np.eye(3)  # (1 - cos t) n n^T
        k = int(np.argmax(np.diag(B)))
        n = B[:, k] / np.sqrt(B[k, k] * (1.0 - c))
        w = t * (-n if n @ s < 0 else n)
    return np.concatenate([w, left_jacobian_inverse_so3(w) @ E[:3, 3]])


def _unit(v, name):
    """``v / |v|``, or a ValueError naming the argument when ``v`` is zero."""
    length = np.linalg.norm(v)
    if length == 0:
        raise ValueError(f"argument '{name}' must be a nonzero vector")
    return v / length


def pyramid_directions(normal):
    """The four tangent directions ``+t1, +t2, -t1, -t2`` of a contact: the friction pyramid of §1.13.

    Examples
    --------
    >>> pyramid_directions([0, 0, 1.0])
    array([[ 1.,  0.,  0.],
           [ 0.,  1.,  0.],
           [-1.,  0.,  0.],
           [ 0., -1.,  0.]])
    """
    n = _unit(as_array(normal, (3,), "normal"), "normal")
    if abs(n[2]) == 1.0:  # a horizontal ground: use the world x and y axes
        t1 = np.array([np.sign(n[2]), 0.0, 0.0])
    else:
        t1 = np.cross([0.0, 0.0, 1.0], n)
        t1 /= np.linalg.norm(t1)
    t2 = np.cross(n, t1)
    return np.array([t1, t2, -t1, -t2]) + 0.0


@dataclass(frozen=True)
class GroundContact:
    """Hard contact (and pyramid friction) between points on a body and a ground plane (§1.11, §1.13).

    Parameters
    ----------
    body : int
    points : array_like, shape (m, 3)
        Candidate contact points in body coordinates (e.g. the corners of a box).
    mu : float
        Friction coefficient; 0 means frictionless.
    plane_point, plane_normal : array_like, shape (3,)
        The ground plane; the normal points out of the ground.
    margin : float
        Points closer to the plane than this (>= 0) are treated as (possibly) in contact; a
        negative margin would ignore points already below the plane.
    """

    body: int
    points: np.ndarray
    mu: float = 0.0
    plane_point: np.ndarray = field(default_factory=lambda: np.zeros(3))
    plane_normal: np.ndarray = field(default_factory=lambda: np.array([0.0, 0.0, 1.0]))
    margin: float = 1e-2
    _Gammas: np.ndarray = field(init=False, repr=False, compare=False)
    _directions: np.ndarray = field(init=False, repr=False, compare=False)

    def __post_init__(self):
        as_index(self.body, "body")
        pts = np.atleast_2d(as_real(self.points, None, "points"))
        object.__setattr__(self, "points", as_real(pts, (pts.shape[0], 3), "points"))
        try:
            object.__setattr__(self, "mu", as_scalar(self.mu, "mu", minimum=0.0))
            object.__setattr__(self, "margin", as_scalar(self.margin, "margin", minimum=0.0))
        except ValueError as err:
            raise ValueError(f"contact on body {self.body}: {err}") from None
        object.__setattr__(self, "plane_point", as_real(self.plane_point, (3,), "plane_point"))
        n = _unit(as_real(self.plane_normal, (3,), "plane_normal"), "plane_normal")
        object.__setattr__(self, "plane_normal", n)
        # constants: Gamma(r) of each point (Eq. 1.90) and the friction pyramid's directions
        object.__setattr__(self, "_Gammas", np.array([gamma(r) for r in self.points]).reshape(-1, 3, 6))
        object.__setattr__(self, "_directions", pyramid_directions(n))

    def distances(self, E):
        """Signed distance of each candidate point from the plane (negative inside), shape (m,)."""
        R, p = E[self.body, :3, :3], E[self.body, :3, 3]
        return ((self.points @ R.T + p) - self.plane_point) @ self.plane_normal

    def rows(self, E):
        """Rows for the points within ``margin`` of the plane.

        Returns
        -------
        N : ndarray, shape (k, 6 n)
            Normal rows ``n^T R Gamma(r)`` (Eq. 1.91): ``N Phi`` is each point's normal speed.
        T : ndarray, shape (4 k, 6 n)
            Tangent rows, four pyramid directions per point (§1.13).
        d : ndarray, shape (k,)
            Signed distances of those points.
        """
        n_bodies = len(E)
        d_all = self.distances(E)
        active = np.flatnonzero(d_all < self.margin)
        J = E[self.body, :3, :3] @ self._Gammas[active]  # Eq. (1.90), one (3, 6) block per point
        N = np.zeros((len(active), 6 * n_bodies))
        T = np.zeros((len(active), 4, 6 * n_bodies))
        s = slice(6 * self.body, 6 * self.body + 6)
        N[:, s] = self.plane_normal @ J
        T[:, :, s] = self._directions @ J
        return N, T.reshape(-1, 6 * n_bodies), d_all[active]


@dataclass(frozen=True)
class BodyContact:
    """A contact between two bodies at a point; the normal points from body j toward body i (Eq. 1.92-1.93).

    A collision detector (outside the scope of the writeup) supplies the world contact point
    and normal; here they are given once, at ``E``, and then follow the bodies: the point is
    stored in each body's coordinates and the normal in body j's. The constraint asks the
    relative velocity of the two material points along the normal to be non-negative,
    ``n^T (R_i Gamma(r_i) phi_i - R_j Gamma(r_j) phi_j) >= 0`` (Eq. 1.93).

    Parameters
    ----------
    i, j : int
        The two bodies.
    point, normal : array_like, shape (3,)
        World contact point and normal (pointing from j toward i) at poses ``E``.
    E : array_like, shape (n, 4, 4)
        The poses at which point and normal are given.
    mu : float
        Friction coefficient.
    """

    i: int
    j: int
    r_i: np.ndarray
    r_j: np.ndarray
    n_j: np.ndarray
    mu: float = 0.0
    _Gammas: tuple = field(init=False, repr=False, compare=False)

    def __post_init__(self):
        as_index(self.i, "i")
        as_index(self.j, "j")
        if self.i == self.j:
            raise ValueError(f"contact: 'i' and 'j' must be two different body indices, "
                             f"got {self.i} and {self.j}")
        for attr in ("r_i", "r_j", "n_j"):
            object.__setattr__(self, attr, as_real(getattr(self, attr), (3,), attr))
        if not np.any(self.n_j):
            raise ValueError("argument 'n_j' must be a nonzero vector")
        object.__setattr__(self, "mu", as_scalar(self.mu, "mu", minimum=0.0))
        object.__setattr__(self, "_Gammas", (gamma(self.r_i), gamma(self.r_j)))  # constant

    @classmethod
    def at(cls, i, j, point, normal, E, mu=0.0):
        """The contact of bodies i and j at the world ``point`` with world ``normal``, at poses ``E``."""
        i, j = as_index(i, "i"), as_index(j, "j")
        if i == j:
            raise ValueError(f"contact: 'i' and 'j' must be two different body indices, got {i} and {j}")
        point = as_real(point, (3,), "point")
        n = _unit(as_real(normal, (3,), "normal"), "normal")
        E = as_real(E, None, "E")
        if E.ndim != 3 or E.shape[1:] != (4, 4) or max(i, j) >= len(E):
            raise ValueError(f"argument 'E' must have shape (n, 4, 4) with n > {max(i, j)}, got {E.shape}")
        r_i = (inv_se3(E[i]) @ np.append(point, 1.0))[:3]
        r_j = (inv_se3(E[j]) @ np.append(point, 1.0))[:3]
        return cls(i, j, r_i, r_j, E[j][:3, :3].T @ n, mu)

    @property
    def body(self):
        """The first body (for messages and validation)."""
        return self.i

    def rows(self, E):
        """Normal row (1, 6n), four pyramid rows (4, 6n) and the signed gap (1,), as GroundContact.rows."""
        n_bodies = len(E)
        n = E[self.j, :3, :3] @ self.n_j
        xi = E[self.i, :3, :3] @ self.r_i + E[self.i, :3, 3]
        xj = E[self.j, :3, :3] @ self.r_j + E[self.j, :3, 3]
        Ji = E[self.i, :3, :3] @ self._Gammas[0]
        Jj = E[self.j, :3, :3] @ self._Gammas[1]
        dirs = pyramid_directions(n)
        N = np.zeros((1, 6 * n_bodies))
        T = np.zeros((4, 6 * n_bodies))
        si, sj = slice(6 * self.i, 6 * self.i + 6), slice(6 * self.j, 6 * self.j + 6)
        N[0, si], N[0, sj] = n @ Ji, -n @ Jj  # Eq. (1.93)
        T[:, si], T[:, sj] = dirs @ Ji, -dirs @ Jj
        return N, T, np.array([n @ (xi - xj)])
