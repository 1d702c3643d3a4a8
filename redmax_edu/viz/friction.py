"""Pictures and runs of §2.11: the joints' implicit contacts, staggered projections on an
incline, and frictional runs recorded step by step.

* :func:`joint_contact_scene` draws the contact points a joint's geometry places (the
  cylinder of a hinge, the ball of a spherical joint, the box of a slider) with their normal
  and tangent directions, read from :meth:`redmax_edu.friction.patterns.JointFriction.contacts`;
  :func:`joint_contact_figure` puts several side by side.
* :func:`incline_box` slides Part 1's box down an incline in maximal coordinates, stepped by
  staggered projections (Algorithm 7, :func:`redmax_edu.friction.staggered.staggered_projections`) or by
  Part 1's own solvers, for comparison.
* :func:`frictional_steps` runs a reduced model with friction by BISP
  (:func:`redmax_edu.friction.bisp.frictional_euler_step`) and keeps every step's
  :class:`~redmax_edu.friction.bisp.BISPInfo` (normal and friction impulses, their bounds, the
  iterations), which :func:`redmax_edu.integrators.simulate` does not record;
  :func:`joint_sticks` says at which samples each joint sticks.

Taught in book/02_reduced/11_friction.
"""

from dataclasses import dataclass

import numpy as np

from .._validate import as_count, as_scalar
from ..constraints import DEFAULT_BAUMGARTE
from ..friction.bisp import frictional_euler_step
from ..friction.patterns import JointFriction
from ..friction.staggered import staggered_projections
from ..lie import exp_se3
from ..maximal.body import RigidBody
from ..maximal.constraints import GroundContact
from ..maximal.simulate import contact_rows, simulate
from ..maximal.system import System
from .scene import Arrow, Marker, Path, Scene, box_edges, cube_bounds
from .shapes import capsule_wireframe, cylinder_wireframe

__all__ = ["NORMAL_COLOR", "TANGENT_COLOR", "contact_directions", "joint_contact_scene",
           "joint_contact_figure", "INCLINE_BOX", "incline_system", "sp_rows", "InclineRun",
           "incline_box", "FrictionSteps", "frictional_steps", "joint_rates", "joint_sticks",
           "STUCK", "friction_scenes_figure"]

#: A joint whose coordinates all move slower than this (rad/s or m/s) sticks: BISP holds a
#: sticking joint at round-off (1e-15 or below), a sliding one moves at a visible speed.
STUCK = 1e-9

#: Colours of the drawn normal and tangent directions (apart from the axes' red, green, blue).
NORMAL_COLOR, TANGENT_COLOR = "#9467bd", "#ff7f0e"


# --------------------------------------------------------------------------- the joints' contacts
def contact_directions(contacts):
    """The points and unit directions of a joint's contact rows, for drawing.

    A row ``(p x d; d)`` of :class:`redmax_edu.friction.patterns.JointContacts` measures the speed of
    the point ``p`` along ``d``; its direction is the row's last three entries.

    Parameters
    ----------
    contacts : JointContacts

    Returns
    -------
    normals, tangents : list of (point, direction)
        Each a pair of arrays of shape (3,), in the joint frame.

    Examples
    --------
    >>> from redmax_edu.friction.patterns import JointFriction, Sphere
    >>> from redmax_edu.joints import SphericalExp
    >>> n, t = contact_directions(JointFriction(0, 0.5, Sphere(0.01)).contacts(SphericalExp()))
    >>> len(n), len(t)
    (6, 12)
    >>> n[0][0], n[0][1]
    (array([0.01, 0.  , 0.  ]), array([1., 0., 0.]))
    """
    def pairs(rows, owner):
        return [(contacts.points[k], row[3:]) for row, k in zip(rows, owner, strict=True)]

    return pairs(contacts.normals, contacts.normal_point), pairs(contacts.tangents, contacts.tangent_point)


def _outline(joint, geometry):
    """The geometry's wireframe in the joint frame: a cylinder about the axis, a ball, a box."""
    from ..friction.patterns import Box, Cylinder

    if isinstance(geometry, Cylinder):
        z = np.asarray(joint.axis, float)
        u = JointFriction(0, 0.0, geometry).contacts(joint).points[0]   # the pattern's first radial point
        x = u - (u @ z) * z
        x /= np.linalg.norm(x)
        E = np.eye(4)
        E[:3, :3] = np.column_stack([x, np.cross(z, x), z])
        return cylinder_wireframe(E, geometry.radius, geometry.height, lines=4)
    if isinstance(geometry, Box):
        return box_edges(np.eye(4), 0.5 * np.asarray(geometry.sides))
    return capsule_wireframe(np.eye(4), geometry.radius, 0.0, meridians=3)


def joint_contact_scene(joint, geometry, *, length=None, title=""):
    """The implicit contacts of a joint with its geometry, as a :class:`~redmax_edu.viz.scene.Scene`.

    Drawn in the joint frame: the geometry's outline (grey), the joint's motion (a dashed
    line along a hinge's axis or a slider's direction), every contact point (black), its
    normals (purple, :data:`NORMAL_COLOR`) and its tangents (orange, :data:`TANGENT_COLOR`).

    Parameters
    ----------
    joint : Joint
        A revolute, prismatic or spherical joint.
    geometry : Cylinder, Box or Sphere
        The geometry the joint takes (:class:`redmax_edu.friction.patterns.JointFriction`).
    length : float, optional
        Length of the drawn directions; by default 0.4 times the geometry's largest size.
    title : str

    Returns
    -------
    Scene
        Items: outline, motion line (none for a ball joint), points, normals, tangents.

    Examples
    --------
    >>> from redmax_edu.friction.patterns import Cylinder
    >>> from redmax_edu.joints import Revolute
    >>> scene = joint_contact_scene(Revolute([0, 0, 1.0]), Cylinder(0.005, 0.01))
    >>> [sum(isinstance(i, kind) for i in scene.items) for kind in (Marker, Arrow)]
    [8, 24]
    """
    contacts = JointFriction(0, 0.0, geometry).contacts(joint)   # validates the geometry
    size = float(np.ptp(contacts.points, axis=0).max())
    length = 0.4 * size if length is None else as_scalar(length, "length", minimum=0.0, strict=True)
    items = [Path(_outline(joint, geometry), "geometry", color="0.6", width=1.0)]
    axis = getattr(joint, "axis", None)
    if axis is not None:
        a = np.asarray(axis, float) / np.linalg.norm(axis)
        items.append(Path(np.array([-0.9 * size * a, 0.9 * size * a]), "joint motion", color="black",
                          width=1.0, dashed=True))
    items += [Marker(p, "", color="black") for p in contacts.points]
    normals, tangents = contact_directions(contacts)
    items += [Arrow(p, length * d, "normal", color=NORMAL_COLOR) for p, d in normals]
    items += [Arrow(p, length * d, "tangent", color=TANGENT_COLOR) for p, d in tangents]
    bounds = cube_bounds(np.vstack([contacts.points, contacts.points + length]), margin=0.1 * size)
    return Scene(tuple(items), bounds, title=title)


def joint_contact_figure(panels, *, panel_size=3.4):
    """Static figure: one 3D panel per ``(joint, geometry, title)`` of ``panels``.

    Returns the matplotlib figure, with a legend of the colours under it.
    """
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D

    from .draw import draw_scene

    fig = plt.figure(figsize=(panel_size * len(panels), panel_size + 0.3))
    for k, (joint, geometry, title) in enumerate(panels):
        ax = fig.add_subplot(1, len(panels), k + 1, projection="3d")
        draw_scene(joint_contact_scene(joint, geometry, title=title), ax, show_notes=False)
        ax.set(xticklabels=[], yticklabels=[], zticklabels=[], xlabel="", ylabel="", zlabel="")
    handles = [Line2D([], [], color=c, label=name) for c, name in
               ((NORMAL_COLOR, "normal"), (TANGENT_COLOR, "tangent"), ("0.6", "joint geometry"))]
    handles.append(Line2D([], [], color="black", linestyle="--", label="joint axis / slide"))
    fig.legend(handles=handles, loc="lower center", ncol=4, fontsize=8, frameon=False)
    fig.subplots_adjust(left=0.0, right=1.0, bottom=0.1, top=0.92, wspace=0.0)
    return fig


# --------------------------------------------------------------------------- Algorithm 7 on an incline
#: Part 1's box (book/01_maximal/11_contact): 20 x 10 x 10 cm, 1 kg.
INCLINE_BOX = RigidBody.cuboid("box", [0.2, 0.1, 0.1], mass=1.0)


@dataclass(frozen=True)
class InclineRun:
    """A box released at rest on an incline: distance downhill ``s`` and lift off the plane
    ``lift`` (m) at the times ``t`` (s), and the staggered iterations of each step (``None``
    for Part 1's solvers)."""

    t: np.ndarray
    s: np.ndarray
    lift: np.ndarray
    iterations: np.ndarray | None


def incline_system(theta_deg, mu):
    """Part 1's box resting on a plane tilted by ``theta_deg`` (friction ``mu``), ready for a step.

    Returns
    -------
    system : System
        The box with its eight corners as candidate contacts
        (:class:`redmax_edu.maximal.constraints.GroundContact`).
    E0 : ndarray (1, 4, 4)
        The box at rest, its bottom face on the plane.
    normal, downhill : ndarray (3,)
        The plane's normal and the direction down the slope.

    Examples
    --------
    >>> system, E0, normal, downhill = incline_system(30.0, 0.5)
    >>> np.round(downhill, 3) + 0.0
    array([ 0.866,  0.   , -0.5  ])
    """
    theta = np.radians(as_scalar(theta_deg, "theta_deg", minimum=0.0))
    if not theta < np.pi / 2:
        raise ValueError(f"argument 'theta_deg' must be below 90 degrees, got {theta_deg}")
    mu = as_scalar(mu, "mu", minimum=0.0)
    normal = np.array([np.sin(theta), 0.0, np.cos(theta)])
    downhill = np.array([np.cos(theta), 0.0, -np.sin(theta)])
    E0 = exp_se3([0.0, theta, 0.0, 0.0, 0.0, 0.0])[None]
    E0[0, :3, 3] = 0.05 * normal
    system = System([INCLINE_BOX], contacts=[GroundContact(0, INCLINE_BOX.corners(), mu=mu,
                                                           plane_normal=normal)])
    return system, E0, normal, downhill


def sp_rows(system, E, h):
    """The contact rows of Algorithm 7 at poses ``E``: ``N``, ``T``, ``r_N``, ``mu``.

    Part 1's rows (:meth:`redmax_edu.maximal.constraints.GroundContact.rows`, with its gap
    handling: a point above the plane may approach by its gap in one step, one inside is pushed
    out by a fifth of its depth), with two signed tangent rows per contact (``+t1``, ``+t2`` of
    the pyramid) as :func:`redmax_edu.friction.staggered.staggered_projections` takes them.
    """
    N, T, r_N, mu = contact_rows(system, E, h, 0.2)
    return N, np.vstack([T[4 * i: 4 * i + 2] for i in range(len(N))]), r_N, mu


def incline_box(theta_deg, mu, *, solver="sp", t_end=1.0, h=0.01, tol=1e-6):
    """Release Part 1's box at rest on a plane tilted by ``theta_deg`` with friction ``mu``.

    Symplectic Euler in maximal coordinates (:func:`incline_system`), the contact and friction
    impulses found by

    * ``"sp"``: staggered projections (Algorithm 7) on the rows of :func:`sp_rows`,
      warm-started with the previous step's friction force;
    * ``"qp"`` or ``"pgs"``: Part 1's single friction QP (Eq. 1.103) or projected Gauss-Seidel,
      through :func:`redmax_edu.maximal.simulate.simulate`.

    Returns
    -------
    InclineRun

    Examples
    --------
    Below ``arctan(mu)`` the box stays; above it slides:

    >>> [bool(incline_box(a, 0.5, t_end=0.1).s[-1] > 1e-6) for a in (20.0, 35.0)]
    [False, True]
    """
    system, E, normal, downhill = incline_system(theta_deg, mu)
    h = as_scalar(h, "h", minimum=0.0, strict=True)
    steps = as_count(int(round(as_scalar(t_end, "t_end", minimum=0.0, strict=True) / h)), "t_end",
                     "steps", 100_000)
    if solver not in ("sp", "qp", "pgs"):
        raise ValueError(f"argument 'solver' must be 'sp', 'qp' or 'pgs', got {solver!r}")
    iterations = None
    if solver == "sp":
        M = system.mass_matrix()
        poses, phi, beta, iterations = [E], np.zeros(6), None, []
        for _ in range(steps):
            f = system.evaluate(poses[-1], phi.reshape(1, 6)).f
            N, T, r_N, mus = sp_rows(system, poses[-1], h)
            out = staggered_projections(M, phi, f, h, N, T, mus, r_N=r_N, beta=beta, tol=tol)
            phi, beta = out.v, out.beta
            iterations.append(out.iterations)
            poses.append((poses[-1][0] @ exp_se3(h * phi))[None])   # Eq. (1.29)
        p = np.array([P[0, :3, 3] for P in poses])
        iterations = np.array(iterations)
    else:
        p = simulate(system, E, np.zeros((1, 6)), h, steps, contact_solver=solver).E[:, 0, :3, 3]
    moved = p - p[0]
    return InclineRun(h * np.arange(steps + 1), moved @ downhill, moved @ normal, iterations)


# --------------------------------------------------------------------------- BISP runs, step by step
@dataclass(frozen=True)
class FrictionSteps:
    """A run by BISP with every step's record.

    Attributes
    ----------
    t : ndarray (nt,)
    q, qdot : ndarray (nt, nq)
    infos : list of BISPInfo, length nt - 1
        Step k's :class:`redmax_edu.friction.bisp.BISPInfo` (the step from ``t[k]`` to ``t[k + 1]``).
    """

    t: np.ndarray
    q: np.ndarray
    qdot: np.ndarray
    infos: list

    @property
    def iterations(self):
        """Staggered iterations of each step, shape (nt - 1,)."""
        return np.array([info.iterations for info in self.infos])


def frictional_steps(model, q0, qdot0, h, steps, *, tau=None, baumgarte=DEFAULT_BAUMGARTE, t0=0.0):
    """Step a model with friction (joints, closures or floor contacts) by BISP, keeping every record.

    The same steps as ``simulate(model, q0, qdot0, (t0, t0 + steps h), "euler", h=h)`` for a
    model whose joints never switch chart: each step is
    :func:`redmax_edu.friction.bisp.frictional_euler_step`, warm-started with the previous step's
    friction force.

    Parameters
    ----------
    model : Model
    q0, qdot0 : array_like (nq,)
    h : float
    steps : int
    tau : callable, optional
        Applied joint forces ``t -> (nq,)``, taken at the end of each step.
    baumgarte : (alpha, beta, gamma)
    t0 : float

    Returns
    -------
    FrictionSteps

    Examples
    --------
    >>> from redmax_edu.scenes import scene
    >>> s = scene(29)
    >>> run = frictional_steps(s.model, s.q0, s.qdot0, s.h, 3)
    >>> run.q.shape, len(run.infos)
    ((4, 2), 3)
    """
    steps = as_count(steps, "steps", "steps", 100_000)
    q, qdot = model.check_state(q0, qdot0)
    qs, qdots, infos, beta = [q], [qdot], [], None
    for k in range(1, steps + 1):
        t = t0 + k * h
        q, qdot, info = frictional_euler_step(model, q, qdot, h, None if tau is None else tau(t), t=t - h,
                                              baumgarte=baumgarte, beta=beta)
        beta = info.beta
        qs.append(q)
        qdots.append(qdot)
        infos.append(info)
    return FrictionSteps(t0 + h * np.arange(steps + 1), np.array(qs), np.array(qdots), infos)


def joint_rates(model, qdot):
    """The speed of each joint at each sample: the largest rate of its coordinates.

    Parameters
    ----------
    model : Model
    qdot : array_like (nt, nq)

    Returns
    -------
    ndarray, shape (nt, k)
        One column per body with joint coordinates, in body order (rad/s or m/s).

    Examples
    --------
    >>> from redmax_edu.scenes import scene
    >>> joint_rates(scene(27).model, [[0.5, -2.0]])
    array([[0.5, 2. ]])
    """
    qdot = np.atleast_2d(np.asarray(qdot, dtype=float))
    if qdot.ndim != 2 or qdot.shape[1] != model.nq:
        raise ValueError(f"argument 'qdot' must have {model.nq} columns, got shape {qdot.shape}")
    return np.column_stack([np.abs(qdot[:, model.dofs[i]]).max(axis=1)
                            for i in range(model.n) if model.bodies[i].joint.ndof])


def joint_sticks(model, qdot, tol=STUCK):
    """Whether each joint sticks at each sample: all its coordinates' rates below ``tol``.

    Returns
    -------
    ndarray of bool, shape (nt, k)
        The columns of :func:`joint_rates`.

    Examples
    --------
    >>> from redmax_edu.scenes import scene
    >>> joint_sticks(scene(27).model, [[0.0, 0.0], [0.5, 1e-14]]).tolist()
    [[True, True], [False, True]]
    """
    return joint_rates(model, qdot) < as_scalar(tol, "tol", minimum=0.0, strict=True)


def friction_scenes_figure(columns, *, height=6.4):
    """Static figure of frictional runs: one column per ``(title, model, trajectory)``.

    Rows: the energy ``T + V`` minus its start (J); each joint's speed (:func:`joint_rates`) on a
    log scale, values below ``1e-14`` drawn at ``1e-14`` and the sticking band (below
    :data:`STUCK`) shaded; the staggered iterations ("passes") of each step
    (``trajectory.friction_iterations``).
    Returns the matplotlib figure.
    """
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(3, len(columns), figsize=(3.5 * len(columns), height), sharex="col",
                             squeeze=False)
    floor = 1e-14
    for col, (title, model, tr) in enumerate(columns):
        top, middle, bottom = axes[:, col]
        top.plot(tr.t, tr.T + tr.V - (tr.T[0] + tr.V[0]), color="black")
        top.set_title(title, fontsize=9)
        rates = joint_rates(model, tr.qdot)
        names = [model.names[i] for i in range(model.n) if model.bodies[i].joint.ndof]
        for k, name in enumerate(names):
            middle.semilogy(tr.t, np.maximum(rates[:, k], floor), label=f"joint of {name}",
                            color=f"C{k}", linewidth=1.5 if k == 0 else 1.0)
        middle.axhspan(floor / 2, STUCK, color="0.85", zorder=0)
        middle.set_ylim(floor / 2, 1e2)
        middle.legend(fontsize=7, loc="center right")
        bottom.step(tr.t[1:], tr.friction_iterations, where="pre", color="C2")
        bottom.set_ylim(0, max(10, tr.friction_iterations.max() + 2))
        bottom.set_xlabel("t (s)")
    axes[0, 0].set_ylabel("energy change (J)")
    axes[1, 0].set_ylabel("joint speed (grey: sticks)")
    axes[2, 0].set_ylabel("passes per step")
    fig.tight_layout()
    return fig
