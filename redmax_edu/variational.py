"""Variational integrators of a tree in reduced coordinates, solved by Newton's method (seed 003).

A variational integrator does not discretise the equations of motion: it discretises the
*action*. Over a step ``[t_k, t_k + h]`` the path is the polynomial through ``s + 1`` control
points ``q^(k,0) = q_k, q^(k,1), ..., q^(k,s) = q_(k+1)`` placed at the Gauss-Lobatto nodes
``c_0 = 0 < c_1 < ... < c_s = 1``, and the integral of the Lagrangian ``L = T - V`` over the
step is replaced by the Lobatto quadrature on the same nodes (Fan & Murphey's higher-order
integrators; s = 1 is the trapezoidal rule with linear interpolation),

    L_d(q^(k,0), ..., q^(k,s)) = h sum_a w_a L(q^(k,a), qdot^(k,a)),
    qdot^(k,a) = (1/h) sum_b B[a, b] q^(k,b),

with ``B[a, b] = l_b'(c_a)`` the derivative of the Lagrange basis polynomial of node b at node
a. The discrete Euler-Lagrange (DEL) equations with the discrete forcing of Proposition 1
(``Q^(k,a) = w_a h Q(t^(k,a))``, the joint forces at the quadrature point), written in
position-momentum form, are, for the unknown control points ``q^(k,1..s)``,

    r^(k,0) = p_k + D_0 L_d + Q^(k,0)                        = 0,
    r^(k,a) =       D_a L_d + Q^(k,a)                        = 0,   a = 1 .. s-1,
    p_(k+1) =       D_s L_d + Q^(k,s),

    D_a L_d = sum_b A[b, a] p(q^(k,b), qdot^(k,b)) + h w_a dL/dq(q^(k,a), qdot^(k,a)),
    A[b, a] = w_b B[b, a],   p(q, qdot) = dT/dqdot = M(q) qdot.

A run therefore starts from ``(q0, qdot0)`` with ``p0 = M(q0) qdot0`` and carries
``(q_k, p_k)``; the velocity reported at a step boundary is the Legendre transform
``qdot_k = M(q_k)^-1 p_k`` (Seed 003, Eq. (D.3), reconstructed: see "Reconstruction").

**Public API** (stable from the first commit; the book's chapter book/05_variational builds on it)

- :func:`lobatto` ``(s)`` -> :class:`Quadrature`: nodes ``c`` (s+1,), weights ``w`` (s+1,),
  the differentiation matrix ``B`` and ``A = w B``.
- :func:`del_residual` ``(model, q0, p0, control, h, s=1, tau=None, t=0.0, method="dense")``
  -> :class:`DELResidual`: the residual ``r`` (s, nq) of one step at the control points
  ``control`` (s, nq) = ``q^(k,1..s)``, the next momentum ``p_next`` (nq,), and with
  ``method="dense"`` the Jacobian ``jacobian = dr/d(control)`` (s nq, s nq); with
  ``method="recursive"`` the residual comes from O(n) world-frame sweeps and no matrix is
  formed.
- :func:`newton_direction` ``(residual)`` -> ``-J^-1 r`` (s, nq): a dense LU solve, or for a
  recursive residual the O(n) elimination over the tree (below), equal to round-off.
- :func:`redmax_edu.integrators.simulate` with ``method="vi2" | "vi4" | "vi6"`` (s = 1, 2, 3;
  order 2 s), a fixed step ``h`` and ``del_method="recursive"`` (default) or ``"dense"``
  returns a Trajectory whose ``variational`` attribute is a :class:`VariationalRun`: the
  step-boundary positions ``q`` and momenta ``p``, the control points of every step, and one
  :class:`VariationalSolve` per step with its Newton history (scaled residual per iteration,
  ``iterations``). ``Trajectory.qdot`` is ``M^-1 p``.
- :func:`discrete_momentum` ``(model, q, qdot)`` -> ``p = M(q) qdot`` (nq,);
  :func:`velocity` ``(model, q, p)`` -> ``M(q)^-1 p``; :func:`energy` ``(model, q, p)`` ->
  ``T + V`` at ``(q, M^-1 p)`` (J).
- :func:`momentum_map` ``(model, q, p)`` -> the world-frame spatial momentum (6,), angular
  about the world origin then linear, of a tree whose single root has a 6-coordinate joint:
  ``h`` with ``xi . h = p . dq(xi)`` for every rigid motion ``xi`` of the whole tree. With no
  gravity, springs or external joint forces the DEL conserve exactly (discrete Noether
  theorem) the components whose rigid motion maps the coordinates linearly: the linear
  momentum (translations shift the root's translation coordinates) and the angular momentum
  about the root chart's first axis (a shift of the first Euler angle, and a rotation of the
  translation coordinates). The other angular components are not conserved exactly: rotations
  about other axes act nonlinearly on Euler angles, so linear interpolation in the coordinates
  breaks their symmetry (the seed's integrators, interpolating on the Lie group, keep all six).
  With a translational root the first three entries of ``p`` are the linear momentum.

**Scope: which joints, which forces**

The derivation (Seed 003, Sections C.1 and D.1) assumes every joint transform is a product of
exponentials, ``Q(q) = exp([S_1] q_1) ... exp([S_m] q_m)`` with constant twists ``S_d``: then a
change of ``q_d`` moves everything after it rigidly along the world-frame twist
``Sbar_d = Ad(E_w_joint) S_d``, and ``dSbar_e/dq_d = ad(Sbar_d) Sbar_e`` for every coordinate e
after d (Eq. C.7). Within a joint, "after" is the order of its coordinates. Of the library's
joints this holds for fixed, revolute, prismatic, planar, translational, universal,
spherical_euler (every chart), free2d, free3d_euler and composites of these; it is checked
numerically for each joint (``dS/dq`` against the product-of-exponentials rule) when a run
starts. The exponential-coordinate joints (spherical_exp, free3d_exp) and the spline joints
have a motion subspace that varies otherwise and are refused with a ValueError naming the
body: use an Euler-angle joint (``spherical_euler``, ``free3d_euler``) or ``method="bdf2"``.

Forces covered: gravity (through the potential ``V = -sum_i m_i g . p_i``), joint springs
(``1/2 k (q - q_rest)^2`` in ``V``), joint dampers ``-d qdot`` and applied joint forces ``tau``
(the discrete forcing of Proposition 1). Body damping, the extra forces of ``model.forces``,
deformable bodies, constraints and friction are refused with a ValueError naming them.
Charts are not switched: a joint reaching a singular chart raises a ValueError naming it.
Newton takes full steps from the predictor ``q_k + c h qdot_k``, with no line search (unlike
:mod:`redmax_edu.implicit`): on fast tumbling or very thin bodies at a large step it can
diverge, which ends the run with a SimulationError naming the step and asking for a smaller
``h``.

**Derivatives**

The dense Jacobian needs, at every control point, ``M`` and ``dM/dq``
(:func:`redmax_edu.derivatives.mass_matrix_derivative`'s core), ``dp/dq = dM/dq (x) qdot``,
``dL/dq``, and the Hessians ``d^2T/dq^2`` and ``d^2V/dq^2``. The library has no second
derivative of ``M``; the two Hessians are computed here from the world-frame quantities of the
seed (Proposition 3 and 4): with ``mu_b`` the momentum and ``MA_b`` the inertia of the subtree
of body b, ``u_d`` the spatial velocity just before coordinate d and ``w_d`` just after it,
``c_d = ad(u_d) Sbar_d``,

    dT/dq_d = mu_b . c_d,
    d^2T/dq_j dq_l = c_l . (MA_b ad(w_j) Sbar_j - ad(Sbar_j)^T mu_b)   (l before or equal j),
    dV/dq_d = -Sbar_d . G_b,   G_b = (P_b x g; m_b g),

``m_b`` and ``P_b`` the subtree's mass and first moment; the Hessian of ``V`` follows from
``dSbar_j/dq_l = ad(Sbar_l) Sbar_j`` and ``dP_b/dq_l = omega_l x P_b + m_b v_l``. Entries
with neither coordinate before the other are zero. Every term is checked against central
differences in tests/unit/test_variational.py.

**The O(n) residual and Newton direction** (Seed 003, Algorithms B.1-B.2 and 1, as reconstructed)

The residual needs, per control point, only ``p_d = Sbar_d . mu_b``, ``dT/dq_d = mu_b . c_d`` and
``dV/dq_d = -Sbar_d . G_b``: one forward sweep (poses, world twists, velocities) and one backward
sweep (subtree momenta ``mu_b``, inertias, gravity wrenches) per point, O(s n) in all (the
Newton iterates of a step share ``q_k``, whose pose part is computed once: it is the last step's
final control point). For the Newton direction the linearised DEL are written with *spatial
variations* (C.15-C.16): per body i and point a, the variation of its pose ``eta_i`` and velocity
``nu_i`` (world frame), which obey ``eta_i = eta_p + sum_e Sbar_e dq_e`` and
``nu_i = nu_p + sum_e (c_e dq_e + Sbar_e dqdot_e)`` (C.19), and of its subtree's momentum ``Y_i``
and gravity wrench ``Z_i`` (C.22-C.23).
Because the spatial variation of ``Sbar_d`` is zero (C.18), body i's rows of the linearised DEL
involve only ``Y_i``, ``Z_i``, ``nu_p`` and its own ``dq_i``. The backward pass keeps ``Y_i``,
``Z_i`` as affine maps of ``(eta_i, nu_i)`` at all points (the seed's ``D, G, l`` and ``Pi, W,
zeta``), solves body i's ``k s`` rows for ``dq_i = X_i (eta_p, nu_p) + x_i`` (the seed's ``X, Y,
y``, with an O(s^3 k^3) solve) and folds body i into its parent's maps; the forward pass recovers
``dq``, ``eta``, ``nu`` from the root out. Cost O(s^3 n). Within a multi-coordinate joint the
later coordinates turn the earlier axes, which adds terms local to the joint.

**Reconstruction** (where the OCR of seed 003 is unreadable or reads differently)

* Algorithms B.1 and B.2 themselves are missing from the transcription (only their captions and
  a few garbled lines of the forward pass survive); the elimination above is re-derived from
  Proposition D.1 (D.12a-d) and the proof of Proposition 2 (D.14-D.32), whose structure it
  follows, and checked against the dense direction to 1e-10 on every covered joint.
* (C.19), (C.22), (D.12b) and (D.17) are partly unreadable; the forms used here are derived:
  ``nu_i = nu_p + ad(u) Sbar dq + Sbar dqdot`` (with ``u`` the velocity *before* the coordinate),
  ``Y_i = Mbar_i nu_i + sum_c (Y_c - ad(Sbar_c dq_c)^T mu_c)``.
* The seed writes the gravity part of the discrete impulse as a generic ``F(g, v, u)`` with
  derivatives ``D_1 F``; here it is gravity only, whose spatial variation is
  ``Z = Ad^-T (0; m (R^T g) x omega_body)`` per body.

* The bodies of Algorithms B.1 and B.2 are missing from the transcription; Algorithms 1-3 are
  in the paper, not in the appendix. The DEL (D.3) are re-derived here from the discrete
  Lagrangian and Eq. (3) of the paper as reconstructed above: ``a^(ab) = w_a b^(ab)`` with
  ``qdot^(k,a) = (1/h) sum_b b^(ab) q^(k,b)``; the sum in (D.3) contracts the *first* index of
  ``a`` with the point of the momentum (``sum_b a^(b a) S_b^T mu_b``), which the OCR prints
  with the indices in either order.
* (C.11a) prints ``dvbar_i/dq_j = ad(Sbar_j)(vbar_i - vbar_j)``; with ``ad(Sbar_j) Sbar_j = 0``
  it equals ``ad(Sbar_j)(vbar_i - vbar_par(j))``, the form used here.
* The seed writes ``dT/dq_j`` as ``S_j^T ad(vbar_j)^T mu_j`` (the ``Omega`` term of D.3);
  here ``mu_b . ad(u_d) Sbar_d``, the same number (``ad(Sbar_d) Sbar_d = 0``) written with the
  velocity before the coordinate so that it holds inside multi-coordinate joints too.

Taught in book/05_variational/.
"""

import weakref
from dataclasses import dataclass, fields

import numpy as np
from numpy.polynomial import legendre

from ._validate import as_real
from .derivatives import dynamics_derivatives_unchecked
from .dynamics import energies_unchecked, mass_matrix
from .kinematics import forward_kinematics_unchecked
from .lie import ad_unchecked, adjoint_unchecked, hat_unchecked, inv_se3_unchecked
from .model import check_model
from .simulation import (
    DEFAULT_MAX_NEWTON,
    DEFAULT_NEWTON_TOL,
    Recorder,
    SimulationError,
    advance,
    check_finite,
    fixed_steps,
    positive,
    progress_bar,
    whole_number,
)
from .singularity import SingularMassMatrixError, explain_singular, singular_joints, solve_mass_system

__all__ = ["SCHEMES", "DEL_METHODS", "Quadrature", "lobatto", "DELResidual", "del_residual",
           "newton_direction", "VariationalSolve", "VariationalRun", "discrete_momentum", "velocity",
           "energy", "momentum_map", "check_variational_model"]

#: The variational schemes :func:`redmax_edu.integrators.simulate` accepts, with their number
#: of interior-plus-end control points s (order 2 s).
SCHEMES = {"vi2": 1, "vi4": 2, "vi6": 3}

#: Largest s of :func:`lobatto` (the Lobatto nodes come from a Legendre root solve).
MAX_S = 8

#: Relative tolerance of the product-of-exponentials test on a joint's ``dS/dq``.
_POE_TOL = 1e-8

#: A Newton step this small relative to ``1 + |q|_inf`` is round-off (as in :mod:`redmax_edu.implicit`).
_ROUNDOFF = 16 * np.finfo(float).eps


# --- the quadrature -----------------------------------------------------------------------------

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
        ``A[a, b] = w_a B[a, b]`` (the seed's ``a^(ab)``).
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


# --- the model check -----------------------------------------------------------------------------

def _poe_defect(joint, q):
    """How far ``dS/dq`` of a joint is from the product-of-exponentials rule (relative), at q."""
    k = joint.ndof
    if k == 0:
        return 0.0
    S = np.asarray(joint.S(q), dtype=float)
    dS = np.asarray(joint.dS_dq(q), dtype=float)          # [:, e, d] = dS_e / dq_d
    want = np.zeros_like(dS)
    ad = ad_unchecked(S.T)                                # ad(S_e), (k, 6, 6)
    for e in range(k):
        for d in range(e + 1, k):                         # a later coordinate moves the earlier axes
            want[:, e, d] = ad[e] @ S[:, d]
    return float(np.abs(dS - want).max() / max(1.0, np.abs(S).max()))


def check_variational_model(model):
    """Refuse what the variational integrators of this module do not cover, naming it.

    Parameters
    ----------
    model : Model
        Each joint's motion subspace is tested at a fixed generic state (the property belongs to
        the joint type, not to the state).

    Raises
    ------
    ValueError
        Naming the body and joint type whose motion subspace is not a product of exponentials
        (with what to use instead), or the force, deformable, constraint or friction present.

    Examples
    --------
    >>> from redmax_edu.joints import SphericalExp
    >>> from redmax_edu.model import Body, Model
    >>> ball = Model([Body("ball", -1, SphericalExp(), np.eye(4), np.eye(4), 1.0, np.eye(3))])
    >>> check_variational_model(ball)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: body 'ball': the spherical_exp joint is not a product of exponentials ...

    Taught in book/05_variational/.
    """
    check_model(model)
    what = "the variational integrators (redmax_edu.variational)"
    if model.constraints:
        raise ValueError(f"argument 'model' has constraints: {what} handle unconstrained trees only; "
                         "use method='bdf2'")
    if model.deformables:
        raise ValueError(f"argument 'model' has deformable bodies: {what} do not include them; use "
                         "method='bdf2'")
    if model.forces:
        names = ", ".join(type(f).__name__ for f in model.forces)
        raise ValueError(f"argument 'model' has extra forces ({names}): {what} take gravity, joint "
                         "springs, joint dampers and joint forces tau only; use method='bdf2'")
    if np.any(model.body_damping):
        i = int(np.flatnonzero(model.body_damping)[0])
        raise ValueError(f"body {model.names[i]!r}: body damping is not a force {what} include; use "
                         "joint damping or method='bdf2'")
    if getattr(model, "friction", ()):
        raise ValueError(f"argument 'model' has joint friction: {what} do not include it; use "
                         "method='euler'")
    q = 0.3 + 0.1 * np.arange(model.nq) % 0.7          # generic: away from every chart singularity
    for i, body in enumerate(model.bodies):
        if _poe_defect(body.joint, q[model.dofs[i]]) > _POE_TOL:
            raise ValueError(
                f"body {body.name!r}: the {body.joint.kind} joint is not a product of exponentials "
                "in its coordinates (its motion subspace S(q) varies otherwise), which the "
                f"recursions of seed 003 assume; use an Euler-angle joint (spherical_euler, "
                "free3d_euler) instead, or method='bdf2'")


# --- world-frame quantities of one state --------------------------------------------------------

@dataclass(frozen=True, eq=False)
class _Spatial:
    """World-frame kinematics (Seed 003, C.1): per coordinate and per subtree, O(n).

    Of one state (:func:`_spatial`), or stacked over the control points of a step (:func:`_sweeps`:
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
    pose: object          # the :class:`_Pose` of the state(s), stacked (m = 1 for one state)


@dataclass(frozen=True, eq=False)
class _Pose:
    """What the sweeps take from the poses alone, stacked over states: reused while q is unchanged."""

    S: np.ndarray         # (m, nq, 6) world twists Sbar_d
    Kg: np.ndarray        # (m, n, 6, 6) spatial variation of each body's gravity wrench
    own: np.ndarray       # (m, n, 46) each body's own terms of the subtree sums: its spatial inertia
                          # (36 entries), gravity wrench (6), mass, first moment m p (3)

    def point(self, a):
        """The pose of state ``a`` alone (m = 1)."""
        return _Pose(self.S[a:a + 1], self.Kg[a:a + 1], self.own[a:a + 1])

    def then(self, other):
        """These states followed by ``other``'s."""
        return _Pose(*(np.concatenate(pair) for pair in ((self.S, other.S), (self.Kg, other.Kg),
                                                         (self.own, other.own))))


@dataclass(frozen=True, eq=False)
class _Plan:
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


def _plan(model):
    """The :class:`_Plan` of ``model``, cached while the model lives."""
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
        plan = _PLANS[model] = _Plan(
            body, prev, last[:-1], waves, pair_d, pair_e, pair_t, tuple(pairs), (pair_e > pair_d)[:, None],
            (pair_e < pair_d)[:, None], np.where(same, model.damping[pair_d, None], 0.0),
            np.where(same, model.stiffness[pair_d, None], 0.0))
    return plan


def _index(idx):
    """An index array as a slice where it is contiguous (numpy's basic indexing costs less)."""
    if len(idx) and np.array_equal(idx, np.arange(idx[0], idx[0] + len(idx))):
        return slice(int(idx[0]), int(idx[0]) + len(idx))
    return idx


def _order(model):
    """``before[j, l]``: coordinate l is in an ancestor's joint, or earlier in (or equal to) j's own."""
    body = _plan(model).body
    anc = model.ancestors[body]                           # (nq, nq)
    same = body[:, None] == body[None, :]
    idx = np.arange(model.nq)
    return anc & (~same | (idx[None, :] <= idx[:, None]))


def _poses(model, Q):
    """The :class:`_Pose` of checked positions ``Q`` (m, nq): one forward kinematics each, then stacked."""
    kins = [forward_kinematics_unchecked(model, q) for q in Q]
    E_wi = np.array([kin.E_wi for kin in kins])                            # (m, n, 4, 4)
    Ad_wj, Ad_iw = adjoint_unchecked(np.array([[kin.E_wj for kin in kins], inv_se3_unchecked(E_wi)]))
    S_joint = np.array([np.concatenate(kin.S, axis=1).T for kin in kins])    # (m, nq, 6)
    S = (Ad_wj[:, _plan(model).body] @ S_joint[..., None])[..., 0]          # Sbar_d = Ad(E_w_joint) S_d
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
    return _Pose(S, Kg, np.concatenate([Mb.reshape(x.shape[:-1] + (36,)), x @ g_hat, m * g, m, x], axis=-1))


def _sweeps(model, Q, V, pose0=None):
    """The world-frame sweeps of checked states ``Q``, ``V`` (m, nq): one stacked :class:`_Spatial`.

    ``pose0``, a :class:`_Pose` of ``Q[0]`` alone, spares its forward kinematics. After the
    forward kinematics everything is vectorised over the states, bodies and coordinates, but for
    a loop along the paths (the velocities) and one over the bodies (the subtree sums).
    """
    plan = _plan(model)
    m, n, nq = len(Q), model.n, model.nq
    pose = _poses(model, Q) if pose0 is None else pose0.then(_poses(model, Q[1:]))
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
    return _Spatial(plan.body, S, u, w[:, :nq], _ad_apply(u, S), mu, MA, Mb, G, pose.Kg, mass, P, pose)


def _spatial(model, q, v):
    """The world-frame sweep of a checked state: a :class:`_Spatial` (O(n))."""
    sp = _sweeps(model, q[None], v[None])
    return _Spatial(sp.body, *(getattr(sp, f.name)[0] for f in fields(_Spatial)[1:-1]), sp.pose)


_CROSS_NEXT, _CROSS_PREV = np.array([1, 2, 0]), np.array([2, 0, 1])


def _cross(a, b):
    """``a x b`` for broadcast stacks of 3-vectors (numpy's cross costs more in its axis handling)."""
    return a[..., _CROSS_NEXT] * b[..., _CROSS_PREV] - a[..., _CROSS_PREV] * b[..., _CROSS_NEXT]


#: ``ad`` is linear in its twist: ``ad(xi) = sum_j xi_j ad(e_j)``, one (6, 36) matrix product.
_AD_BASIS = ad_unchecked(np.eye(6)).reshape(6, 36)


def _ad(xi):
    """``ad(xi)`` (..., 6, 6) of a stack of twists (..., 6)."""
    return (xi @ _AD_BASIS).reshape(xi.shape[:-1] + (6, 6))


def _ad_apply(xi, eta):
    """``ad(xi) eta`` for broadcast stacks of twists (..., 6)."""
    return (_ad(xi) @ eta[..., None])[..., 0]


def _ad_dual_apply(xi, f):
    """``ad(xi)^T f`` for broadcast stacks of twists and wrenches (..., 6)."""
    return (f[..., None, :] @ _ad(xi))[..., 0, :]


def _symmetric(lower, before):
    """The symmetric matrix whose entries ``[j, l]`` with l before-or-equal j are ``lower``."""
    H = np.where(before, lower, 0.0)
    return H + H.T - np.diag(np.diag(H))


def _kinetic_hessian(sp, before):
    """``d^2T/dq^2`` (nq, nq) (module docstring; Seed 003 Prop. 3, reconstructed); ``before`` of _order."""
    c = sp.c                                                              # c_l = ad(u_l) Sbar_l
    mu = sp.mu[sp.body]
    z = (sp.MA[sp.body] @ _ad_apply(sp.w, sp.S)[:, :, None])[:, :, 0] \
        - _ad_dual_apply(sp.S, mu)
    return _symmetric(z @ c.T, before)                                    # [j, l] = z_j . c_l


def _potential_gradient(sp):
    """``dV_gravity/dq`` (nq,): ``-Sbar_d . G_b``."""
    return -np.einsum("di,di->d", sp.S, sp.G[sp.body])


def _potential_hessian(sp, g, before):
    """``d^2V_gravity/dq^2`` (nq, nq) (Seed 003 Prop. 4, reconstructed); ``before`` of :func:`_order`."""
    Sj, Sl = sp.S[:, None, :], sp.S[None, :, :]
    first = np.einsum("jli,ji->jl", _ad_apply(Sl, Sj), sp.G[sp.body])    # (ad(Sbar_l) Sbar_j) . G_b
    P = sp.P[sp.body][:, None, :]                                        # subtree of j's body
    m = sp.mass[sp.body][:, None, None]
    dP = _cross(Sl[..., :3], P) + m * Sl[..., 3:]                       # (j, l, 3)
    second = np.einsum("ji,jli->jl", sp.S[:, :3], _cross(dP, g))
    return _symmetric(-(first + second), before)


# --- one control point ---------------------------------------------------------------------------

@dataclass(frozen=True, eq=False)
class _Point:
    """What the DEL need at one control point ``(q, qdot)``."""

    M: np.ndarray         # (nq, nq)
    p: np.ndarray         # M qdot
    Pq: np.ndarray        # dp/dq (nq, nq)
    Lq: np.ndarray        # dL/dq + Q (the forcing per unit time), (nq,)
    Lqq: np.ndarray       # d(dL/dq)/dq (nq, nq)
    Lqv: np.ndarray       # d(dL/dq + Q)/dqdot (nq, nq)


def _point(model, q, v, tau):
    """The terms of one control point of a checked state; ``tau`` (nq,) or None."""
    d = dynamics_derivatives_unchecked(model, q, v)
    sp = _spatial(model, q, v)
    Pq = np.einsum("jki,k->ji", d.dM_dq, v)
    Tq = 0.5 * np.einsum("jki,j,k->i", d.dM_dq, v, v)
    Lq = Tq - _potential_gradient(sp) - model.stiffness * (q - model.q_rest) - model.damping * v
    if tau is not None:
        Lq = Lq + tau
    before = _order(model)
    Lqq = _kinetic_hessian(sp, before) - _potential_hessian(sp, model.gravity, before)
    Lqq -= np.diag(model.stiffness)
    return _Point(d.M, d.M @ v, Pq, Lq, Lqq, Pq.T - np.diag(model.damping))


# --- the DEL residual of one step ----------------------------------------------------------------

@dataclass(frozen=True, eq=False)
class DELResidual:
    """The DEL of one step at given control points (module docstring).

    Attributes
    ----------
    model : Model
    quadrature : Quadrature
    h : float
        Step (s).
    q, qdot : ndarray, shape (s + 1, nq)
        The control points (row 0 is ``q_k``) and the interpolated velocities there.
    r : ndarray, shape (s, nq)
        ``r^(k,a)``, a = 0 .. s-1 (momentum units, N m s or N s).
    p_next : ndarray, shape (nq,)
        ``p_(k+1) = D_s L_d + Q^(k,s)``.
    jacobian : ndarray, shape (s nq, s nq), or None
        ``d r / d q^(k,1..s)``, row block a, column block g - 1 (``method="dense"`` only).
    scale : float
        ``max_i M_ii(q_k)``: ``|r|_inf / scale`` is the residual as a velocity error.
    method : str
        ``"dense"`` (assembled from ``M``, ``dM/dq`` and the Hessians) or ``"recursive"`` (the
        O(n) sweeps; :func:`newton_direction` then runs the O(n) elimination).
    sweeps : internal
        For ``"recursive"``: the world-frame quantities at the s + 1 control points, which the
        O(n) Newton direction reads (None for ``"dense"``).
    """

    model: object
    quadrature: Quadrature
    h: float
    q: np.ndarray
    qdot: np.ndarray
    r: np.ndarray
    p_next: np.ndarray
    jacobian: np.ndarray | None
    scale: float
    method: str
    sweeps: object = None

    @property
    def scaled(self):
        """``|r|_inf / max_i M_ii(q_k)``: the residual as a velocity error (rad/s or m/s)."""
        return float(np.abs(self.r).max(initial=0.0) / self.scale)


def _residual(model, quad, q0, p0, X, h, taus):
    """The dense :func:`del_residual` of checked arguments; ``taus`` a list of s+1 (nq,) arrays or Nones."""
    s, nq = quad.s, model.nq
    Q = np.concatenate([q0[None], X])
    V = quad.B @ Q / h
    pts = [_point(model, Q[a], V[a], taus[a]) for a in range(s + 1)]
    r = np.empty((s + 1, nq))
    for a in range(s + 1):
        r[a] = sum(quad.A[b, a] * pts[b].p for b in range(s + 1)) + h * quad.w[a] * pts[a].Lq
    r[0] += p0
    J = np.zeros((s, nq, s, nq))
    for a in range(s):
        for g in range(1, s + 1):
            blk = quad.A[g, a] * pts[g].Pq + h * quad.w[a] * quad.B[a, g] / h * pts[a].Lqv
            blk = blk + sum(quad.A[b, a] * quad.B[b, g] / h * pts[b].M for b in range(s + 1))
            if g == a:
                blk = blk + h * quad.w[a] * pts[a].Lqq
            J[a, :, g - 1, :] = blk
    scale = float(np.max(np.abs(np.diag(pts[0].M))))
    return DELResidual(model, quad, h, Q, V, r[:s], r[s], J.reshape(s * nq, s * nq), scale, "dense")


def _recursive_residual(model, quad, q0, p0, X, h, taus, pose0=None, scale=None):
    """The O(n) :func:`del_residual` (Seed 003, D.3, reconstructed): sweeps only, no matrix.

    ``pose0`` (the :class:`_Pose` of ``q0``) and ``scale`` (``max_i M_ii(q0)``), when known: they
    are the same for every Newton iterate of a step.
    """
    s = quad.s
    Q = np.concatenate([q0[None], X])
    V = quad.B @ Q / h
    sp = _sweeps(model, Q, V, pose0)                           # every array (s + 1, ...)
    mu = sp.mu[:, sp.body]                                     # mu_b of each coordinate's body
    p = np.einsum("adi,adi->ad", sp.S, mu)                     # Sbar_d . mu_b
    f = np.einsum("adi,adi->ad", mu, sp.c)                     # dT/dq
    f += np.einsum("adi,adi->ad", sp.S, sp.G[:, sp.body])      # -dV/dq
    f -= model.stiffness * (Q - model.q_rest) + model.damping * V
    if taus[0] is not None:
        f = f + np.array(taus)
    r = quad.A.T @ p + h * quad.w[:, None] * f
    r[0] += p0
    if scale is None:
        S0 = sp.S[0]
        scale = float(np.max(np.einsum("di,di->d", (sp.MA[0, sp.body] @ S0[..., None])[..., 0], S0)))  # M_ii
    return DELResidual(model, quad, h, Q, V, r[:s], r[s], None, scale, "recursive", sp)


def _taus(tau, quad, t, h, nq):
    """``tau`` at the s+1 quadrature points of a step starting at t."""
    if tau is None:
        return [None] * (quad.s + 1)
    if callable(tau):
        return [as_real(tau(t + c * h), (nq,), "tau(t)") for c in quad.c]
    return [tau] * (quad.s + 1)


#: How :func:`del_residual` evaluates the DEL.
DEL_METHODS = ("dense", "recursive")


def del_residual(model, q0, p0, control, h, s=1, tau=None, t=0.0, method="dense"):
    """The DEL residual of one step and the next momentum, with the dense Jacobian or the O(n) sweeps.

    Parameters
    ----------
    model : Model
        Covered by :func:`check_variational_model`.
    q0, p0 : array_like, shape (nq,)
        ``q_k`` and the discrete momentum ``p_k``.
    control : array_like, shape (s, nq)
        The control points ``q^(k,1)``, ..., ``q^(k,s) = q_(k+1)``.
    h : float
        Step (s).
    s : int
        Number of control points after ``q_k`` (Lobatto rule with s + 1 nodes).
    tau : array_like (nq,) or callable ``t -> (nq,)``, optional
        Applied joint forces, evaluated at the quadrature points ``t + c_a h``.
    t : float
        Time of ``q_k`` (s).
    method : {"dense", "recursive"}
        ``"dense"``: the residual from ``M``, ``dM/dq`` and the assembled Jacobian.
        ``"recursive"``: the residual by O(n) world-frame sweeps (no Jacobian; the Newton
        direction is then the O(n) elimination of :func:`newton_direction`).

    Returns
    -------
    DELResidual

    Examples
    --------
    A free prismatic body (no gravity): the DEL give ``p_k = m (q1 - q0) / h = p_(k+1)``.

    >>> from redmax_edu.joints import Prismatic
    >>> from redmax_edu.model import Body, Model
    >>> slider = Model([Body("slider", -1, Prismatic([1, 0, 0]), np.eye(4), np.eye(4), 2.0, np.eye(3))],
    ...                gravity=[0, 0, 0])
    >>> res = del_residual(slider, [0.0], [2.0], [[0.1]], 0.1)
    >>> np.round(res.r, 12) + 0.0, res.p_next
    (array([[0.]]), array([2.]))

    Taught in book/05_variational/.
    """
    quad = lobatto(s)
    if method not in DEL_METHODS:
        raise ValueError(f"argument 'method' must be one of {DEL_METHODS}, got {method!r}")
    check_variational_model(model)
    nq = model.nq
    q0 = as_real(q0, (nq,), "q0")
    p0 = as_real(p0, (nq,), "p0")
    X = as_real(control, (quad.s, nq), "control")
    h = float(as_real(h, (), "h"))
    if not h > 0:
        raise ValueError(f"argument 'h' must be positive, got {h:g}")
    if tau is not None and not callable(tau):
        tau = as_real(tau, (nq,), "tau")
    evaluate = _residual if method == "dense" else _recursive_residual
    return evaluate(model, quad, q0, p0, X, h, _taus(tau, quad, float(t), h, nq))


def _dense_direction(res):
    s, nq = res.r.shape
    try:
        dx = -np.linalg.solve(res.jacobian, res.r.ravel())
    except np.linalg.LinAlgError:
        raise ValueError("the Jacobian of the DEL is singular at these control points: try a smaller "
                         "step 'h'") from None
    return dx.reshape(s, nq)


def newton_direction(residual):
    """The Newton direction ``-J^-1 r``, shape (s, nq), of a :class:`DELResidual`.

    Dense LU of the assembled Jacobian for ``residual.method == "dense"``; for ``"recursive"``
    the O(n) elimination over the tree (a backward pass expressing every subtree's spatial
    momentum and gravity variations in its joint's parent's, a forward pass recovering the
    coordinates: Seed 003, Algorithms B.1-B.2 as reconstructed in the module docstring).
    Taught in book/05_variational/.

    Raises
    ------
    ValueError
        If the Jacobian (or a joint's block of it) is singular.
    """
    if not isinstance(residual, DELResidual):
        raise ValueError(f"argument 'residual' must be a DELResidual, got {type(residual).__name__}")
    if residual.method == "dense":
        return _dense_direction(residual)
    return _recursive_direction(residual)


def _recursive_direction(res):
    """The O(n) Newton direction of a recursive :class:`DELResidual` (reconstructed Alg. B.1-B.2).

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
    plan = _plan(model)
    sw = res.sweeps
    npt = s + 1
    Z = 12 * npt
    A, B = quad.A, quad.B
    hw = h * quad.w
    rows, inner = np.arange(s), np.arange(1, npt)       # the points a < s of the rows, b >= 1 of the unknowns
    SC = np.array([sw.S, sw.c])                                         # (Sbar_d; c_d), (2, s + 1, nq, 6)
    adS = _ad_dual_apply(sw.S, np.array([sw.mu, sw.G])[:, :, plan.body])            # ad(Sbar_d)^T (mu_b; G_b)
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


# --- momentum and energy -------------------------------------------------------------------------

def _mass(model, q):
    return mass_matrix(model, q)


def discrete_momentum(model, q, qdot):
    """The momentum ``p = M(q) qdot`` (nq,) a run starts from (the Legendre transform).

    Examples
    --------
    >>> from redmax_edu.joints import Revolute
    >>> from redmax_edu.model import Body, Model
    >>> T = np.eye(4); T[2, 3] = -1.0
    >>> bob = Model([Body("bob", -1, Revolute([0, 1, 0]), np.eye(4), T, 2.0, 0.01 * np.eye(3))])
    >>> discrete_momentum(bob, [0.3], [1.0])  # (I + m L^2) qdot
    array([2.01])

    Taught in book/05_variational/.
    """
    check_model(model)
    q, qdot = model.check_state(q, qdot)
    return _mass(model, q) @ qdot


def velocity(model, q, p):
    """The velocity ``M(q)^-1 p`` (nq,) at a step boundary.

    Taught in book/05_variational/.
    """
    check_model(model)
    q = model.check_state(q)
    p = as_real(p, (model.nq,), "p")
    return solve_mass_system(model, q, _mass(model, q), p)


def energy(model, q, p):
    """Total energy ``T + V`` (J) at ``(q, M^-1 p)``: kinetic, gravity and joint springs.

    Examples
    --------
    >>> from redmax_edu.joints import Revolute
    >>> from redmax_edu.model import Body, Model
    >>> T = np.eye(4); T[2, 3] = -1.0
    >>> bob = Model([Body("bob", -1, Revolute([0, 1, 0]), np.eye(4), T, 2.0, 0.01 * np.eye(3))])
    >>> round(energy(bob, [0.0], [2.01]), 12)  # p^2 / (2 (I + m L^2)) - m g L
    -18.615

    Taught in book/05_variational/.
    """
    v = velocity(model, q, p)
    q = model.check_state(q)
    T, V = energies_unchecked(model, q, v, forward_kinematics_unchecked(model, q, v))
    return T + V


def momentum_map(model, q, p):
    """The world-frame spatial momentum (6,) of a tree from its discrete momentum ``p``.

    ``(angular about the world origin; linear)``, defined by ``xi . h = p . dq(xi)`` for every
    rigid motion ``xi`` of the whole tree, i.e. ``h = Sbar_root^-T p_root``. Requires a single
    root whose joint has 6 coordinates (e.g. free3d_euler). Without gravity, joint forces on
    the root, or a root spring, the DEL conserve its linear part and its angular part about the
    root chart's first axis to round-off (discrete Noether theorem; see the module docstring
    for why not the other two).

    Examples
    --------
    >>> from redmax_edu.joints import Free3DEuler
    >>> from redmax_edu.model import Body, Model
    >>> box = Body("box", -1, Free3DEuler(), np.eye(4), np.eye(4), 2.0, np.eye(3))
    >>> free = Model([box], gravity=[0, 0, 0])
    >>> q, qdot = np.zeros(6), np.array([1.0, 0, 0, 0, 0, 0])
    >>> np.round(momentum_map(free, q, discrete_momentum(free, q, qdot)), 12) + 0.0
    array([0., 0., 0., 2., 0., 0.])

    Taught in book/05_variational/.
    """
    check_model(model)
    q = model.check_state(q)
    p = as_real(p, (model.nq,), "p")
    roots = [i for i, par in enumerate(model.parents) if par < 0]
    if len(roots) != 1 or model.bodies[roots[0]].joint.ndof != 6:
        raise ValueError("argument 'model': momentum_map needs a single root body whose joint has 6 "
                         "coordinates (e.g. free3d_euler)")
    s = model.dofs[roots[0]]
    sp = _spatial(model, q, np.zeros(model.nq))
    try:
        return np.linalg.solve(sp.S[s], p[s])             # Sbar_root^T h = p_root
    except np.linalg.LinAlgError:
        raise SingularMassMatrixError(explain_singular(model, q, "the root's motion subspace")) from None


# --- Newton and the run --------------------------------------------------------------------------

@dataclass(frozen=True, eq=False)
class VariationalSolve:
    """One step's Newton solve.

    Attributes
    ----------
    step : int
        0-based step index.
    t : float
        Time at the start of the step (s).
    q : ndarray, shape (s + 1, nq)
        The control points (row 0 ``q_k``, row s ``q_(k+1)``).
    p : ndarray, shape (nq,)
        ``p_(k+1)``.
    residuals : ndarray, shape (iterations + 1,)
        The scaled residual ``|r|_inf / max_i M_ii(q_k)`` (rad/s or m/s) at the predictor and
        after every Newton iteration.
    """

    step: int
    t: float
    q: np.ndarray
    p: np.ndarray
    residuals: np.ndarray

    @property
    def iterations(self):
        """Newton iterations taken."""
        return len(self.residuals) - 1


@dataclass(frozen=True, eq=False)
class VariationalRun:
    """Everything a variational run solved.

    Attributes
    ----------
    scheme : str
        ``"vi2"``, ``"vi4"`` or ``"vi6"``.
    quadrature : Quadrature
    h : float
    t : ndarray, shape (n_steps + 1,)
    q, p : ndarray, shape (n_steps + 1, nq)
        Positions and discrete momenta at the step boundaries.
    solves : tuple of VariationalSolve
    """

    scheme: str
    quadrature: Quadrature
    h: float
    t: np.ndarray
    q: np.ndarray
    p: np.ndarray
    solves: tuple

    @property
    def iterations(self):
        """Newton iterations per step, shape (n_steps,)."""
        return np.array([s.iterations for s in self.solves], dtype=int)

    @property
    def final_residuals(self):
        """The scaled residual each step ended with, shape (n_steps,) (rad/s or m/s)."""
        return np.array([s.residuals[-1] for s in self.solves])


def _fail(scheme, k, t, message):
    raise SimulationError(f"{scheme.upper()} Newton solve failed in step {k + 1}, t = {t:.6g} s: {message}")


def _solve_step(model, quad, q0, p0, h, t, taus, tol, max_iter, scheme, k, method, velocity0, pose0=None):
    """Newton on one step's DEL from the predictor ``q0 + c h v0``; returns (DELResidual, residuals).

    ``pose0``: the :class:`_Pose` of ``q0`` (recursive method), if known; every iterate reuses it
    and the residual's scale.
    """
    def evaluate(X):
        if method == "dense":
            return _residual(model, quad, q0, p0, X, h, taus)
        return _recursive_residual(model, quad, q0, p0, X, h, taus, pose0, scale)

    scale = None
    X = q0[None] + np.outer(quad.c[1:], h * velocity0)
    res = evaluate(X)
    if method != "dense":
        scale = res.scale
        if pose0 is None:
            pose0 = res.sweeps.pose.point(0)
    norms = [res.scaled]
    while norms[-1] > tol:
        if len(norms) > max_iter:
            _fail(scheme, k, t, f"Newton did not converge in {max_iter} iterations: the scaled residual "
                                f"is {norms[-1]:.3g} (tolerance {tol:g}); use a smaller step 'h'")
        try:
            dx = newton_direction(res)
        except ValueError as err:
            _fail(scheme, k, t, str(err))
        if not np.isfinite(dx).all():
            _fail(scheme, k, t, "the Newton direction is not finite; use a smaller step 'h'")
        X = X + dx
        if singular_joints(model, X[-1]):
            raise SingularMassMatrixError(explain_singular(model, X[-1], f"the mass matrix in step {k + 1}"))
        res = evaluate(X)
        norms.append(res.scaled)
        if np.abs(dx).max() <= _ROUNDOFF * (1.0 + np.abs(X).max()) and norms[-1] <= 1e3 * tol:
            break                                         # converged to round-off
    return res, np.array(norms)


def _velocity(model, q, p, method):
    """``M(q)^-1 p``: a dense solve, or Algorithm 10 in O(n) for the recursive method."""
    if method == "dense":
        return np.linalg.solve(_mass(model, q), p)
    from .recursive import inverse_inertia

    return inverse_inertia(model, q) @ p


def integrate(run, h, sample_dt=None, newton_tol=DEFAULT_NEWTON_TOL, max_newton=DEFAULT_MAX_NEWTON,
              method="recursive"):
    """Integrate a :class:`redmax_edu.simulation.Start` with the scheme ``run.method`` and step ``h``;
    ``method`` is the arguments' ``del_method``, the others as in
    :func:`redmax_edu.integrators.simulate`. Returns a Trajectory with its :class:`VariationalRun`."""
    h, n_steps, stride = fixed_steps(run, h, sample_dt)
    per_step = None if run.controls is None else as_real(run.controls, (n_steps, run.model.nq), "tau")
    newton_tol, max_newton = positive(newton_tol, "newton_tol"), whole_number(max_newton, "max_newton", 1000)
    model, q, qdot, t0, scheme, tau_fn = run.model, run.q, run.qdot, run.t0, run.method, run.tau
    if method not in DEL_METHODS:
        raise ValueError(f"argument 'del_method' must be one of {DEL_METHODS}, got {method!r}")
    check_variational_model(model)
    if singular_joints(model, q):
        raise SingularMassMatrixError(explain_singular(model, q, "the mass matrix at the initial state"))
    quad = lobatto(SCHEMES[scheme])
    nq = model.nq
    p = _mass(model, q) @ qdot
    v = qdot
    T, Qs, Ps, solves = [t0], [q], [p], []
    rec = Recorder()
    rec.add(t0, q, qdot, model)
    pose = None                                           # of q_k, when the last step computed it
    with progress_bar(run.progress, n_steps * h, scheme) as bar:
        for k in range(n_steps):
            t = t0 + k * h
            tau = per_step[k] if per_step is not None else tau_fn
            taus = _taus(tau, quad, t, h, nq)
            res, norms = _solve_step(model, quad, q, p, h, t, taus, newton_tol, max_newton, scheme, k,
                                     method, v, pose)
            q, p = res.q[-1].copy(), res.p_next
            if method != "dense":
                pose = res.sweeps.pose.point(quad.s)       # q_(k+1) is the last control point
            check_finite(t + h, np.concatenate([q, p]), scheme)
            v = _velocity(model, q, p, method)
            solves.append(VariationalSolve(k, t, res.q, p, norms))
            T.append(t0 + (k + 1) * h)
            Qs.append(q)
            Ps.append(p)
            if (k + 1) % stride == 0:
                rec.add(T[-1], q, v, model)
            advance(bar, h)
    record = VariationalRun(scheme, quad, h, np.array(T), np.array(Qs), np.array(Ps), tuple(solves))
    nfev = int(sum(s.iterations + 1 for s in solves))
    return rec.trajectory(scheme, h, n_steps, nfev, [], variational=record)
