"""Spline joints (Lee and Terzopoulos 2008): a curve of frames (§2.4.12) and a surface (§2.4.13).

Both are products of exponentials of constant twists weighted by spline functions of q,

    Q(q) = Q_0 exp([xi_1] w_1(q)) exp([xi_2] w_2(q)) ... exp([xi_m] w_m(q)),

so one routine, :func:`product_of_exponentials`, computes Q, S and dS/dq for both (Alg. 3
and Alg. 4). Adding one factor ``Q_i = exp([xi_i] w_i)`` carries the previous columns into
the new frame and adds the factor's own rate,

    S <- Ad(Q_i^-1) S + xi_i dw_i/dq,

and differentiating ``Ad(Q_i^-1) = exp(-w_i ad(xi_i))`` gives the Hessian update

    dS_j/dq_l <- Ad(Q_i^-1) (dS_j/dq_l + ad(S_j) xi_i dw_i/dq_l) + xi_i d2w_i/dq_j dq_l.

(Alg. 3 as printed weights the bracket term by the basis value ``B~_i``; its derivative
``B~'_i`` is what the chain rule gives, as in Alg. 4, line 16, and what the unit tests confirm
against finite differences.) ``Sdot = sum_l dS/dq_l qdot_l``.

Part 3 (§3.2) needs ``dSdot/dq = sum_l d2S/(dq_l dq_m) qdot_l``, one derivative more: writing
``Y_jl = dS_j/dq_l + ad(S_j) xi_i dw_i/dq_l`` for the bracket of the Hessian update,

    d2S_j/dq_l dq_m <- Ad(Q_i^-1) (d2S_j/dq_l dq_m + ad(dS_j/dq_m) xi_i dw_l
                                   + ad(S_j) xi_i d2w_i/dq_l dq_m + ad(Y_jl) xi_i dw_m) + xi_i d3w_i,

which needs the third derivatives of the spline weights. A cubic B-spline is C^2 across its
knots, so this third derivative, and with it ``dSdot/dq`` of the spline curve, jumps there:
at a knot the joint returns the derivative from the right (the segment that starts there).

Taught in book/02_reduced/04d_composite_spline_joints.
"""

import numpy as np

from .._validate import as_array, as_transform
from ..lie import ad_unchecked, adjoint_unchecked, exp_se3, inv_se3_unchecked, log_se3
from .base import Joint, spec_array

__all__ = ["SplineCurve", "SplineSurface", "product_of_exponentials", "BSPLINE_BASIS", "SURFACE_REACH",
           "cumulative_basis", "bspline_weights"]

#: The uniform cubic B-spline basis matrix B of Eq. (2.68): weights = B @ (1, u, u^2, u^3).
BSPLINE_BASIS = np.array([[1.0, -3.0, 3.0, -1.0],
                          [4.0, 0.0, -6.0, 3.0],
                          [1.0, 3.0, 3.0, -3.0],
                          [0.0, 0.0, 0.0, 1.0]]) / 6.0

#: Differences of control values (spline surface) or frames (twists ``log(C_(j-1)^-1 C_j)`` of the
#: spline curve) at most this, relative to their scale, count as none: the spline does not move.
_COINCIDENT = 1e-12

#: The spline surface's coordinates are refused beyond this magnitude: the patch covers [0, 1]^2,
#: and far outside it its cubic weights (of order q^3 / 6) overflow once multiplied by the data.
SURFACE_REACH = 1e6

# Row r of the cumulative basis sums rows r..4 of B (Eq. 2.72).
_CUMULATIVE = np.cumsum(BSPLINE_BASIS[::-1], axis=0)[::-1]


def _powers(u):
    """``(1, u, u^2, u^3)`` and its first two derivatives, each shape (4,)."""
    zero, one = 0.0 * u, 1.0 + 0.0 * u
    return (np.array([one, u, u * u, u * u * u]),
            np.array([zero, one, 2 * u, 3 * u * u]),
            np.array([zero, zero, 2 * one, 6 * u]))


#: The third derivative of ``(1, u, u^2, u^3)``: constant, so the cubic's third derivative is too.
_THIRD_POWERS = np.array([0.0, 0.0, 0.0, 6.0])


def bspline_weights(u):
    """The four cubic B-spline weights at ``u`` and their derivatives (Eq. 2.69-2.70, 2.73).

    Parameters
    ----------
    u : float
        Local parameter, normally in [0, 1].

    Returns
    -------
    b, db, ddb : ndarray, shape (4,) each

    Examples
    --------
    >>> bspline_weights(0.0)[0] * 6
    array([1., 4., 1., 0.])

    Taught in book/02_reduced/04d_composite_spline_joints.
    """
    p, dp, ddp = _powers(u)
    return BSPLINE_BASIS @ p, BSPLINE_BASIS @ dp, BSPLINE_BASIS @ ddp


def cumulative_basis(u):
    """The cumulative basis ``B~_1..4(u)`` of Eq. (2.72) and its two derivatives (Eq. 2.73).

    ``B~_r = B_r + ... + B_4``; ``B~_1 = 1``.

    Parameters
    ----------
    u : float

    Returns
    -------
    bt, dbt, ddbt : ndarray, shape (4,) each

    Examples
    --------
    >>> np.round(cumulative_basis(0.0)[0] * 6, 12)
    array([6., 5., 1., 0.])

    Taught in book/02_reduced/04d_composite_spline_joints.
    """
    p, dp, ddp = _powers(u)
    return _CUMULATIVE @ p, _CUMULATIVE @ dp, _CUMULATIVE @ ddp


def product_of_exponentials(Q0, twists, w, dw, ddw, dddw=None):
    """``Q = Q0 prod_i exp([xi_i] w_i)``, its ``S`` and ``dS/dq`` (Alg. 3 and Alg. 4), and ``d2S/dq2``.

    Parameters
    ----------
    Q0 : ndarray, shape (4, 4)
        The constant first factor.
    twists : ndarray, shape (m, 6)
        The constant twists ``xi_i``.
    w : ndarray, shape (m,)
        The weights ``w_i(q)``.
    dw : ndarray, shape (m, n)
        ``dw_i/dq_j``.
    ddw : ndarray, shape (m, n, n)
        ``d2 w_i / dq_j dq_l``.
    dddw : ndarray, shape (m, n, n, n), optional
        ``d3 w_i / dq_j dq_l dq_k``; when given, the second derivative of S is returned too.

    Returns
    -------
    Q : ndarray, shape (4, 4)
    S : ndarray, shape (6, n)
        ``[S_j] = Q^-1 dQ/dq_j``.
    dS : ndarray, shape (6, n, n)
        ``dS[:, j, l] = dS_j/dq_l`` (derivative index last).
    ddS : ndarray, shape (6, n, n, n)
        Only when ``dddw`` is given: ``ddS[:, j, l, k] = d2S_j/dq_l dq_k``.

    Examples
    --------
    One factor about z: the rate is the twist itself.

    >>> Q, S, dS = product_of_exponentials(np.eye(4), np.array([[0, 0, 1.0, 0, 0, 0]]),
    ...                                    np.array([0.3]), np.array([[2.0]]), np.zeros((1, 1, 1)))
    >>> S.ravel()
    array([0., 0., 2., 0., 0., 0.])

    Taught in book/02_reduced/04d_composite_spline_joints.
    """
    n = dw.shape[1]
    third = dddw is not None
    dtype = np.result_type(Q0, w, dw, ddw, *(() if dddw is None else (dddw,)))
    Q = np.array(Q0, dtype=dtype)
    S = np.zeros((6, n), dtype=dtype)
    dS = np.zeros((6, n, n), dtype=dtype)
    ddS = np.zeros((6, n, n, n), dtype=dtype) if third else None
    for i, (xi, wi, dwi, ddwi) in enumerate(zip(twists, w, dw, ddw, strict=True)):
        Qi = exp_se3(xi * wi)  # Alg. 3 line 5, Alg. 4 line 9
        Q = Q @ Qi
        A = adjoint_unchecked(inv_se3_unchecked(Qi))
        # Alg. 4 line 16: dS_j/dq_l <- Ad (dS_j/dq_l + ad(S_j) xi dw_l) + xi ddw_jl
        bracket = np.einsum("jab,b->aj", ad_unchecked(S.T), xi)  # column j: ad(S_j) xi
        Y = dS + bracket[:, :, None] * dwi[None, None, :]
        if third:  # the module docstring's update of d2S/dq2, from the old S, dS and Y
            adH = np.einsum("jmab,b->ajm", ad_unchecked(np.moveaxis(dS, 0, -1)), xi)  # ad(dS_j/dq_m) xi
            adY = np.einsum("jlab,b->ajl", ad_unchecked(np.moveaxis(Y, 0, -1)), xi)  # ad(Y_jl) xi
            inner = (ddS + adH[:, :, None, :] * dwi[None, None, :, None]
                     + bracket[:, :, None, None] * ddwi[None, None, :, :]
                     + adY[:, :, :, None] * dwi[None, None, None, :])
            ddS = np.einsum("ab,bjlm->ajlm", A, inner) + xi[:, None, None, None] * dddw[i][None]
        dS = np.einsum("ab,bjl->ajl", A, Y) + xi[:, None, None] * ddwi[None, :, :]
        S = A @ S + np.outer(xi, dwi)  # Alg. 3 line 9, Alg. 4 line 14
    return (Q, S, dS, ddS) if third else (Q, S, dS)


class SplineCurve(Joint):
    """A 1-dof joint that slides and turns along a cyclic cubic B-spline of frames (Eq. 2.67-2.74).

    With ``n >= 4`` control frames ``C_1..C_n`` and their differences
    ``dC_j = log(C_{j-1}^-1 C_j)`` (cyclic: ``dC_1 = log(C_n^-1 C_1)``), the coordinate is wrapped
    to ``[0, n)``, split as ``q = k + u`` with integer k, and (1-based indices, cyclic)

        Q(q) = C_{k+1} exp([dC_{k+2}] B~_2(u)) exp([dC_{k+3}] B~_3(u)) exp([dC_{k+4}] B~_4(u)).

    At ``u = 0`` this is the B-spline blend of ``C_{k+1}, C_{k+2}, C_{k+3}`` with weights
    (1, 4, 1)/6 in the log sense; the frame is C^2 in q across knots and periodic with period n.
    So S is C^1 and the Hessian ``dS/dq`` C^0 there, while ``dSdot/dq`` (a third derivative
    of the weights) jumps at a knot: there ``dSdot_dq`` is the derivative from the right.

    Parameters
    ----------
    control_frames : array_like, shape (n, 4, 4)
        Rigid transforms in the joint frame, ``n >= 4``.
    where : str
        Names the joint in error messages.

    Examples
    --------
    Four frames on a square, all with the same orientation: the path is a closed curve.

    >>> frames = np.tile(np.eye(4), (4, 1, 1))
    >>> frames[:, :2, 3] = [[1, 0], [0, 1], [-1, 0], [0, -1]]
    >>> j = SplineCurve(frames)
    >>> np.allclose(j.Q([0.0]), j.Q([4.0])), np.round(j.Q([0.0])[:3, 3], 12) + 0.0
    (True, array([0.        , 0.66666667, 0.        ]))

    Taught in book/02_reduced/04d_composite_spline_joints.
    """

    kind = "spline_curve"
    spec_keys = ("control_frames",)
    ndof = 1

    def __init__(self, control_frames, where="spline_curve joint"):
        try:
            frames = as_array(control_frames, None, "control_frames", real=True)
        except ValueError as err:
            raise ValueError(f"{where}: {err}") from None
        if frames.ndim != 3 or frames.shape[1:] != (4, 4):
            raise ValueError(f"{where}: field 'control_frames' must be a list of 4x4 transforms, "
                             f"got shape {frames.shape}")
        if len(frames) < 4:
            raise ValueError(f"{where}: field 'control_frames' needs at least 4 frames for a cubic "
                             f"B-spline, got {len(frames)}")
        try:
            frames = np.array([as_transform(F, f"control_frames[{i}]", real=True)
                               for i, F in enumerate(frames)])
        except ValueError as err:
            raise ValueError(f"{where}: {err}") from None
        self.control_frames = frames
        n = len(frames)
        # dC[m] (0-based) = log(C[m-1]^-1 C[m]); dC[0] wraps around to C[n-1] (Eq. 2.74).
        self._dC = np.array([log_se3(inv_se3_unchecked(frames[m - 1]) @ frames[m]) for m in range(n)])
        # S is a sum of dC_{k+2..k+4} with weights (1 - u)^2/2, (1 + 2u - 2u^2)/2, u^2/2: it vanishes
        # at a knot where two consecutive differences do, that is where three frames coincide
        still = np.linalg.norm(self._dC, axis=1) <= _COINCIDENT * (1.0 + np.abs(frames[:, :3, 3]).max())
        triples = np.flatnonzero(still & np.roll(still, -1))
        if triples.size:
            m = triples[0]
            raise ValueError(f"{where}: field 'control_frames' has three coincident frames in a row, "
                             f"[{(m - 1) % n}], [{m}] and [{(m + 1) % n}]: the spline stops there (S = 0, "
                             "so the mass matrix is singular); move them apart")

    def _local(self, q):
        """``(k, u)``: the segment index (0-based) and local parameter of the wrapped ``q``."""
        n = len(self.control_frames)
        x = q[0] - n * np.floor(q[0].real / n)
        k = min(int(np.floor(x.real)), n - 1)  # round-off can put x at n
        return k, x - k

    def _factors(self, q, third=False):
        k, u = self._local(q)
        n = len(self.control_frames)
        bt, dbt, ddbt = cumulative_basis(u)
        twists = self._dC[[(k + i) % n for i in (1, 2, 3)]]  # dC_{k+2..k+4}, 1-based
        factors = (self.control_frames[k], twists, bt[1:], dbt[1:, None], ddbt[1:, None, None])
        if third:  # d3 B~/du3 = _CUMULATIVE @ (0, 0, 0, 6), the same on the whole segment
            return factors + ((_CUMULATIVE @ _THIRD_POWERS)[1:, None, None, None] + 0.0 * u,)
        return factors

    def _Q(self, q):
        Q0, twists, w, _, _ = self._factors(q)
        Q = Q0.astype(np.result_type(Q0, w))
        for xi, wi in zip(twists, w, strict=True):
            Q = Q @ exp_se3(xi * wi)  # Eq. (2.74)
        return Q

    def _S(self, q):
        return product_of_exponentials(*self._factors(q))[1]

    def _Sdot(self, q, qdot):
        return self._evaluate(q, qdot)[2]

    def _evaluate(self, q, qdot):
        Q, S, dS = product_of_exponentials(*self._factors(q))
        return Q, S, dS[:, :, 0] * qdot[0]

    # --- Part 3: the Hessian of Alg. 3 and its derivative ----------------------------------
    def _dS_dq(self, q):
        return product_of_exponentials(*self._factors(q))[2]

    def _dSdot_dq(self, q, qdot):
        return product_of_exponentials(*self._factors(q, third=True))[3][:, :, 0, :] * qdot[0]

    def spec(self):
        return {"type": self.kind, "control_frames": self.control_frames}

    @classmethod
    def from_spec(cls, spec, where):
        if "control_frames" not in spec:
            raise ValueError(f"{where}: missing field 'control_frames'")
        raw = spec["control_frames"]
        try:
            frames = as_array(raw, None, "control_frames", real=True)
        except ValueError:
            raise ValueError(f"{where}: field 'control_frames' must be a list of 4x4 numeric "
                             f"transforms") from None
        return cls(frames, where)


#: The six basis twists of the spline surface (Eq. 2.77): translations x, y, z, then rotations.
_SURFACE_TWISTS = np.vstack([np.eye(6)[3:], np.eye(6)[:3]])


class SplineSurface(Joint):
    """A 2-dof joint on a tensor-product cubic B-spline patch (Eq. 2.75-2.78, Alg. 4).

    Six scalar fields ``f_k(q) = b(q2)^T C_k b(q1)`` (``b(u) = B (1, u, u^2, u^3)``, a single
    4x4 patch, no wrapping) drive ``Q = prod_k exp([e_k] f_k(q))`` with ``e_1..e_3`` the
    translations along x, y, z and ``e_4..e_6`` the rotations about x, y, z (Eq. 2.77), i.e.
    a translation followed by XYZ Euler angles.

    Parameters
    ----------
    control_values : array_like, shape (4, 4, 6)
        ``control_values[i1][i2][k]`` is entry ``(i1, i2)`` of ``C_k``; ``i1`` pairs with
        ``q2`` and ``i2`` with ``q1``. This is the layout of the reference code's
        ``controlValues`` (scene 22 of ``shared/reference/redmax_scenes``).
    where : str
        Names the joint in error messages.

    Examples
    --------
    A plane patch whose x grows with ``q1`` and y with ``q2`` (a cubic B-spline reproduces the
    linear data 0, 1, 2, 3 as ``1 + u``): a pure translation.

    >>> cv = np.zeros((4, 4, 6)); cv[:, :, 0] = np.arange(4); cv[:, :, 1] = np.arange(4)[:, None]
    >>> np.round(SplineSurface(cv).Q([0.4, 0.7])[:3, 3], 12)
    array([1.4, 1.7, 0. ])

    Taught in book/02_reduced/04d_composite_spline_joints.
    """

    kind = "spline_surface"
    spec_keys = ("control_values",)
    ndof = 2

    def __init__(self, control_values, where="spline_surface joint"):
        self.control_values = spec_array({"control_values": control_values}, "control_values",
                                         (4, 4, 6), where)
        scale = 1.0 + np.abs(self.control_values).max()
        for axis, (q, index) in enumerate((("q2", "i1"), ("q1", "i2"))):
            if np.ptp(self.control_values, axis=axis).max() <= _COINCIDENT * scale:
                raise ValueError(f"{where}: field 'control_values' does not change along its index {index}, "
                                 f"so {q} moves nothing (S has a zero column and the mass matrix is singular "
                                 "everywhere; all-zero data is one such patch)")
        self._C = np.moveaxis(self.control_values, 2, 0)  # C_k, shape (6, 4, 4)

    def _coordinates(self, x, name, real=False):
        x = super()._coordinates(x, name, real)
        if name == "q" and not np.abs(x.real).max() <= SURFACE_REACH:
            raise ValueError(f"argument 'q' of {self.kind} joint: {x.real.tolist()} lies beyond "
                             f"+-{SURFACE_REACH:g}, far outside the patch [0, 1]^2, where its cubic weights "
                             "(of order q^3) overflow")
        return x

    def _factors(self, q, third=False):
        b1, db1, ddb1 = bspline_weights(q[0])
        b2, db2, ddb2 = bspline_weights(q[1])
        C = self._C
        f = np.einsum("a,kab,b->k", b2, C, b1)  # Eq. (2.75)
        dw = np.stack([np.einsum("a,kab,b->k", b2, C, db1),  # Eq. (2.76)
                       np.einsum("a,kab,b->k", db2, C, b1)], axis=1)
        d12 = np.einsum("a,kab,b->k", db2, C, db1)
        ddw = np.empty((6, 2, 2), dtype=dw.dtype)
        ddw[:, 0, 0] = np.einsum("a,kab,b->k", b2, C, ddb1)
        ddw[:, 1, 1] = np.einsum("a,kab,b->k", ddb2, C, b1)
        ddw[:, 0, 1] = ddw[:, 1, 0] = d12
        factors = (np.eye(4), _SURFACE_TWISTS, f, dw, ddw)
        if not third:
            return factors
        # d3 f / dq_j dq_l dq_m: the derivative order in q1 is the count of zeros among (j, l, m)
        d1 = (b1, db1, ddb1, BSPLINE_BASIS @ _THIRD_POWERS + 0.0 * q[0])
        d2 = (b2, db2, ddb2, BSPLINE_BASIS @ _THIRD_POWERS + 0.0 * q[1])
        dddw = np.empty((6, 2, 2, 2), dtype=dw.dtype)
        for index in np.ndindex(2, 2, 2):
            n2 = sum(index)
            dddw[(slice(None),) + index] = np.einsum("a,kab,b->k", d2[n2], C, d1[3 - n2])
        return factors + (dddw,)

    def _Q(self, q):
        return self._evaluate(q, np.zeros(2))[0]

    def _S(self, q):
        return self._evaluate(q, np.zeros(2))[1]

    def _Sdot(self, q, qdot):
        return self._evaluate(q, qdot)[2]

    def _evaluate(self, q, qdot):
        Q, S, dS = product_of_exponentials(*self._factors(q))  # Alg. 4
        return Q, S, dS @ qdot

    # --- Part 3: the Hessian of Alg. 4 and its derivative ----------------------------------
    def _dS_dq(self, q):
        return product_of_exponentials(*self._factors(q))[2]

    def _dSdot_dq(self, q, qdot):
        ddS = product_of_exponentials(*self._factors(q, third=True))[3]
        return np.einsum("ajlm,l->ajm", ddS, qdot)

    def spec(self):
        return {"type": self.kind, "control_values": self.control_values}

    @classmethod
    def from_spec(cls, spec, where):
        return cls(spec_array(spec, "control_values", (4, 4, 6), where), where)
