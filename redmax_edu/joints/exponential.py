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

Taught in book/02_reduced/04c_exponential_joints.
"""

import math

import numpy as np

from ..lie import exp_so3, hat_unchecked
from .base import Joint

__all__ = ["SphericalExp", "REPARAM_ANGLE", "MAX_ANGLE", "exp_coefficients"]

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
_EYE3 = np.eye(3)
_EYE3.setflags(write=False)
_TERMS = 9


def _series_terms(offset, derivative):
    """The ``(coefficient, power)`` pairs of ``sum_k (-1)^k s^k/(2k + offset)!`` or of its derivative in s."""
    terms = []
    for k in range(int(derivative), _TERMS):
        coef = (-1) ** k / math.factorial(2 * k + offset)
        terms.append((coef * k, k - 1) if derivative else (coef, k))
    return tuple(terms)


#: The terms of the four series of :func:`exp_coefficients`, computed once.
_SERIES_TERMS = {(offset, derivative): _series_terms(offset, derivative)
                 for offset in (2, 3) for derivative in (False, True)}


def _series(s, offset, derivative):
    """``sum_k (-1)^k s^k/(2k + offset)!`` (derivative=False) or its derivative in s."""
    total = 0.0 * s
    for coef, power in _SERIES_TERMS[offset, derivative]:
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
        return _series(s, 2, False), _series(s, 3, False), _series(s, 2, True), _series(s, 3, True)
    t = np.sqrt(s)
    sn, cs = np.sin(t), np.cos(t)
    a = (1 - cs) / s
    b = (t - sn) / (s * t)
    da = (t * sn - 2 * (1 - cs)) / (2 * s * s)  # d/ds of (1 - cos t)/t^2
    db = (t * (1 - cs) - 3 * (t - sn)) / (2 * s * s * t)  # d/ds of (t - sin t)/t^3
    return a, b, da, db


class SphericalExp(Joint):
    """A ball joint in exponential coordinates: ``R = exp([q])``, ``S = (J_r(q); 0)`` (Eq. 2.47-2.52).

    ``S qdot`` is the angular velocity of the child in its own frame. :meth:`reparameterize`
    keeps ``|q| <= REPARAM_ANGLE`` (Grassia's 2 pi shift).

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
