"""The Jacobian ``J_mr`` from reduced to maximal velocities and its time derivative (§2.1-2.2).

``J_mr`` (6n x nq) maps the joint velocities to the stacked body twists, ``phi = J_mr qdot``
(Eq. 2.1, 2.13). Row block i is body i, column block k is joint k. Algorithm 1 fills it in
one forward sweep: the diagonal block is ``Ad(E_i_j) S_i`` and every block to its left is the
parent's block premultiplied by ``Ad(E_i_p)`` (Eq. 2.14). Algorithm 2 differentiates the same
sweep in time (Eq. 2.16-2.18) to get ``Jdot_mr``, which the quadratic velocity vector of the
RedMax equations needs (Eq. 2.19). Algorithms 5 and 6 (§2.10) multiply by ``J_mr``,
``Jdot_mr`` and ``J_mr^T`` in O(n) without forming them. Algorithm 11 (§3.1) differentiates
both in q, ``dJ/dq`` and ``dJdot/dq`` (derivative index last), for Part 3.

Taught in book/02_reduced/02_jacobian and 10_jacobian_products; Algorithm 11 in
book/03_differentiable/01_why_analytic.
"""

from dataclasses import dataclass

import numpy as np

from ._validate import as_columns
from .deformable import node_jacobians
from .kinematics import forward_kinematics, forward_kinematics_unchecked, joint_twist_adjoints, tree_constants
from .lie import ad_unchecked, adjoint_unchecked, inv_se3_unchecked
from .model import check_model

__all__ = ["jacobian", "jacobian_and_derivative", "fill_jacobian", "jacobian_product",
           "jacobian_transpose_product", "JacobianDerivatives", "fill_jacobian_derivatives",
           "jacobian_dq", "jacobian_derivatives", "node_kinematics"]


def _parent_adjoint_rates(model, kin):
    """``d/dt Ad(E_i_p) = -ad(phi_i) Ad(E_i_p) + Ad(E_i_p) ad(phi_p)`` (Eq. 2.18), shape (n, 6, 6).

    ``kin`` must carry the twists; for a root the parent twist is the world's, zero.
    """
    ad_phi = ad_unchecked(kin.phi)
    ad_parent = np.concatenate([ad_phi, _ZERO6])[tree_constants(model).parents]  # a root's parent: the world
    return -ad_phi @ kin.A_ip + kin.A_ip @ ad_parent


_ZERO6 = np.zeros((1, 6, 6))


def fill_jacobian(model, kin, with_derivative=False):
    """Algorithms 1 and 2 from the results of a forward sweep ``kin`` (a :class:`.Kinematics`).

    Returns ``J`` (6n, nq), or ``(J, Jdot)`` when ``with_derivative`` (``kin`` must then
    carry the twists, i.e. come from ``forward_kinematics(model, q, qdot)``). The blocks of
    ``Jdot`` use the rate of each parent adjoint, ``Adot(E_i_p)``, of Eq. (2.18).

    Examples
    --------
    The same ``J`` as :func:`jacobian`, from a sweep already made:

    >>> from redmax_edu.joints import Revolute
    >>> from redmax_edu.model import Body, Model
    >>> T = np.eye(4); T[2, 3] = -1.0  # a 2 kg bob 1 m below a hinge about y
    >>> pendulum = Model([Body("bob", -1, Revolute([0, 1, 0]), np.eye(4), T, 2.0, 0.01 * np.eye(3))])
    >>> from redmax_edu.kinematics import forward_kinematics
    >>> kin = forward_kinematics(pendulum, [0.3], [1.0])
    >>> bool(np.array_equal(fill_jacobian(pendulum, kin), jacobian(pendulum, [0.3])))
    True
    """
    n, nq = model.n, model.nq
    tree, A_ip = tree_constants(model), kin.A_ip
    A_ij = tree.A_ij
    J = np.zeros((n, 6, nq), A_ip.dtype)                       # complex under the complex step
    if with_derivative:
        Jdot = np.zeros((n, 6, nq), A_ip.dtype)
        if tree.has_parents:  # (a model of roots alone has no Ad(E_i_p) in J)
            A_ip_dot = _parent_adjoint_rates(model, kin)          # Eq. (2.18), all bodies at once
    for i, p in enumerate(model.parents):
        s = model.dofs[i]
        J[i, :, s] = A_ij[i] @ kin.S[i]                          # Alg. 1: diagonal block
        if p >= 0:
            J[i] += A_ip[i] @ J[p]                               # Alg. 1: all ancestor blocks at once
        if with_derivative:
            Jdot[i, :, s] = A_ij[i] @ kin.Sdot[i]                # Eq. (2.16)
            if p >= 0:
                Jdot[i] += A_ip_dot[i] @ J[p] + A_ip[i] @ Jdot[p]  # Eq. (2.17)
    J = J.reshape(6 * n, nq)
    return (J, Jdot.reshape(6 * n, nq)) if with_derivative else J


def jacobian(model, q):
    """``J_mr`` at ``q`` by Algorithm 1: shape (6n, nq), body twists ``phi = J_mr @ qdot`` (Eq. 2.1).

    Examples
    --------
    A revolute joint about z at the world origin, with the body 1 m along x: spinning at
    1 rad/s gives the body angular velocity (0, 0, 1) and, in body axes, the velocity (0, 1, 0).

    >>> from redmax_edu.joints import Revolute
    >>> from redmax_edu.model import Body, Model
    >>> T = np.eye(4); T[0, 3] = 1.0
    >>> model = Model([Body("arm", -1, Revolute([0, 0, 1]), np.eye(4), T, 1.0, np.eye(3))])
    >>> jacobian(model, [0.0]).ravel()
    array([0., 0., 1., 0., 1., 0.])
    """
    return fill_jacobian(model, forward_kinematics(model, q))


def jacobian_and_derivative(model, q, qdot):
    """``(J_mr, Jdot_mr)`` by Algorithm 2, each of shape (6n, nq).

    Examples
    --------
    One hinge: ``J`` is constant, so ``Jdot`` vanishes.

    >>> from redmax_edu.joints import Revolute
    >>> from redmax_edu.model import Body, Model
    >>> T = np.eye(4); T[2, 3] = -1.0  # a 2 kg bob 1 m below a hinge about y
    >>> pendulum = Model([Body("bob", -1, Revolute([0, 1, 0]), np.eye(4), T, 2.0, 0.01 * np.eye(3))])
    >>> J, Jdot = jacobian_and_derivative(pendulum, [0.3], [1.0])
    >>> J.ravel(), Jdot.ravel() + 0.0
    (array([ 0.,  1.,  0., -1.,  0.,  0.]), array([0., 0., 0., 0., 0., 0.]))
    """
    return fill_jacobian(model, forward_kinematics(model, q, qdot), with_derivative=True)


def jacobian_product(model, kin, x, with_derivative=False):
    """``J_mr x`` by Algorithm 5, in O(n) and without forming ``J_mr``; with ``Jdot_mr x`` too.

    One forward sweep (§2.10, Eq. 2.115-2.116): body i's block of ``y = J x`` is its parent's
    block carried into its frame plus its own joint's share,

        y_i = Ad(E_i_p) y_p + Ad(E_i_j) S_i x_i,

    and differentiating each factor in time gives ``z = Jdot x`` in the same sweep,

        z_i = Ad(E_i_p) z_p + d/dt Ad(E_i_p) y_p + Ad(E_i_j) Sdot_i x_i.

    Parameters
    ----------
    model : Model
    kin : Kinematics
        A forward sweep of ``model`` (:func:`redmax_edu.kinematics.forward_kinematics`); with
        ``with_derivative`` it must carry the twists (made with ``qdot``), which ``Jdot`` depends on.
    x : array_like, shape (nq,) or (nq, k)
        One vector of joint velocities, or k of them as columns.
    with_derivative : bool

    Returns
    -------
    y : ndarray, shape (6n,) or (6n, k)
        ``J_mr @ x``, ordered like the rows of ``J_mr`` (body by body, angular part first).
    z : ndarray, same shape as ``y``
        ``Jdot_mr @ x``, only when ``with_derivative``.

    Examples
    --------
    For ``x = qdot`` the product is the body twists, and ``Jdot qdot`` is the velocity-product
    part of the accelerations (Eq. 2.2):

    >>> from redmax_edu.joints import Revolute
    >>> from redmax_edu.model import Body, Model
    >>> T = np.eye(4); T[2, 3] = -1.0
    >>> hinge = dict(joint=Revolute([0, 1, 0]), T_joint_body=T, mass=1.0, inertia=0.1 * np.eye(3))
    >>> arm = Model([Body("upper", -1, T_parent_joint=np.eye(4), **hinge),
    ...              Body("lower", 0, T_parent_joint=T, **hinge)])
    >>> kin = forward_kinematics(arm, [0.3, 0.5], [1.0, 2.0])
    >>> y, z = jacobian_product(arm, kin, [1.0, 2.0], with_derivative=True)
    >>> J, Jdot = fill_jacobian(arm, kin, with_derivative=True)
    >>> bool(np.allclose(y, J @ [1.0, 2.0])), bool(np.allclose(z, Jdot @ [1.0, 2.0]))
    (True, True)

    Taught in book/02_reduced/10_jacobian_products.
    """
    x = as_columns(x, model.nq, "x")
    A_ij, A_ip = joint_twist_adjoints(model), kin.A_ip
    # the 6x6 products are written X.dot(Y): in these loops of small products numpy's @ costs
    # two to three times as much
    y = np.zeros((model.n, 6) + x.shape[1:])
    if with_derivative:
        if kin.phi is None:
            raise ValueError("argument 'kin' carries no twists, which Jdot depends on: make it with "
                             "forward_kinematics(model, q, qdot)")
        A_ip_dot = _parent_adjoint_rates(model, kin)
        z = np.zeros_like(y)
    for i, p in enumerate(model.parents):                        # Alg. 5, line 1: forward traversal
        x_j = x[model.dofs[i]]
        y[i] = A_ij[i].dot(kin.S[i].dot(x_j))                    # line 2
        if with_derivative:
            z[i] = A_ij[i].dot(kin.Sdot[i].dot(x_j))             # line 3
        if p >= 0:
            y[i] += A_ip[i].dot(y[p])                            # line 5
            if with_derivative:
                z[i] += A_ip[i].dot(z[p]) + A_ip_dot[i].dot(y[p])    # line 6
    shape = (6 * model.n,) + x.shape[1:]
    return (y.reshape(shape), z.reshape(shape)) if with_derivative else y.reshape(shape)


def jacobian_transpose_product(model, kin, y):
    """``J_mr^T y`` by Algorithm 6, in O(n) and without forming ``J_mr``.

    ``y`` holds one wrench per body (in body coordinates, as the rows of ``J_mr``). One
    backward sweep (§2.10, Eq. 2.117-2.119): each body adds to its own wrench everything its
    subtree passed up, joint j takes its share along its columns, and the sum travels on to the
    parent, carried by ``Ad(E_i_p)^T``:

        w_i = y_i + sum_c alpha_c,     x_j = (Ad(E_i_j) S_j)^T w_i,     alpha_i = Ad(E_i_p)^T w_i.

    With ``y`` the maximal forces this is the generalised force ``J^T f_m`` of Eq. (2.19).

    Parameters
    ----------
    model : Model
    kin : Kinematics
        A forward sweep of ``model`` (the twists are not needed).
    y : array_like, shape (6n,) or (6n, k)
        One stacked vector of body wrenches, or k of them as columns.

    Returns
    -------
    ndarray, shape (nq,) or (nq, k)
        ``J_mr.T @ y``; entries of deformable node coordinates (which ``J_mr`` does not move) are zero.

    Examples
    --------
    A unit force along the lower body's x axis, pushed back to the two hinges:

    >>> from redmax_edu.joints import Revolute
    >>> from redmax_edu.model import Body, Model
    >>> T = np.eye(4); T[2, 3] = -1.0
    >>> hinge = dict(joint=Revolute([0, 1, 0]), T_joint_body=T, mass=1.0, inertia=0.1 * np.eye(3))
    >>> arm = Model([Body("upper", -1, T_parent_joint=np.eye(4), **hinge),
    ...              Body("lower", 0, T_parent_joint=T, **hinge)])
    >>> kin = forward_kinematics(arm, [0.0, 0.0])
    >>> jacobian_transpose_product(arm, kin, [0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0])  # 2 m and 1 m lever arms
    array([-2., -1.])

    Taught in book/02_reduced/10_jacobian_products.
    """
    y = as_columns(y, 6 * model.n, "y")
    A_ij, A_ip = joint_twist_adjoints(model), kin.A_ip
    w = y.reshape((model.n, 6) + y.shape[1:]).copy()            # w_i = y_i + sum_c alpha_c, filled below
    x = np.zeros((model.nq,) + y.shape[1:])
    for i in reversed(range(model.n)):                           # Alg. 6, line 1: backward traversal
        # lines 2-5: w[i] is y_i plus the alpha_c that body i's children added to it below
        x[model.dofs[i]] = A_ij[i].dot(kin.S[i]).T.dot(w[i])     # line 7 (X.dot(Y): see jacobian_product)
        p = model.parents[i]
        if p >= 0:
            w[p] += A_ip[i].T.dot(w[i])                          # line 6: alpha_i, handed to the parent
    return x


# --- Algorithm 11 (§3.1): dJ/dq and dJdot/dq -------------------------------------------------
@dataclass(frozen=True)
class JacobianDerivatives:
    """``J_mr``, ``Jdot_mr`` and their derivatives in q from one sweep of Algorithm 11.

    Attributes
    ----------
    J : ndarray, shape (6n, nq)
    dJ_dq : ndarray, shape (6n, nq, nq)
        ``dJ_dq[:, :, k] = dJ/dq_k`` (derivative index last).
    Jdot : ndarray, shape (6n, nq), or None
    dJdot_dq : ndarray, shape (6n, nq, nq), or None
        ``dJdot_dq[:, :, k] = dJdot/dq_k`` at fixed qdot. Both None when no qdot was given.
        (The derivative of ``Jdot`` in qdot needs no array of its own: ``Jdot = sum_k dJ/dq_k
        qdot_k``, so ``dJdot/dqdot_k = dJ/dq_k``.)
    """

    J: np.ndarray
    dJ_dq: np.ndarray
    Jdot: np.ndarray | None = None
    dJdot_dq: np.ndarray | None = None


def _joint_derivatives(body, q, qdot):
    """``(dA/dq, dS/dq, dAdot/dq, dSdot/dq)`` of a body's joint (§3.2, :meth:`Joint.derivatives`),
    ``dA/dq`` and ``dAdot/dq`` with the derivative index first, (ndof, 6, 6); the last two None
    without qdot. A chart at its singularity is refused with the body named."""
    joint = body.joint
    try:
        return joint._derivatives(joint._refuse_singular(q), qdot)
    except ValueError as err:
        raise ValueError(f"body {body.name!r}: {err}") from None


def fill_jacobian_derivatives(model, kin, q, qdot=None):
    """Algorithm 11 from a forward sweep ``kin`` at ``q`` (and ``qdot``): a :class:`JacobianDerivatives`.

    ``J`` and ``Jdot`` come from :func:`fill_jacobian` (Alg. 1-2); this adds their derivatives
    in q, body by body from the root, with the product rule on Eq. (2.14) and (2.16)-(2.17):

    * diagonal block, ``J_ii = Ad(E_i_j) S_i`` (Eq. 3.9): ``dJ_ii/dq_i = Ad(E_i_j) dS_i/dq_i`` (Alg. 11,
      line 5; Eq. 3.10) and ``dJdot_ii/dq_i = Ad(E_i_j) dSdot_i/dq_i`` (line 6);
    * block of an ancestor joint a, ``J_ia = Ad(E_i_p) J_pa``: in the coordinates of joint i
      only ``Ad(E_i_p)`` moves, ``dJ_ia/dq_i = dAd(E_i_p)/dq_i J_pa`` (line 13), and
      ``dJdot_ia/dq_i = dAd(E_i_p)/dq_i Jdot_pa + dAdot(E_i_p)/dq_i J_pa`` (line 14); in the
      coordinates k of the ancestors only ``J_pa`` does, ``dJ_ia/dq_k = Ad(E_i_p) dJ_pa/dq_k``
      (line 18) and ``dJdot_ia/dq_k = Ad(E_i_p) dJdot_pa/dq_k + Adot(E_i_p) dJ_pa/dq_k`` (line 19).

    The parent adjoint is ``Ad(E_i_p) = Ad(E_i_j) A(q_i)^-1 Ad(E_jbar_p)`` with the joint's
    ``A = Ad(Q(q_i))`` between two constants (Eq. 3.6), so its derivatives follow from the
    joint's ``dA/dq`` and ``dAdot/dq`` (§3.2) by the derivative of an inverse::

        dAd(E_i_p)/dq_k   = -Ad(E_i_j) A^-1 dA_k A^-1 Ad(E_jbar_p)                        (3.7)
        Adot(E_i_p)       = -Ad(E_i_j) A^-1 Adot A^-1 Ad(E_jbar_p)                        (3.13)
        dAdot(E_i_p)/dq_k = -Ad(E_i_j) A^-1 (dAdot_k - dA_k A^-1 Adot - Adot A^-1 dA_k)
                            A^-1 Ad(E_jbar_p)                                             (3.14)

    This is the recursion of Eq. (3.12). The loops of lines 11-22 over the ancestors are array
    products here: ``J_p`` and
    ``dJ_p/dq`` vanish outside the columns (and slices) of body p's ancestors, so multiplying
    the whole of them adds only zeros where the algorithm skips.

    With deformables the node coordinates do not enter ``J_mr`` (their columns are zero), so
    neither do they enter its derivatives: the arrays have ``nq`` columns and slices, zero there.

    Writeup §3.1. Taught in book/03_differentiable/01_why_analytic.

    Parameters
    ----------
    model : Model
    kin : Kinematics
        A forward sweep of ``model`` at ``q`` (:func:`redmax_edu.kinematics.forward_kinematics`);
        with ``qdot`` it must carry the twists (made with the same ``qdot``).
    q, qdot : ndarray, shape (nq,)
        The state of the sweep, checked (``qdot`` optional: then only ``dJ/dq``).

    Returns
    -------
    JacobianDerivatives

    Raises
    ------
    ValueError
        If a joint sits at a singularity of its chart (the body is named), where its
        derivatives are not defined numerically (:data:`redmax_edu.lie.SINGULAR_DET`).

    Notes
    -----
    In the text of the writeup we work from (a transcription of the PDF), Algorithm 11 has
    two slips that the units settle: line 14's left side reads ``dJ/dq`` where it must be
    ``dJdot/dq``, and the last term of line 19 reads ``Adot dJdot/dq`` where it must be
    ``Adot dJ/dq`` (``Adot`` is a rate, so ``Adot dJdot/dq`` would be a rate too many; the
    chain rule on ``Jdot_ia = Ad(E_i_p) Jdot_pa + Adot(E_i_p) J_pa`` gives ``dJ/dq``).
    """
    n, nq = model.n, model.nq
    with_rate = qdot is not None
    if with_rate:
        J, Jdot = fill_jacobian(model, kin, with_derivative=True)
        Jdb = Jdot.reshape(n, 6, nq)
    else:
        J, Jdot = fill_jacobian(model, kin), None
    Jb = J.reshape(n, 6, nq)
    A_ij, A_ip = tree_constants(model).A_ij, kin.A_ip
    # line 2: every joint's quantities (§3.2), dA/dq and dAdot/dq stacked by coordinate
    dtype = J.dtype
    dA, dAdot = np.zeros((nq, 6, 6), dtype), np.zeros((nq, 6, 6), dtype)
    dS, dSdot, twist = [None] * n, [None] * n, np.zeros((n, 6), dtype)
    for i, (body, s) in enumerate(zip(model.bodies, model.dofs, strict=True)):
        if body.joint.ndof:
            dA[s], dS[i], rate, dSdot[i] = _joint_derivatives(body, q[s], None if qdot is None else qdot[s])
            if with_rate:
                dAdot[s], twist[i] = rate, kin.S[i] @ qdot[s]
    # line 9, for every coordinate k at once (its body b): the parent adjoint's derivatives
    Q = inv_se3_unchecked(model.T_parent_joint) @ kin.E_pj           # E_pj = T_parent_joint Q(q_i)
    A_inv = adjoint_unchecked(inv_se3_unchecked(Q))                  # A(q_i)^-1 = Ad(Q^-1)
    left = -A_ij @ A_inv                                             # -Ad(E_i_j) A^-1
    right = adjoint_unchecked(model.T_joint_body) @ A_ip             # A^-1 Ad(E_jbar_p) = Ad(E_j_i) Ad(E_i_p)
    b = tree_constants(model).owners                                 # the body of each joint coordinate
    nr = len(b)
    dA_ip = left[b] @ dA[:nr] @ right[b]                             # Eq. (3.7)
    if with_rate:
        A_dot = adjoint_unchecked(Q) @ ad_unchecked(twist)           # Adot = A ad(S qdot), per joint
        Adot_ip = left @ A_dot @ right                               # Eq. (3.13)
        inner = dAdot[:nr] - dA[:nr] @ (A_inv @ A_dot)[b] - (A_dot @ A_inv)[b] @ dA[:nr]
        dAdot_ip = left[b] @ inner @ right[b]                        # Eq. (3.14)
    dJ = np.zeros((n, 6, nq, nq), dtype)
    dJd = np.zeros((n, 6, nq, nq), dtype) if with_rate else None
    for i, (body, p) in enumerate(zip(model.bodies, model.parents, strict=True)):   # line 1
        s = model.dofs[i]
        moves = body.joint.ndof > 0
        if p >= 0:
            dJ[i] = (A_ip[i] @ dJ[p].reshape(6, -1)).reshape(6, nq, nq)                  # line 18
            if moves:
                dJ[i][:, :, s] += np.moveaxis(dA_ip[s] @ Jb[p], 0, -1)                   # line 13
            if with_rate:                                            # (a fixed joint: Adot(E_i_p) = 0)
                dJd[i] = (A_ip[i] @ dJd[p].reshape(6, -1)
                          + Adot_ip[i] @ dJ[p].reshape(6, -1)).reshape(6, nq, nq)        # line 19
                if moves:
                    dJd[i][:, :, s] += np.moveaxis(dA_ip[s] @ Jdb[p] + dAdot_ip[s] @ Jb[p], 0, -1)  # line 14
        if moves:
            dJ[i][:, s, s] = (A_ij[i] @ dS[i].reshape(6, -1)).reshape(dS[i].shape)       # line 5
            if with_rate:
                dJd[i][:, s, s] = (A_ij[i] @ dSdot[i].reshape(6, -1)).reshape(dSdot[i].shape)  # line 6
    shape = (6 * n, nq, nq)
    return JacobianDerivatives(J, dJ.reshape(shape), Jdot, None if dJd is None else dJd.reshape(shape))


def jacobian_dq(model, q):
    """``dJ_mr/dq`` at ``q`` by Algorithm 11, shape (6n, nq, nq): ``[:, :, k] = dJ/dq_k``.

    Examples
    --------
    Two hinges about y, each body 1 m below its hinge: turning the upper hinge does not change
    the Jacobian, turning the lower one moves its first column. Per unit rate of the upper
    hinge the lower body moves with ``nu = (-1 - cos q2, 0, -sin q2)`` in its own axes (lever
    arms of 1 m and 2 m), whose derivative at ``q2 = 0`` is ``(0, 0, -1)``.

    >>> from redmax_edu.joints import Revolute
    >>> from redmax_edu.model import Body, Model
    >>> T = np.eye(4); T[2, 3] = -1.0
    >>> hinge = dict(joint=Revolute([0, 1, 0]), T_joint_body=T, mass=1.0, inertia=0.1 * np.eye(3))
    >>> arm = Model([Body("upper", -1, T_parent_joint=np.eye(4), **hinge),
    ...              Body("lower", 0, T_parent_joint=T, **hinge)])
    >>> dJ = jacobian_dq(arm, [0.3, 0.0])
    >>> dJ.shape, bool(np.all(dJ[:, :, 0] == 0))
    ((12, 2, 2), True)
    >>> dJ[6:, 0, 1] + 0.0    # d/dq2 of the lower body's twist per unit rate of the upper hinge
    array([ 0.,  0.,  0.,  0.,  0., -1.])

    Writeup §3.1. Taught in book/03_differentiable/01_why_analytic.
    """
    q = check_model(model).check_state(q)
    return fill_jacobian_derivatives(model, forward_kinematics_unchecked(model, q), q).dJ_dq


def jacobian_derivatives(model, q, qdot):
    """``J_mr``, ``Jdot_mr``, ``dJ/dq`` and ``dJdot/dq`` at ``(q, qdot)`` by Algorithm 11.

    Parameters
    ----------
    model : Model
    q, qdot : array_like, shape (nq,)

    Returns
    -------
    JacobianDerivatives
        ``J``, ``Jdot`` (6n, nq) and ``dJ_dq``, ``dJdot_dq`` (6n, nq, nq), derivative index last.

    Examples
    --------
    ``Jdot`` is ``dJ/dq`` contracted with ``qdot`` (Eq. 2.16 is the chain rule in time):

    >>> from redmax_edu.joints import Revolute
    >>> from redmax_edu.model import Body, Model
    >>> T = np.eye(4); T[2, 3] = -1.0
    >>> hinge = dict(joint=Revolute([0, 1, 0]), T_joint_body=T, mass=1.0, inertia=0.1 * np.eye(3))
    >>> arm = Model([Body("upper", -1, T_parent_joint=np.eye(4), **hinge),
    ...              Body("lower", 0, T_parent_joint=T, **hinge)])
    >>> d = jacobian_derivatives(arm, [0.3, 0.5], [1.0, 2.0])
    >>> bool(np.allclose(d.Jdot, d.dJ_dq @ [1.0, 2.0]))
    True

    Writeup §3.1. Taught in book/03_differentiable/01_why_analytic.
    """
    q, qdot = check_model(model).check_state(q, qdot)
    return fill_jacobian_derivatives(model, forward_kinematics_unchecked(model, q, qdot), q, qdot)


def node_kinematics(model, q, qdot=None):
    """Positions, velocities, Jacobians and velocity products of every deformable's nodes.

    Parameters
    ----------
    model : Model
    q : array_like, shape (nq,)
    qdot : array_like, shape (nq,), optional
        Default zero.

    Returns
    -------
    list of NodeKinematics, one per deformable (``model.deformables`` order)

    Notes
    -----
    Eq. (2.94)-(2.95) of a deformable's nodes (:func:`redmax_edu.deformable.node_jacobians`) from one
    forward sweep and the bodies' Jacobian.

    Taught in book/02_reduced/07_deformable.
    """
    qdot = np.zeros(model.nq) if qdot is None else qdot
    q, qdot = model.check_state(q, qdot)
    J, Jdot = jacobian_and_derivative(model, q, qdot)
    E = forward_kinematics(model, q).E_wi
    return node_jacobians(model, q, qdot, E, (J @ qdot).reshape(model.n, 6), J, Jdot)
