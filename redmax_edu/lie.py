"""Rotations and rigid transforms: the Lie groups SO(3), SE(3) and their algebras so(3), se(3).

This module is §1.1-1.5 of the writeup as code. Conventions (see the book's conventions page):

* A twist is ``phi = (omega, nu)``, angular part first, both in body coordinates (Eq. 1.5).
  A wrench is ``(tau, f)`` in the same order, so that power is ``wrench @ phi``.
* ``E_a_b`` is frame b expressed in frame a: it maps b-coordinates to a-coordinates.

The exponential and logarithm maps use closed forms whose coefficients are evaluated with
Taylor series near zero angle and with a symmetric-part formula near pi, so they stay
accurate to a few ulps at angles 0, 1e-8, pi - 1e-8 and pi. ``brac``, ``exp_so3``,
``exp_se3``, ``adjoint``, ``ad``, ``adjoint_dot`` and ``gamma`` also accept complex input,
so they can be differentiated by the complex step (see :mod:`redmax_edu.checks`).

Taught in book/01_maximal (§1.1-1.5).
"""

import numpy as np

from ._validate import as_array, as_rotation, as_transform

__all__ = [
    "brac", "unbrac", "exp_so3", "log_so3", "exp_se3", "log_se3", "inv_se3",
    "left_jacobian_so3", "left_jacobian_inverse_so3", "right_jacobian_so3", "right_jacobian_inverse_so3",
    "adjoint", "ad", "adjoint_dot", "gamma", "material_jacobian", "screw",
    "random_rotation", "random_transform", "SINGULAR_DET",
    "hat_unchecked", "adjoint_unchecked", "ad_unchecked", "inv_se3_unchecked",
]

#: Where a coordinate chart is singular, sqrt(machine epsilon) ~ 1.5e-8 is the smallest value
#: accepted of the quantity that vanishes there: the smallest singular value of ``J_l(w)``,
#: ``2 |sin(|w|/2)| / |w|``, for the inverse Jacobians of SO(3) (it vanishes on the shells
#: ``|w| = 2 pi k``, and the inverse's entries grow like its reciprocal), and ``|det S|`` (of the
#: rotational 3x3 block) for the joints' derivative methods (:mod:`redmax_edu.joints`).
#: Mathematically S stays smooth through a singularity, but the reduced inertia ``S^T M S``
#: there has a condition number of order ``1/det(S)^2 > 1/eps``: accelerations, and every
#: derivative of them that Part 3 builds from the joint derivatives, are numerically undefined.
#: A joint's ``reparameterize`` moves it off the singularity (its switch threshold is far above
#: this one).
SINGULAR_DET = float(np.sqrt(np.finfo(float).eps))

# Below this angle the closed-form coefficients are replaced by their Taylor series. At
# 1e-2 the first omitted term is below 1e-21 and the closed forms lose at most ~1e-11 of
# relative accuracy to cancellation, which the small factors they multiply make harmless.
_SMALL_ANGLE = 1e-2


def _sin_over(t):
    """sin(t) / t."""
    if abs(t.real) < _SMALL_ANGLE:
        t2 = t * t
        return 1 - t2 / 6 * (1 - t2 / 20 * (1 - t2 / 42))
    return np.sin(t) / t


def _one_minus_cos_over(t):
    """(1 - cos t) / t^2, written as 2 sin^2(t/2) / t^2 to avoid cancellation."""
    h = _sin_over(t / 2)
    return 0.5 * h * h


def _t_minus_sin_over(t):
    """(t - sin t) / t^3."""
    t2 = t * t
    if abs(t.real) < _SMALL_ANGLE:
        return 1 / 6 - t2 / 120 + t2 * t2 / 5040 - t2 * t2 * t2 / 362880
    return (t - np.sin(t)) / (t2 * t)


def _vinv_coefficient(t):
    """(1 - (t/2) cot(t/2)) / t^2, the [w]^2 coefficient of the inverse of V in log_se3."""
    t2 = t * t
    if abs(t) < _SMALL_ANGLE:
        return 1 / 12 + t2 / 720 + t2 * t2 / 30240 + t2 * t2 * t2 / 1209600
    half = t / 2
    return (1 - half * np.cos(half) / np.sin(half)) / t2


def _hat3(w):
    """The 3x3 cross-product matrix of a validated 3-vector (Eq. 1.7)."""
    W = np.array([[0, -w[2], w[1]], [w[2], 0, -w[0]], [-w[1], w[0], 0]], dtype=w.dtype)
    return W + 0.0  # turns the -0.0 of negated zeros into 0.0, for readable printouts


def brac(v):
    """The bracket: a 3-vector to its cross-product matrix, a twist to its 4x4 matrix.

    Eq. (1.7) for so(3): ``brac(a) @ b == cross(a, b)``. Eq. (1.6) for se(3):
    ``brac(phi) = [[brac(omega), nu], [0, 0]]``.

    Parameters
    ----------
    v : array_like, shape (3,) or (6,)
        A vector in so(3) or a twist ``(omega, nu)`` in se(3).

    Returns
    -------
    ndarray, shape (3, 3) or (4, 4)

    Examples
    --------
    >>> brac([1.0, 2.0, 3.0])
    array([[ 0., -3.,  2.],
           [ 3.,  0., -1.],
           [-2.,  1.,  0.]])
    >>> brac([0, 0, 1, 4, 5, 6])
    array([[ 0., -1.,  0.,  4.],
           [ 1.,  0.,  0.,  5.],
           [ 0.,  0.,  0.,  6.],
           [ 0.,  0.,  0.,  0.]])

    Taught in book/01_maximal/02_velocity.
    """
    v = as_array(v, ((3,), (6,)), "v")
    if v.shape == (3,):
        return _hat3(v)
    out = np.zeros((4, 4), dtype=v.dtype)
    out[:3, :3] = _hat3(v[:3])
    out[:3, 3] = v[3:]
    return out


def unbrac(S):
    """Inverse of :func:`brac`: a 3x3 skew matrix to a 3-vector, a 4x4 se(3) matrix to a twist.

    The skew-symmetric part ``(S - S^T) / 2`` of the rotational block is read, so a matrix
    that is skew only up to round-off (such as ``R^T dR`` from finite differences) gives the
    nearest vector rather than whichever entries happen to be picked.

    Parameters
    ----------
    S : array_like, shape (3, 3) or (4, 4)

    Returns
    -------
    ndarray, shape (3,) or (6,)

    Examples
    --------
    >>> unbrac(brac([1.0, 2.0, 3.0]))
    array([1., 2., 3.])
    >>> unbrac(brac([1, 2, 3, 4, 5, 6]))
    array([1., 2., 3., 4., 5., 6.])

    Taught in book/01_maximal/02_velocity.
    """
    S = as_array(S, ((3, 3), (4, 4)), "S")
    W = 0.5 * (S[:3, :3] - S[:3, :3].T)
    w = np.array([W[2, 1], W[0, 2], W[1, 0]])
    if S.shape == (3, 3):
        return w
    return np.concatenate([w, S[:3, 3]])


def exp_so3(w):
    """The exponential map so(3) -> SO(3) (Eq. 1.10), by Rodrigues' formula.

    ``R = I + (sin t / t) [w] + ((1 - cos t) / t^2) [w]^2`` with ``t = |w|``: the rotation by
    angle ``t`` about the axis ``w / t``, reached by spinning at angular velocity ``w`` for
    one unit of time.

    Parameters
    ----------
    w : array_like, shape (3,)
        Rotation vector (axis times angle), real or complex.

    Returns
    -------
    ndarray, shape (3, 3)

    Examples
    --------
    >>> np.round(exp_so3([0, 0, np.pi / 2]), 12) + 0.0
    array([[ 0., -1.,  0.],
           [ 1.,  0.,  0.],
           [ 0.,  0.,  1.]])

    Taught in book/01_maximal/03_exp_log.
    """
    w = as_array(w, (3,), "w")
    t = np.sqrt(w @ w)  # not np.linalg.norm: this stays analytic for the complex step
    W = _hat3(w)
    return np.eye(3) + _sin_over(t) * W + _one_minus_cos_over(t) * (W @ W)


def log_so3(R):
    """The logarithm SO(3) -> so(3) (Eq. 1.10): the rotation vector ``w`` with ``|w| <= pi``.

    The angle is ``atan2(sin t, cos t)``, well conditioned everywhere. For angles up to
    pi/2 the axis is read from the skew part of R; beyond, from its symmetric part
    ``(R + R^T)/2 - cos t I = (1 - cos t) n n^T``, which stays accurate up to pi, where the
    skew part vanishes. At exactly pi both ``+pi n`` and ``-pi n`` are logarithms; the one
    whose largest axis component is positive is returned.

    Parameters
    ----------
    R : array_like, shape (3, 3)
        A rotation matrix (``R^T R = I`` within ``ROTATION_TOL``, ``det R = 1``).

    Returns
    -------
    ndarray, shape (3,)

    Examples
    --------
    >>> w = np.array([0.3, -0.2, 0.9])
    >>> bool(np.allclose(log_so3(exp_so3(w)), w, rtol=0, atol=1e-14))
    True

    Taught in book/01_maximal/03_exp_log.
    """
    R = as_rotation(R, "R")
    s = 0.5 * np.array([R[2, 1] - R[1, 2], R[0, 2] - R[2, 0], R[1, 0] - R[0, 1]])  # sin(t) n
    c = 0.5 * (np.trace(R) - 1.0)  # cos(t)
    sin_t = np.linalg.norm(s)
    t = np.arctan2(sin_t, c)
    if c > 0:
        return s / _sin_over(t)
    B = 0.5 * (R + R.T) - c * np.eye(3)  # (1 - cos t) n n^T
    k = int(np.argmax(np.diag(B)))
    n = B[:, k] / np.sqrt(B[k, k] * (1.0 - c))
    if n @ s < 0:
        n = -n
    return t * n


def exp_se3(phi):
    """The exponential map se(3) -> SE(3) (Eq. 1.10): the pose reached by twist ``phi`` in unit time.

    ``E = [[exp(w), V nu], [0, 1]]`` with ``V = I + ((1 - cos t)/t^2) [w] + ((t - sin t)/t^3) [w]^2``
    (Murray, Li and Sastry, Example A.12).

    Parameters
    ----------
    phi : array_like, shape (6,)
        Twist ``(omega, nu)``, real or complex.

    Returns
    -------
    ndarray, shape (4, 4)

    Examples
    --------
    Half a turn about z while moving 1 along z traces half a turn of a screw:

    >>> E = exp_se3([0, 0, np.pi, 0, 0, 1])
    >>> np.round(E, 12) + 0.0
    array([[-1.,  0.,  0.,  0.],
           [ 0., -1.,  0.,  0.],
           [ 0.,  0.,  1.,  1.],
           [ 0.,  0.,  0.,  1.]])

    Taught in book/01_maximal/03_exp_log.
    """
    phi = as_array(phi, (6,), "phi")
    w, nu = phi[:3], phi[3:]
    t = np.sqrt(w @ w)
    W = _hat3(w)
    W2 = W @ W
    b = _one_minus_cos_over(t)
    E = np.zeros((4, 4), dtype=phi.dtype)
    E[:3, :3] = np.eye(3) + _sin_over(t) * W + b * W2
    E[:3, 3] = (np.eye(3) + b * W + _t_minus_sin_over(t) * W2) @ nu  # V = left_jacobian_so3(w)
    E[3, 3] = 1.0
    return E


def log_se3(E):
    """The logarithm SE(3) -> se(3) (Eq. 1.10): the twist ``phi`` with ``exp_se3(phi) = E``.

    The rotation part is :func:`log_so3` (so ``|omega| <= pi``); the linear part solves
    ``V nu = p`` with the closed-form inverse ``V^-1 = I - [w]/2 + ((1 - (t/2) cot(t/2))/t^2) [w]^2``.

    Parameters
    ----------
    E : array_like, shape (4, 4)
        A rigid transform.

    Returns
    -------
    ndarray, shape (6,)

    Examples
    --------
    >>> phi = np.array([0.1, 0.2, -0.3, 1.0, -2.0, 0.5])
    >>> bool(np.allclose(log_se3(exp_se3(phi)), phi, rtol=0, atol=1e-14))
    True

    Taught in book/01_maximal/03_exp_log.
    """
    E = as_transform(E, "E")
    w = log_so3(E[:3, :3])
    return np.concatenate([w, _left_jacobian_inverse(w) @ E[:3, 3]])


def _left_jacobian_inverse(w):
    W = _hat3(w)  # (log_se3 passes |w| <= pi, far from the singular shells)
    return np.eye(3) - 0.5 * W + _vinv_coefficient(np.sqrt(w @ w)) * (W @ W)


def left_jacobian_so3(w):
    """The left Jacobian of SO(3): ``exp([w + d]) = exp([J_l(w) d]) exp([w])`` to first order in d.

    ``J_l(w) = I + ((1 - cos t)/t^2) [w] + ((t - sin t)/t^3) [w]^2`` with ``t = |w|``. It is also
    the matrix V of :func:`exp_se3`, which maps the linear part of a twist to the
    translation it produces, and the inverse of the map U of the ArtiSynth notes (Eq. 0.45)
    that turns an angular velocity in the base frame into the rate of the rotation vector.

    Parameters
    ----------
    w : array_like, shape (3,)
        Rotation vector, real or complex.

    Returns
    -------
    ndarray, shape (3, 3)

    Examples
    --------
    >>> w, d = np.array([0.4, -1.0, 0.3]), 1e-7 * np.array([1.0, 2.0, -1.0])
    >>> lhs = exp_so3(w + d)
    >>> rhs = exp_so3(left_jacobian_so3(w) @ d) @ exp_so3(w)
    >>> bool(np.allclose(lhs, rhs, rtol=0, atol=1e-13))
    True

    Taught in book/01_maximal/09_forces.
    """
    w = as_array(w, (3,), "w")
    t = np.sqrt(w @ w)
    W = _hat3(w)
    return np.eye(3) + _one_minus_cos_over(t) * W + _t_minus_sin_over(t) * (W @ W)


def left_jacobian_inverse_so3(w):
    """The inverse of :func:`left_jacobian_so3`: ``I - [w]/2 + ((1 - (t/2) cot(t/2))/t^2) [w]^2``.

    It turns an angular velocity (or small rotation) applied on the left, in the base frame,
    into the rate of change of the rotation vector: ``d/dt log(R) = J_l^-1 omega`` when
    ``dR/dt = [omega] R``. Singular on the shells ``|w| = 2 pi k`` (k >= 1), where it raises a
    ValueError (within :data:`SINGULAR_DET`); ``log_so3`` never returns such angles.

    Parameters
    ----------
    w : array_like, shape (3,)

    Returns
    -------
    ndarray, shape (3, 3)

    Examples
    --------
    >>> w = np.array([0.4, -1.0, 0.3])
    >>> bool(np.allclose(left_jacobian_inverse_so3(w) @ left_jacobian_so3(w), np.eye(3)))
    True

    Taught in book/01_maximal/09_forces.
    """
    return _left_jacobian_inverse(_off_the_shells(as_array(w, (3,), "w")))


def _off_the_shells(w):
    """``w``, or a ValueError if ``J_l(w)`` is singular to working precision: on (or within round-off
    of) a shell ``|w| = 2 pi k``, k >= 1, where its inverse's closed form divides by ``sin(|w|/2)``."""
    t = float(np.linalg.norm(np.real(w)))
    sigma = abs(float(_sin_over(t / 2)))  # the smallest singular value of J_l(w), 2 |sin(t/2)| / t
    if sigma < SINGULAR_DET:
        raise ValueError(f"argument 'w': |w| = {t:.6g} = {t / (2 * np.pi):.6g} x 2 pi, where the inverse "
                         "Jacobian of SO(3) does not exist: the smallest singular value of J(w), "
                         f"2 |sin(|w|/2)| / |w| = {sigma:.2g}, is below {SINGULAR_DET:.2g}; "
                         "w (1 - 2 pi/|w|) is the same rotation, off the shell")
    return w


def right_jacobian_so3(w):
    """The right Jacobian of SO(3): ``exp([w + d]) = exp([w]) exp([J_r(w) d])`` to first order in d.

    ``J_r(w) = J_l(-w) = J_l(w)^T``. It maps the rate of a rotation vector to the body-frame
    angular velocity: if ``R = exp([w(t)])`` then ``R^T dR/dt = [J_r(w) dw/dt]``, which is why
    it reappears as the motion subspace of a spherical joint in exponential coordinates.

    Parameters
    ----------
    w : array_like, shape (3,)

    Returns
    -------
    ndarray, shape (3, 3)

    Examples
    --------
    >>> w, d = np.array([0.4, -1.0, 0.3]), 1e-7 * np.array([1.0, 2.0, -1.0])
    >>> lhs, rhs = exp_so3(w + d), exp_so3(w) @ exp_so3(right_jacobian_so3(w) @ d)
    >>> bool(np.allclose(lhs, rhs, rtol=0, atol=1e-13))
    True

    Taught in book/01_maximal/09_forces.
    """
    return left_jacobian_so3(-as_array(w, (3,), "w"))


def right_jacobian_inverse_so3(w):
    """The inverse of :func:`right_jacobian_so3`: ``log(exp([w]) exp([xi])) = w + J_r^-1(w) xi + O(xi^2)``.

    Singular, and refused, where :func:`left_jacobian_inverse_so3` is.

    Parameters
    ----------
    w : array_like, shape (3,)

    Returns
    -------
    ndarray, shape (3, 3)

    Examples
    --------
    >>> w, xi = np.array([0.4, -1.0, 0.3]), 1e-7 * np.array([1.0, 2.0, -1.0])
    >>> lhs = log_so3(exp_so3(w) @ exp_so3(xi))
    >>> bool(np.allclose(lhs, w + right_jacobian_inverse_so3(w) @ xi, rtol=0, atol=1e-13))
    True

    Taught in book/01_maximal/09_forces.
    """
    return _left_jacobian_inverse(-_off_the_shells(as_array(w, (3,), "w")))


def inv_se3(E):
    """The inverse of a rigid transform by Eq. (1.4): ``[[R^T, -R^T p], [0, 1]]``.

    Parameters
    ----------
    E : array_like, shape (4, 4)
        ``E_a_b``, frame b in frame a.

    Returns
    -------
    ndarray, shape (4, 4)
        ``E_b_a``.

    Examples
    --------
    >>> E = exp_se3([0.3, 0.2, 0.1, 1.0, 2.0, 3.0])
    >>> bool(np.allclose(inv_se3(E) @ E, np.eye(4), rtol=0, atol=1e-15))
    True

    Taught in book/01_maximal/01_position.
    """
    E = as_transform(E, "E")
    Rt = E[:3, :3].T
    out = np.eye(4, dtype=E.dtype)
    out[:3, :3] = Rt
    out[:3, 3] = -Rt @ E[:3, 3]
    return out


def adjoint(E):
    """The adjoint of a rigid transform (Eq. 1.14): maps twists from frame b to frame a.

    ``A = [[R, 0], [[p] R, R]]``, so that ``phi_a = adjoint(E_a_b) @ phi_b`` (Eq. 1.15) and
    wrenches go the other way, ``w_b = adjoint(E_a_b).T @ w_a``.

    Parameters
    ----------
    E : array_like, shape (4, 4)
        ``E_a_b``.

    Returns
    -------
    ndarray, shape (6, 6)
        ``A_a_b``.

    Examples
    --------
    The writeup's example: a body at (1, 0, 0) spinning about its own y axis has, seen from
    the world, a linear velocity (0, 0, 1) that cancels the spin about the world origin.

    >>> E = np.eye(4); E[:3, 3] = [1, 0, 0]
    >>> adjoint(E) @ [0, 1, 0, 0, 0, 0]
    array([0., 1., 0., 0., 0., 1.])

    Taught in book/01_maximal/05_adjoint.
    """
    return adjoint_unchecked(as_transform(E, "E"))


def _ad_places():
    """Where ``ad(phi)`` (Eq. 1.19) puts the entries of phi, as flat indices of the 6x6 matrix.

    ``[v]`` (Eq. 1.7) holds ``v_k`` at (row, col) = ``(r_k, c_k)`` and ``-v_k`` at ``(c_k, r_k)``;
    ``ad(phi)`` has ``[w]`` in both diagonal blocks and ``[nu]`` below them. Returns the places
    of the positive and of the negated entries, and which entry of phi goes to each.
    """
    r, c = np.array([2, 0, 1]), np.array([1, 2, 0])
    plus, minus, source = [], [], []
    for first, r0, c0 in ((0, 0, 0), (0, 3, 3), (3, 3, 0)):  # [w] top left and bottom right, [nu] bottom left
        plus.extend(6 * (r0 + r) + c0 + c)
        minus.extend(6 * (r0 + c) + c0 + r)
        source.extend(range(first, first + 3))
    return np.array(plus), np.array(minus), np.array(source)


_AD_PLUS, _AD_MINUS, _AD_SOURCE = _ad_places()


def hat_unchecked(v):
    """Cross-product matrices of trusted 3-vectors, stacked: (..., 3) -> (..., 3, 3) (Eq. 1.7)."""
    W = np.zeros(v.shape[:-1] + (3, 3), dtype=v.dtype)
    W[..., 0, 1], W[..., 0, 2], W[..., 1, 2] = -v[..., 2], v[..., 1], -v[..., 0]
    W[..., 1, 0], W[..., 2, 0], W[..., 2, 1] = v[..., 2], -v[..., 1], v[..., 0]
    return W


def adjoint_unchecked(E):
    """:func:`adjoint` of trusted transforms, stacked: (..., 4, 4) -> (..., 6, 6).

    For the inner loops of the reduced-coordinate algorithms, whose poses are products of
    validated ones; public code should call :func:`adjoint`.
    """
    R = E[..., :3, :3]
    A = np.zeros(E.shape[:-2] + (6, 6), dtype=E.dtype)
    A[..., :3, :3] = R
    A[..., 3:, 3:] = R
    A[..., 3:, :3] = hat_unchecked(E[..., :3, 3]) @ R
    return A


def ad_unchecked(phi):
    """:func:`ad` of trusted twists, stacked: (..., 6) -> (..., 6, 6), filled at the ``_ad_places``."""
    entries = phi[..., _AD_SOURCE]
    out = np.zeros(phi.shape[:-1] + (36,), dtype=phi.dtype)
    out[..., _AD_PLUS] = entries
    out[..., _AD_MINUS] = -entries
    return out.reshape(phi.shape[:-1] + (6, 6))


def inv_se3_unchecked(E):
    """:func:`inv_se3` of trusted transforms, stacked: (..., 4, 4) -> (..., 4, 4)."""
    Rt = np.swapaxes(E[..., :3, :3], -1, -2)
    out = np.zeros(E.shape, dtype=E.dtype)
    out[..., :3, :3] = Rt
    out[..., :3, 3] = -(Rt @ E[..., :3, 3, None])[..., 0]
    out[..., 3, 3] = 1.0
    return out


def ad(phi):
    """The spatial cross-product matrix of a twist (Eq. 1.19): ``a(phi) = [[[w], 0], [[nu], [w]]]``.

    ``ad(phi1) @ phi2`` is the Lie bracket of two twists; ``ad(phi).T @ M @ phi`` is the
    Coriolis wrench of the Newton-Euler equations (Eq. 1.21).

    Parameters
    ----------
    phi : array_like, shape (6,)

    Returns
    -------
    ndarray, shape (6, 6)

    Examples
    --------
    >>> phi = np.array([1.0, 2, 3, 4, 5, 6])
    >>> bool(np.allclose(ad(phi) @ phi, 0))  # a twist commutes with itself
    True

    Taught in book/01_maximal/05_adjoint.
    """
    return ad_unchecked(as_array(phi, (6,), "phi")) + 0.0


def adjoint_dot(E, phi):
    """Time derivative of the adjoint of a frame moving with body twist ``phi`` (Eq. 1.18).

    Factored as in Eq. (1.19): ``d/dt adjoint(E) = adjoint(E) @ ad(phi)``, the same matrix as the
    blocks ``[[Rdot, 0], [[pdot] R + [p] Rdot, Rdot]]`` of Eq. (1.16).

    Parameters
    ----------
    E : array_like, shape (4, 4)
        The frame's pose.
    phi : array_like, shape (6,)
        Its twist in its own (body) coordinates.

    Returns
    -------
    ndarray, shape (6, 6)

    Examples
    --------
    A frame spinning about its own z axis at the origin: only the rotation blocks change.

    >>> Adot = adjoint_dot(np.eye(4), [0, 0, 1, 0, 0, 0])
    >>> bool(np.allclose(Adot[:3, :3], brac([0, 0, 1])) and np.allclose(Adot[3:, :3], 0))
    True

    Taught in book/01_maximal/05_adjoint.
    """
    return adjoint(E) @ ad(phi)


def gamma(r):
    """The 3x6 matrix ``Gamma(r) = [[r]^T, I]`` that maps a body twist to a point's velocity (Eq. 1.12).

    For a point with body coordinates ``r``, ``gamma(r) @ phi`` is its velocity in body
    coordinates, ``omega x r + nu``; rotating by R gives the world velocity.

    Parameters
    ----------
    r : array_like, shape (3,)
        The point in body coordinates.

    Returns
    -------
    ndarray, shape (3, 6)

    Examples
    --------
    The writeup's §1.4 example: the body point (1, 0, 0) of a body spinning about z at unit
    rate moves along +y.

    >>> gamma([1, 0, 0]) @ [0, 0, 1, 0, 0, 0]
    array([0., 1., 0.])

    Taught in book/01_maximal/04_material_jacobian.
    """
    r = as_array(r, (3,), "r")
    out = np.zeros((3, 6), dtype=r.dtype)
    out[:, :3] = _hat3(r).T
    out[:, 3:] = np.eye(3)
    return out


def material_jacobian(E, r):
    """The material Jacobian ``J = R Gamma(r)`` of Eq. (1.12): body twist to world point velocity.

    Its transpose maps a world force applied at the point to a body wrench (Eq. 1.13).

    Parameters
    ----------
    E : array_like, shape (4, 4)
        The body's pose ``E_w_i``.
    r : array_like, shape (3,)
        The point in body coordinates.

    Returns
    -------
    ndarray, shape (3, 6)

    Examples
    --------
    >>> E = exp_se3([0, 0, np.pi / 2, 0, 0, 0])
    >>> np.round(material_jacobian(E, [1, 0, 0]) @ [0, 0, 1, 0, 0, 0], 12) + 0.0
    array([-1.,  0.,  0.])

    Taught in book/01_maximal/04_material_jacobian.
    """
    E = as_transform(E, "E")
    return E[:3, :3] @ gamma(r)


def screw(phi):
    """The screw of a twist: a point on its axis, the axis direction, and the pitch.

    A body moving with constant twist ``phi`` (in its own coordinates) rotates about the axis
    through ``point`` along ``direction`` while translating ``pitch`` per radian along it
    (Chasles' theorem; Murray, Li and Sastry §2.2). ``point = (w x nu) / |w|^2`` is the
    axis point nearest the frame origin; ``pitch = (w . nu) / |w|^2``. A twist without
    rotation is a pure translation: its pitch is infinite and ``point`` is the origin.

    Parameters
    ----------
    phi : array_like, shape (6,)
        A nonzero twist.

    Returns
    -------
    point : ndarray, shape (3,)
    direction : ndarray, shape (3,)
        Unit vector.
    pitch : float
        Length per radian; ``inf`` for a pure translation.

    Examples
    --------
    >>> point, direction, pitch = screw([0, 0, 2, 0, 2, 1])
    >>> point, direction, float(pitch)
    (array([-1.,  0.,  0.]), array([0., 0., 1.]), 0.5)

    Taught in book/01_maximal/02_velocity.
    """
    phi = as_array(phi, (6,), "phi", real=True)
    w, nu = phi[:3], phi[3:]
    w2 = w @ w
    if w2 == 0:
        speed = np.linalg.norm(nu)
        if speed == 0:
            raise ValueError("argument 'phi' is the zero twist, which has no screw axis")
        return np.zeros(3), nu / speed, np.inf
    return np.cross(w, nu) / w2, w / np.sqrt(w2), float(w @ nu / w2)


def random_rotation(rng):
    """A rotation drawn uniformly from SO(3) (Haar measure), for tests and examples.

    Parameters
    ----------
    rng : numpy.random.Generator

    Returns
    -------
    ndarray, shape (3, 3)

    Examples
    --------
    >>> R = random_rotation(np.random.default_rng(0))
    >>> bool(np.allclose(R.T @ R, np.eye(3)) and np.isclose(np.linalg.det(R), 1))
    True

    Taught in book/01_maximal/01_position.
    """
    _check_rng(rng)
    Q, T = np.linalg.qr(rng.standard_normal((3, 3)))
    Q = Q * np.sign(np.diag(T))  # makes the QR factor unique, hence Haar-distributed on O(3)
    if np.linalg.det(Q) < 0:
        Q[:, 0] = -Q[:, 0]
    return Q


def random_transform(rng, scale=1.0):
    """A random rigid transform: uniform rotation, normal translation with std ``scale``.

    Parameters
    ----------
    rng : numpy.random.Generator
    scale : float, optional
        Standard deviation of each translation component.

    Returns
    -------
    ndarray, shape (4, 4)

    Examples
    --------
    >>> E = random_transform(np.random.default_rng(1))
    >>> E.shape, bool(np.allclose(E[3], [0, 0, 0, 1]))
    ((4, 4), True)

    Taught in book/01_maximal/01_position.
    """
    scale = as_array(scale, (), "scale")
    E = np.eye(4)
    E[:3, :3] = random_rotation(rng)
    E[:3, 3] = scale * rng.standard_normal(3)
    return E


def _check_rng(rng):
    if not isinstance(rng, np.random.Generator):
        raise ValueError(f"argument 'rng' must be a numpy.random.Generator (np.random.default_rng(seed)), "
                         f"got {type(rng).__name__}")
