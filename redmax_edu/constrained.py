"""A model's constraints as rows of its reduced equations, and the solves that hold them (§2.8-2.9).

Every constraint of :mod:`redmax_edu.constraints` gives rows on the joint velocities and the body
twists at a state; :func:`assemble_constraints` maps the twist parts through ``J_mr`` and stacks
them into one :class:`ConstraintRows` (Eq. 2.109-2.111). :func:`solve_rows` is the constrained
solve every integrator shares, at the acceleration or the velocity level: the KKT system of
Eq. (2.110) with the equalities, and the QP of Eq. (2.112) (:func:`inequality_qp`) when an
inequality must push. :func:`check_constraint_set` names a redundant or inconsistent
constraint, which would make the KKT matrix singular.

Taught in book/02_reduced/08_constraints.
"""

from dataclasses import dataclass

import numpy as np

from .jacobian import fill_jacobian, jacobian_product, jacobian_transpose_product
from .kinematics import forward_kinematics
from .singularity import SingularMassMatrixError, explain_singular

__all__ = ["ConstraintRows", "assemble_constraints", "constraint_rows", "constraint_errors",
           "check_constraint_set", "ConstrainedSolution", "solve_constrained", "solve_rows", "violates",
           "inequality_qp", "NO_QP_SOLUTION"]


@dataclass(frozen=True)
class ConstraintRows:
    """All constraints of a model at one state, as reduced rows (Eq. 2.109-2.111).

    Attributes
    ----------
    G : ndarray (k, nq)
        ``G_r`` and ``G_m J_mr`` stacked.
    Gdot_qdot : ndarray (k,)
        ``Gdot_r qdot + Gdot_m phi + G_m Jdot_mr qdot`` (Eq. 2.109's second block times qdot).
    error, w, wdot : ndarray (k,)
        Position errors and targets (see :class:`~redmax_edu.constraints.Rows`).
    inequality : ndarray (k,) bool
        Which rows are ``>=``.
    owners : tuple of str
        The constraint each row belongs to (for error messages).
    blocks : tuple of slice
        Each constraint's rows, in ``model.constraints`` order.
    G_m : ndarray (k, 6n) or None
        The rows' parts on the body twists (``G = G_r + G_m J``), when asked for
        (:func:`assemble_constraints` with ``twists=True``; BISP needs the external impulses
        on the bodies, §2.11).
    """

    G: np.ndarray
    Gdot_qdot: np.ndarray
    error: np.ndarray
    w: np.ndarray
    wdot: np.ndarray
    inequality: np.ndarray
    owners: tuple
    blocks: tuple
    G_m: np.ndarray | None = None

    @property
    def active(self):
        """Boolean mask (k,) of the rows that enter a solve, every equality and every inequality at or
        past its bound (``c <= 0``)."""
        return ~self.inequality | (self.error <= 0.0)

    def acceleration_rhs(self, qdot, alpha, beta):
        """The rows' right-hand side at the acceleration level.

        ``dw/dt - Gdot qdot - 2 alpha (G qdot - w) - beta^2 g`` (Eq. 2.110 with Baumgarte's terms):
        the velocity rows differentiated in time, as in Eq. (2.103).
        """
        return self.wdot - self.Gdot_qdot - 2.0 * alpha * (self.G @ qdot - self.w) - beta * beta * self.error

    def velocity_rhs(self, h, gamma_):
        """The rows' right-hand side at the velocity level (Eq. 2.106, 2.114), for ``G qdot1``.

        ``w + h dw/dt - gamma g`` for an equality. An inequality ``c >= 0`` takes every row,
        active or not: where it is violated, ``c <= 0``, Baumgarte's ``-gamma c`` pushes it
        back; where it still holds, ``-c / h`` lets the step close the gap but not cross it
        (so a joint reaching its limit stops on it, instead of overshooting by up to
        ``h qdot`` and being pushed back).
        """
        pull = np.where(self.inequality & (self.error > 0.0), self.error / h, gamma_ * self.error)
        return self.w + h * self.wdot - pull


def assemble_constraints(model, q, qdot, kin, J, Jdot, t, twists=False, *, Jdot_qdot=None):
    """Every constraint of ``model`` at a state, stacked into a :class:`ConstraintRows` (Eq. 2.109-2.111).

    ``kin`` is the forward sweep at ``(q, qdot)`` and ``J``, ``Jdot`` its Jacobians (6n, nq);
    with ``twists`` the rows' parts on the body twists are kept too (``ConstraintRows.G_m``).
    With ``J = Jdot = None`` the maximal rows are mapped to reduced ones without forming
    ``J`` (§2.12): ``(G_m J)^T = J^T G_m^T`` by Algorithm 6, one column per row, and
    ``Jdot qdot`` by Algorithm 5, each in O(n) per column
    (:func:`redmax_edu.jacobian.jacobian_transpose_product`, :func:`~redmax_edu.jacobian.jacobian_product`);
    the recursive dynamics take this path, and pass the body accelerations ``Jdot qdot``
    ((n, 6) or (6n,)) as ``Jdot_qdot`` since their own sweep has them.
    """
    if J is None:
        def reduce(G_m):
            return jacobian_transpose_product(model, kin, G_m.T).T
        if Jdot_qdot is None:
            Jdot_qdot = jacobian_product(model, kin, qdot, with_derivative=True)[1]
        Jdot_qdot = Jdot_qdot.reshape(6 * model.n)
    else:
        def reduce(G_m):
            return G_m @ J
        Jdot_qdot = Jdot @ qdot
    G_r, G_m, bias, err, w, wdot, ineq, owners, blocks = [], [], [], [], [], [], [], [], []
    start = 0
    for c in model.constraints:
        r = c.rows(model, q, qdot, kin, t)
        k = len(r.bias)
        G_r.append(np.zeros((k, model.nq)) if r.G_r is None else r.G_r)
        Gm = np.zeros((k, model.n, 6))                             # the rows on the body twists
        for body, block in r.G_m.items():
            Gm[:, body] = block
        G_m.append(Gm.reshape(k, 6 * model.n))
        bias.append(r.bias)
        err.append(r.error)
        w.append(r.w)
        wdot.append(r.wdot)
        ineq.append(np.full(k, c.inequality))
        owners.extend([c.describe(model)] * k)
        blocks.append(slice(start, start + k))
        start += k
    if not blocks:
        z = np.zeros(0)
        return ConstraintRows(np.zeros((0, model.nq)), z, z, z, z, np.zeros(0, bool), (), (),
                              np.zeros((0, 6 * model.n)) if twists else None)
    G_m = np.vstack(G_m)
    return ConstraintRows(np.vstack(G_r) + reduce(G_m), np.concatenate(bias) + G_m @ Jdot_qdot,
                          np.concatenate(err), np.concatenate(w), np.concatenate(wdot), np.concatenate(ineq),
                          tuple(owners), tuple(blocks), G_m if twists else None)


def constraint_rows(model, q, qdot, t=0.0):
    """The model's constraint rows at ``(q, qdot)`` and time ``t``: :func:`assemble_constraints`
    after one forward sweep, for callers that have not made one (a :class:`ConstraintRows`)."""
    q, qdot = model.check_state(q, qdot)
    kin = forward_kinematics(model, q, qdot)
    J, Jdot = fill_jacobian(model, kin, with_derivative=True)
    return assemble_constraints(model, q, qdot, kin, J, Jdot, t)


def constraint_errors(model, q, t=0.0):
    """Each constraint's position error at ``q`` and time ``t``, a list in ``model.constraints`` order.

    For an equality the drift from ``g = 0``; for an inequality the value of ``c`` (negative
    when violated); a constraint on velocities only has none (zeros).
    """
    rows = constraint_rows(model, q, np.zeros(model.nq), t)
    return [rows.error[block] for block in rows.blocks]


def check_constraint_set(model, rows, active=None, tol=1e-10):
    """Raise ValueError naming the first constraint whose rows repeat or contradict earlier ones.

    A redundant or inconsistent set (two prescriptions of the same joint, a coupling that a
    loop already implies, a closure with more rows than the motions it removes) makes the
    KKT matrix of Eq. (2.110) singular. ``rows`` is a :class:`ConstraintRows`; ``active``
    selects the rows that take part (default: :attr:`ConstraintRows.active`). Inequalities may
    repeat one another without harm (four wheels on a floor touch it at more points than the
    motions they remove), since the QP of Eq. (2.112) does not need independent rows: pass
    ``~rows.inequality`` to check the equalities alone.
    """
    mask = rows.active if active is None else active
    rank, before = 0, []
    for k, (c, block) in enumerate(zip(model.constraints, rows.blocks, strict=True)):
        keep = np.flatnonzero(mask[block]) + block.start
        if not len(keep):
            continue
        upto = np.concatenate([np.flatnonzero(mask[:block.start]), keep])
        sv = np.linalg.svd(rows.G[upto], compute_uv=False)
        new_rank = int(np.sum(sv > tol * max(1.0, sv[0])))
        if new_rank < rank + len(keep):
            sv_own = np.linalg.svd(rows.G[keep], compute_uv=False)
            if int(np.sum(sv_own > tol * max(1.0, sv_own[0]))) < len(keep):
                why = (f"its {len(keep)} rows are not independent at this state: it removes fewer motions "
                       "than it has rows (for a loop closure about a hinge use the 2-row form with 'axis'; "
                       "a mechanism at a singular configuration also does this)")
            else:
                why = ("its rows repeat motions that earlier constraints already remove "
                       f"({', '.join(before)})")
            raise ValueError(f"the constraint set is redundant or inconsistent: constraints[{k}], "
                             f"{c.describe(model)}: {why}; remove it or change it")
        rank = new_rank
        before.append(c.describe(model))


# --- the constrained solves ------------------------------------------------------------------

@dataclass(frozen=True)
class ConstrainedSolution:
    """The solution of a constrained solve (§2.8-2.9): ``A x = b + G^T lambda`` with the rows of ``rows``.

    Attributes
    ----------
    x : ndarray (nq,)
        Accelerations (:func:`~redmax_edu.dynamics.constrained_dynamics`) or end-of-step velocities (the
        Euler step).
    lam : ndarray (k,)
        One multiplier per row of ``rows`` (zero for an inactive inequality): forces at the
        acceleration level, impulses at the velocity level.
    rows : :class:`redmax_edu.constrained.ConstraintRows`
        The constraint rows at the state of the solve.
    """

    x: np.ndarray
    lam: np.ndarray
    rows: object

    def generalized_force(self, k):
        """``G_k^T lambda_k`` (nq,): what constraint ``k`` (an index into ``model.constraints``) applies.

        For a prescribed joint at the acceleration level these are the joint forces that
        produce the prescribed motion (Eq. 2.113).
        """
        block = self.rows.blocks[k]
        return self.rows.G[block].T @ self.lam[block]


def solve_constrained(model, q, A, b, rows, rhs, what, active):
    """``A x = b + G^T lambda`` with ``G x = rhs`` on the equality rows and ``G x >= rhs`` on the
    inequality rows selected by ``active`` (:func:`solve_rows` on the rows of a
    :class:`~redmax_edu.constrained.ConstraintRows`); returns ``x`` and one multiplier per row."""
    eq = active & ~rows.inequality
    ineq = active & rows.inequality
    lam = np.zeros(len(rows.G))
    x, lam[eq], lam[ineq] = solve_rows(model, q, A, b, rows.G[eq], rhs[eq], rows.G[ineq], rhs[ineq], what,
                                        lambda: check_constraint_set(model, rows, eq))
    return x, lam


def solve_rows(model, q, A, b, G, r_G, C, r_C, what, redundant=None):
    """``A x = b + G^T lam_G + C^T lam_C`` with ``G x = r_G``, ``C x >= r_C`` and ``lam_C >= 0``.

    The constrained solve of the library (Eq. 2.106-2.112, at the acceleration or the velocity
    level): the KKT solve with the equality rows, and, when that violates an inequality row
    (one that must push), the QP of Eq. (2.112) (:func:`inequality_qp`). Shared by
    :func:`~redmax_edu.dynamics.constrained_dynamics`, the Euler step and BISP's contact stage
    (:func:`redmax_edu.friction.bisp.bisp_step`). A singular KKT matrix calls ``redundant()`` (which
    raises a ValueError naming a redundant constraint, if that is why) and then raises a
    :class:`~redmax_edu.singularity.SingularMassMatrixError` about ``what``. Returns ``x, lam_G, lam_C``.
    """
    k = len(G)
    K = np.block([[A, -G.T], [G, np.zeros((k, k))]])
    try:
        sol = np.linalg.solve(K, np.concatenate([b, r_G]))
    except np.linalg.LinAlgError:
        if redundant is not None:
            redundant()
        raise SingularMassMatrixError(explain_singular(model, q, what)) from None
    x, lam_G, lam_C = sol[:len(b)], sol[len(b):], np.zeros(len(C))
    if violates(C, x, r_C):
        x, lam_G, lam_C = inequality_qp(A, b, G, r_G, C, r_C)
    if not np.isfinite(x).all():
        raise SingularMassMatrixError(explain_singular(model, q, what))
    return x, lam_G, lam_C


def violates(C, x, r_C):
    """Whether ``x`` violates a row of ``C x >= r_C`` beyond round-off (``1e-10 (1 + |r_C|)``)."""
    return bool(len(C)) and bool(np.any(C @ x < r_C - 1e-10 * (1.0 + np.abs(r_C))))


#: What the solves say when the active inequalities cannot hold together with the equalities.
NO_QP_SOLUTION = ("the constraint QP of Eq. (2.112) has no solution: the active inequalities "
                   "(joint limits, contacts) contradict the equality constraints")


def inequality_qp(A, b, G, r_G, C, r_C):
    """The QP of Eq. (2.111)-(2.112): minimise ``x^T A x / 2 - b^T x`` with ``G x = r_G``, ``C x >= r_C``.

    Solved by quadprog (Goldfarb and Idnani's dual active-set method), the dense backend that
    Part 1's QP library qpsolvers offers, called directly: on these small problems it takes
    tens of microseconds, and qpsolvers' own set-up several times that. Returns ``x`` and the
    multipliers with ``A x = b + G^T lam_G + C^T lam_C``, ``lam_C >= 0``. ``A`` enters by its
    symmetric part: a nonsymmetric stiffness (a point spring, Eq. 1.32) makes the step matrix
    nonsymmetric, and a QP can only see the symmetric part of its objective.
    """
    import quadprog

    try:
        x, _, _, _, lam, _ = quadprog.solve_qp(0.5 * (A + A.T), b, np.vstack([G, C]).T,
                                               np.concatenate([r_G, r_C]), len(G))
    except ValueError as err:
        if "positive definite" in str(err):
            raise SingularMassMatrixError("the matrix of the constraint QP of Eq. (2.112) is not positive "
                                          "definite: a stiffness or the step size makes the step unstable; "
                                          "use a smaller step 'h'") from None
        raise ValueError(NO_QP_SOLUTION) from None
    return x, lam[:len(G)], lam[len(G):]
