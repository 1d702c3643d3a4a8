"""Two-node springs formulated with stress, as in a finite-element truss (ArtiSynth notes §0.13).

Writing the spring force on node 1 as a *stress* (force per unit length) times the segment,
``f_1 = sigma(l) (x_2 - x_1)``, instead of a tension times the unit direction, splits its
Jacobian into a *material* part (how sigma changes with the length) and a *geometric* part
(``-sigma I``: the segment turning while its stress stays):

* linear law ``sigma = k (l - r) / l`` (the force ``k (l - r)`` of an ordinary spring):
  ``df_1/dx_1 = -(k r / l) u u^T - sigma I``; for ``r = 0`` this is ``-k I``;
* quadratic (Green) strain ``eps = (l^2 - r^2) / (2 r^2)``, ``sigma = k eps``:
  ``df_1/dx_1 = -(k / r^2) dx dx^T - sigma I``.

Taught in book/appendix/engineer_stress_springs.
"""

import numpy as np

from ._validate import as_real, as_scalar

__all__ = ["STRAINS", "truss_spring"]

#: The stress laws of the notes' §0.13.
STRAINS = ("linear", "green")


def truss_spring(x1, x2, k, rest, strain="linear"):
    """Force on node 1 of a two-node spring and its stiffness, formulated with stress (notes §0.13).

    Parameters
    ----------
    x1, x2 : array_like, shape (3,)
        Node positions (m).
    k : float
        Stiffness >= 0 in N/m: ``sigma = k (l - r) / l`` (linear) or ``sigma = k eps`` (Green).
    rest : float
        Rest length ``r >= 0`` (m); the Green strain needs ``r > 0``.
    strain : {"linear", "green"}

    Returns
    -------
    f1 : ndarray, shape (3,)
        Force on node 1 (node 2 feels ``-f1``), N.
    K : ndarray, shape (6, 6)
        ``d(f1, f2)/d(x1, x2)``: ``[[K11, -K11], [-K11, K11]]`` with ``K11 = df1/dx1``.
    parts : dict
        ``"material"`` and ``"geometric"``, the two 3x3 terms of ``K11``.

    Raises
    ------
    ValueError
        For coincident nodes, a zero rest length with Green strain, or a bad argument.

    Examples
    --------
    A zero-rest-length linear spring: ``K11 = -k I`` whatever the nodes.

    >>> f1, K, parts = truss_spring([0.0, 0, 0], [1.0, 2.0, 0.5], 3.0, 0.0)
    >>> f1, np.allclose(K[:3, :3], -3 * np.eye(3))
    (array([3. , 6. , 1.5]), True)

    Taught in book/appendix/engineer_stress_springs.
    """
    x1, x2 = as_real(x1, (3,), "x1"), as_real(x2, (3,), "x2")
    k = as_scalar(k, "k", minimum=0.0)
    r = as_scalar(rest, "rest", minimum=0.0)
    if strain not in STRAINS:
        raise ValueError(f"argument 'strain' must be 'linear' or 'green', got {strain!r}")
    dx = x2 - x1
    l = float(np.sqrt(dx @ dx))  # noqa: E741 (the notes' l)
    if l == 0.0:
        raise ValueError("arguments 'x1' and 'x2' coincide: the spring has no direction")
    if strain == "linear":
        sigma = k * (l - r) / l
        u = dx / l
        material = -(k * r / l) * np.outer(u, u)
    else:
        if r == 0.0:
            raise ValueError("argument 'rest' must be positive for the Green strain (it divides by r^2)")
        sigma = k * 0.5 * (l * l - r * r) / (r * r)
        material = -(k / (r * r)) * np.outer(dx, dx)
    geometric = -sigma * np.eye(3)
    K11 = material + geometric
    return sigma * dx, np.block([[K11, -K11], [-K11, K11]]), {"material": material, "geometric": geometric}
