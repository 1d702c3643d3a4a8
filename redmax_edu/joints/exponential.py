"""The spherical joint in exponential coordinates, §2.4.8: ``R = exp([q])``.

The rotation vector ``q`` (axis times angle) has no gimbal lock; its only singularities are
the shells ``|q| = 2 pi k`` where every direction gives the identity (Grassia 1998). The
joint Jacobian is the writeup's ``[S_j] = R^T dR/dq_j`` (Eq. 2.48-2.49), which works out to
the right Jacobian of SO(3),

    S = J_r(q) = I - a(t) [q] + b(t) [q]^2,   a = (1 - cos t)/t^2,   b = (t - sin t)/t^3,

with ``t = |q|``. Its time derivative (the role of Eq. 2.51-2.52) follows by the product rule,
with the coefficients differentiated in ``s = t^2 = q.q`` so that ``ds/dt = 2 q.qdot`` needs
no division by ``t``:

    Sdot = -a [qdot] + b ([qdot][q] + [q][qdot]) + (2 q.qdot) (-a'(s) [q] + b'(s) [q]^2).

Near ``t = 0`` the four coefficients come from their Taylor series (the limit of Eq. 2.48 at
``q = 0`` is ``S = I``); elsewhere from the closed forms, which lose no accuracy to cancellation
once ``t`` exceeds ``_SERIES_BELOW``.

Part 3 (§3.2.7) differentiates S once more. Along a direction u, with ``V = [v]``,

    dS/dq_k = -a [e_k] + b ([e_k][q] + [q][e_k]) + 2 q_k (-a' [q] + b' [q]^2),

the Sdot formula with qdot = e_k, and the derivative of Sdot at fixed qdot needs the second
derivatives ``a''(s)``, ``b''(s)`` (:func:`exp_second_derivatives`, series below
``_SERIES2_BELOW``). These closed forms replace the writeup's route through ``dR/dq_k``
(Eq. 3.32-3.38), which divides by ``q.q`` and so is singular at the rest pose q = 0, where
simulations usually start. The derivative methods refuse ``|q|`` at a nonzero multiple of
2 pi, where ``det S = 2 a`` vanishes.

Taught in book/02_reduced/04c_exponential_joints.
"""

import math

import numpy as np

from ..lie import SINGULAR_DET, exp_so3, hat_unchecked
from .base import GENERATORS, Joint

__all__ = ["SphericalExp", "REPARAM_ANGLE", "MAX_ANGLE", "exp_coefficients", "exp_second_derivatives"]

#: Exponential coordinates are shortened when ``|q|`` exceeds this angle (1.5 pi, as in the
#: reference RedMax code): ``q <- (1 - 2 pi/|q|) q`` gives the same rotation with
#: ``|q_new| = 2 pi - |q| < pi/2``. Triggering at 1.5 pi rather than pi leaves a wide band
#: of hysteresis (no switching back and forth near pi) while ``det S = 2 (1 - cos t)/t^2``
#: is still 0.09 there, far from the singular shell at 2 pi.
REPARAM_ANGLE = 1.5 * np.pi

#: Longest rotation vector :meth:`SphericalExp.reparameterize` shortens: reducing ``|q|`` modulo
#: the double nearest 2 pi shifts the angle by about ``|q|`` 4e-17, 4e-11 rad here.
MAX_ANGLE = 1e6

# Below this |q| the coefficients use their series. The closed forms of a'(s) and b'(s) lose
# about eps/t^4 and eps/t^2 of absolute accuracy to cancellation: 3e-15 at t = 0.5. Nine
# terms of the series reach 1e-19 there.
_SERIES_BELOW = 0.5
# The second derivatives a''(s), b''(s) lose about 90 eps/t^6 of relative accuracy in closed
# form (1e-14 at t = 1, 2e-15 at 1.5); below 1.5 their series, with 13 terms, stays under 1e-21.
_SERIES2_BELOW = 1.5
_EYE3 = np.eye(3)
_EYE3.setflags(write=False)
_TERMS = 9
_TERMS2 = 13


def _series_terms(offset, order, count):
    """The ``(coefficient, power)`` pairs of the ``order``-th derivative in s of
    ``sum_k (-1)^k s^k/(2k + offset)!``, k < count."""
    terms = []
    for k in range(order, count):
        coef = (-1) ** k / math.factorial(2 * k + offset) * math.perm(k, order)  # k (k-1) ... (k-order+1)
        terms.append((coef, k - order))
    return tuple(terms)


#: The terms of the six series of :func:`exp_coefficients` and :func:`exp_second_derivatives`.
_SERIES_TERMS = {(offset, order): _series_terms(offset, order, _TERMS2 if order == 2 else _TERMS)
                 for offset in (2, 3) for order in (0, 1, 2)}


def _series(s, offset, order):
    """``sum_k (-1)^k s^k/(2k + offset)!`` (order 0) or its derivative of that order in s."""
    total = 0.0 * s
    for coef, power in _SERIES_TERMS[offset, order]:
        total = total + coef * s**power
    return total


def exp_coefficients(s):
    """``a, b, a', b'``: the coefficients of ``J_r`` and their derivatives in ``s = |q|^2``.

    ``a = (1 - cos t)/t^2``, ``b = (t - sin t)/t^3`` with ``t = sqrt(s)``; series below
    ``t = 0.5`` (``a = 1/2 - s/24 + ...``, ``b = 1/6 - s/120 + ...``). Complex ``s`` is
    accepted for the complex step.

    Parameters
    ----------
    s : float or complex
        ``q . q`` (no conjugation).

    Returns
    -------
    tuple of 4 scalars

    Examples
    --------
    >>> [round(float(x), 12) for x in exp_coefficients(0.0)]
    [0.5, 0.166666666667, -0.041666666667, -0.008333333333]

    Taught in book/02_reduced/04c_exponential_joints.
    """
    if isinstance(s, np.generic):
        s = s.item()  # a Python scalar: the dozens of scalar operations of the series run faster
    if abs(s.real if hasattr(s, "real") else s) < _SERIES_BELOW**2:
        return _series(s, 2, 0), _series(s, 3, 0), _series(s, 2, 1), _series(s, 3, 1)
    t = np.sqrt(s)
    sn, cs = np.sin(t), np.cos(t)
    a = (1 - cs) / s
    b = (t - sn) / (s * t)
    da = (t * sn - 2 * (1 - cs)) / (2 * s * s)  # d/ds of (1 - cos t)/t^2
    db = (t * (1 - cs) - 3 * (t - sn)) / (2 * s * s * t)  # d/ds of (t - sin t)/t^3
    return a, b, da, db


def exp_second_derivatives(s):
    """``a''(s), b''(s)``: the second derivatives in ``s = |q|^2`` of the coefficients of ``J_r``.

    ``a'' = (t^2 cos t - 5 t sin t + 8 (1 - cos t)) / (4 s^3)`` and
    ``b'' = (t^2 sin t + 7 t cos t + 8 t - 15 sin t) / (4 s^3 t)`` with ``t = sqrt(s)``; below
    ``t = 1.5`` their series ``a'' = 1/360 - s/6720 + ...``, ``b'' = 1/2520 - s/60480 + ...``.
    They enter ``dSdot/dq`` of exponential coordinates (§3.2.7). Complex ``s`` is accepted.

    Parameters
    ----------
    s : float or complex
        ``q . q`` (no conjugation).

    Returns
    -------
    tuple of 2 scalars

    Examples
    --------
    >>> [round(float(x) * 2520, 12) for x in exp_second_derivatives(0.0)]
    [7.0, 1.0]
    """
    if isinstance(s, np.generic):
        s = s.item()
    if abs(s.real if hasattr(s, "real") else s) < _SERIES2_BELOW**2:
        return _series(s, 2, 2), _series(s, 3, 2)
    t = np.sqrt(s)
    sn, cs = np.sin(t), np.cos(t)
    dda = (s * cs - 5 * t * sn + 8 * (1 - cs)) / (4 * s**3)
    ddb = (s * sn + 7 * t * cs + 8 * t - 15 * sn) / (4 * s**3 * t)
    return dda, ddb


class SphericalExp(Joint):
    """A ball joint in exponential coordinates: ``R = exp([q])``, ``S = (J_r(q); 0)`` (Eq. 2.47-2.52).

    ``S qdot`` is the angular velocity of the child in its own frame. :meth:`reparameterize`
    keeps ``|q| <= REPARAM_ANGLE`` (Grassia's 2 pi shift). Part 3's ``Q``, ``A`` (Eq. 3.31), ``dA/dq``
    (Eq. 3.32), ``S`` (Eq. 3.33) and ``dS/dq`` (Eq. 3.34) come from ``S`` in closed form (see the
    module docstring), not through the writeup's ``dR/dq``, which divides by ``q.q``.

    Examples
    --------
    >>> j = SphericalExp()
    >>> np.allclose(j.S([0.0, 0.0, 0.0])[:3], np.eye(3))     # the limit q -> 0
    True
    >>> q = np.array([0.0, 0.0, 0.7])                         # about a fixed axis: S q = q
    >>> np.allclose(j.S(q) @ q, [0, 0, 0.7, 0, 0, 0])
    True

    Taught in book/02_reduced/04c_exponential_joints.
    """

    kind = "spherical_exp"
    ndof = 3
    has_charts = True

    def _Q(self, q):
        Q = np.eye(4, dtype=q.dtype)
        Q[:3, :3] = exp_so3(q)  # Eq. (2.47)
        return Q

    def _S(self, q):
        a, b, _, _ = exp_coefficients(q @ q)
        K = hat_unchecked(q)
        S = np.zeros((6, 3), dtype=q.dtype)
        S[:3] = np.eye(3) - a * K + b * (K @ K)  # J_r(q): Eq. (2.48)-(2.49) simplified
        return S

    def _Sdot(self, q, qdot):
        return self._evaluate(q, qdot)[2]

    def _evaluate(self, q, qdot):
        s, sdot = q @ q, 2 * (q @ qdot)
        a, b, da, db = exp_coefficients(s)
        K, Kd = hat_unchecked(q), hat_unchecked(qdot)
        K2 = K @ K
        Q = np.eye(4, dtype=q.dtype)
        Q[:3, :3] += (1 - s * b) * K + a * K2  # Rodrigues (Eq. 1.10) with sin(t)/t = 1 - t^2 b
        S = np.zeros((6, 3), dtype=q.dtype)
        S[:3] = _EYE3 - a * K + b * K2
        Sd = np.zeros((6, 3), dtype=np.result_type(q, qdot))
        Sd[:3] = -a * Kd + b * (Kd @ K + K @ Kd) + sdot * (-da * K + db * K2)
        return Q, S, Sd

    # --- Part 3: §3.2.7 in closed form ---------------------------------------------------
    def _dS_dq(self, q):
        a, b, da, db = exp_coefficients(q @ q)
        K = hat_unchecked(q)
        EK, KE = np.einsum("abk,bc->ack", GENERATORS, K), np.einsum("ab,bck->ack", K, GENERATORS)
        H = np.zeros((6, 3, 3), dtype=q.dtype)
        # [:, j, k]: column j of -a [e_k] + b ([e_k][q] + [q][e_k]) + 2 q_k (-a' [q] + b' [q]^2)
        H[:3] = -a * GENERATORS + b * (EK + KE) + 2 * (-da * K + db * (K @ K))[:, :, None] * q
        return H

    def _dSdot_dq(self, q, qdot):
        s, qv = q @ q, q @ qdot
        a, b, da, db = exp_coefficients(s)
        dda, ddb = exp_second_derivatives(s)
        K, V = hat_unchecked(q), hat_unchecked(qdot)
        K2 = K @ K
        EK, KE = np.einsum("abk,bc->ack", GENERATORS, K), np.einsum("ab,bck->ack", K, GENERATORS)
        EV, VE = np.einsum("abk,bc->ack", GENERATORS, V), np.einsum("ab,bck->ack", V, GENERATORS)
        # d/dq_k of Sdot = -a V + b (VK + KV) + 2 (q.qdot) (-a' K + b' K^2), term by term:
        along_q = -2 * da * V + 2 * db * (V @ K + K @ V) + 4 * qv * (-dda * K + ddb * K2)  # times q_k
        along_qdot = 2 * (-da * K + db * K2)  # times qdot_k, from d(q.qdot)/dq_k
        G = np.zeros((6, 3, 3), dtype=np.result_type(q, qdot))
        G[:3] = (along_q[:, :, None] * q + along_qdot[:, :, None] * qdot + b * (VE + EV)
                 + 2 * qv * (-da * GENERATORS + db * (EK + KE)))
        return G

    def _singularity(self, q):
        qr = q.real
        det = 2 * exp_coefficients(qr @ qr)[0]  # det J_r = 2 (1 - cos t)/t^2
        if det < SINGULAR_DET:
            return (f"|q| = {np.linalg.norm(qr):.6f} is a nonzero multiple of 2 pi, where every axis gives "
                    f"the same rotation (det S = {float(det):.2g})")
        return None

    def reparameterize(self, q, qdot):
        """Shorten ``q`` past ``REPARAM_ANGLE``: ``q <- (1 - 2 pi/|q|) q``, keeping R and ``S qdot``.

        Past ``3.5 pi`` the shift is applied in closed form (``|q|`` reduced modulo ``2 pi``
        in one step), so a huge rotation vector does not loop; the velocity becomes
        ``qdot_new = S(q_new)^-1 S(q_old) qdot_old`` (§2.4.8), so the angular velocity is the same.

        Parameters
        ----------
        q, qdot : array_like, shape (3,)

        Returns
        -------
        joint : SphericalExp
            ``self`` (the joint has no chart to change).
        q, qdot : ndarray, shape (3,)

        Examples
        --------
        >>> j = SphericalExp()
        >>> _, q, qd = j.reparameterize([0.0, 0.0, 5.0], [0.0, 0.0, 1.0])
        >>> np.round(q, 6) + 0.0, np.round(qd, 6) + 0.0
        (array([ 0.      ,  0.      , -1.283185]), array([0., 0., 1.]))
        """
        return super().reparameterize(q, qdot)

    def _reparameterize(self, q, qdot):
        q_in = q
        norm = float(np.linalg.norm(q))
        if norm <= REPARAM_ANGLE:
            return self, q, qdot
        if norm > MAX_ANGLE:
            raise ValueError(f"argument 'q' of spherical_exp joint: a rotation vector of length {norm:.3g} "
                             f"rad (above {MAX_ANGLE:g}) has lost its angle to rounding (the spacing of "
                             "doubles there is too coarse for the rotation); start from a q with |q| < 2 pi")
        omega = self._S(q)[:3] @ qdot
        q = (1.0 - 2.0 * np.pi / norm) * q
        new_norm = float(np.linalg.norm(q))
        if new_norm > REPARAM_ANGLE:
            # |q| beyond 3.5 pi: repeating the shift would take |q|/(2 pi) steps (and never end
            # once 2 pi is below the spacing of doubles near |q|). Reduce |q| modulo 2 pi in one
            # step instead, into (-pi/2, 1.5 pi] along the same axis.
            r = math.fmod(norm, 2.0 * np.pi)
            if r > REPARAM_ANGLE:
                r -= 2.0 * np.pi
            q = (r / norm) * q_in
        return self, q, np.linalg.solve(self._S(q)[:3], omega)
