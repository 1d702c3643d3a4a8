"""Attachments removed from a KKT system by null-space reduction (ArtiSynth notes §0.17).

A component is *attached* when its velocity is fixed by the velocities of others, its
*masters*: ``v_b + G_ba v_a = g_b`` (Eq. 0.18; a point glued to a body has
``G_ba = -`` its material Jacobian). Instead of keeping these rows in the KKT system (0.19)
with multipliers, the attached velocities and their multipliers are eliminated, which leaves a
smaller system (0.20) in the masters' velocities alone, with the attached masses folded into
``M'`` and the attached forces into ``f'`` (Eq. 0.21-0.24).

The same reduction serves two more cases of the notes: coordinates whose velocities are
prescribed (§0.21) are attached to nothing, ``v_r = v_prescribed``, and the multiplier of that
row is minus the force that drives them (:func:`reduce_prescribed`); and a single constraint
row projects the masters' velocities one component at a time through their effective inverse
inertias (§0.20, :func:`project_one_dimensional`).

Taught in book/appendix/engineer_attachments and engineer_attachments_1d.
"""

from dataclasses import dataclass

import numpy as np

from .._validate import as_real

__all__ = ["ReducedKKT", "reduce_attachments", "attachment_kkt", "PrescribedKKT", "reduce_prescribed",
           "prescribed_kkt", "project_one_dimensional"]


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
        n_a = len(self.active)
        K = np.block([[self.M, self.G.T], [self.G, self.R]])
        y = np.linalg.solve(K, np.concatenate([self.f, self.gamma]))
        return self.recover(y[:n_a], y[n_a:])

    def recover(self, v_a, lam):
        """Every velocity and multiplier from the masters' velocities ``v_a`` and multipliers ``lam``."""
        M_ba, M_bb, G_ab, G_ba, f_b, g_b = self._parts
        v_b = g_b - G_ba @ v_a
        lam_b = f_b - M_ba @ v_a - M_bb @ v_b - G_ab.T @ lam
        v = np.zeros(len(self.active) + len(self.attached))
        v[self.active], v[self.attached] = v_a, v_b
        return v, lam, lam_b


def _indices(x, n, name):
    x = np.asarray(x)
    if x.ndim != 1 or (len(x) and x.dtype.kind not in "iu") or len(set(x.tolist())) != len(x) \
            or (len(x) and not (0 <= x.min() and x.max() < n)):
        raise ValueError(f"argument '{name}' must list distinct coordinate indices in 0..{n - 1}, "
                         f"got {x.tolist()}")
    return x.astype(int)


def _problem(M, f, G, g, attached, G_ba, g_b, R):
    M, f = as_real(M, None, "M"), as_real(f, None, "f")
    n = len(f) if f.ndim == 1 else -1
    if M.shape != (n, n):
        raise ValueError(f"arguments M {M.shape} and f {f.shape} must have shapes (n, n) and (n,)")
    G = np.zeros((0, n)) if G is None else as_real(G, None, "G")
    g = np.zeros(len(G)) if g is None else as_real(g, None, "g")
    if G.ndim != 2 or G.shape[1] != n or g.shape != (len(G),):
        raise ValueError(f"arguments G {G.shape} and g {g.shape} must have shapes (p, {n}) and (p,)")
    attached = _indices(attached, n, "attached")
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
    return _reduce(M, f, G, g, attached, active, G_ba, g_b, R)


def _reduce(M, f, G, g, attached, active, G_ba, g_b, R):
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


@dataclass
class PrescribedKKT:
    """A KKT system with attachments and prescribed velocities, both eliminated (notes §0.21).

    ``outer`` has the attachments eliminated (its masters are the free coordinates and the
    prescribed ones); ``reduced`` then has the prescribed coordinates eliminated as well, the
    system ``[[M'_aa, G'_a^T], [G'_a, R]] (v_a, lam) = (f'_a - M'_ar v_r, gamma' - G'_r v_r)``
    that is left to solve. :meth:`solve` solves it and recovers everything else.
    """

    reduced: ReducedKKT
    outer: ReducedKKT
    prescribed: np.ndarray

    def solve(self):
        """``v`` (n,), ``lam`` (p,), ``lam_b`` (len(attached),) and ``u`` (len(prescribed),).

        ``u`` is the force that must act on the prescribed coordinates, on top of their
        share of ``f``, to make them move at the prescribed velocities.
        """
        v_s, lam, lam_r = self.reduced.solve()
        v, lam, lam_b = self.outer.recover(v_s, lam)
        return v, lam, lam_b, -lam_r


def _prescribed(n, attached, prescribed, v_prescribed):
    prescribed = _indices(prescribed, n, "prescribed")
    both = np.intersect1d(prescribed, attached)
    if len(both):
        raise ValueError(f"argument 'prescribed': coordinates {both.tolist()} are also attached; a "
                         "coordinate is either attached to masters or prescribed, not both")
    return prescribed, as_real(v_prescribed, (len(prescribed),), "v_prescribed")


def reduce_prescribed(M, f, G, g, attached, G_ba, prescribed, v_prescribed, g_b=None, R=None):
    """Eliminate attachments and prescribed velocities from a KKT system (ArtiSynth notes §0.21).

    Coordinates ``r`` whose velocities are given (driven, "parametrically controlled") are
    attached to nothing: their rows are ``v_r + 0 v_a = v_prescribed``, and the reduction of
    :func:`reduce_attachments` eliminates them like any attachment. This is done after the
    attachments proper, whose masters may include prescribed coordinates. What is left is
    ``[[M'_aa, G'_a^T], [G'_a, R]] (v_a, lam) = (f'_a - M'_ar v_r, gamma' - G'_r v_r)``, with the
    primed blocks of Eq. (0.21)-(0.24) over the free and prescribed coordinates. The multiplier
    of a prescribed row is minus the force ``u_r`` that drives it,
    ``u_r = M'_ra v_a + M'_rr v_r + G'_r^T lam - f'_r``.

    The notes print ``+ (M_ab - G_ba^T M_bb) g_b`` in ``f'_a`` and ``f'_r`` of §0.21 (and the
    opposite sign in the recovered ``f_r``); eliminating the rows gives the minus sign of
    Eq. (0.23), which is what this function uses and what the unreduced solve confirms.

    Parameters
    ----------
    M, f, G, g, attached, G_ba, g_b, R
        As in :func:`reduce_attachments`; the columns of ``G_ba`` are all the coordinates that
        are not attached (free and prescribed), in increasing index order.
    prescribed : sequence of int
        Indices of the prescribed coordinates; none of them attached.
    v_prescribed : array_like, shape (len(prescribed),)
        Their velocities.

    Returns
    -------
    PrescribedKKT

    Examples
    --------
    A velocity update ``M v = f`` from rest over a unit step: two 1 kg masses joined by
    ``v_0 - v_1 = 0``, coordinate 1 driven to 2 m/s, a 3 N push on coordinate 0. The pair
    needs 4 N to reach 2 m/s, so the driver adds 1 N.

    >>> red = reduce_prescribed(np.eye(2), [3.0, 0.0], [[1.0, -1.0]], [0.0], [], np.zeros((0, 2)), [1], [2.0])
    >>> v, lam, lam_b, u = red.solve()
    >>> v, u
    (array([2., 2.]), array([1.]))

    Taught in book/appendix/engineer_attachments_1d.
    """
    M, f, G, g, attached, active, G_ba, g_b, R = _problem(M, f, G, g, attached, G_ba, g_b, R)
    prescribed, v_r = _prescribed(len(f), attached, prescribed, v_prescribed)
    outer = _reduce(M, f, G, g, attached, active, G_ba, g_b, R)
    where = np.searchsorted(outer.active, prescribed)  # the prescribed among the masters
    free = np.setdiff1d(np.arange(len(outer.active)), where)
    reduced = _reduce(outer.M, outer.f, outer.G, outer.gamma, where, free,
                      np.zeros((len(where), len(free))), v_r, outer.R)
    return PrescribedKKT(reduced, outer, prescribed)


def prescribed_kkt(M, f, G, g, attached, G_ba, prescribed, v_prescribed, g_b=None, R=None):
    """Solve the unreduced system of §0.21, the prescribed velocities as rows ``v_r = v_prescribed``.

    The reference that :func:`reduce_prescribed` must reproduce; the driving force is minus
    the multiplier of those rows. Arguments as there.

    Returns
    -------
    v : ndarray, shape (n,)
    lam : ndarray, shape (p,)
    lam_b : ndarray, shape (len(attached),)
    u : ndarray, shape (len(prescribed),)

    Examples
    --------
    >>> prescribed_kkt(np.eye(2), [3.0, 0.0], [[1.0, -1.0]], [0.0], [], np.zeros((0, 2)), [1], [2.0])[3]
    array([1.])

    Taught in book/appendix/engineer_attachments_1d.
    """
    M, f, G, g, attached, _, G_ba, g_b, R = _problem(M, f, G, g, attached, G_ba, g_b, R)
    prescribed, v_r = _prescribed(len(f), attached, prescribed, v_prescribed)
    rows = np.eye(len(f))[prescribed]
    v, lam, lam_b = attachment_kkt(M, f, np.vstack([G, rows]), np.concatenate([g, v_r]), attached, G_ba,
                                   g_b, np.concatenate([np.diag(R), np.zeros(len(prescribed))]))
    return v, lam[: len(G)], lam_b, -lam[len(G):]


def project_one_dimensional(M, G, v0, gamma, components):
    """Project velocities onto one constraint row, one component at a time (ArtiSynth notes §0.20).

    The projection ``v = v0 + M^-1 G^T (G M^-1 G^T)^-1 (gamma - G v0)`` is the velocity closest
    to ``v0`` in the kinetic metric with ``G v = gamma``. When ``M`` is block diagonal over the
    components (bodies, particles) and ``G`` is a single row with pieces ``g_k``, the scalar
    ``G M^-1 G^T`` is the sum of the components' effective inverse inertias
    ``w_k = g_k M_k^-1 g_k^T`` along their pieces, and each component moves by itself:
    ``v_j = v_j0 + M_j^-1 g_j^T (gamma - sum_k g_k v_k0) / sum_k w_k``. After attachments are
    eliminated, ``M`` and ``G`` are the reduced ``M'`` and ``G'``.

    Parameters
    ----------
    M : array_like, shape (n, n)
        Symmetric positive definite, block diagonal over ``components``.
    G : array_like, shape (n,) or (1, n)
        The constraint row.
    v0 : array_like, shape (n,)
    gamma : float
    components : sequence of sequences of int
        The coordinate indices of each component; together every index once.

    Returns
    -------
    v : ndarray, shape (n,)
    w : ndarray, shape (len(components),)
        Effective inverse inertia of each component along its piece of the row (0 where the
        row does not touch the component).

    Raises
    ------
    ValueError
        If ``M`` couples two components (a component attached to masters in two of them):
        the per-component sum no longer holds, and the full projection is needed.

    Examples
    --------
    Two particles of 1 kg and 3 kg on a line, ``v_1 - v_0 = 0``: the light one moves three
    times as much.

    >>> v, w = project_one_dimensional(np.diag([1.0, 3.0]), [-1.0, 1.0], [1.0, -1.0], 0.0, [[0], [1]])
    >>> v, w
    (array([-0.5, -0.5]), array([1.        , 0.33333333]))

    Taught in book/appendix/engineer_attachments_1d.
    """
    G = as_real(G, None, "G").reshape(-1)
    n = len(G)
    M, v0 = as_real(M, (n, n), "M"), as_real(v0, (n,), "v0")
    gamma = float(as_real(gamma, (), "gamma"))
    blocks = [_indices(c, n, f"components[{k}]") for k, c in enumerate(components)]
    listed = np.sort(np.concatenate(blocks)) if blocks else np.zeros(0, int)
    if not np.array_equal(listed, np.arange(n)):
        raise ValueError(f"argument 'components' must list every coordinate 0..{n - 1} exactly once")
    scale = np.abs(M).max()
    for j, bj in enumerate(blocks):
        for k, bk in enumerate(blocks[j + 1:], j + 1):
            if np.abs(M[np.ix_(bj, bk)]).max(initial=0.0) > 1e-12 * scale:
                raise ValueError(f"argument 'M' couples components {j} and {k} (something is attached to "
                                 "masters in both): the per-component projection needs a block-diagonal M")
    try:
        pieces = [np.linalg.solve(M[np.ix_(b, b)], G[b]) for b in blocks]  # M_k^-1 g_k^T
    except np.linalg.LinAlgError:
        raise ValueError("argument 'M' has a singular block: every component needs a positive "
                         "definite mass matrix") from None
    w = np.array([G[b] @ x for b, x in zip(blocks, pieces, strict=True)])
    if not w.sum() > 0:
        raise ValueError("argument 'G' is zero on every component: there is nothing to project")
    step = (gamma - G @ v0) / w.sum()
    v = v0.copy()
    for b, x in zip(blocks, pieces, strict=True):
        v[b] += x * step
    return v, w
