"""Rigid bodies and their Newton-Euler equations in body coordinates (§1.6-1.7).

Taught in book/01_maximal/06_rigid_body.
"""

from dataclasses import dataclass

import numpy as np

from .._validate import as_array, as_positive, as_positive_definite, as_real, as_scalar
from ..inertia import TRIANGLE_RTOL, cuboid
from ..lie import ad, adjoint, inv_se3

__all__ = ["RigidBody", "newton_euler_acceleration", "kinetic_energy", "spatial_momentum"]

@dataclass(frozen=True)
class RigidBody:
    """A rigid body whose frame sits at its centre of mass on its principal axes.

    Its spatial inertia is then diagonal, ``M = diag(I1, I2, I3, m, m, m)`` (Eq. 1.24).

    Parameters
    ----------
    name : str
    mass : float
        Positive.
    moments : array_like, shape (3,)
        Principal moments of inertia about the centre of mass; positive and satisfying the
        triangle inequality ``I_a + I_b >= I_c`` that every physical body obeys.
    half_sizes : array_like, shape (3,), optional
        Half the side lengths (positive) of the box that draws the body (and gives contact points).

    Examples
    --------
    >>> body = RigidBody.cuboid("brick", [0.2, 0.1, 0.05], density=1000.0)
    >>> round(body.mass, 6), body.M.shape
    (1.0, (6, 6))
    >>> RigidBody("bad", 1.0, [1.0, 1.0, 3.0])
    Traceback (most recent call last):
    ...
    ValueError: body 'bad': principal moments (1.0, 1.0, 3.0) violate the triangle inequality I1 + I2 >= I3

    Taught in book/01_maximal/06_rigid_body.
    """

    name: str
    mass: float
    moments: np.ndarray
    half_sizes: np.ndarray | None = None

    def __post_init__(self):
        if not isinstance(self.name, str):
            raise ValueError(f"argument 'name' must be a string, "
                             f"got {type(self.name).__name__} {self.name!r}")
        where = f"body {self.name!r}"
        try:
            mass = as_scalar(self.mass, "mass")
        except ValueError as err:
            raise ValueError(f"{where}: {err}") from None
        if not mass > 0:
            raise ValueError(f"{where}: mass must be positive and finite, got {self.mass}")
        object.__setattr__(self, "mass", mass)
        try:
            moments = as_real(self.moments, (3,), "moments")
        except ValueError as err:
            raise ValueError(f"{where}: {err}") from None
        if np.any(moments <= 0):
            raise ValueError(f"{where}: principal moments must be positive, got {tuple(moments.tolist())}")
        for k in range(3):
            a, b, c = moments[(k + 1) % 3], moments[(k + 2) % 3], moments[k]
            if a + b < c * (1 - TRIANGLE_RTOL):
                names = [f"I{(k + 1) % 3 + 1}", f"I{(k + 2) % 3 + 1}", f"I{k + 1}"]
                raise ValueError(f"{where}: principal moments {tuple(moments.tolist())} violate the "
                                 f"triangle inequality {' + '.join(sorted(names[:2]))} >= {names[2]}")
        object.__setattr__(self, "moments", moments)
        if self.half_sizes is not None:
            try:
                half = as_positive(self.half_sizes, (3,), "half_sizes")
            except ValueError as err:
                raise ValueError(f"{where}: {err}") from None
            object.__setattr__(self, "half_sizes", half)

    @property
    def M(self):
        """The 6x6 spatial inertia ``diag(I1, I2, I3, m, m, m)`` (Eq. 1.24)."""
        return np.diag(np.concatenate([self.moments, np.full(3, self.mass)]))

    @classmethod
    def cuboid(cls, name, sides, *, density=None, mass=None):
        """A box with the given side lengths, drawn as itself (Eq. 1.24)."""
        props = cuboid(sides, density=density, mass=mass, name=name)
        return cls(name, props.mass, np.diag(props.inertia).copy(), 0.5 * np.asarray(sides, float))

    @classmethod
    def from_mass_properties(cls, name, props, half_sizes=None):
        """A body from mass properties in any frame F (a mesh, a composite, ...).

        Returns the body and ``E_f_b``, the pose in F of its frame at the centre of mass on
        the principal axes (``MassProperties.principal``), where the body must be placed.
        """
        moments, E_f_b = props.principal()
        return cls(name, props.mass, moments, half_sizes), E_f_b

    def corners(self):
        """The 8 corners of the body's box in body coordinates, shape (8, 3)."""
        if self.half_sizes is None:
            raise ValueError(f"body {self.name!r} has no half_sizes, so no corners")
        signs = np.array([[sx, sy, sz] for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)], float)
        return signs * self.half_sizes


def newton_euler_acceleration(M, phi, wrench):
    """The rate of a body twist by the Newton-Euler equations ``M phidot = ad(phi)^T M phi + f`` (Eq. 1.21).

    Parameters
    ----------
    M : array_like, shape (6, 6)
        Spatial inertia in body coordinates.
    phi : array_like, shape (6,)
        Body twist.
    wrench : array_like, shape (6,)
        External wrench in body coordinates (e.g. gravity, Eq. 1.22).

    Returns
    -------
    ndarray, shape (6,)

    Examples
    --------
    Torque-free spin about a principal axis is steady:

    >>> M = np.diag([1.0, 2.0, 3.0, 1, 1, 1])
    >>> newton_euler_acceleration(M, [0, 0, 5.0, 0, 0, 0], np.zeros(6))
    array([0., 0., 0., 0., 0., 0.])

    Taught in book/01_maximal/06_rigid_body.
    """
    M = as_positive_definite(M, (6, 6), "M")
    phi = as_array(phi, (6,), "phi")
    wrench = as_array(wrench, (6,), "wrench")
    out = np.linalg.solve(M, ad(phi).T @ (M @ phi) + wrench)  # M is positive definite: never singular
    if not np.isfinite(out).all():
        raise ValueError("the acceleration is not finite: argument 'M' is (nearly) singular or 'phi' "
                         "is too large (the Coriolis wrench overflows)")
    return out


def kinetic_energy(M, phi):
    """Kinetic energy ``phi^T M phi / 2`` of a body.

    Examples
    --------
    >>> kinetic_energy(np.eye(6), [1.0, 0, 0, 0, 0, 2.0])
    2.5

    Taught in book/01_maximal/06_rigid_body.
    """
    phi = as_array(phi, (6,), "phi")
    return 0.5 * float(phi @ as_positive_definite(M, (6, 6), "M", semidefinite=True) @ phi)


def spatial_momentum(E, M, phi):
    """A body's momentum ``(angular about the world origin, linear)`` in world coordinates.

    The body-frame momentum ``M phi`` pairs with twists, so it transforms like a wrench:
    ``h_w = A_i_w^T M phi`` with ``A_i_w = adjoint(E^-1)`` (§1.5). Without external forces
    it is constant in time, even though ``M phi`` itself changes.

    Parameters
    ----------
    E : array_like, shape (4, 4)
    M : array_like, shape (6, 6)
    phi : array_like, shape (6,)

    Returns
    -------
    ndarray, shape (6,)

    Examples
    --------
    A unit mass at (0, 1, 0) moving along x has angular momentum -z about the origin:

    >>> E = np.eye(4); E[1, 3] = 1.0
    >>> spatial_momentum(E, np.eye(6), [0, 0, 0, 1.0, 0, 0])
    array([ 0.,  0., -1.,  1.,  0.,  0.])

    Taught in book/01_maximal/06_rigid_body.
    """
    phi = as_array(phi, (6,), "phi")
    return adjoint(inv_se3(E)).T @ (as_positive_definite(M, (6, 6), "M", semidefinite=True) @ phi)
