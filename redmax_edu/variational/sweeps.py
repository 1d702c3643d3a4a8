"""World-frame quantities of a tree, for the variational integrators' residual and Newton direction.

Every derivative of the discrete Euler-Lagrange equations is written with world-frame twists and
wrenches of the tree: each coordinate's world twist ``Sbar_d``, the spatial velocities before
and after it, each subtree's momentum, inertia and gravity wrench (the appendix of Fan and
Murphey, C.1), from one forward sweep (``spatial``), or stacked over the control points of a
step (``sweeps``). The Hessians of the kinetic and potential energy follow from them.

Taught in book/05_variational/02_newton_direction.
"""

import weakref
from dataclasses import dataclass, fields

import numpy as np

from ..kinematics import forward_kinematics_unchecked
from ..lie import ad_unchecked, adjoint_unchecked, hat_unchecked, inv_se3_unchecked

__all__ = ["Spatial", "Pose", "Plan", "plan_of", "coordinate_order", "poses", "sweeps", "spatial", "cross",
           "ad_matrices", "ad_apply", "ad_dual_apply", "symmetric", "kinetic_hessian", "potential_gradient",
           "potential_hessian"]


@dataclass(frozen=True, eq=False)
class Spatial:
    """World-frame kinematics (Fan, Schultz and Murphey's C.1): per coordinate and per subtree, O(n).

    Of one state (:func:`spatial`), or stacked over the control points of a step (:func:`sweeps`:
    then every array but ``body`` has a leading point axis).
    """

    body: np.ndarray      # (nq,) the body of each coordinate
    S: np.ndarray         # (nq, 6) world twist Sbar_d of each coordinate
    u: np.ndarray         # (nq, 6) spatial velocity before coordinate d
    w: np.ndarray         # (nq, 6) spatial velocity after coordinate d
    c: np.ndarray         # (nq, 6) c_d = ad(u_d) Sbar_d
    mu: np.ndarray        # (n, 6) momentum of each subtree
    MA: np.ndarray        # (n, 6, 6) spatial inertia of each subtree
    Mb: np.ndarray        # (n, 6, 6) spatial inertia of each body alone
    G: np.ndarray         # (n, 6) gravity wrench of each subtree (P x g; m g)
    Kg: np.ndarray        # (n, 6, 6) spatial variation of each body's own gravity wrench per eta
    mass: np.ndarray      # (n,) subtree mass
    P: np.ndarray         # (n, 3) subtree first moment sum m_i p_i
    pose: object          # the :class:`Pose` of the state(s), stacked (m = 1 for one state)


@dataclass(frozen=True, eq=False)
class Pose:
    """What the sweeps take from the poses alone, stacked over states: reused while q is unchanged."""

    S: np.ndarray         # (m, nq, 6) world twists Sbar_d
    Kg: np.ndarray        # (m, n, 6, 6) spatial variation of each body's gravity wrench
    own: np.ndarray       # (m, n, 46) each body's own terms of the subtree sums: its spatial inertia
                          # (36 entries), gravity wrench (6), mass, first moment m p (3)

    def point(self, a):
        """The pose of state ``a`` alone (m = 1)."""
        return Pose(self.S[a:a + 1], self.Kg[a:a + 1], self.own[a:a + 1])

    def then(self, other):
        """These states followed by ``other``'s."""
        return Pose(*(np.concatenate(pair) for pair in ((self.S, other.S), (self.Kg, other.Kg),
                                                         (self.own, other.own))))


@dataclass(frozen=True, eq=False)
class Plan:
    """What the sweeps and the elimination take from the model's tree alone: index arrays over its
    coordinates (to vectorise over them), and the joints' dampers and springs in the shape they use."""

    body: np.ndarray      # (nq,) the body of each coordinate
    prev: np.ndarray      # (nq,) the coordinate just before d on the path from the root, nq if none
    last: np.ndarray      # (n,) the last coordinate on the path to body i, nq if none
    waves: tuple          # (coordinates, the coordinates before them) by their number on that path,
                          # root first: index arrays, or slices where contiguous (one per wave in a chain)
    pair_d: np.ndarray    # (sum k_i^2,) the ordered pairs (d, e) of coordinates of one joint,
    pair_e: np.ndarray    #   joint by joint, d-major: body i's k x k block is pairs[i]
    pair_t: np.ndarray    # the index of the transposed pair (e, d)
    pairs: tuple          # per body, its slice of the pairs
    later: np.ndarray     # (pairs, 1) e after d
    earlier: np.ndarray   # (pairs, 1) e before d
    damping: np.ndarray   # (pairs, 1) the joint damper of d where e = d, else 0
    stiffness: np.ndarray  # (pairs, 1) the joint spring of d where e = d, else 0


_PLANS = weakref.WeakKeyDictionary()


def plan_of(model):
    """The :class:`Plan` of ``model``, cached while the model lives."""
    plan = _PLANS.get(model)
    if plan is None:
        nq = model.nq
        body, prev = np.empty(nq, dtype=int), np.empty(nq, dtype=int)
        last = np.full(model.n + 1, nq)                   # [-1]: the world's
        depth = np.zeros(nq + 1, dtype=int)
        pair_d, pair_e, pair_t, pairs, start = [], [], [], [], 0
        for i, (p, s) in enumerate(zip(model.parents, model.dofs, strict=True)):
            k = s.stop - s.start
            for d in range(s.start, s.stop):
                body[d], prev[d] = i, d - 1 if d > s.start else last[p]
                depth[d] = depth[prev[d]] + 1
            last[i] = s.stop - 1 if k else last[p]
            idx = np.arange(s.start, s.stop)
            pair_d.append(np.repeat(idx, k))
            pair_e.append(np.tile(idx, k))
            pair_t.append(start + np.arange(k * k).reshape(k, k).T.ravel())
            pairs.append(slice(start, start + k * k))
            start += k * k
        waves = tuple((_index(d), _index(prev[d])) for d in (np.flatnonzero(depth[:nq] == j)
                                                             for j in range(1, depth.max() + 1)))
        pair_d, pair_e, pair_t = map(np.concatenate, (pair_d, pair_e, pair_t))
        same = (pair_e == pair_d)[:, None]
        plan = _PLANS[model] = Plan(
            body, prev, last[:-1], waves, pair_d, pair_e, pair_t, tuple(pairs), (pair_e > pair_d)[:, None],
            (pair_e < pair_d)[:, None], np.where(same, model.damping[pair_d, None], 0.0),
            np.where(same, model.stiffness[pair_d, None], 0.0))
    return plan


def _index(idx):
    """An index array as a slice where it is contiguous (numpy's basic indexing costs less)."""
    if len(idx) and np.array_equal(idx, np.arange(idx[0], idx[0] + len(idx))):
        return slice(int(idx[0]), int(idx[0]) + len(idx))
    return idx


def coordinate_order(model):
    """``before[j, l]``: coordinate l is in an ancestor's joint, or earlier in (or equal to) j's own."""
    body = plan_of(model).body
    anc = model.ancestors[body]                           # (nq, nq)
    same = body[:, None] == body[None, :]
    idx = np.arange(model.nq)
    return anc & (~same | (idx[None, :] <= idx[:, None]))


def poses(model, Q):
    """The :class:`Pose` of checked positions ``Q`` (m, nq): one forward kinematics each, then stacked."""
    kins = [forward_kinematics_unchecked(model, q) for q in Q]
    E_wi = np.array([kin.E_wi for kin in kins])                            # (m, n, 4, 4)
    Ad_wj, Ad_iw = adjoint_unchecked(np.array([[kin.E_wj for kin in kins], inv_se3_unchecked(E_wi)]))
    S_joint = np.array([np.concatenate(kin.S, axis=1).T for kin in kins])    # (m, nq, 6)
    S = (Ad_wj[:, plan_of(model).body] @ S_joint[..., None])[..., 0]          # Sbar_d = Ad(E_w_joint) S_d
    Mb = np.swapaxes(Ad_iw, -1, -2) @ model.spatial_inertias @ Ad_iw        # Ad^-T M Ad^-1
    g, g_hat = model.gravity, hat_unchecked(model.gravity)
    m = model.spatial_inertias[:, 3, 3, None] + np.zeros((len(Q), model.n, 1))   # the bodies' masses
    x = m * E_wi[..., :3, 3]
    # a body's own gravity wrench is Ad^-T (0; m R^T g) = (x x g; m g), x = m p: its spatial variation
    # along eta (world) is Ad^-T (0; m (R^T g) x omega_body) with omega_body the rotation part of
    # Ad^-1 eta, which is, in the world frame, Kg eta = (x x (g x omega); m g x omega), eta = (omega; v)
    Kg = np.zeros(Mb.shape)
    Kg[..., :3, :3] = hat_unchecked(x) @ g_hat
    Kg[..., 3:, :3] = m[..., None] * g_hat
    return Pose(S, Kg, np.concatenate([Mb.reshape(x.shape[:-1] + (36,)), x @ g_hat, m * g, m, x], axis=-1))


def sweeps(model, Q, V, pose0=None):
    """The world-frame sweeps of checked states ``Q``, ``V`` (m, nq): one stacked :class:`Spatial`.

    ``pose0``, a :class:`Pose` of ``Q[0]`` alone, spares its forward kinematics. After the
    forward kinematics everything is vectorised over the states, bodies and coordinates, but for
    a loop along the paths (the velocities) and one over the bodies (the subtree sums).
    """
    plan = plan_of(model)
    m, n, nq = len(Q), model.n, model.nq
    pose = poses(model, Q) if pose0 is None else pose0.then(poses(model, Q[1:]))
    S, Mb = pose.S, pose.own[..., :36].reshape(m, n, 6, 6)
    # along the path from the root the velocity grows by Sbar_d qdot_d at each coordinate
    Sv = S * V[..., None]
    w = np.zeros((m, nq + 1, 6))                                           # [:, nq]: the world, at rest
    for d, before in plan.waves:
        w[:, d] = w[:, before] + Sv[:, d]
    u, vbar = w[:, plan.prev], w[:, plan.last]                             # before d; each body's
    # the subtree sums, children (later indices) first: inertia, gravity wrench, mass, first moment,
    # momentum
    tree = np.concatenate([pose.own, (Mb @ vbar[..., None])[..., 0]], axis=-1)
    for i in range(n - 1, -1, -1):
        p = model.parents[i]
        if p >= 0:
            tree[:, p] += tree[:, i]
    MA, G, mu = tree[..., :36].reshape(m, n, 6, 6), tree[..., 36:42], tree[..., 46:]
    mass, P = tree[..., 42], tree[..., 43:46]
    return Spatial(plan.body, S, u, w[:, :nq], ad_apply(u, S), mu, MA, Mb, G, pose.Kg, mass, P, pose)


def spatial(model, q, v):
    """The world-frame sweep of a checked state: a :class:`Spatial` (O(n))."""
    sp = sweeps(model, q[None], v[None])
    return Spatial(sp.body, *(getattr(sp, f.name)[0] for f in fields(Spatial)[1:-1]), sp.pose)


_CROSS_NEXT, _CROSS_PREV = np.array([1, 2, 0]), np.array([2, 0, 1])


def cross(a, b):
    """``a x b`` for broadcast stacks of 3-vectors (numpy's cross costs more in its axis handling)."""
    return a[..., _CROSS_NEXT] * b[..., _CROSS_PREV] - a[..., _CROSS_PREV] * b[..., _CROSS_NEXT]


#: ``ad`` is linear in its twist: ``ad(xi) = sum_j xi_j ad(e_j)``, one (6, 36) matrix product.
_AD_BASIS = ad_unchecked(np.eye(6)).reshape(6, 36)


def ad_matrices(xi):
    """``ad(xi)`` (..., 6, 6) of a stack of twists (..., 6)."""
    return (xi @ _AD_BASIS).reshape(xi.shape[:-1] + (6, 6))


def ad_apply(xi, eta):
    """``ad(xi) eta`` for broadcast stacks of twists (..., 6)."""
    return (ad_matrices(xi) @ eta[..., None])[..., 0]


def ad_dual_apply(xi, f):
    """``ad(xi)^T f`` for broadcast stacks of twists and wrenches (..., 6)."""
    return (f[..., None, :] @ ad_matrices(xi))[..., 0, :]


def symmetric(lower, before):
    """The symmetric matrix whose entries ``[j, l]`` with l before-or-equal j are ``lower``."""
    H = np.where(before, lower, 0.0)
    return H + H.T - np.diag(np.diag(H))


def kinetic_hessian(sp, before):
    """``d^2T/dq^2`` (nq, nq) (the package docstring; Fan, Schultz and Murphey's Prop. 3, reconstructed);
    ``before`` of :func:`coordinate_order`."""
    c = sp.c                                                              # c_l = ad(u_l) Sbar_l
    mu = sp.mu[sp.body]
    z = (sp.MA[sp.body] @ ad_apply(sp.w, sp.S)[:, :, None])[:, :, 0] \
        - ad_dual_apply(sp.S, mu)
    return symmetric(z @ c.T, before)                                    # [j, l] = z_j . c_l


def potential_gradient(sp):
    """``dV_gravity/dq`` (nq,): ``-Sbar_d . G_b``."""
    return -np.einsum("di,di->d", sp.S, sp.G[sp.body])


def potential_hessian(sp, g, before):
    """``d^2V_gravity/dq^2`` (nq, nq) (Fan, Schultz and Murphey's Prop. 4, reconstructed); ``before`` of
    :func:`coordinate_order`."""
    Sj, Sl = sp.S[:, None, :], sp.S[None, :, :]
    first = np.einsum("jli,ji->jl", ad_apply(Sl, Sj), sp.G[sp.body])    # (ad(Sbar_l) Sbar_j) . G_b
    P = sp.P[sp.body][:, None, :]                                        # subtree of j's body
    m = sp.mass[sp.body][:, None, None]
    dP = cross(Sl[..., :3], P) + m * Sl[..., 3:]                       # (j, l, 3)
    second = np.einsum("ji,jli->jl", sp.S[:, :3], cross(dP, g))
    return symmetric(-(first + second), before)
