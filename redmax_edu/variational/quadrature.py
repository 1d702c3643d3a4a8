"""The Lobatto quadrature of a variational integrator's step, and its schemes.

A step of ``vi2``, ``vi4``, ``vi6`` interpolates the path through s + 1 control points at the
Lobatto nodes of ``[0, 1]`` and integrates the Lagrangian with the Lobatto weights (s = 1, 2, 3;
order 2 s).

Taught in book/05_variational/01_what_is_preserved.
"""

from dataclasses import dataclass

import numpy as np
from numpy.polynomial import legendre

__all__ = ["SCHEMES", "MAX_S", "Quadrature", "lobatto"]


#: The variational schemes :func:`redmax_edu.integrators.simulate` accepts, with their number
#: of interior-plus-end control points s (order 2 s).
SCHEMES = {"vi2": 1, "vi4": 2, "vi6": 3}

#: Largest s of :func:`lobatto` (the Lobatto nodes come from a Legendre root solve).
MAX_S = 8


@dataclass(frozen=True, eq=False)
class Quadrature:
    """The Lobatto quadrature and Lagrange interpolation of one step on ``[0, 1]``.

    Attributes
    ----------
    s : int
        Number of control points after the first (s + 1 in all); the scheme has order 2 s.
    c : ndarray, shape (s + 1,)
        The Gauss-Lobatto nodes, ``c[0] = 0``, ``c[s] = 1``.
    w : ndarray, shape (s + 1,)
        The quadrature weights (sum 1).
    B : ndarray, shape (s + 1, s + 1)
        ``B[a, b] = l_b'(c_a)``: ``h qdot^(a) = sum_b B[a, b] q^(b)``.
    A : ndarray, shape (s + 1, s + 1)
        ``A[a, b] = w_a B[a, b]`` (the appendix's ``a^(ab)``).
    """

    s: int
    c: np.ndarray
    w: np.ndarray
    B: np.ndarray
    A: np.ndarray


def lobatto(s):
    """The (s+1)-point Gauss-Lobatto rule on ``[0, 1]`` and its Lagrange differentiation matrix.

    Parameters
    ----------
    s : int
        1 (trapezoidal rule, order 2), 2 (Simpson, order 4), ... up to ``MAX_S``.

    Returns
    -------
    Quadrature

    Examples
    --------
    >>> lobatto(1).w, lobatto(1).B
    (array([0.5, 0.5]), array([[-1.,  1.],
           [-1.,  1.]]))
    >>> np.round(lobatto(2).w * 6, 12)
    array([1., 4., 1.])

    Taught in book/05_variational/.
    """
    if isinstance(s, bool) or not isinstance(s, (int, np.integer)) or not 1 <= s <= MAX_S:
        raise ValueError(f"argument 's' must be an integer from 1 to {MAX_S}, got {s!r}")
    s = int(s)
    # interior nodes: roots of P_s' on [-1, 1]; weights 2 / (s (s + 1) P_s(x)^2)
    Ps = legendre.Legendre.basis(s)
    x = np.concatenate([[-1.0], np.sort(Ps.deriv().roots().real) if s > 1 else [], [1.0]])
    w = 2.0 / (s * (s + 1) * Ps(x) ** 2)
    c, w = (x + 1.0) / 2.0, w / 2.0
    B = np.empty((s + 1, s + 1))
    for b in range(s + 1):                       # l_b(x) = prod_{m != b} (x - c_m) / (c_b - c_m)
        others = np.delete(c, b)
        poly = np.poly1d(others, r=True) / np.prod(c[b] - others)
        B[:, b] = poly.deriv()(c)
    return Quadrature(s, c, w, B, w[:, None] * B)
