"""The time functions and point forces of the reference scenes, as the reference code writes them.

Scene 5's piecewise-constant torques, the sigmoid ramps that prescribe joints in scenes 9 and 20,
the body twists prescribed in scenes 13 and 20, and the reference's point forces and point
springs with the stiffness matrices its code uses (``scene(..., stiffness="reference")``).

Taught in book/02_reduced/gallery.
"""

from dataclasses import dataclass

import numpy as np

from .._validate import as_real, as_scalar
from ..maximal.forces import PointForce, PointSpring

__all__ = ["PiecewiseConstant", "Sigmoid", "BodyTwistSchedule", "ReferencePointForce", "ReferencePointSpring"]


@dataclass(frozen=True, eq=False)
class PiecewiseConstant:
    """A piecewise-constant function of time: ``values[k]`` for ``breaks[k-1] <= t < breaks[k]``.

    Parameters
    ----------
    breaks : array_like, shape (m,)
        Increasing switch times.
    values : array_like, shape (m + 1, nq)

    Examples
    --------
    >>> tau = PiecewiseConstant([1.0], [[0.0], [2.0]])
    >>> tau(0.5), tau(1.0)
    (array([0.]), array([2.]))
    """

    breaks: np.ndarray
    values: np.ndarray

    def __post_init__(self):
        b = as_real(self.breaks, None, "breaks")  # NaN, strings, ragged lists refused by name
        if b.ndim != 1 or not np.all(np.diff(b) > 0):
            raise ValueError(f"argument 'breaks' must be an increasing 1-D array, got {b.tolist()}")
        v = as_real(self.values, None, "values")
        if v.ndim != 2 or len(v) != len(b) + 1:
            raise ValueError(f"argument 'values' must have shape ({len(b) + 1}, nq), got {v.shape}")
        object.__setattr__(self, "breaks", b)
        object.__setattr__(self, "values", v)

    def __call__(self, t):
        t = as_scalar(t, "t")
        return self.values[int(np.searchsorted(self.breaks, t, side="right"))].copy()


@dataclass(frozen=True)
class Sigmoid:
    """The reference's smooth ramp of a prescribed joint: ``q(t) = b / (1 + exp(-a s))``,
    ``s = 2 ((t - t0) / (t1 - t0) - 1/2)``, held at ``q = b`` (at rest) from ``t1`` on.

    Called with ``t`` it returns ``(q, qdot, qddot)`` as one-element arrays (a
    :class:`~redmax_edu.constraints.PrescribedJoint` motion). The ramp reaches only
    ``b / (1 + exp(-a))`` at ``t1``, so the hold makes ``q`` jump there by
    ``b exp(-a) / (1 + exp(-a))`` (4.3 mrad for scene 9), as in the reference.

    Examples
    --------
    >>> ramp = Sigmoid(a=7.0, b=1.5 * np.pi, t0=0.0, t1=7.0)
    >>> q, qdot, qddot = ramp(3.5)
    >>> round(float(q[0]), 6), round(float(qdot[0]), 6)  # halfway: b/2 at the top rate a b / (2 (t1 - t0))
    (2.356194, 2.356194)
    """

    a: float
    b: float
    t0: float
    t1: float

    def __post_init__(self):
        for name in ("a", "b", "t0", "t1"):
            object.__setattr__(self, name, as_scalar(getattr(self, name), name))
        if not self.t1 > self.t0:
            raise ValueError(f"arguments 't0' and 't1' must have t1 > t0, got ({self.t0:g}, {self.t1:g})")

    def __call__(self, t):
        t = as_scalar(t, "t")
        if t >= self.t1:
            return np.array([self.b]), np.zeros(1), np.zeros(1)
        k = 2.0 / (self.t1 - self.t0)                           # ds/dt
        e = np.exp(-self.a * (k * (t - self.t0) - 1.0))
        sig = 1.0 / (1.0 + e)
        dsig = sig * (1.0 - sig)                                # d sig / d(a s)
        q = self.b * sig
        qdot = self.b * dsig * self.a * k
        qddot = self.b * dsig * (1.0 - 2.0 * sig) * (self.a * k) ** 2
        return np.array([q]), np.array([qdot]), np.array([qddot])


@dataclass(frozen=True)
class BodyTwistSchedule:
    """The reference's prescribed body motion (scenes 13 and 20): the body's angular velocity
    about its own y axis and its linear velocity in world x and z, piecewise linear in time.

    ``omega_y(t)`` (rad/s, body frame) and ``v(t)`` (world frame, ``scale`` m/s per reference
    cm/s) follow the schedule of the reference's scene function: ramps over 0-2 s, 2-4 s, 4-6 s
    and 6-8 s, at rest afterwards. Called as ``(t, E, phi) -> (w, wdot)`` it returns the wanted
    ``(omega_y, nu_x, nu_z)`` of the body twist, with ``nu = R^T v`` rotated into the body
    frame, and their rates, ``d(R^T v)/dt = -[omega] R^T v + R^T dv/dt`` (a
    :class:`~redmax_edu.constraints.PrescribedBody` target).
    """

    scale: float = 0.01

    def __post_init__(self):
        object.__setattr__(self, "scale", as_scalar(self.scale, "scale"))

    def world(self, t):
        """``(omega_y, domega_y/dt, v (3,), dv/dt (3,))`` at time t."""
        t = as_scalar(t, "t")  # a NaN time would fall through every ramp to "at rest"
        zero, x = np.zeros(3), np.array([self.scale, 0.0, 0.0])
        if t < 2.0:
            return -t, -1.0, zero, zero
        if t < 4.0:
            return t - 4.0, 1.0, zero, zero
        if t < 6.0:
            return t - 4.0, 1.0, -2.0 * (t - 4.0) * x, -2.0 * x
        if t < 8.0:
            return -(t - 8.0), -1.0, 2.0 * (t - 8.0) * x, 2.0 * x
        return 0.0, 0.0, zero, zero

    def __call__(self, t, E, phi):
        w_y, dw_y, v, dv = self.world(t)
        R = E[:3, :3]
        nu = R.T @ v
        dnu = -np.cross(phi[:3], nu) + R.T @ dv
        return np.array([w_y, nu[0], nu[2]]), np.array([dw_y, dnu[0], dnu[2]])


class ReferencePointForce(PointForce):
    """A :class:`~redmax_edu.maximal.forces.PointForce` with the reference code's stiffness: none.

    The reference's ``SpringPointDirection`` computes the stiffness matrix of its constant
    world force and then sets it to zero, so linearly implicit Euler (springs and dampers
    only, Eq. 2.86) treats the force explicitly. Force and energy are the exact ones.

    Examples
    --------
    >>> f = ReferencePointForce(0, [0.1, 0.0, 0.0], [0.0, 0.0, 1.0], k=2.0)
    >>> terms = f.evaluate(np.eye(4)[None], np.zeros((1, 6)))
    >>> terms.f[1], bool(np.any(terms.K))
    (np.float64(-0.2), False)
    """

    def evaluate(self, E, phi):
        terms = super().evaluate(E, phi)
        terms.K = np.zeros_like(terms.K)
        return terms


class ReferencePointSpring(PointSpring):
    """A :class:`~redmax_edu.maximal.forces.PointSpring` with the reference code's stiffness:
    the symmetric part ``(K + K^T) / 2`` of the exact one.

    The exact stiffness of a zero-rest-length spring between two body points is not
    symmetric (the force rotates with neither body); the reference's ``SpringPointPoint``
    symmetrises it. Force, damping and energy are the exact ones.
    """

    def evaluate(self, E, phi):
        terms = super().evaluate(E, phi)
        terms.K = 0.5 * (terms.K + terms.K.T)
        return terms
