"""Composite joints (§2.4.9) and the free joints built from them (§2.4.10-2.4.11).

A composite joint chains sub-joints with massless frames in between:
``Q = Q_1 Q_2 ... Q_k`` (Eq. 2.53). The child frame's twist is the sum of each sub-joint's
twist carried to the child frame by the transforms that follow it,

    S = [Ad(P_1^-1) S_1, Ad(P_2^-1) S_2, ..., S_k],   P_i = Q_{i+1} ... Q_k

(Eq. 2.54 for two joints). Differentiating ``Ad(P_i^-1)`` in time gives
``-ad(phi_i) Ad(P_i^-1)``, where ``phi_i = P_i^-1 dP_i/dt`` is the twist of the tail P_i in its
own frame (Eq. 2.56), so

    Sdot_i = Ad(P_i^-1) Sdot_i' - ad(phi_i) Ad(P_i^-1) S_i'    (Eq. 2.58, any number of joints).

One sweep from the last sub-joint to the first builds both, accumulating ``Ad(P_i^-1)`` and
``phi_i`` as it goes. The free joints are composites whose closed forms the writeup works out
(Eq. 2.60-2.66); the tests check that this code reproduces them.

Part 3 differentiates the same rule (§3.2.8-3.2.9 work it out for the free joints). Column j
of sub-joint i depends on its own coordinates through ``S_i'`` and on those of every later
sub-joint through ``Ad(P_i^-1)``, whose derivative along a later coordinate m is
``-ad(S_m) Ad(P_i^-1)``: ``P_i^-1 dP_i/dq_m`` is the composite's own column ``S_m``. So

    dS_j/dq_m = Ad(P_i^-1) dS_i'/dq_m     (m in sub-joint i),
              = -ad(S_m) S_j               (m in a later sub-joint),
              = 0                          (m in an earlier one),

and differentiating ``Sdot_j = Ad(P_i^-1) Sdot_j' - ad(phi_i) S_j`` in the same way gives
``dSdot/dq``, with ``dphi_i/dq_m = sum_l dS_l/dq_m qdot_l`` over the later columns l.
``dQ/dq`` is the product rule on ``Q_1 ... Q_k``.

Taught in book/02_reduced/04d_composite_spline_joints.
"""

import numpy as np

from .._validate import ArgumentTypeError, as_sequence
from ..lie import ad_unchecked, adjoint_unchecked, hat_unchecked, inv_se3_unchecked
from .base import Joint, adjoint_derivative_stack, adjoint_dot_derivative_stack, build_joint
from .basic import Planar, Prismatic, Revolute, Translational
from .euler import SphericalEuler, Universal
from .exponential import SphericalExp
from .spline import SplineCurve, SplineSurface

__all__ = ["Composite", "Free2D", "Free3DEuler", "Free3DExp", "SUB_JOINT_TYPES"]

#: Sub-joint kinds a composite may not contain.
_NOT_ALLOWED = ("fixed", "composite")


def _plain(value):
    """A spec value in JSON form (nested lists), so that specs compare with ``==`` and serialise."""
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


class Composite(Joint):
    """Sub-joints in series: ``Q = Q_1 ... Q_k``, ``q = (q_1, ..., q_k)`` (Eq. 2.53-2.58).

    Parameters
    ----------
    joints : sequence of Joint
        At least one; none of kind ``fixed`` or ``composite``.
    where : str
        Names the joint in error messages.

    Examples
    --------
    Scene 19 of the reference code: a hinge about x followed by a slider along the rotated x.

    >>> from redmax_edu.joints import Prismatic, Revolute
    >>> j = Composite([Revolute([1, 0, 0]), Prismatic([1, 0, 0])])
    >>> j.ndof, j.S([0.1, 0.0]).T
    (2, array([[1., 0., 0., 0., 0., 0.],
           [0., 0., 0., 1., 0., 0.]]))

    Taught in book/02_reduced/04d_composite_spline_joints.
    """

    kind = "composite"
    spec_keys = ("joints",)

    def __init__(self, joints, where="composite joint"):
        try:
            joints = as_sequence(joints, "joints", "Joint")
        except ValueError as err:
            raise ArgumentTypeError(f"{where}: {err}") from None
        if not joints:
            raise ValueError(f"{where}: field 'joints' must list at least one sub-joint")
        for i, j in enumerate(joints):
            if not isinstance(j, Joint):
                raise ValueError(f"{where}: field 'joints'[{i}] must be a Joint, got {type(j).__name__}")
            if j.kind in _NOT_ALLOWED:
                raise ValueError(f"{where}: field 'joints'[{i}] has type {j.kind!r}; a composite joint "
                                 f"may not contain {' or '.join(_NOT_ALLOWED)} joints")
        self.joints = joints
        self.has_charts = any(j.has_charts for j in joints)
        starts = np.cumsum([0] + [j.ndof for j in joints])
        self._slices = tuple(slice(a, b) for a, b in zip(starts[:-1], starts[1:], strict=True))
        self.ndof = int(starts[-1])

    @property
    def slices(self):
        """``q[slices[i]]`` are the coordinates of sub-joint i."""
        return self._slices

    # --- Eq. (2.53)-(2.58) ----------------------------------------------------------------
    def _chain(self, q, qdot, want_sdot):
        parts = [j._evaluate(q[s], qdot[s]) if want_sdot else (j._Q(q[s]), j._S(q[s]), None)
                 for j, s in zip(self.joints, self._slices, strict=True)]
        _, S, Sdot = parts[-1]  # the last sub-joint moves the child frame itself (its tail is I)
        if len(parts) > 1:
            # from the last sub-joint on: Ad(P^-1) and the twist phi (Eq. 2.56) of the tail
            # P = Q_{i+1} ... Q_k that follows sub-joint i, starting from P = Q_k
            A, phi = adjoint_unchecked(inv_se3_unchecked(parts[-1][0])), S @ qdot[self._slices[-1]]
            for i in reversed(range(len(parts) - 1)):
                Qi, Si, Sdi = parts[i]
                ASi = A @ Si  # Eq. (2.54)
                S = np.concatenate([ASi, S], axis=1)
                if want_sdot:
                    Sdot_i = A @ Sdi - ad_unchecked(phi) @ ASi  # Eq. (2.55)-(2.58)
                    Sdot = np.concatenate([Sdot_i, Sdot], axis=1)
                if i:  # the tail of sub-joint i - 1 is Q_i P
                    phi = phi + ASi @ qdot[self._slices[i]]
                    A = A @ adjoint_unchecked(inv_se3_unchecked(Qi))
        Q = parts[0][0]
        for Qi, _, _ in parts[1:]:
            Q = Q @ Qi
        return Q, S, Sdot

    def _Q(self, q):
        Q = self.joints[0]._Q(q[self._slices[0]])
        for j, s in zip(self.joints[1:], self._slices[1:], strict=True):
            Q = Q @ j._Q(q[s])
        return Q

    def _S(self, q):
        return self._chain(q, np.zeros_like(q), False)[1]

    def _Sdot(self, q, qdot):
        return self._chain(q, qdot, True)[2]

    def _evaluate(self, q, qdot):
        return self._chain(q, qdot, True)

    # --- Part 3: the product rule on Eq. (2.53)-(2.58) -------------------------------------
    def _tails(self, q):
        """The sub-joints' ``Q_i``, their tails ``P_i = Q_{i+1} ... Q_k`` and ``Ad(P_i^-1)``."""
        Qs = [j._Q(q[s]) for j, s in zip(self.joints, self._slices, strict=True)]
        tails = [None] * len(Qs)
        tails[-1] = np.eye(4, dtype=Qs[-1].dtype)
        for i in reversed(range(len(Qs) - 1)):
            tails[i] = Qs[i + 1] @ tails[i + 1]
        return Qs, tails, adjoint_unchecked(inv_se3_unchecked(np.array(tails)))

    def _dQ_dq(self, q):
        return np.moveaxis(self._dQ_first(q, *self._tails(q)[:2]), 0, -1)

    def _dQ_first(self, q, Qs, tails):
        """``dQ/dq`` with the derivative index first, (ndof, 4, 4): the product rule on Eq. (2.53)."""
        dQ = np.zeros((self.ndof, 4, 4), dtype=np.result_type(q, *Qs))
        head = np.eye(4, dtype=q.dtype)  # Q_1 ... Q_{i-1}
        for i, (j, s) in enumerate(zip(self.joints, self._slices, strict=True)):
            dQ[s] = head @ np.moveaxis(j._dQ_dq(q[s]), -1, 0) @ tails[i]
            head = head @ Qs[i]
        return dQ

    def _hessian(self, q, A):
        """``S`` and the Hessian ``dS/dq`` (6, n, n) from the tail adjoints ``A[i] = Ad(P_i^-1)``."""
        S = np.concatenate([A[i] @ j._S(q[s]) for i, (j, s) in enumerate(zip(self.joints, self._slices,
                                                                                  strict=True))], axis=1)
        H = np.zeros((6, self.ndof, self.ndof), dtype=S.dtype)
        for i, (j, s) in enumerate(zip(self.joints, self._slices, strict=True)):
            H[:, s, s] = np.moveaxis(A[i] @ np.moveaxis(j._dS_dq(q[s]), 0, -2), -2, 0)  # its own Hessian
            if s.stop < self.ndof:  # Ad(P_i^-1) turns with each later column: -ad(S_m) S_j
                later = slice(s.stop, self.ndof)
                H[:, s, later] = -np.moveaxis(ad_unchecked(S[:, later].T) @ S[:, s], 0, -1)
        return S, H

    def _dS_dq(self, q):
        return self._hessian(q, self._tails(q)[2])[1]

    def _dSdot_dq(self, q, qdot):
        A = self._tails(q)[2]
        return self._dSdot_of(q, qdot, A, *self._hessian(q, A))

    def _dSdot_of(self, q, qdot, A, S, H):
        """``dSdot/dq`` (6, n, n) from the tail adjoints ``A``, ``S`` and the Hessian ``H``."""
        n = self.ndof
        G = np.zeros((6, n, n), dtype=np.result_type(S, qdot))
        for i, (j, s) in enumerate(zip(self.joints, self._slices, strict=True)):
            later = slice(s.stop, n)
            ad_phi = ad_unchecked(S[:, later] @ qdot[later])  # the tail's twist phi_i (Eq. 2.56)
            # own coordinates: Sdot_j = Ad(P_i^-1) Sdot_j' - ad(phi_i) S_j, phi_i not depending on them
            sub = np.moveaxis(j._dSdot_dq(q[s], qdot[s]), 0, -2)  # (j, 6, k): stacks for matmul
            own = A[i] @ sub - ad_phi @ np.moveaxis(H[:, s, s], 0, -2)
            G[:, s, s] = np.moveaxis(own, -2, 0)
            if s.stop == n:
                continue
            # later coordinates m: Ad(P_i^-1) gives -ad(S_m), phi_i gives dphi_i/dq_m, S_j gives -ad(S_m) S_j
            own_rate = A[i] @ j._Sdot(q[s], qdot[s])  # Ad(P_i^-1) Sdot_i'
            ad_later = ad_unchecked(S[:, later].T)  # (m, 6, 6)
            dphi = (np.swapaxes(H[:, later, later], 1, 2) @ qdot[later]).T  # row m: dphi_i/dq_m
            rates = -(ad_later @ own_rate) - ad_unchecked(dphi) @ S[:, s] + ad_phi @ ad_later @ S[:, s]
            G[:, s, later] = np.moveaxis(rates, 0, -1)
        return G

    def _derivatives(self, q, qdot=None):
        Qs, tails, A = self._tails(q)
        Q = Qs[0] @ tails[0]
        S, H = self._hessian(q, A)
        dA = adjoint_derivative_stack(Q, self._dQ_first(q, Qs, tails))
        if qdot is None:
            return dA, H, None, None
        return dA, H, adjoint_dot_derivative_stack(Q, S, dA, H, qdot), self._dSdot_of(q, qdot, A, S, H)

    def _singularity(self, q):
        for i, (j, s) in enumerate(zip(self.joints, self._slices, strict=True)):
            reason = j._singularity(q[s])
            if reason:
                return f"its sub-joint {i} ({j.kind}): {reason}"
        return None

    # --- singular charts: each sub-joint handles its own ----------------------------------
    def reparameterize(self, q, qdot):
        """Let each sub-joint reparameterize; the product Q and the twist ``S qdot`` are unchanged.

        Each sub-joint keeps its own transform and twist, and the composite's pose and twist
        are built from those alone (Eq. 2.53-2.54).

        Returns
        -------
        joint : Composite
            ``self``, or a joint of the same class with the new sub-joints.
        q, qdot : ndarray, shape (ndof,)
        """
        return super().reparameterize(q, qdot)

    def _reparameterize(self, q, qdot):
        q, qdot = q.copy(), qdot.copy()
        joints, changed = [], False
        for j, s in zip(self.joints, self._slices, strict=True):
            if not j.has_charts:
                joints.append(j)
                continue
            new, q[s], qdot[s] = j._reparameterize(q[s], qdot[s])
            changed = changed or new is not j
            joints.append(new)
        return (self._rebuild(joints) if changed else self), q, qdot

    def _rebuild(self, joints):
        return Composite(joints)

    # --- scene format ---------------------------------------------------------------------
    def spec(self):
        return {"type": self.kind, "joints": [_plain(j.spec()) for j in self.joints]}

    @classmethod
    def from_spec(cls, spec, where):
        subs = spec.get("joints")
        if not isinstance(subs, list | tuple) or not subs:
            raise ValueError(f"{where}: field 'joints' must be a non-empty list of joint specs, got {subs!r}")
        joints = []
        for i, sub in enumerate(subs):
            if isinstance(sub, dict) and sub.get("type") in _NOT_ALLOWED:
                raise ValueError(f"{where}: field 'joints'[{i}] has type {sub['type']!r}; a composite "
                                 f"joint may not contain {' or '.join(_NOT_ALLOWED)} joints")
            joints.append(build_joint(sub, f"{where}, joints[{i}]", SUB_JOINT_TYPES, common=("type",)))
        return cls(joints, where)

    def __repr__(self):
        return f"{type(self).__name__}({list(self.joints)!r})"


class Free2D(Composite):
    """Free motion in the x-y plane: ``q = (x, y, theta)``, planar then revolute about z (Eq. 2.59-2.61).

    Its ``A``, ``Adot``, their derivatives and ``S`` (Eq. 3.40-3.45) come from the composite rule.

    ``S = [(0, 0, 0, c, -s, 0), (0, 0, 0, s, c, 0), (0, 0, 1, 0, 0, 0)]`` (columns, ``c, s`` of
    ``theta``): the planar velocity seen in the rotated child frame (Eq. 2.60).

    Examples
    --------
    >>> j = Free2D()
    >>> np.round(j.Q([1.0, 2.0, np.pi / 2]), 12) + 0.0
    array([[ 0., -1.,  0.,  1.],
           [ 1.,  0.,  0.,  2.],
           [ 0.,  0.,  1.,  0.],
           [ 0.,  0.,  0.,  1.]])

    Taught in book/02_reduced/04d_composite_spline_joints.
    """

    kind = "free2d"
    spec_keys = ()

    def __init__(self, where="free2d joint"):
        super().__init__([Planar(), Revolute([0.0, 0.0, 1.0])], where)

    def _rebuild(self, joints):
        return self

    def spec(self):
        return {"type": self.kind}

    @classmethod
    def from_spec(cls, spec, where):
        return cls(where)

    def __repr__(self):
        return "Free2D()"


class Free3DEuler(Composite):
    """Free motion in 3D: ``q = (p, euler)``, ``Q = Trans(p) Rot_chart(euler)`` (Eq. 2.62-2.64).

    Its ``A``, ``Adot``, their derivatives, ``S`` and ``dS/dq`` (Eq. 3.46-3.52) come from the composite rule.

    Translational then spherical (Euler angles in ``chart``); :meth:`~Composite.reparameterize` switches
    the chart of the rotational part (§2.4.5).

    Parameters
    ----------
    chart : str
        One of the 12 Euler charts, default ``"XYZ"``.

    Examples
    --------
    >>> j = Free3DEuler("ZYX")
    >>> j.Q([1.0, 2.0, 3.0, 0.0, 0.0, 0.0])[:3, 3]
    array([1., 2., 3.])

    Taught in book/02_reduced/04d_composite_spline_joints.
    """

    kind = "free3d_euler"
    spec_keys = ("chart",)

    def __init__(self, chart="XYZ", where="free3d_euler joint"):
        super().__init__([Translational(), SphericalEuler(chart, where)], where)
        self.chart = self.joints[1].chart

    def _rebuild(self, joints):
        return Free3DEuler(joints[1].chart)

    def spec(self):
        return {"type": self.kind, "chart": self.chart}

    @classmethod
    def from_spec(cls, spec, where):
        return cls(spec.get("chart", "XYZ"), where)

    def __repr__(self):
        return f"Free3DEuler(chart={self.chart!r})"


class Free3DExp(Composite):
    """Free motion in 3D with the rotation in exponential coordinates (Eq. 2.62-2.66).

    Its ``A``, ``Adot``, their derivatives, ``S`` and ``dS/dq`` (Eq. 3.46-3.52) come from the composite rule.

    ``order="translate_first"`` (default, the reference JointFree3D): ``q = (p, r)``,
    ``Q = Trans(p) Rot(exp r)``, so p is the child's position in the parent frame (Eq. 2.63-2.64).
    ``order="rotate_first"`` (the reference JointFree of scene 33): ``q = (r, p)``,
    ``Q = Rot(exp r) Trans(p)``, so p is measured along the rotated axes (Eq. 2.65-2.66).
    :meth:`~Composite.reparameterize` shortens r as :class:`~redmax_edu.joints.exponential.SphericalExp` does.

    Parameters
    ----------
    order : {"translate_first", "rotate_first"}

    Examples
    --------
    >>> j = Free3DExp(order="rotate_first")
    >>> np.round(j.Q([0.0, 0.0, np.pi / 2, 1.0, 0.0, 0.0])[:3, 3], 12) + 0.0
    array([0., 1., 0.])

    Taught in book/02_reduced/04d_composite_spline_joints.
    """

    kind = "free3d_exp"
    spec_keys = ("order",)
    ORDERS = ("translate_first", "rotate_first")

    def __init__(self, order="translate_first", where="free3d_exp joint"):
        if not isinstance(order, str) or order not in self.ORDERS:
            raise ValueError(f"{where}: field 'order' must be one of {', '.join(self.ORDERS)}, got {order!r}")
        self.order = order
        parts = [Translational(), SphericalExp()]
        super().__init__(parts if order == "translate_first" else parts[::-1], where)

    def _rebuild(self, joints):
        return self

    def spec(self):
        out = {"type": self.kind}
        if self.order != "translate_first":
            out["order"] = self.order
        return out

    @classmethod
    def from_spec(cls, spec, where):
        return cls(spec.get("order", "translate_first"), where)

    def __repr__(self):
        return f"Free3DExp(order={self.order!r})"

    # --- the closed forms of Eq. (2.63)-(2.66), the composite rule worked out once -----------
    def _evaluate(self, q, qdot):
        """``Q``, ``S``, ``Sdot`` in closed form, from the ball part's ``R``, ``S_hat``, ``Sdot_hat``.

        translate first, ``q = (p, r)``: ``S = [[0, S_hat], [R^T, 0]]``,
        ``Sdot = [[0, Sdot_hat], [-[S_hat rdot] R^T, 0]]`` (Eq. 2.63-2.64);
        rotate first, ``q = (r, p)``: ``S = [[S_hat, 0], [-[p] S_hat, I]]``,
        ``Sdot = [[Sdot_hat, 0], [-[pdot] S_hat - [p] Sdot_hat, 0]]`` (Eq. 2.65-2.66).
        The general composite rule (Eq. 2.53-2.58) gives the same matrices; this is the one
        the integrators meet most, a floating body.
        """
        ball = self.joints[1] if self.order == "translate_first" else self.joints[0]
        first = self.order == "translate_first"
        rot, pos = (slice(3, 6), slice(0, 3)) if first else (slice(0, 3), slice(3, 6))
        R4, S_ball, Sd_ball = ball._evaluate(q[rot], qdot[rot])
        R, Sh, Shd = R4[:3, :3], S_ball[:3], Sd_ball[:3]
        p, pdot = q[pos], qdot[pos]
        dtype = np.result_type(q, qdot)
        Q = np.eye(4, dtype=q.dtype)
        Q[:3, :3] = R
        S, Sd = np.zeros((6, 6), dtype=q.dtype), np.zeros((6, 6), dtype=dtype)
        if first:
            Q[:3, 3] = p
            S[:3, 3:], S[3:, :3] = Sh, R.T
            Sd[:3, 3:], Sd[3:, :3] = Shd, -hat_unchecked(Sh @ qdot[rot]) @ R.T
        else:
            Q[:3, 3] = (R4 @ np.append(p, 1.0))[:3]                  # Rot(exp r) Trans(p)
            S[:3, :3], S[3:, :3], S[3:, 3:] = Sh, -hat_unchecked(p) @ Sh, np.eye(3)
            Sd[:3, :3], Sd[3:, :3] = Shd, -hat_unchecked(pdot) @ Sh - hat_unchecked(p) @ Shd
        return Q, S, Sd

    def _S(self, q):
        return self._evaluate(q, np.zeros_like(q))[1]

    def _Sdot(self, q, qdot):
        return self._evaluate(q, qdot)[2]


#: The joint types a composite may chain (every type of the scene format but fixed and composite),
#: by their ``type``.
SUB_JOINT_TYPES = {cls.kind: cls for cls in (Revolute, Prismatic, Planar, Translational, Universal,
                                             SphericalEuler, SphericalExp, Free2D, Free3DEuler, Free3DExp,
                                             SplineCurve, SplineSurface)}
