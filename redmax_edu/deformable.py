"""Deformable bodies attached to rigid bodies: a mass-spring chain in RedMax (§2.7).

A :class:`DeformableSpring` is a chain of point masses (nodes) joined in series by springs.
Each node of mass ``m`` has kinetic energy ``m |xdot|^2 / 2`` and gravitational energy
``-m g . x`` (Eq. 2.91); each segment between consecutive nodes stores ``K eps^2 / 2`` with the
strain ``eps = (l - L)/L`` (Eq. 2.92) and pulls its first node by ``f_0 = (K eps / L) dx / l``,
its second by ``-f_0`` (Eq. 2.93). An optional damping ``D`` adds ``(D epsdot / L) dx / l``
(the force of the dissipation ``D epsdot^2 / 2``), which linearly implicit Euler treats
implicitly.

**Coordinates.** The two end nodes may be *attached*, to a point fixed on a body
(``Attachment(i, r)`` with ``r`` in body i's frame) or to a world point (``Attachment(-1, x)``);
every other node is *free*. Following Eq. (2.96)-(2.97), the generalised coordinates of a model
with deformables are

    q = (q_r, x_f): the joints' coordinates in body order, then the world positions of the
    free nodes (3 per node), deformable by deformable, node by node.

``model.nr`` counts the joint coordinates, ``model.nq`` all of them, and
``q[model.deformable_dofs[d]]`` are deformable d's free nodes. An attached node is not a
coordinate: it moves with its body point, ``xdot_a = R Gamma(r) phi_i`` (Eq. 2.94), so its
row of ``J_MR`` is ``J_am J_mr`` and its velocity product is ``Jdot_am J_mr qdot + J_am Jdot_mr
qdot`` with ``Jdot_am = R [omega_i] Gamma(r)`` (Eq. 2.95). Free nodes have identity rows.
With these node Jacobians, the reduced mass matrix and force of Eq. (2.99) gain

    M_R += sum_nodes m J_n^T J_n,      f_R += sum_nodes J_n^T (m g + f_spring - m Jdot_n qdot),

which :mod:`redmax_edu.dynamics` adds to the rigid terms; the functions there
(``mass_matrix``, ``forward_dynamics``, ``linearly_implicit_euler_step``, the energies) take
the extended ``q`` unchanged. The rigid Jacobian ``jacobian(model, q)`` then has ``nq``
columns, zero in the node columns: the top block row ``[J_mr, 0]`` of ``J_MR``.

This module sits between :mod:`redmax_edu.jacobian` and :mod:`redmax_edu.dynamics`;
:mod:`redmax_edu.model` uses only its class (for validation and the scene format).

Taught in book/02_reduced/07_deformable.
"""

from dataclasses import dataclass

import numpy as np

from ._validate import as_real
from .joints.base import check_keys
from .lie import gamma, hat_unchecked
from .maximal.forces import Attachment

__all__ = ["DeformableSpring", "SpringTerms", "NodeKinematics", "node_jacobians"]

_EYE3 = np.eye(3)
_EYE3.setflags(write=False)


@dataclass(frozen=True)
class SpringTerms:
    """Node forces of one chain, ``f`` (k, 3), with ``K = df/dx`` and ``D = df/dxdot`` (3k, 3k).

    ``D`` is symmetric; so is ``K`` without damping (the elastic force is a gradient), but a
    damped spring in motion adds a nonsymmetric part to ``K`` (its damping force turns with
    the segment). ``energy`` is the elastic energy ``sum K eps^2 / 2`` (Eq. 2.92).
    """

    f: np.ndarray
    K: np.ndarray
    D: np.ndarray
    energy: float


#: Every key of a deformable's scene-format dict (an unknown one is refused, not ignored).
_DEFORMABLE_KEYS = ("type", "name", "nodes", "stiffness", "mass", "first", "last", "damping", "rest_lengths")

class DeformableSpring:
    """A chain of ``k >= 2`` point masses joined by strain springs (§2.7, Eq. 2.91-2.93).

    Parameters
    ----------
    nodes : array_like, shape (k, 3)
        World positions of the nodes at the start (they also give the rest lengths unless
        ``rest_lengths`` is given). For an attached end, the entry is only used for the rest
        length; its position always comes from its attachment.
    stiffness : float
        ``K >= 0`` of every segment, energy ``K eps^2 / 2`` with ``eps = (l - L)/L``.
    mass : float
        Total mass ``> 0``, split evenly over the k nodes (attached ones included, as in the
        RedMax reference scene 12).
    first, last : Attachment or None
        Where the end nodes are held: ``Attachment(i, r)`` (body i of the model, ``r`` in its
        body frame) or ``Attachment(-1, x)`` (the world point x); None leaves the end free.
    damping : float
        Segment damping ``D >= 0``: tension ``(K eps + D epsdot) / L``.
    rest_lengths : array_like, shape (k - 1,), optional
        Rest lengths ``L``; default the segment lengths of ``nodes``.
    name : str

    Attributes
    ----------
    nnodes : int
    node_mass : float
        ``mass / nnodes``.
    free : tuple of int
        Indices of the free nodes, in the order of their coordinates in ``q``.
    attachments : dict
        Node index -> Attachment for the attached ends.

    Examples
    --------
    A scene-12-like model (cm, g, s): two 10 cm rods on hinges about y, a 3-node spring from the
    world point (30, 0, 10) to the tip of the second rod, and a 2-node spring between the rods'
    centres. Only the middle node of the first spring is free, so ``q`` has 2 + 3 coordinates.

    >>> from redmax_edu.joints import Revolute
    >>> from redmax_edu.model import Body, Model
    >>> from redmax_edu.dynamics import forward_dynamics, kinetic_energy
    >>> def shift(x):
    ...     T = np.eye(4); T[0, 3] = x; return T
    >>> rods = [Body(f"body{i + 1}", i - 1, Revolute([0, 1, 0]), shift(10.0 * i), shift(5.0), 10.0,
    ...              np.diag([1.6667, 84.1667, 84.1667])) for i in range(2)]
    >>> cable = DeformableSpring([[30, 0, 10], [25, 0, 5], [20, 0, 0]], stiffness=1e5, mass=1.0,
    ...                          first=Attachment(-1, [30, 0, 10]), last=Attachment(1, [5, 0, 0]),
    ...                          name="cable")
    >>> strut = DeformableSpring([[5, 0, 0], [15, 0, 0]], stiffness=1e5, mass=1.0,
    ...                          first=Attachment(0, [0, 0, 0]), last=Attachment(1, [0, 0, 0]),
    ...                          name="strut")
    >>> model = Model(rods, gravity=[0, 0, -980], deformables=[cable, strut])
    >>> model.nr, model.nq, model.deformable_dofs
    (2, 5, (slice(2, 5, None), slice(5, 5, None)))
    >>> q = model.coordinates()          # joints at 0, free nodes where the chains start
    >>> q
    array([ 0.,  0., 25.,  0.,  5.])
    >>> qddot = forward_dynamics(model, q, np.zeros(model.nq))
    >>> qddot.shape, kinetic_energy(model, q, np.zeros(model.nq))
    ((5,), 0.0)

    Taught in book/02_reduced/07_deformable.
    """

    def __init__(self, nodes, stiffness, mass, first=None, last=None, damping=0.0,
                 rest_lengths=None, name="spring"):
        if not isinstance(name, str) or not name:
            raise ValueError(f"deformable {name!r}: field 'name' must be a non-empty string")
        self.name = name
        where = f"deformable {name!r}"
        x = _checked(where, "nodes", lambda: as_real(nodes, None, "nodes"))
        if x.ndim != 2 or x.shape[1] != 3 or len(x) < 2:
            raise ValueError(f"{where}: field 'nodes' must have shape (k, 3) with k >= 2 nodes, "
                             f"got {x.shape}")
        self.nodes = x
        self.nnodes = len(x)
        self.stiffness = _scalar(stiffness, where, "stiffness", positive=False)
        self.damping = _scalar(damping, where, "damping", positive=False)
        self.mass = _scalar(mass, where, "mass", positive=True)
        self.node_mass = self.mass / self.nnodes
        if rest_lengths is None:
            L = np.linalg.norm(np.diff(x, axis=0), axis=1)
        else:
            L = _checked(where, "rest_lengths",
                         lambda: as_real(rest_lengths, (self.nnodes - 1,), "rest_lengths"))
        if not (L > 0).all():
            raise ValueError(f"{where}: field 'rest_lengths' must be positive (no two consecutive nodes may "
                             f"coincide at rest), got {np.round(L, 12).tolist()}")
        self.rest_lengths = L
        self.attachments = {}
        for key, node, att in (("first", 0, first), ("last", self.nnodes - 1, last)):
            if att is None:
                continue
            if not isinstance(att, Attachment):
                raise ValueError(f"{where}: field '{key}' must be an Attachment(body, r) or None, "
                                 f"got {type(att).__name__}")
            self.attachments[node] = att
        # the material Jacobians Gamma(r) of the attached points (Eq. 2.94), constant
        self._gammas = {node: gamma(att.r) for node, att in self.attachments.items()}
        self.free = tuple(a for a in range(self.nnodes) if a not in self.attachments)
        for arr in (self.nodes, self.rest_lengths):
            arr.setflags(write=False)

    def __repr__(self):
        ends = {k: (a.body, a.r.tolist()) for k, a in self.attachments.items()}
        return (f"DeformableSpring({self.name!r}, {self.nnodes} nodes, K={self.stiffness:g}, "
                f"mass={self.mass:g}, attached={ends})")

    @property
    def nfree(self):
        """Number of free nodes (each has 3 coordinates in ``q``)."""
        return len(self.free)

    def check_bodies(self, n):
        """Raise ValueError if an attachment refers to a body that a model of n bodies lacks."""
        for node, att in self.attachments.items():
            if att.body >= n:
                key = "first" if node == 0 else "last"
                raise ValueError(f"deformable {self.name!r}: field '{key}' is attached to body {att.body}, "
                                 f"but the model has bodies 0..{n - 1} (and -1 for the world)")

    def initial_coordinates(self):
        """The free nodes' starting positions, flattened, shape (3 nfree,)."""
        return self.nodes[list(self.free)].ravel()

    # --- node-space mechanics: Eq. (2.92)-(2.93) ----------------------------------------------
    def elastic(self, x, v, derivatives=True):
        """Spring forces on the nodes at positions ``x`` (k, 3) and velocities ``v`` (k, 3).

        Returns
        -------
        SpringTerms
            ``f`` (k, 3) and its derivatives ``K = df/dx``, ``D = df/dv`` of shape (3k, 3k), with
            node-major ordering (``K[3a + i, 3b + j] = df_a,i / dx_b,j``); ``K`` and ``D`` are None
            when ``derivatives`` is false.
        """
        k = self.nnodes
        f = np.zeros((k, 3))
        K = np.zeros((3 * k, 3 * k)) if derivatives else None
        D = np.zeros((3 * k, 3 * k)) if derivatives else None
        dx, dv = x[1:] - x[:-1], v[1:] - v[:-1]  # segment vectors (np.diff, without its overhead)
        lengths = np.linalg.norm(dx, axis=1)
        if not (lengths > 0).all():
            raise ValueError(f"deformable {self.name!r}: two consecutive nodes coincide; the spring "
                             "direction is undefined")
        energy = 0.0
        for s, (d, w, l, L) in enumerate(zip(dx, dv, lengths, self.rest_lengths, strict=True)):
            u = d / l
            eps, epsdot = (l - L) / L, float(u @ w) / L
            tension = (self.stiffness * eps + self.damping * epsdot) / L     # Eq. (2.93)
            energy += 0.5 * self.stiffness * eps * eps                         # Eq. (2.92)
            f[s] += tension * u
            f[s + 1] -= tension * u
            if not derivatives:
                continue
            P = np.eye(3) - np.outer(u, u)
            # d(tension u)/d(dx): along u through l and ldot, across u through the direction
            dF_dd = (self.stiffness / L**2) * np.outer(u, u) + tension * P / l \
                + (self.damping / L**2) * np.outer(u, P @ w / l)
            dF_dw = (self.damping / L**2) * np.outer(u, u)
            a, b = slice(3 * s, 3 * s + 3), slice(3 * s + 3, 3 * s + 6)
            # node s feels +F, node s+1 feels -F; dx = x_{s+1} - x_s
            for (ra, sa), (rb, sb) in (((a, 1), (b, 1)), ((a, 1), (a, -1)), ((b, -1), (b, 1)),
                                       ((b, -1), (a, -1))):
                K[ra, rb] += sa * sb * dF_dd
                D[ra, rb] += sa * sb * dF_dw
        return SpringTerms(f, K, D, energy)

    # --- the scene format ---------------------------------------------------------------------
    def to_dict(self):
        """The deformable in the scene format (the ``deformables`` list of ``Model.to_dict``)."""
        out = {"name": self.name, "type": "spring", "nodes": self.nodes.tolist(),
               "stiffness": self.stiffness, "mass": self.mass, "rest_lengths": self.rest_lengths.tolist()}
        if self.damping:
            out["damping"] = self.damping
        for node, key in ((0, "first"), (self.nnodes - 1, "last")):
            if node in self.attachments:
                att = self.attachments[node]
                out[key] = {"body": att.body, "r": att.r.tolist()}
        return out

    @classmethod
    def from_dict(cls, spec, index=0):
        """Build from ``{"name", "nodes", "stiffness", "mass", "first"?: {"body", "r"}, "last"?,
        "damping"?, "rest_lengths"?}``; errors name the deformable and the field."""
        if not isinstance(spec, dict):
            raise ValueError(f"deformables[{index}]: must be a dict, got {type(spec).__name__}")
        name = spec.get("name", f"spring{index}")
        where = f"deformable {name!r}"
        check_keys(spec, _DEFORMABLE_KEYS, where)
        if spec.get("type", "spring") != "spring":
            raise ValueError(f"{where}: unknown type {spec['type']!r}; known types: spring")
        for key in ("nodes", "stiffness", "mass"):
            if key not in spec:
                raise ValueError(f"{where}: missing field '{key}'")
        ends = {}
        for key in ("first", "last"):
            att = spec.get(key)
            if att is None:
                continue
            if not isinstance(att, dict) or "body" not in att or "r" not in att or len(att) != 2:
                raise ValueError(f"{where}: field '{key}' must be {{'body': index, 'r': [x, y, z]}}, "
                                 f"got {att!r}")
            body = att["body"]
            if not isinstance(body, int) or isinstance(body, bool):
                raise ValueError(f"{where}: field '{key}' body must be an integer (-1 for the world), "
                                 f"got {body!r}")
            try:
                ends[key] = Attachment(body, att["r"])
            except ValueError as err:
                raise ValueError(f"{where}: field '{key}': {err}") from None
        return cls(spec["nodes"], spec["stiffness"], spec["mass"], damping=spec.get("damping", 0.0),
                   rest_lengths=spec.get("rest_lengths"), name=name, **ends)


def _checked(where, name, convert):
    try:
        return convert()
    except ValueError as err:
        raise ValueError(f"{where}: field '{name}': {str(err).replace('argument ', '')}") from None


def _scalar(value, where, name, positive):
    a = float(_checked(where, name, lambda: as_real(value, (), name)))
    if (positive and not a > 0) or a < 0:
        sign = "positive" if positive else "non-negative"
        raise ValueError(f"{where}: field '{name}' must be {sign}, got {a}")
    return a


@dataclass(frozen=True)
class NodeKinematics:
    """Positions, velocities and Jacobians of every node of one deformable (k nodes, nq coordinates).

    Attributes
    ----------
    x, v : ndarray, shape (k, 3)
        World positions and velocities.
    J : ndarray, shape (k, 3, nq)
        ``xdot_a = J[a] @ qdot``: the rows of ``J_MR`` for the nodes (Eq. 2.96): ``R Gamma(r) J_i``
        for a node on body i (Eq. 2.94), identity columns for a free node, zero for a world point.
    Jdot_qdot : ndarray, shape (k, 3)
        ``Jdot[a] @ qdot = R [omega_i] Gamma(r) phi_i + R Gamma(r) Jdot_i qdot`` (Eq. 2.95-2.96);
        zero for free and world nodes.
    """

    x: np.ndarray
    v: np.ndarray
    J: np.ndarray
    Jdot_qdot: np.ndarray


def node_jacobians(model, q, qdot, E, phi, J, Jdot=None):
    """Node kinematics of every deformable from the rigid quantities already computed.

    Parameters
    ----------
    model : Model
    q, qdot : ndarray, shape (nq,)
    E : ndarray, shape (n, 4, 4)
        Body poses ``E_w_i``.
    phi : ndarray, shape (n, 6)
        Body twists.
    J, Jdot : ndarray, shape (6n, nq)
        ``J_mr`` and ``Jdot_mr`` (``Jdot`` may be None when no velocity product is needed).

    Returns
    -------
    list of NodeKinematics, one per deformable
    """
    out = []
    Jb = J.reshape(model.n, 6, model.nq)
    Jd = None if Jdot is None else (Jdot @ qdot).reshape(model.n, 6)
    for d, spring in enumerate(model.deformables):
        k = spring.nnodes
        x, v = np.zeros((k, 3)), np.zeros((k, 3))
        Jn, acc = np.zeros((k, 3, model.nq)), np.zeros((k, 3))
        start = model.deformable_dofs[d].start
        for slot, a in enumerate(spring.free):
            cols = slice(start + 3 * slot, start + 3 * slot + 3)
            x[a], v[a] = q[cols], qdot[cols]
            Jn[a, :, cols] = _EYE3
        for a, att in spring.attachments.items():
            i = att.body
            if i < 0:
                x[a] = att.r
                continue
            R, G = E[i, :3, :3], spring._gammas[a]
            x[a] = R @ att.r + E[i, :3, 3]
            G_phi = G @ phi[i]
            Jn[a] = R @ G @ Jb[i]                                             # Eq. (2.94): J_am J_mr
            v[a] = R @ G_phi
            if Jd is not None:
                acc[a] = R @ (hat_unchecked(phi[i, :3]) @ G_phi) + R @ (G @ Jd[i])   # Eq. (2.95)
        out.append(NodeKinematics(x, v, Jn, acc))
    return out
