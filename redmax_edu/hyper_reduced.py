"""Hyper-reduced coordinates: a further Jacobian chained onto ``J_mr`` (§2.6 of the writeup).

When the joint coordinates are themselves driven by fewer coordinates, ``qdot_r = J_rR qdot_R``
(two joints geared to one motor, a whole tail moving as one), the RedMax equations keep their
form with ``J_mR = J_mr J_rR`` in place of ``J_mr`` (Eq. 2.88-2.90).

Taught in book/02_reduced/05_stiffness_damping.
"""

import numpy as np

from ._validate import as_array
from .dynamics import assemble_unchecked
from .model import check_model
from .singularity import solve_mass_system

__all__ = ["hyper_reduce", "hyper_reduced_dynamics"]


def hyper_reduce(J_mr, Jdot_mr, J_rR, Jdot_rR=None):
    """Chain a further Jacobian onto ``J_mr`` (§2.6, Eq. 2.88-2.89).

    With ``qdot_r = J_rR qdot_R``, returns ``J_mR = J_mr J_rR`` and
    ``Jdot_mR = Jdot_mr J_rR + J_mr Jdot_rR``; the hyper-reduced equations of motion
    (Eq. 2.90) are then Eq. (2.19) with these in place of ``J_mr``, ``Jdot_mr``.

    Examples
    --------
    Two joint speeds driven by one coordinate: ``qdot_r = (1, 1) qdot_R``.

    >>> J_mR, Jdot_mR = hyper_reduce(np.eye(2), np.zeros((2, 2)), [[1.0], [1.0]])
    >>> J_mR.ravel(), Jdot_mR.ravel()
    (array([1., 1.]), array([0., 0.]))
    """
    J_rR = np.asarray(J_rR, dtype=float)
    if J_rR.ndim != 2 or J_rR.shape[0] != J_mr.shape[1]:
        raise ValueError(f"argument 'J_rR' must have {J_mr.shape[1]} rows (one per reduced "
                         f"coordinate), got shape {J_rR.shape}")
    J_mR = J_mr @ J_rR
    Jdot_mR = Jdot_mr @ J_rR
    if Jdot_rR is not None:
        Jdot_mR = Jdot_mR + J_mr @ np.asarray(Jdot_rR, dtype=float)
    return J_mR, Jdot_mR


def hyper_reduced_dynamics(model, J_rR, q, qdot, tau_R=None):
    """Accelerations of hyper-reduced coordinates with a constant ``J_rR`` (§2.6, Eq. 2.90).

    The model's coordinates follow ``q = q_0 + J_rR q_R`` (so ``qdot = J_rR qdot_R`` and
    ``Jdot_rR = 0``); Eq. (2.90) is then ``(J_rR^T M_r J_rR) qddot_R = J_rR^T f_r + tau_R``.

    Parameters
    ----------
    model : Model
    J_rR : array_like, shape (nq, nR)
        Full column rank.
    q, qdot : array_like, shape (nq,)
        The model's coordinates and velocities; ``qdot`` must lie in the range of ``J_rR``.
    tau_R : array_like, shape (nR,), optional
        Generalised forces on the hyper-reduced coordinates.

    Returns
    -------
    ndarray, shape (nR,)

    Examples
    --------
    Two equal hinges driven as one coordinate: the result is the (common) angular acceleration.

    >>> from redmax_edu.joints import Revolute
    >>> from redmax_edu.model import Body, Model
    >>> T = np.eye(4); T[2, 3] = -0.5
    >>> link = dict(joint=Revolute([0, 1, 0]), T_joint_body=T, mass=1.0, inertia=np.eye(3) * 0.1)
    >>> top = np.eye(4); top[2, 3] = -1.0
    >>> model = Model([Body("a", -1, T_parent_joint=np.eye(4), **link),
    ...                Body("b", 0, T_parent_joint=top, **link)])
    >>> hyper_reduced_dynamics(model, [[1.0], [1.0]], [0.3, 0.3], [0.0, 0.0]).shape
    (1,)
    """
    J_rR = as_array(J_rR, None, "J_rR")
    if J_rR.ndim != 2 or J_rR.shape[0] != model.nq:
        raise ValueError(f"argument 'J_rR' must have shape ({model.nq}, nR), got {J_rR.shape}")
    q, qdot = check_model(model).check_state(q, qdot)
    qdot_R = np.linalg.lstsq(J_rR, qdot, rcond=None)[0]
    if np.abs(J_rR @ qdot_R - qdot).max() > 1e-9 * max(1.0, np.abs(qdot).max()):
        raise ValueError("argument 'qdot' is not of the form J_rR @ qdot_R: the state leaves the "
                         "hyper-reduced coordinates")
    tau_R = np.zeros(J_rR.shape[1]) if tau_R is None else as_array(tau_R, (J_rR.shape[1],), "tau_R")
    terms = assemble_unchecked(model, q, qdot)
    return solve_mass_system(model, q, J_rR.T @ terms.M @ J_rR, J_rR.T @ terms.f + tau_R,
                          "J_rR^T M_r J_rR (is J_rR of full column rank?)")
