"""Unit quaternions for rotations (ArtiSynth notes §0.2), next to the library's other charts.

A quaternion is stored as an array ``(s, x, y, z)``: scalar part first, then the vector part.
The rotation by angle ``t`` about the unit axis ``u`` is ``(cos(t/2), sin(t/2) u)``; ``q`` and
``-q`` are the same rotation. The product, the rate ``qdot`` from an angular velocity and one
integration step are the three operations a simulator needs; the exponential map and the
logarithm of :mod:`redmax_edu.lie` connect them to the rotation matrices used everywhere else.

Taught in book/appendix/engineer_quaternions.
"""

import numpy as np

from ._validate import as_array, as_callable, as_rotation, as_scalar
from .joints.euler import CHART_NAMES, SphericalEuler, euler_angles
from .joints.exponential import SphericalExp
from .lie import brac, log_so3

__all__ = ["quat_multiply", "quat_conjugate", "quat_from_rotvec", "quat_from_rotation",
           "quat_to_rotation", "quat_rotate", "quat_rate", "quat_rate_matrix", "quat_step",
           "integrate_orientation", "UNIT_TOL"]

#: Largest ``| |q| - 1 |`` accepted where a unit quaternion is required. Renormalising after
#: every step keeps a simulated quaternion at round-off distance from the unit sphere.
UNIT_TOL = 1e-8

_FRAMES = ("world", "body")


def _unit(q, name):
    q = as_array(q, (4,), name, real=True)
    n = np.sqrt(q @ q)
    if abs(n - 1.0) > UNIT_TOL:
        raise ValueError(f"argument '{name}' must be a unit quaternion, got |{name}| = {n:.6g}; "
                         "divide it by its norm first")
    return q


def _frame(frame):
    if frame not in _FRAMES:
        raise ValueError(f"argument 'frame' must be 'world' or 'body', got {frame!r}")
    return frame


def quat_multiply(q, p):
    """The quaternion product ``q p`` (ArtiSynth notes §0.2).

    ``q p = (q_s p_s - q_v . p_v,  q_s p_v + p_s q_v + q_v x p_v)``. For unit quaternions it
    composes rotations: ``R(q p) = R(q) R(p)``. It does not commute (the cross product).

    Parameters
    ----------
    q, p : array_like, shape (4,)
        Quaternions ``(s, x, y, z)``, unit or not.

    Returns
    -------
    ndarray, shape (4,)

    Examples
    --------
    >>> i, j = np.array([0.0, 1, 0, 0]), np.array([0.0, 0, 1, 0])
    >>> quat_multiply(i, j), quat_multiply(j, i)   # ij = k, ji = -k
    (array([0., 0., 0., 1.]), array([ 0.,  0.,  0., -1.]))

    Taught in book/appendix/engineer_quaternions.
    """
    q = as_array(q, (4,), "q", real=True)
    p = as_array(p, (4,), "p", real=True)
    qs, qv, ps, pv = q[0], q[1:], p[0], p[1:]
    return np.concatenate([[qs * ps - qv @ pv], qs * pv + ps * qv + np.cross(qv, pv)])


def quat_conjugate(q):
    """``(s, -v)``: the inverse of a unit quaternion, the opposite rotation.

    Parameters
    ----------
    q : array_like, shape (4,)

    Returns
    -------
    ndarray, shape (4,)

    Examples
    --------
    >>> quat_conjugate([0.5, 0.5, 0.5, 0.5])
    array([ 0.5, -0.5, -0.5, -0.5])

    Taught in book/appendix/engineer_quaternions.
    """
    q = as_array(q, (4,), "q", real=True)
    return np.concatenate([q[:1], -q[1:]])


def quat_from_rotvec(w):
    """The unit quaternion ``(cos(t/2), sin(t/2) w/t)`` of the rotation vector ``w``, ``t = |w|``.

    It is the quaternion of ``exp_so3(w)`` (Eq. 1.10). The factor ``sin(t/2)/t`` is evaluated
    through ``numpy.sinc``, so ``w = 0`` needs no special case.

    Parameters
    ----------
    w : array_like, shape (3,)
        Rotation vector in radians (axis times angle).

    Returns
    -------
    ndarray, shape (4,)
        A unit quaternion with a nonnegative scalar part when ``|w| <= pi``.

    Examples
    --------
    >>> np.round(quat_from_rotvec([0.0, 0.0, np.pi]), 12) + 0.0
    array([0., 0., 0., 1.])

    Taught in book/appendix/engineer_quaternions.
    """
    w = as_array(w, (3,), "w", real=True)
    t = np.sqrt(w @ w)
    return np.concatenate([[np.cos(t / 2)], 0.5 * np.sinc(t / (2 * np.pi)) * w])


def quat_from_rotation(R):
    """The unit quaternion of a rotation matrix, with a nonnegative scalar part.

    Computed as ``quat_from_rotvec(log_so3(R))``: the logarithm of :mod:`redmax_edu.lie`
    already handles the angles near 0 and near pi.

    Parameters
    ----------
    R : array_like, shape (3, 3)
        A rotation matrix.

    Returns
    -------
    ndarray, shape (4,)

    Examples
    --------
    >>> np.round(quat_from_rotation(np.diag([1.0, -1.0, -1.0])), 12) + 0.0
    array([0., 1., 0., 0.])

    Taught in book/appendix/engineer_quaternions.
    """
    return quat_from_rotvec(log_so3(as_rotation(R, "R", real=True)))


def quat_to_rotation(q):
    """The rotation matrix of a unit quaternion: ``R = I + 2 s [v] + 2 [v]^2``.

    Parameters
    ----------
    q : array_like, shape (4,)
        A unit quaternion (``| |q| - 1 | <= UNIT_TOL``).

    Returns
    -------
    ndarray, shape (3, 3)

    Raises
    ------
    ValueError
        If ``q`` is not a unit quaternion.

    Examples
    --------
    >>> np.round(quat_to_rotation([np.cos(np.pi / 4), 0, 0, np.sin(np.pi / 4)]), 12) + 0.0
    array([[ 0., -1.,  0.],
           [ 1.,  0.,  0.],
           [ 0.,  0.,  1.]])

    Taught in book/appendix/engineer_quaternions.
    """
    q = _unit(q, "q")
    V = brac(q[1:])
    return np.eye(3) + 2 * q[0] * V + 2 * V @ V


def quat_rotate(q, v):
    """``q (0, v) q^-1``: the vector ``v`` of the rotated frame expressed in the world (§0.2).

    Parameters
    ----------
    q : array_like, shape (4,)
        A unit quaternion (the rotated frame in the world).
    v : array_like, shape (3,)

    Returns
    -------
    ndarray, shape (3,)
        Equal to ``quat_to_rotation(q) @ v``.

    Examples
    --------
    >>> np.round(quat_rotate(quat_from_rotvec([0, 0, np.pi / 2]), [1.0, 0, 0]), 12) + 0.0
    array([0., 1., 0.])

    Taught in book/appendix/engineer_quaternions.
    """
    q = _unit(q, "q")
    v = as_array(v, (3,), "v", real=True)
    return quat_multiply(quat_multiply(q, np.concatenate([[0.0], v])), quat_conjugate(q))[1:]


def quat_rate(q, omega, frame="world"):
    """The rate ``qdot`` of a unit quaternion turning at angular velocity ``omega`` (§0.2, Eq. 0.1).

    ``qdot = (0, omega) q / 2`` when ``omega`` is in world coordinates and
    ``qdot = q (0, omega) / 2`` when it is in the rotated (body) frame, like the writeup's
    twists. Either way ``qdot . q = 0``: the rate is tangent to the unit sphere.

    Parameters
    ----------
    q : array_like, shape (4,)
        A unit quaternion.
    omega : array_like, shape (3,)
        Angular velocity in rad/s.
    frame : {"world", "body"}
        The coordinates ``omega`` is expressed in.

    Returns
    -------
    ndarray, shape (4,)
        ``qdot`` in 1/s; equal to ``quat_rate_matrix(q, frame) @ omega``.

    Examples
    --------
    >>> quat_rate([1.0, 0, 0, 0], [0.0, 0, 2.0])
    array([0., 0., 0., 1.])

    Taught in book/appendix/engineer_quaternions.
    """
    return quat_rate_matrix(q, frame) @ as_array(omega, (3,), "omega", real=True)


def quat_rate_matrix(q, frame="world"):
    """The 4x3 matrix ``W(q)`` with ``qdot = W omega`` (§0.2); ``omega = 4 W^T qdot``.

    Its columns are orthogonal to ``q`` and to each other, each of length 1/2, so
    ``W^T W = I/4`` and the angular velocity is read back from a rate by ``4 W^T``.

    Parameters
    ----------
    q : array_like, shape (4,)
        A unit quaternion.
    frame : {"world", "body"}

    Returns
    -------
    ndarray, shape (4, 3)

    Examples
    --------
    >>> quat_rate_matrix([1.0, 0, 0, 0]) * 2 + 0.0
    array([[0., 0., 0.],
           [1., 0., 0.],
           [0., 1., 0.],
           [0., 0., 1.]])

    Taught in book/appendix/engineer_quaternions.
    """
    q = _unit(q, "q")
    sign = 1.0 if _frame(frame) == "body" else -1.0
    W = np.empty((4, 3))
    W[0] = -q[1:]
    W[1:] = q[0] * np.eye(3) + sign * brac(q[1:])
    return 0.5 * W


def quat_step(q, omega, h, frame="world", method="euler"):
    """One step of ``qdot = W(q) omega`` with ``omega`` held constant over the step.

    ``method="euler"`` takes the explicit Euler step ``q + h W(q) omega`` and divides by its
    norm (renormalisation: without it ``|q|`` grows by ``sqrt(1 + h^2 |omega|^2 / 4)`` a
    step). ``method="exp"`` multiplies by the quaternion of the rotation vector ``h omega``
    (on the left for a world ``omega``, on the right for a body one): exact for a constant
    ``omega``, it is the quaternion form of the writeup's step ``R exp(h [omega])`` (§1.8).

    Parameters
    ----------
    q : array_like, shape (4,)
        A unit quaternion.
    omega : array_like, shape (3,)
        Angular velocity in rad/s.
    h : float
        Step in seconds, > 0.
    frame : {"world", "body"}
    method : {"euler", "exp"}

    Returns
    -------
    ndarray, shape (4,)
        A unit quaternion.

    Examples
    --------
    >>> q = quat_step([1.0, 0, 0, 0], [0.0, 0, np.pi], 0.5, method="exp")
    >>> np.round(q, 12) * np.sqrt(2)
    array([1., 0., 0., 1.])

    Taught in book/appendix/engineer_quaternions.
    """
    q = _unit(q, "q")
    omega = as_array(omega, (3,), "omega", real=True)
    h = as_scalar(h, "h", minimum=0.0, strict=True)
    if method == "euler":
        q_new = q + h * quat_rate_matrix(q, frame) @ omega
        return q_new / np.sqrt(q_new @ q_new)
    if method == "exp":
        dq = quat_from_rotvec(h * omega)
        return quat_multiply(dq, q) if _frame(frame) == "world" else quat_multiply(q, dq)
    raise ValueError(f"argument 'method' must be 'euler' or 'exp', got {method!r}")


def integrate_orientation(omega, R0, T, n, coordinates="quaternion"):
    """Integrate a prescribed body angular velocity ``omega(t)`` in one choice of coordinates.

    Every choice takes ``n`` explicit steps of ``h = T / n`` with ``omega`` sampled at the
    start of the step, so they differ only in the coordinates they carry:

    * ``"quaternion"``: ``q + h W(q) omega`` then renormalise (:func:`quat_step`, ``"euler"``);
    * ``"quaternion_exp"``: ``q`` times the quaternion of ``h omega`` (:func:`quat_step`, ``"exp"``),
      the same as the writeup's ``R exp(h [omega])``;
    * ``"exponential"``: the rotation vector of :class:`~redmax_edu.joints.SphericalExp`,
      ``qdot = S(q)^-1 omega`` (Eq. 2.48), without its reparameterisation;
    * an Euler chart such as ``"XYZ"`` or ``"ZYX"``: the angles of
      :class:`~redmax_edu.joints.SphericalEuler`, ``qdot = S(q)^-1 omega`` (Tables 1-2),
      without chart switching.

    Parameters
    ----------
    omega : callable
        ``omega(t)`` -> array of shape (3,): the angular velocity in the body frame, rad/s.
    R0 : array_like, shape (3, 3)
        The orientation at ``t = 0``.
    T : float
        Duration in seconds, > 0.
    n : int
        Number of steps, >= 1.
    coordinates : str
        ``"quaternion"``, ``"quaternion_exp"``, ``"exponential"`` or one of the Euler charts.

    Returns
    -------
    R : ndarray, shape (n + 1, 3, 3)
        The orientation at ``t = k h``.
    coords : ndarray, shape (n + 1, 4) or (n + 1, 3)
        The coordinates carried.

    Raises
    ------
    ValueError
        For an unknown ``coordinates``, a bad argument, or an Euler chart that reaches its
        singularity exactly (``S`` cannot be inverted).

    Examples
    --------
    >>> R, q = integrate_orientation(lambda t: np.array([0.0, 0, np.pi]), np.eye(3), 1.0, 4, "quaternion_exp")
    >>> np.round(R[-1], 12) + 0.0   # half a turn about z
    array([[-1.,  0.,  0.],
           [ 0., -1.,  0.],
           [ 0.,  0.,  1.]])

    Taught in book/appendix/engineer_quaternions.
    """
    R0 = as_rotation(R0, "R0", real=True)
    T = as_scalar(T, "T", minimum=0.0, strict=True)
    if isinstance(n, (bool, np.bool_)) or not isinstance(n, (int, np.integer)) or n < 1:
        raise ValueError(f"argument 'n' must be a whole number of steps >= 1, got {n!r}")
    as_callable(omega, "omega", ("t",))  # -> the (3,) angular velocity
    h = T / n
    if coordinates in ("quaternion", "quaternion_exp"):
        method = "euler" if coordinates == "quaternion" else "exp"
        coords = [quat_from_rotation(R0)]
        for k in range(n):
            coords.append(quat_step(coords[-1], omega(k * h), h, "body", method))
        return np.array([quat_to_rotation(q) for q in coords]), np.array(coords)
    if coordinates == "exponential":
        joint, q = SphericalExp(), log_so3(R0)
    elif isinstance(coordinates, str) and coordinates.upper() in CHART_NAMES:
        joint = SphericalEuler(coordinates)
        q = euler_angles(R0, joint.chart)
    else:
        raise ValueError("argument 'coordinates' must be 'quaternion', 'quaternion_exp', 'exponential' "
                         f"or an Euler chart ({', '.join(CHART_NAMES)}), got {coordinates!r}")
    coords = [q]
    for k in range(n):
        S = joint.S(coords[-1])[:3]
        if abs(np.linalg.det(S)) < 1e-14:
            raise ValueError(f"coordinates {coordinates!r}: S(q) is singular at step {k} "
                             f"(q = {np.round(coords[-1], 6).tolist()})")
        w = as_array(omega(k * h), (3,), "omega(t)", real=True)
        coords.append(coords[-1] + h * np.linalg.solve(S, w))
    return np.array([joint.Q(q)[:3, :3] for q in coords]), np.array(coords)
