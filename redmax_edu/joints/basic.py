"""The joints whose Jacobian is constant: fixed, revolute, prismatic, planar, translational.

Revolute: ``Q = [[exp([a] q), 0], [0, 1]]``, ``S = (a; 0)`` (Eq. 2.45-2.46); prismatic:
``Q = [[I, a q], [0, 1]]``, ``S = (0; a)`` (Eq. 2.25-2.26); planar: translation ``B q`` with
``B`` 3x2 (Eq. 2.27-2.28); translational: ``S = (0; I)`` (Eq. 2.29-2.30); fixed: no
coordinates (§2.4.1). For all of them ``Sdot = 0``, and in Part 3 the Hessian and every
derivative of Sdot vanish (§3.2.1-3.2.4); only ``dQ/dq`` is not zero: ``Q [a]`` for the
revolute joint (Eq. 3.16), the constant translation direction(s) for the others (Eq. 3.17-3.22).

Taught in book/02_reduced/04_joints.
"""

from functools import cached_property

import numpy as np

from .._validate import as_array
from ..lie import ad_unchecked, adjoint_unchecked
from .base import Joint, spec_array

__all__ = ["Fixed", "Revolute", "Prismatic", "Planar", "Translational", "unit_axis"]


def unit_axis(axis, where):
    """``axis / |axis|``; a zero or non-finite axis is a ``ValueError`` naming ``where``."""
    try:
        a = as_array(axis, (3,), "axis", real=True)
    except ValueError as err:
        raise ValueError(f"{where}: {err}") from None
    if a.dtype.kind == "c":
        raise ValueError(f"{where}: field 'axis' must be real, got {a.tolist()}")
    n = float(np.linalg.norm(a))
    if not np.isfinite(n):  # |axis|^2 overflows: normalise the scaled axis instead
        a = a / np.abs(a).max()
        n = float(np.linalg.norm(a))
    if not n > 1e-12:
        raise ValueError(f"{where}: field 'axis' must be a nonzero 3-vector, got {a.tolist()}")
    # an axis that is already unit stays bit for bit, so that spec round trips are exact
    return a if abs(n - 1.0) <= 4 * np.finfo(float).eps else a / n


_EYE4 = np.eye(4)
_EYE4.setflags(write=False)
_ZEROS = {k: np.zeros((6, k)) for k in range(4)}
for _z in _ZEROS.values():
    _z.setflags(write=False)


class _ConstantJacobian(Joint):
    """A joint with constant ``S``: ``Sdot = 0`` and ``Q = exp([S q])`` (Eq. 2.4)."""

    constant_jacobian = True

    def _S(self, q):
        return self._S0 if q.dtype.kind == "f" else self._S0.astype(q.dtype)

    def _Sdot(self, q, qdot):
        return np.zeros((6, self.ndof), dtype=np.result_type(q, qdot))

    def _dS_dq(self, q):
        return np.zeros((6, self.ndof, self.ndof), dtype=q.dtype)  # §3.2.1-3.2.4

    def _dSdot_dq(self, q, qdot):
        return np.zeros((6, self.ndof, self.ndof), dtype=np.result_type(q, qdot))

    def _dQ_dq(self, q):
        # Q = [[I, T q], [0, 1]] for the translating joints, T the columns of S's bottom rows
        dQ = np.zeros((4, 4, self.ndof), dtype=q.dtype)
        dQ[:3, 3] = self._S0[3:]
        return dQ

    def _derivatives(self, q, qdot=None):
        # with S constant, dA/dq_k = A ad(S_k) (Eq. 1.18 for the unit rate of coordinate k) and
        # dAdot/dq_k = dA/dq_k ad(S qdot): the product rule of the base class with H = 0
        dtype = q.dtype if qdot is None else np.result_type(q, qdot)
        H = np.zeros((6, self.ndof, self.ndof), dtype=dtype)
        dA = adjoint_unchecked(self._Q(q)) @ self._ad_columns
        if qdot is None:
            return dA, H, None, None
        return dA, H, dA @ ad_unchecked(self._S0 @ qdot), H.copy()

    @cached_property
    def _ad_columns(self):
        """``ad(S_k)`` of every column of the constant S, shape (ndof, 6, 6)."""
        return ad_unchecked(self._S0.T)

    def _evaluate(self, q, qdot):
        # S and Sdot are constant: share read-only arrays instead of building them per call
        if q.dtype.kind == "f" and qdot.dtype.kind == "f":
            return self._Q(q), self._S0, self._zeros
        return super()._evaluate(q, qdot)

    @property
    def _zeros(self):
        return _ZEROS[self.ndof]


class _AxisJoint(_ConstantJacobian):
    """A one-coordinate joint along or about a unit ``axis``: its scene format is ``{"axis": ...}``."""

    spec_keys = ("axis",)

    ndof = 1

    def spec(self):
        return {"type": self.kind, "axis": self.axis}

    @classmethod
    def from_spec(cls, spec, where):
        return cls(spec_array(spec, "axis", (3,), where), where)


class Fixed(_ConstantJacobian):
    """A rigid attachment: ``Q = I``, ``S`` is 6x0 (§2.4.1)."""

    kind = "fixed"
    ndof = 0
    _S0 = np.zeros((6, 0))

    def _Q(self, q):
        return np.eye(4, dtype=q.dtype)


class Revolute(_AxisJoint):
    """A hinge about the unit ``axis`` (in the joint frame), Eq. (2.45)-(2.46).

    About z it is Eq. (2.3)-(2.4); its ``R``, ``Q`` and ``A`` are those of Eq. (3.15).

    >>> j = Revolute([0, 0, 2.0])          # the axis is normalised
    >>> np.round(j.Q([np.pi / 2])[:3, :3], 12)
    array([[ 0., -1.,  0.],
           [ 1.,  0.,  0.],
           [ 0.,  0.,  1.]])
    >>> j.S([0.3]).ravel()
    array([0., 0., 1., 0., 0., 0.])
    """

    kind = "revolute"

    def __init__(self, axis=(0.0, 0.0, 1.0), where="revolute joint"):
        self.axis = unit_axis(axis, where)
        self._S0 = np.concatenate([self.axis, np.zeros(3)])[:, None]
        self._S0.setflags(write=False)
        a = self.axis
        K = np.zeros((4, 4))
        K[:3, :3] = [[0.0, -a[2], a[1]], [a[2], 0.0, -a[0]], [-a[1], a[0], 0.0]]
        self._K, self._K2 = K, K @ K

    def _Q(self, q):
        s, c = np.sin(q[0]), np.cos(q[0])
        return _EYE4 + s * self._K + (1.0 - c) * self._K2  # Rodrigues, Eq. (1.10)

    def _dQ_dq(self, q):
        return (self._Q(q) @ self._K)[:, :, None]  # dR/dq = R [a], Eq. (3.16)


class Prismatic(_AxisJoint):
    """A slider along the unit ``axis`` (in the joint frame), Eq. (2.25)-(2.26).

    >>> Prismatic([1, 0, 0]).Q([0.5])[:3, 3]
    array([0.5, 0. , 0. ])
    """

    kind = "prismatic"

    def __init__(self, axis=(1.0, 0.0, 0.0), where="prismatic joint"):
        self.axis = unit_axis(axis, where)
        self._S0 = np.concatenate([np.zeros(3), self.axis])[:, None]
        self._S0.setflags(write=False)

    def _Q(self, q):
        Q = np.eye(4, dtype=q.dtype)
        Q[:3, 3] = self.axis * q[0]
        return Q


class Planar(_ConstantJacobian):
    """Translation ``B q`` in the plane spanned by the columns of ``plane`` (3x2), Eq. (2.27)-(2.28).

    The columns must be independent; they need not be orthonormal (``q`` is then measured
    along them).
    """

    kind = "planar"
    spec_keys = ("plane",)
    ndof = 2

    def __init__(self, plane=((1.0, 0.0), (0.0, 1.0), (0.0, 0.0)), where="planar joint"):
        try:
            B = as_array(plane, (3, 2), "plane", real=True)
        except ValueError as err:
            raise ValueError(f"{where}: {err}") from None
        if np.linalg.matrix_rank(B, tol=1e-9) < 2:
            raise ValueError(f"{where}: field 'plane' must have two independent columns")
        self.plane = B
        self._S0 = np.vstack([np.zeros((3, 2)), B])
        self._S0.setflags(write=False)

    def _Q(self, q):
        Q = np.eye(4, dtype=q.dtype)
        Q[:3, 3] = self.plane @ q
        return Q

    def spec(self):
        return {"type": self.kind, "plane": self.plane}

    @classmethod
    def from_spec(cls, spec, where):
        return cls(spec_array(spec, "plane", (3, 2), where, default=np.eye(3)[:, :2]), where)


class Translational(_ConstantJacobian):
    """Free translation without rotation: ``Q = [[I, q], [0, 1]]``, ``S = (0; I)`` (Eq. 2.29-2.30)."""

    kind = "translational"
    ndof = 3
    _S0 = np.vstack([np.zeros((3, 3)), np.eye(3)])

    def _Q(self, q):
        Q = np.eye(4, dtype=q.dtype)
        Q[:3, 3] = q
        return Q
