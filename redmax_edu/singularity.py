"""When the reduced mass matrix cannot be solved with, and which joint is to blame (§2.4.5, §2.4.8).

``M_r = J^T M_m J`` (Eq. 2.19) loses rank wherever a joint's Jacobian ``S`` does: at gimbal lock
of an Euler chart, on the shells ``|q| = 2 pi k`` of exponential coordinates, for a composite
with dependent coordinates. Every solve with ``M_r`` (or with the matrix of an implicit step)
goes through :func:`solve_mass_system`, which names such a joint, or a body without mass, in a
:class:`SingularMassMatrixError` instead of returning an overflowed answer.

Taught in book/02_reduced/04b_euler_joints.
"""

import numpy as np

from .joints import Composite, SphericalEuler, SphericalExp
from .model import check_model

__all__ = ["SingularMassMatrixError", "singular_joints", "explain_singular", "solve_mass_system"]


class SingularMassMatrixError(ValueError):
    """A reduced mass matrix (or the matrix of an implicit step) that cannot be solved with.

    The message names the joint at a singular chart (gimbal lock of an Euler chart, the shell
    ``|q| = 2 pi k`` of exponential coordinates), a joint with dependent coordinates, or a body
    without mass, and what to do about it.
    """


def _joint_singularity(joint, q):
    """Why ``joint.S(q)`` loses rank at ``q`` (a sentence), or None if it has full column rank."""
    if isinstance(joint, Composite):
        for sub, s in zip(joint.joints, joint.slices, strict=True):
            why = _joint_singularity(sub, q[s])
            if why is not None:
                return f"its {sub.kind} part {why}"
    if joint.ndof == 0:
        return None
    sv = np.linalg.svd(joint.S(q), compute_uv=False)
    if len(sv) == joint.ndof and sv[-1] > 1e-8 * max(1.0, sv[0]):  # more coordinates than 6: dependent
        return None
    if isinstance(joint, SphericalEuler):
        return (f"is at gimbal lock of its Euler chart {joint.chart!r}: det S = {joint.det_S(q):.2g} at "
                f"q = {np.round(q, 6).tolist()} (two of its axes line up); reparameterize "
                "(model.reparameterize(q, qdot), which simulate does by default), switch to another "
                "chart (joints.euler.best_chart) or use exponential coordinates (spherical_exp)")
    if isinstance(joint, SphericalExp):
        t = float(np.linalg.norm(q))
        return (f"is on a singular shell of exponential coordinates: |q| = {t:.6g} = {t / (2 * np.pi):.3g} "
                "x 2 pi, where every direction of q gives the same rotation; reparameterize "
                "(model.reparameterize(q, qdot) shortens q by 2 pi, simulate does it by default)")
    return (f"has dependent coordinates at q = {np.round(q, 6).tolist()}: its joint Jacobian S "
            f"has rank {int((sv > 1e-8 * max(1.0, sv[0])).sum())} < {joint.ndof}; choose independent axes")


def singular_joints(model, q):
    """The joints whose Jacobian ``S`` loses rank at ``q``: a list of ``(body name, reason)``.

    These make ``M_r = J^T M_m J`` singular (Eq. 2.19). Used to explain a failed solve.

    Examples
    --------
    >>> from redmax_edu.joints import SphericalEuler
    >>> from redmax_edu.model import Body, Model
    >>> ball = Model([Body("ball", -1, SphericalEuler("XYZ"), np.eye(4), np.eye(4), 1.0, np.eye(3))])
    >>> [name for name, _ in singular_joints(ball, [0.0, np.pi / 2, 0.0])]
    ['ball']
    """
    q = check_model(model).check_state(q)
    out = []
    for i, b in enumerate(model.bodies):
        why = _joint_singularity(b.joint, q[model.dofs[i]])
        if why is not None:
            out.append((b.name, why))
    return out


def explain_singular(model, q, what):
    """The message of a :class:`SingularMassMatrixError` for the matrix ``what`` at ``q``."""
    found = singular_joints(model, q)
    if found:
        causes = "; ".join(f"the {model.bodies[model.index(name)].joint.kind} joint of body {name!r} {why}"
                           for name, why in found)
        return f"{what} is singular: {causes}"
    masses = [b.mass for b in model.bodies]
    light = [b.name for b in model.bodies if b.mass < 1e-12 * max(masses)
             or np.linalg.eigvalsh(b.inertia)[0] < 1e-12 * max(masses)]
    if light:
        return (f"{what} is singular: body {light[0]!r} has (nearly) zero mass or rotational inertia "
                "compared with the others; give it a mass and inertia, or merge it into its parent")
    return (f"{what} is singular or its solution is not finite at q = {np.round(q, 6).tolist()} "
            "(no joint is at a singular chart: check the masses, stiffnesses and the step size)")


def solve_mass_system(model, q, A, b, what="the reduced mass matrix M_r"):
    """``A^-1 b`` by numpy's LU solve, or a :class:`SingularMassMatrixError` naming the cause."""
    if model.overfull_joints:  # more coordinates than directions of motion: singular at every q,
        # though round-off may hide it from the LU solve
        raise SingularMassMatrixError(explain_singular(model, q, what))
    try:
        x = np.linalg.solve(A, b)
    except np.linalg.LinAlgError:
        raise SingularMassMatrixError(explain_singular(model, q, what)) from None
    if not np.isfinite(x).all():
        if not (np.isfinite(A).all() and np.isfinite(b).all()):
            raise ValueError(f"{what} or the force is not finite at q = {np.round(q, 6).tolist()}: a "
                             "coordinate or velocity is too large for the model (the forces overflow)")
        raise SingularMassMatrixError(explain_singular(model, q, what))
    return x
