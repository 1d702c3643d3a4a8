"""Attachments removed from a KKT system by null-space reduction (ArtiSynth notes §0.17).

A component is *attached* when its velocity is fixed by the velocities of others, its
*masters*: ``v_b + G_ba v_a = g_b`` (Eq. 0.18; a point glued to a body has
``G_ba = -`` its material Jacobian). Instead of keeping these rows in the KKT system (0.19)
with multipliers, the attached velocities and their multipliers are eliminated, which leaves a
smaller system (0.20) in the masters' velocities alone, with the attached masses folded into
``M'`` and the attached forces into ``f'`` (Eq. 0.21-0.24).

Taught in book/appendix/engineer_attachments.
"""

from dataclasses import dataclass

import numpy as np

from .._validate import as_real

__all__ = ["ReducedKKT", "reduce_attachments", "attachment_kkt"]


@dataclass
class ReducedKKT:
    """The reduced system ``[[M', G'^T], [G', R]] (v_a, lam_a) = (f', gamma')`` of Eq. (0.20).

    ``active`` and ``attached`` are the index sets of the masters and the attached coordinates;
    :meth:`solve` solves the reduced system and recovers every velocity and multiplier.
    """

    M: np.ndarray
    G: np.ndarray
    R: np.ndarray
    f: np.ndarray
    gamma: np.ndarray
    active: np.ndarray
    attached: np.ndarray
    _parts: tuple

    def solve(self):
        """``v`` (n,), ``lam`` (p,) and ``lam_b`` (len(attached),): the full system's solution."""
        n_a, p = len(self.active), len(self.gamma)
        K = np.block([[self.M, self.G.T], [self.G, self.R]])
        y = np.linalg.solve(K, np.concatenate([self.f, self.gamma]))
        v_a, lam = y[:n_a], y[n_a:]
        M_ba, M_bb, G_ab, G_ba, f_b, g_b = self._parts
        v_b = g_b - G_ba @ v_a
        lam_b = f_b - M_ba @ v_a - M_bb @ v_b - G_ab.T @ lam
        v = np.zeros(n_a + len(self.attached))
        v[self.active], v[self.attached] = v_a, v_b
        return v, lam[:p], lam_b


def _problem(M, f, G, g, attached, G_ba, g_b, R):
    M, f = as_real(M, None, "M"), as_real(f, None, "f")
    n = len(f) if f.ndim == 1 else -1
    if M.shape != (n, n):
        raise ValueError(f"arguments M {M.shape} and f {f.shape} must have shapes (n, n) and (n,)")
    G = np.zeros((0, n)) if G is None else as_real(G, None, "G")
    g = np.zeros(len(G)) if g is None else as_real(g, None, "g")
    if G.ndim != 2 or G.shape[1] != n or g.shape != (len(G),):
        raise ValueError(f"arguments G {G.shape} and g {g.shape} must have shapes (p, {n}) and (p,)")
    attached = np.asarray(attached)
    if attached.ndim != 1 or attached.dtype.kind not in "iu" or len(set(attached.tolist())) != len(attached) \
            or (len(attached) and not (0 <= attached.min() and attached.max() < n)):
        raise ValueError(f"argument 'attached' must list distinct coordinate indices in 0..{n - 1}, "
                         f"got {attached.tolist()}")
    active = np.setdiff1d(np.arange(n), attached)
    G_ba = as_real(G_ba, (len(attached), len(active)), "G_ba")
    g_b = np.zeros(len(attached)) if g_b is None else as_real(g_b, (len(attached),), "g_b")
    R = np.zeros((len(G), len(G))) if R is None else np.diag(as_real(R, (len(G),), "R"))
    return M, f, G, g, attached, active, G_ba, g_b, R


def reduce_attachments(M, f, G, g, attached, G_ba, g_b=None, R=None):
    """Eliminate attached coordinates from a KKT system (ArtiSynth notes Eq. 0.19-0.24).

    The full system is ``M v + G^T lam + E^T lam_b = f``, ``G v + R lam = g`` and the attachment
    rows ``v_b + G_ba v_a = g_b`` (``E`` selects the attached coordinates ``b``; ``a`` are the
    others). With the blocks of ``M`` and ``G`` split by ``a`` and ``b``:

    ``M' = M_aa - M_ab G_ba - G_ba^T M_ba + G_ba^T M_bb G_ba`` (0.21),
    ``G' = G_a - G_b G_ba`` (0.22),
    ``f' = f_a - G_ba^T f_b - (M_ab - G_ba^T M_bb) g_b`` (0.23),
    ``gamma' = g - G_b g_b`` (0.24).

    Parameters
    ----------
    M : array_like, shape (n, n)
        Mass matrix of all coordinates (masters and attached).
    f : array_like, shape (n,)
    G, g : array_like, shapes (p, n) and (p,), or None
        Other constraints (joints).
    attached : sequence of int
        Indices of the attached coordinates.
    G_ba : array_like, shape (len(attached), n - len(attached))
        The attachment rows on the masters' coordinates, in increasing index order.
    g_b : array_like, shape (len(attached),), optional
        Right-hand side of the attachment rows (default 0).
    R : array_like, shape (p,), optional
        Diagonal regularisation of the other constraints (default 0, rigid).

    Returns
    -------
    ReducedKKT

    Examples
    --------
    Coordinate 1 copies coordinate 0 (``v_1 - v_0 = 0``): the masses add up.

    >>> red = reduce_attachments(np.diag([1.0, 2.0]), [3.0, 0.0], None, None, [1], [[-1.0]])
    >>> red.M, red.f
    (array([[3.]]), array([3.]))
    >>> red.solve()[0]
    array([1., 1.])

    Taught in book/appendix/engineer_attachments.
    """
    M, f, G, g, attached, active, G_ba, g_b, R = _problem(M, f, G, g, attached, G_ba, g_b, R)
    a, b = np.ix_(active, active), np.ix_(attached, attached)
    M_aa, M_bb = M[a], M[b]
    M_ab, M_ba = M[np.ix_(active, attached)], M[np.ix_(attached, active)]
    G_a, G_b = G[:, active], G[:, attached]
    M_red = M_aa - M_ab @ G_ba - G_ba.T @ M_ba + G_ba.T @ M_bb @ G_ba       # Eq. (0.21)
    G_red = G_a - G_b @ G_ba                                              # Eq. (0.22)
    f_red = f[active] - G_ba.T @ f[attached] - (M_ab - G_ba.T @ M_bb) @ g_b  # Eq. (0.23)
    gamma = g - G_b @ g_b                                                 # Eq. (0.24)
    return ReducedKKT(M_red, G_red, R, f_red, gamma, active, attached,
                      (M_ba, M_bb, G_b, G_ba, f[attached], g_b))


def attachment_kkt(M, f, G, g, attached, G_ba, g_b=None, R=None):
    """Solve the unreduced KKT system (0.19) with the attachments as ordinary constraint rows.

    The reference that :func:`reduce_attachments` must reproduce. Arguments as there.

    Returns
    -------
    v : ndarray, shape (n,)
    lam : ndarray, shape (p,)
    lam_b : ndarray, shape (len(attached),)

    Examples
    --------
    >>> attachment_kkt(np.diag([1.0, 2.0]), [3.0, 0.0], None, None, [1], [[-1.0]])[0]
    array([1., 1.])

    Taught in book/appendix/engineer_attachments.
    """
    M, f, G, g, attached, active, G_ba, g_b, R = _problem(M, f, G, g, attached, G_ba, g_b, R)
    n, p, q = len(f), len(G), len(attached)
    A = np.zeros((q, n))  # v_b + G_ba v_a = g_b
    A[np.arange(q), attached] = 1.0
    A[:, active] = G_ba
    K = np.block([[M, G.T, A.T], [G, R, np.zeros((p, q))], [A, np.zeros((q, p + q))]])
    y = np.linalg.solve(K, np.concatenate([f, g, g_b]))
    return y[:n], y[n: n + p], y[n + p:]
