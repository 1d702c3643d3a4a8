"""Variational integrators of a tree in reduced coordinates, by Newton's method (Fan, Schultz and Murphey).

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
``qdot_k = M(q_k)^-1 p_k`` (Fan, Schultz and Murphey's appendix, Eq. (D.3), reconstructed: see
"Reconstruction").

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
  breaks their symmetry (the appendix's integrators, interpolating on the Lie group, keep all six).
  With a translational root the first three entries of ``p`` are the linear momentum.

**Scope: which joints, which forces**

The derivation (the appendix of Fan, Schultz and Murphey, Sections C.1 and D.1) assumes every joint
transform is a product of exponentials, ``Q(q) = exp([S_1] q_1) ... exp([S_m] q_m)`` with
constant twists ``S_d``: then a change of ``q_d`` moves everything after it rigidly along the
world-frame twist ``Sbar_d = Ad(E_w_joint) S_d``, and ``dSbar_e/dq_d = ad(Sbar_d) Sbar_e`` for
every coordinate e after d (Eq. C.7). Within a joint, "after" is the order of its coordinates. Of
the library's joints this holds for fixed, revolute, prismatic, planar, translational, universal,
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
appendix (Proposition 3 and 4): with ``mu_b`` the momentum and ``MA_b`` the inertia of the subtree
of body b, ``u_d`` the spatial velocity just before coordinate d and ``w_d`` just after it,
``c_d = ad(u_d) Sbar_d``,

    dT/dq_d = mu_b . c_d,
    d^2T/dq_j dq_l = c_l . (MA_b ad(w_j) Sbar_j - ad(Sbar_j)^T mu_b)   (l before or equal j),
    dV/dq_d = -Sbar_d . G_b,   G_b = (P_b x g; m_b g),

``m_b`` and ``P_b`` the subtree's mass and first moment; the Hessian of ``V`` follows from
``dSbar_j/dq_l = ad(Sbar_l) Sbar_j`` and ``dP_b/dq_l = omega_l x P_b + m_b v_l``. Entries
with neither coordinate before the other are zero. Every term is checked against central
differences in tests/unit/test_variational.py.

**The O(n) residual and Newton direction** (Fan, Schultz and Murphey's Algorithms B.1-B.2 and 1, as
reconstructed)

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
``Z_i`` as affine maps of ``(eta_i, nu_i)`` at all points (the appendix's ``D, G, l`` and ``Pi, W,
zeta``), solves body i's ``k s`` rows for ``dq_i = X_i (eta_p, nu_p) + x_i`` (the appendix's ``X, Y,
y``, with an O(s^3 k^3) solve) and folds body i into its parent's maps; the forward pass recovers
``dq``, ``eta``, ``nu`` from the root out. Cost O(s^3 n). Within a multi-coordinate joint the
later coordinates turn the earlier axes, which adds terms local to the joint.

**Reconstruction** (where the text transcription of Fan, Schultz and Murphey's appendix is unreadable or
reads differently)

* Algorithms B.1 and B.2 themselves are missing from the transcription (only their captions and
  a few garbled lines of the forward pass survive); the elimination above is re-derived from
  Proposition D.1 (D.12a-d) and the proof of Proposition 2 (D.14-D.32), whose structure it
  follows, and checked against the dense direction to 1e-10 on every covered joint.
* (C.19), (C.22), (D.12b) and (D.17) are partly unreadable; the forms used here are derived:
  ``nu_i = nu_p + ad(u) Sbar dq + Sbar dqdot`` (with ``u`` the velocity *before* the coordinate),
  ``Y_i = Mbar_i nu_i + sum_c (Y_c - ad(Sbar_c dq_c)^T mu_c)``.
* The appendix writes the gravity part of the discrete impulse as a generic ``F(g, v, u)`` with
  derivatives ``D_1 F``; here it is gravity only, whose spatial variation is
  ``Z = Ad^-T (0; m (R^T g) x omega_body)`` per body.

* The bodies of Algorithms B.1 and B.2 are missing from the transcription; Algorithms 1-3 are
  in the paper, not in the appendix. The DEL (D.3) are re-derived here from the discrete
  Lagrangian and Eq. (3) of the paper as reconstructed above: ``a^(ab) = w_a b^(ab)`` with
  ``qdot^(k,a) = (1/h) sum_b b^(ab) q^(k,b)``; the sum in (D.3) contracts the *first* index of
  ``a`` with the point of the momentum (``sum_b a^(b a) S_b^T mu_b``), which the transcription prints
  with the indices in either order.
* (C.11a) prints ``dvbar_i/dq_j = ad(Sbar_j)(vbar_i - vbar_j)``; with ``ad(Sbar_j) Sbar_j = 0``
  it equals ``ad(Sbar_j)(vbar_i - vbar_par(j))``, the form used here.
* The appendix writes ``dT/dq_j`` as ``S_j^T ad(vbar_j)^T mu_j`` (the ``Omega`` term of D.3);
  here ``mu_b . ad(u_d) Sbar_d``, the same number (``ad(Sbar_d) Sbar_d = 0``) written with the
  velocity before the coordinate so that it holds inside multi-coordinate joints too.

Taught in book/05_variational/.
"""

from .direction import newton_direction
from .quadrature import SCHEMES, Quadrature, lobatto
from .residual import (
    DEL_METHODS,
    DELResidual,
    check_variational_model,
    del_residual,
    discrete_momentum,
    energy,
    momentum_map,
    velocity,
)
from .run import VariationalRun, VariationalSolve, integrate

__all__ = ["SCHEMES", "DEL_METHODS", "Quadrature", "lobatto", "DELResidual", "del_residual",
           "newton_direction", "VariationalSolve", "VariationalRun", "discrete_momentum", "velocity",
           "energy", "momentum_map", "check_variational_model", "integrate"]
