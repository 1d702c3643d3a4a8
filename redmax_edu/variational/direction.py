"""The Newton direction of the discrete Euler-Lagrange equations: dense, or in O(n) over the tree.

The recursive direction is the backward elimination and forward pass of Algorithms B.1-B.2 of
the appendix of Fan, Schultz and Murphey, reconstructed (the package docstring of
:mod:`redmax_edu.variational` says where).

Taught in book/05_variational/02_newton_direction.
"""

import numpy as np

from .residual import DELResidual
from .sweeps import ad_dual_apply, plan_of

__all__ = ["newton_direction", "dense_direction", "recursive_direction"]


def dense_direction(res):
    s, nq = res.r.shape
    try:
        dx = -np.linalg.solve(res.jacobian, res.r.ravel())
    except np.linalg.LinAlgError:
        raise ValueError("the Jacobian of the DEL is singular at these control points: try a smaller "
                         "step 'h'") from None
    return dx.reshape(s, nq)


def newton_direction(residual):
    """The Newton direction ``-J^-1 r``, shape (s, nq), of a :class:`~redmax_edu.variational.DELResidual`.

    Dense LU of the assembled Jacobian for ``residual.method == "dense"``; for ``"recursive"``
    the O(n) elimination over the tree (a backward pass expressing every subtree's spatial
    momentum and gravity variations in its joint's parent's, a forward pass recovering the
    coordinates: Fan, Schultz and Murphey's Algorithms B.1-B.2 as reconstructed in the docstring of
    :mod:`redmax_edu.variational`).
    Taught in book/05_variational/.

    Raises
    ------
    ValueError
        If the Jacobian (or a joint's block of it) is singular.
    """
    if not isinstance(residual, DELResidual):
        raise ValueError(f"argument 'residual' must be a DELResidual, got {type(residual).__name__}")
    if residual.method == "dense":
        return dense_direction(residual)
    return recursive_direction(residual)


def recursive_direction(res):
    """The O(n) Newton direction of a recursive :class:`~redmax_edu.variational.DELResidual` (reconstructed
    Alg. B.1-B.2).

    Per body i and point a the unknowns of the elimination are the coordinates' variations
    ``dq^(a)`` (a = 1..s; ``dq^(0) = 0``) and, as intermediates, the spatial variations of the
    body's pose ``eta_i^(a)`` and velocity ``nu_i^(a)`` (world frame, C.15, C.19),

        eta_i = eta_p + sum_e Sbar_e dq_e,    nu_i = nu_p + sum_e (c_e dq_e + Sbar_e dqdot_e),

    and of its subtree's momentum ``Y_i`` and gravity wrench ``Z_i`` (C.16, C.22-C.23),

        Y_i = Mbar_i nu_i + sum_c (Y_c - ad(eta_c - eta_i)^T mu_c),
        Z_i = Kg_i eta_i + sum_c (Z_c - ad(eta_c - eta_i)^T G_c).

    Backward pass: Y_i and Z_i are affine in ``z_i = (eta_i, nu_i)`` at all points; body i's
    rows of the linearised DEL then give ``dq_i = X_i z_p + x_i`` (a k s x k s solve), and
    substituting makes its contribution to ``Y_p``, ``Z_p`` affine in ``z_p``. Forward pass:
    ``dq_i``, then ``z_i``, from the root out.

    Layout: ``z = (eta^0..eta^s, nu^0..nu^s)`` (Z = 12 (s + 1) entries), and ``(Y^0..Y^s,
    Z^0..Z^s)`` likewise; an affine map of z is a (., Z + 1) matrix whose last column is its
    constant. Body i's rows of the DEL are ``(a, d)``, a = 0..s-1 and d its coordinates, its
    unknowns ``(b - 1, e)``, b = 1..s. Each row and each column of body i's blocks belongs to one
    coordinate (or to a pair of coordinates of its joint), so all of them are computed for every
    coordinate at once before the backward pass, which only gathers body i's.
    """
    model, quad, h = res.model, res.quadrature, res.h
    s, nq, n = quad.s, model.nq, model.n
    plan = plan_of(model)
    sw = res.sweeps
    npt = s + 1
    Z = 12 * npt
    A, B = quad.A, quad.B
    hw = h * quad.w
    rows, inner = np.arange(s), np.arange(1, npt)       # the points a < s of the rows, b >= 1 of the unknowns
    SC = np.array([sw.S, sw.c])                                         # (Sbar_d; c_d), (2, s + 1, nq, 6)
    adS = ad_dual_apply(sw.S, np.array([sw.mu, sw.G])[:, :, plan.body])            # ad(Sbar_d)^T (mu_b; G_b)
    S_ = sw.S.transpose(1, 0, 2)                                                   # (nq, s + 1, 6)

    # per coordinate e and unknown point b, the columns (b - 1, e) of
    # Tx: z_i = z_p + Tx dq, eta^a += Sbar_e dq_e^a, nu^a += c_e dq_e^a + Sbar_e dqdot_e^a, with
    #     dqdot^a = sum_b B[a, b] dq^b / h;
    # fold: -ad(eta_i - eta_p)^T (mu_i; G_i) at the points a >= 1, eta_i - eta_p = sum_e Sbar_e dq_e
    cols = np.zeros((nq, s, 2, 2, npt, 6))                                         # (e, b - 1, Tx|fold, Z)
    cols[:, :, 0, 1] = S_[:, None] * B[:, 1:].T[None, :, :, None] / h
    cols[:, inner - 1, 0, :, inner] += SC[:, 1:].transpose(1, 2, 0, 3)
    cols[:, inner - 1, 1, :, inner] = adS[:, 1:].transpose(1, 2, 0, 3)
    cols = cols.reshape(nq, s, 2, Z)
    # per coordinate d and row point a, the rows (a, d) of body i's DEL: coefficients of (Y^b; Z^b) in
    # (a) sum_b A[b, a] Sbar_d^b . Y_i^b and (c) h w (c_d . Y_i + Sbar_d . Z_i) at point a, and
    # their own terms: the nu_p part of (e) -h w (ad(Sbar_d)^T mu) . du_d, with
    # du_d = nu_p + sum_{e<d} (c_e dq_e + Sbar_e dqdot_e), and the constant, the residual r_d^a
    coef = np.zeros((nq, s, 2, Z + 1))                                             # (d, a, coef|own, Z + 1)
    by_z = coef[..., :Z].reshape(nq, s, 2, 2, npt, 6)                              # a view
    by_z[:, :, 0, 0] = A[:, :s].T[None, :, :, None] * S_[:, None]
    by_z[:, rows, 0, :, rows] += hw[:s, None, None, None] * SC[::-1, :s].transpose(1, 2, 0, 3)
    by_z[:, rows, 1, 1, rows] = -hw[None, :s, None] * adS[0, :s].transpose(1, 0, 2)
    coef[:, :, 1, Z] = res.r.T
    # per pair (d, e) of one joint, the entries [(a, d), (b - 1, e)] local to the joint, from
    # mu . ad(Sbar_d) Sbar_e, mu . ad(Sbar_d) c_e and G . ad(Sbar_d) Sbar_e at every point
    (mSS, mSc), (gSS, _) = np.einsum("xapi,yapi->xypa", adS[:, :, plan.pair_d], SC[:, :, plan.pair_e])
    later, earlier = plan.later, plan.earlier
    # (a) the later coordinates' turn of Sbar_d in sum_b A[b, a] Sbar_d^b . Y_i^b:
    #     A[b, a] mu^b . ad(Sbar_d^b) Sbar_e^b for e > d
    local = A[1:, :s].T[None] * np.where(later, mSS, 0.0)[:, None, 1:]
    # (e) the dqdot part of -h w (ad(Sbar_d)^T mu) . du_d, e < d, and (g) the damper -h w d_d dqdot_d
    through_v = -hw[:s] * (np.where(earlier, mSS[:, :s], 0.0) + plan.damping)
    local += through_v[:, :, None] * B[None, :s, 1:] / h
    if s > 1:
        # at the row's own point a >= 1: the dq part of (e), -h w mu . ad(Sbar_d) c_e for e < d; (d)
        # -h w mu . ad(Sbar_e) c_d for e >= d; (f) h w G . ad(Sbar_d) Sbar_e for e > d; the spring -h w k_d
        own = np.where(later, gSS, 0.0) - np.where(earlier, mSc, mSc[plan.pair_t]) - plan.stiffness
        local[:, inner[:-1], inner[:-1] - 1] += hw[1:s] * own[:, 1:s]

    # Y_i and Z_i as affine maps of z_i at every point, to begin with Mbar_i nu_i and Kg_i eta_i
    maps = np.zeros((n, Z, Z + 1))
    by_z = maps[..., :Z].reshape(n, 2, npt, 6, 2, npt, 6)                          # a view
    pts = np.arange(npt)
    by_z[:, 0, pts, :, 1, pts] = sw.Mb
    by_z[:, 1, pts, :, 0, pts] = sw.Kg
    X, T = [None] * n, [None] * n
    for i in range(n - 1, -1, -1):
        dofs, p = model.dofs[i], model.parents[i]
        k = dofs.stop - dofs.start
        ks = k * s
        Tx, fold = cols[dofs].transpose(2, 3, 1, 0).reshape(2, Z, ks)
        if k == 0:
            X[i] = np.zeros((0, Z + 1))
        else:
            # body i's rows: Rz (z_p; 1) + Rx dq = 0, so dq = X_i (z_p; 1) = -Rx^-1 Rz
            cf, own_i = coef[dofs].transpose(2, 1, 0, 3).reshape(2, ks, Z + 1)
            Rz = cf[:, :Z] @ maps[i]
            joint = local[plan.pairs[i]].reshape(k, k, s, s).transpose(2, 0, 3, 1).reshape(ks, ks)
            Rx = Rz[:, :Z] @ Tx + joint
            Rz += own_i
            if ks == 1 and Rx[0, 0] != 0:          # one unknown: a division costs a fraction of LAPACK's call
                X[i] = -Rz / Rx[0, 0]
            else:
                try:
                    X[i] = -np.linalg.solve(Rx, Rz)
                except np.linalg.LinAlgError:
                    raise ValueError(f"the Newton matrix of the DEL is singular in the coordinates of body "
                                     f"{model.names[i]!r}: try a smaller step 'h'") from None
        T[i] = Tx
        if p >= 0:                       # body i's subtree into its parent's: z_i = z_p + Tx X_i (z_p; 1)
            maps[p] += maps[i] + (maps[i, :, :Z] @ Tx - fold) @ X[i]
    dq = np.zeros((s, nq))
    z = np.zeros((n + 1, Z + 1))                    # (z_i; 1), the last row the world's
    z[:, Z] = 1.0
    for i, (p, dofs) in enumerate(zip(model.parents, model.dofs, strict=True)):
        di = X[i] @ z[p]
        z[i, :Z] = z[p, :Z] + T[i] @ di
        dq[:, dofs] = di.reshape(s, -1)
    return dq
