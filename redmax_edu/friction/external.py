"""A model's constraints as the external rows of a BISP step, with their friction (Eq. 2.126-2.127).

Bilateral staggered projections (:mod:`redmax_edu.friction.bisp`) take the constraints that are
not joints (loop closures, prescribed motions, contacts with the floor) as rows on the body twists
(:class:`ExternalConstraints`), so that their impulses can be told apart from the joints'
reactions. A floor contact with ``mu > 0`` brings two tangent rows at its contact point
(:func:`tangent_rows`), and a loop closure about a hinge axis the friction of that hinge
(:class:`LoopFriction`, the cylinder of :mod:`redmax_edu.friction.patterns`).

Taught in book/02_reduced/11_friction.
"""

import weakref
from dataclasses import dataclass

import numpy as np

from .._validate import as_index, as_real, as_scalar
from ..constrained import assemble_constraints
from ..constraints import DEFAULT_BAUMGARTE, FloorContact, Loop
from ..jacobian import fill_jacobian
from ..kinematics import forward_kinematics_unchecked
from ..lie import adjoint_unchecked, inv_se3_unchecked
from ..maximal.constraints import pyramid_directions
from ..model import check_model
from .patterns import Cylinder, checked_geometry, geometry_contacts, point_velocity_rows

__all__ = ["LoopFriction", "ExternalConstraints", "tangent_rows", "external_constraints", "external_rows"]


@dataclass(frozen=True)
class LoopFriction:
    """Friction at a loop closure that works as a joint, for BISP (Alg. 8, line 15).

    A closure such as a four-bar's last hinge (:class:`redmax_edu.constraints.Loop`) carries
    its reaction through its equality rows, not through a joint of the tree. BISP treats it like
    a joint: its impulse ``G^T lambda`` (rows ``rows`` of :class:`ExternalConstraints`) is
    turned into normal impulses at contact points by Eq. (2.125), here in maximal coordinates,
    and the points' tangent rows take friction bounded by ``mu`` times their load. Build it with
    :meth:`hinge`.

    Attributes
    ----------
    rows : tuple of int
        The closure's rows in ``ExternalConstraints.G``.
    normals, tangents : ndarray (k, 6n), (l, 6n)
        Contact rows on the body twists (relative velocities of the two bodies' points).
    normal_point, tangent_point : ndarray (k,), (l,) int
        The contact point of each row.
    mu : float
    """

    rows: tuple
    normals: np.ndarray
    tangents: np.ndarray
    normal_point: np.ndarray
    tangent_point: np.ndarray
    mu: float

    @classmethod
    def hinge(cls, E, rows, a, point_a, axis, b, mu, geometry):
        """The friction of a hinge closure between body ``a`` and body ``b`` (-1: the world).

        The hinge has the :class:`~redmax_edu.friction.patterns.Cylinder` ``geometry`` of a revolute joint
        (the same points, normals and tangents, see :class:`~redmax_edu.friction.patterns.JointFriction`)
        about ``axis`` through ``point_a``, both in body a's frame (the pattern moves with body a), with
        the bodies at poses ``E`` (n, 4, 4).

        Examples
        --------
        >>> E = np.stack([np.eye(4), np.eye(4)])
        >>> loop = LoopFriction.hinge(E, (0, 1), 1, [0.5, 0, 0], [0, 1.0, 0], 0, 0.3, Cylinder(0.01, 0.02))
        >>> loop.normals.shape, loop.tangents.shape
        ((16, 12), (8, 12))
        """
        try:
            mu = as_scalar(mu, "mu", minimum=0.0)
            geometry = checked_geometry(geometry)
            if not isinstance(geometry, Cylinder):
                raise ValueError(f"a hinge takes a Cylinder geometry, got {type(geometry).__name__}")
        except ValueError as err:
            raise ValueError(f"loop friction between bodies {a} and {b}: {err}") from None
        E, a, b = as_real(E, None, "E"), as_index(a, "a"), as_index(b, "b", minimum=-1)
        if E.ndim != 3 or E.shape[1:] != (4, 4) or max(a, b) >= len(E):
            raise ValueError(f"argument 'E' must have shape (n, 4, 4) with n > {max(a, b)}, got {E.shape}")
        axis = as_real(axis, (3,), "axis")
        if not np.linalg.norm(axis) > 0:
            raise ValueError(f"loop friction between bodies {a} and {b}: argument 'axis' must be nonzero")
        contacts = geometry_contacts(geometry, tuple((axis / np.linalg.norm(axis)).tolist()))
        E_F_a = np.eye(4)
        E_F_a[:3, 3] = -as_real(point_a, (3,), "point_a")     # the hinge frame F: a's axes at point_a
        A_Fa = adjoint_unchecked(E_F_a)
        blocks = [(a, A_Fa)]
        if b >= 0:
            blocks.append((b, -A_Fa @ adjoint_unchecked(inv_se3_unchecked(E[a]) @ E[b])))
        N, T = np.zeros((len(contacts.normals), 6 * len(E))), np.zeros((len(contacts.tangents), 6 * len(E)))
        for body, A in blocks:
            N[:, 6 * body: 6 * body + 6] = contacts.normals @ A
            T[:, 6 * body: 6 * body + 6] = contacts.tangents @ A
        return cls(tuple(int(r) for r in rows), N, T, contacts.normal_point, contacts.tangent_point, mu)

    def bounds(self, alpha):
        """Each tangent row's bound, ``mu`` times the magnitude of its point's normal impulse."""
        magnitude = np.sqrt(np.bincount(self.normal_point, alpha * alpha))
        return self.mu * magnitude[self.tangent_point]


def _rows_or_empty(x, name, width):
    return np.zeros((0, width)) if x is None else as_real(x, None, name).reshape(-1, width)


@dataclass(frozen=True)
class ExternalConstraints:
    """Constraints beyond the tree's joints for one BISP step, as rows on the body twists (Eq. 2.126-2.127).

    The rows act on the end-of-step twists ``phi_1 = J qdot_1`` (``J`` at the start of the step)
    and become reduced rows through ``J``: loop closures and prescribed motions as equalities
    ``G phi_1 = g``, contacts with the environment as inequalities ``C phi_1 >= c`` (right-hand
    sides with the caller's Baumgarte terms, e.g. ``-gamma * gap``). An inequality row may carry
    Coulomb friction: tangent rows (two per contact, :func:`tangent_rows`) whose impulses are
    bounded by ``mu`` times that row's normal impulse. Optional reduced parts ``G_r``, ``C_r``
    (rows acting on ``qdot`` directly) are added to ``G J`` and ``C J``; their impulses act
    along the joints like a joint force.

    Parameters
    ----------
    n : int
        Number of bodies (the rows have ``6 n`` columns).
    G, g : (kG, 6n), (kG,), optional
        Equality rows and targets.
    C, c : (kC, 6n), (kC,), optional
        Inequality rows and bounds.
    tangents : (kT, 6n), optional
        Friction rows on the twists.
    tangent_of : (kT,) int, optional
        The inequality row (index into ``C``) each tangent row belongs to.
    mu : float or (kC,), optional
        Friction coefficient of each inequality row.
    G_r, C_r : (kG, nq), (kC, nq), optional
        Reduced parts of the rows.
    loops : sequence of LoopFriction, optional
        Friction at closures among the equality rows.
    """

    n: int
    G: np.ndarray | None = None
    g: np.ndarray | None = None
    C: np.ndarray | None = None
    c: np.ndarray | None = None
    tangents: np.ndarray | None = None
    tangent_of: np.ndarray | None = None
    mu: np.ndarray | float = 0.0
    G_r: np.ndarray | None = None
    C_r: np.ndarray | None = None
    loops: tuple = ()

    def __post_init__(self):
        set_ = object.__setattr__
        n6 = 6 * as_index(self.n, "n", minimum=1)
        set_(self, "G", _rows_or_empty(self.G, "G", n6))
        set_(self, "C", _rows_or_empty(self.C, "C", n6))
        set_(self, "tangents", _rows_or_empty(self.tangents, "tangents", n6))
        kG, kC, kT = len(self.G), len(self.C), len(self.tangents)
        set_(self, "g", as_real(np.zeros(kG) if self.g is None else self.g, (kG,), "g"))
        set_(self, "c", as_real(np.zeros(kC) if self.c is None else self.c, (kC,), "c"))
        mu = np.broadcast_to(as_real(self.mu, None, "mu"), (kC,)).copy()
        if (mu < 0).any():
            raise ValueError(f"external constraints: argument 'mu' must be >= 0, got {mu.tolist()}")
        set_(self, "mu", mu)
        of = np.zeros(0, int) if self.tangent_of is None else np.asarray(self.tangent_of)
        if of.shape != (kT,) or of.dtype.kind not in "iu" or (kT and (of.min() < 0 or of.max() >= kC)):
            raise ValueError(f"external constraints: argument 'tangent_of' must hold, for each of the {kT} "
                             f"tangent rows, the index of its inequality row (0 to {kC - 1}), "
                             f"got {of.tolist()}")
        set_(self, "tangent_of", of)
        set_(self, "loops", tuple(self.loops))
        for k, loop in enumerate(self.loops):
            if not isinstance(loop, LoopFriction):
                raise ValueError(f"external constraints: loops[{k}] must be a LoopFriction, got "
                                 f"{type(loop).__name__}")
            if loop.normals.shape[1] != n6 or not all(0 <= r < kG for r in loop.rows):
                raise ValueError(f"external constraints: loops[{k}] must have rows on {n6} twist components "
                                 f"and name rows of G (0 to {kG - 1}), got {list(loop.rows)}")
        for name, k in (("G_r", kG), ("C_r", kC)):
            value = getattr(self, name)
            if value is not None:
                value = as_real(value, None, name)
                if value.ndim != 2 or len(value) != k:
                    raise ValueError(f"external constraints: argument '{name}' must have {k} rows, got "
                                     f"shape {value.shape}")
                set_(self, name, value)

    def check(self, model):
        """Raise ValueError unless the rows fit ``model``."""
        if self.n != model.n:
            raise ValueError(f"external constraints: rows for {self.n} bodies, but the model has {model.n}")
        for name in ("G_r", "C_r"):
            value = getattr(self, name)
            if value is not None and value.shape[1] != model.nq:
                raise ValueError(f"external constraints: argument '{name}' must have {model.nq} columns "
                                 f"(one per coordinate), got {value.shape[1]}")

    def reduced(self, J):
        """The reduced rows ``G J + G_r`` and ``C J + C_r``."""
        G, C = self.G @ J, self.C @ J
        return (G if self.G_r is None else G + self.G_r), (C if self.C_r is None else C + self.C_r)


def tangent_rows(E, body, point, normal):
    """The two friction rows of a contact at ``point`` (body coordinates) of ``body``, shape (2, 6n).

    ``t^T R Gamma(point)`` (Eq. 1.90) for the two tangents ``t1``, ``t2`` of
    :func:`redmax_edu.maximal.constraints.pyramid_directions` of the world ``normal``: the
    world sliding velocities of the material point, given the body twists ``phi``.

    Examples
    --------
    The lowest point of a ball of radius 0.1 m spinning about y at 1 rad/s slides along world x:

    >>> rows = tangent_rows(np.eye(4)[None], 0, [0, 0, -0.1], [0, 0, 1.0])
    >>> rows @ [0, 1.0, 0, 0, 0, 0]
    array([-0.1,  0. ])
    """
    E = as_real(E, None, "E")
    body = as_index(body, "body")
    if E.ndim != 3 or E.shape[1:] != (4, 4) or body >= len(E):
        raise ValueError(f"argument 'E' must have shape (n, 4, 4) with n > {body}, got {E.shape}")
    return _tangent_rows(E, body, as_real(point, (3,), "point"), pyramid_directions(normal)[:2])


def _tangent_rows(E, body, point, directions):
    """:func:`tangent_rows` of checked arrays, with the world tangent ``directions`` (2, 3):
    ``t^T R Gamma(p) = (p x R^T t; R^T t)``."""
    rows = np.zeros((len(directions), 6 * len(E)))
    points = np.broadcast_to(point, directions.shape)
    rows[:, 6 * body: 6 * body + 6] = point_velocity_rows(points, directions @ E[body, :3, :3])
    return rows


def external_constraints(model, q, qdot, h, *, t=0.0, gamma_=DEFAULT_BAUMGARTE[2], loop_friction=None):
    """The model's constraints (``model.constraints``) as :class:`ExternalConstraints` for a BISP step.

    The rows and right-hand sides of the Euler step (:func:`redmax_edu.constrained.assemble_constraints`
    and :meth:`~redmax_edu.constrained.ConstraintRows.velocity_rhs`, Baumgarte's ``gamma_``), with
    each row's part on the body twists kept apart (:class:`ExternalConstraints` needs it to tell
    the external impulses from the joints' reactions). A
    :class:`redmax_edu.constraints.FloorContact` with ``mu > 0`` brings its two tangent rows at
    the sphere's lowest point (:func:`tangent_rows`); ``loop_friction`` maps the index of a
    :class:`redmax_edu.constraints.Loop` with a hinge ``axis`` to ``(mu, Cylinder)``, the
    friction of that closing hinge (:class:`LoopFriction`).

    Examples
    --------
    A ball resting on the floor: one inequality row, two friction rows.

    >>> from redmax_edu.constraints import FloorContact
    >>> from redmax_edu.joints import Planar
    >>> from redmax_edu.model import Body, Model
    >>> slide = Planar([[1, 0], [0, 0], [0, 1]])
    >>> ball = Model([Body("ball", -1, slide, np.eye(4), np.eye(4), 1.0, np.eye(3))],
    ...              constraints=[FloorContact(0, mu=0.5)])
    >>> ext = external_constraints(ball, [0.0, 0.0], [0.0, 0.0], 0.01)
    >>> ext.C.shape, ext.tangents.shape, ext.mu
    ((1, 6), (2, 6), array([0.5]))
    """
    model = check_model(model)
    q, qdot = model.check_state(q, qdot)
    kin = forward_kinematics_unchecked(model, q, qdot)
    J, Jdot = fill_jacobian(model, kin, with_derivative=True)
    h = as_scalar(h, "h", minimum=0.0, strict=True)
    t, gamma_ = as_scalar(t, "t"), as_scalar(gamma_, "gamma_", minimum=0.0)
    return external_rows(model, q, qdot, kin, J, Jdot, h, t, gamma_, loop_friction)[0]


_FLOORS = weakref.WeakKeyDictionary()


def _floor_tangents(model, k):
    """The two world tangents of floor contact ``model.constraints[k]`` (a fixed plane), once per model."""
    floors = _FLOORS.setdefault(model, {})
    if k not in floors:
        floors[k] = pyramid_directions(model.constraints[k].normal)[:2]
    return floors[k]


def external_rows(model, q, qdot, kin, J, Jdot, h, t, gamma_, loop_friction):
    """:func:`external_constraints` of a checked state with its forward sweep ``kin`` and Jacobians;
    returns the :class:`ExternalConstraints` and the :class:`~redmax_edu.constrained.ConstraintRows`
    they come from."""
    rows = assemble_constraints(model, q, qdot, kin, J, Jdot, t, twists=True)
    rhs, G_m = rows.velocity_rhs(h, gamma_), rows.G_m        # G_m: each row's part on the twists
    eq, ineq = ~rows.inequality, rows.inequality
    at = np.cumsum(eq) - 1, np.cumsum(ineq) - 1                # a row's index among its kind
    loop_friction = {} if loop_friction is None else dict(loop_friction)
    tangents, tangent_of, loops = [], [], []
    for k, (c, block) in enumerate(zip(model.constraints, rows.blocks, strict=True)):
        if k in loop_friction:
            if not isinstance(c, Loop) or c.axis is None:
                raise ValueError(f"argument 'loop_friction': constraints[{k}] ({c.describe(model)}) is "
                                 "not a loop closure about a hinge axis")
            mu_k, geometry = loop_friction.pop(k)
            own = at[0][block]
            loops.append(LoopFriction.hinge(kin.E_wi, own, c.a, c.point_a, c.axis, c.b, mu_k, geometry))
        if isinstance(c, FloorContact) and c.mu > 0:
            directions = _floor_tangents(model, k)
            tangents.append(_tangent_rows(kin.E_wi, c.body, c.contact_point(kin.E_wi[c.body]), directions))
            tangent_of += [int(at[1][block.start])] * 2
    if loop_friction:
        raise ValueError(f"argument 'loop_friction': constraints {sorted(loop_friction)} do not exist")
    mu = [getattr(c, "mu", 0.0) for c, block in zip(model.constraints, rows.blocks, strict=True)
          for _ in range(block.stop - block.start) if c.inequality]
    G_r = rows.G - G_m @ J                                     # the rows' direct part on qdot
    ext = ExternalConstraints(model.n, G=G_m[eq], g=rhs[eq], G_r=G_r[eq], C=G_m[ineq], c=rhs[ineq],
                              C_r=G_r[ineq], tangents=np.vstack(tangents) if tangents else None,
                              tangent_of=np.array(tangent_of, int) if tangents else None,
                              mu=np.array(mu), loops=loops)
    return ext, rows

