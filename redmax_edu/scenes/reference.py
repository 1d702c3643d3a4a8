"""The scene catalogue of the RedMax reference code as data: what the reference scenes are.

The reference implementation (the RedMax supplemental of Wang et al. 2019, its
``testRedMax(itype, sceneID)``) ships 37 preset scenes, from a two-link chain (-1) to a car with
friction (33) and a planar free body (35). Their data (every body, joint, spring, constraint, time
span and step) was dumped from the reference code into ``redmax_edu/data/redmax_scenes.json``, a
verbatim copy of ``shared/reference/redmax_scenes/scenes.json``. This module reads it: the raw
setups (:func:`reference_setup`), the catalogue of all 37 scenes with whether this release can
build each (:func:`catalogue`), and the tables that say what the reference's classes mean and
where this library's scenes differ from the reference code on purpose. :mod:`redmax_edu.scenes.build`
turns a setup into a model.

Taught in book/02_reduced/gallery.
"""

import json
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

import numpy as np

from ..joints import JOINT_TYPES

__all__ = ["DATA_FILE", "SETUP_OF", "SCENE_IDS", "DOF_UNITS", "CONSTRAINT_CLASSES", "ODE_DISABLED", "NOTES",
           "reference_data", "reference_setup", "check_scene_id", "joint_type", "dof_units",
           "unsupported_reason", "CatalogueEntry", "catalogue"]

#: The data file inside the package.
DATA_FILE = "data/redmax_scenes.json"

#: Which reference setup holds the data of each integrator of :func:`redmax_edu.integrators.simulate`:
#: type 1 (recursive hybrid dynamics + ode45), type 2 (RedMax + ode45), type 3 (linearly implicit Euler).
SETUP_OF = {"rk45_recursive": "itype1", "rk45": "itype2", "euler": "itype3"}

#: What each coordinate of a reference joint measures.
DOF_UNITS = {
    "redmax.JointFixed": (),
    "redmax.JointRevolute": ("angle",),
    "redmax.JointPrismatic": ("length",),
    "redmax.JointPlanar": ("length", "length"),
    "redmax.JointTranslational": ("length",) * 3,
    "redmax.JointUniversal": ("angle",) * 2,
    "redmax.JointSphericalExp": ("angle",) * 3,
    "redmax.JointFree3D": ("length",) * 3 + ("angle",) * 3,
    "redmax.JointFree": ("angle",) * 3 + ("length",) * 3,
    "redmax.JointFree2D": ("length", "length", "angle"),
    "redmax.JointSplineCurve": ("parameter",),
    "redmax.JointSplineSurface": ("parameter",) * 2,
}

#: The reference's constraint classes that :func:`scene` builds (ConstraintAttachSpring: scene 12,
#: with ``attachment="constraint"``; ConstraintNull: none).
CONSTRAINT_CLASSES = ("redmax.ConstraintNull", "redmax.ConstraintLoop", "redmax.ConstraintJointLimit",
                       "redmax.ConstraintMultQ", "redmax.ConstraintPrescJoint", "redmax.ConstraintPrescBody",
                       "redmax.ConstraintPrescJointM", "redmax.ConstraintFloor",
                       "redmax.ConstraintAttachSpring")

#: Why the reference disables its ode45 path for some scenes it can build.
ODE_DISABLED = {
    3: "the reference disables ode45 here: its ode45 path does not reparameterise the exponential "
       "coordinates, which leave their chart within the run",
    24: "the reference disables ode45 here: the spring (k = 1e6 dyn) makes the problem stiff",
    6: "the reference disables ode45 here: its joint limit is solved at the velocity level only",
    13: "the reference's recursive hybrid dynamics cannot prescribe a body's twist (a maximal constraint)",
    20: "the reference's recursive hybrid dynamics cannot prescribe a body's twist (a maximal constraint)",
}

#: Where this library's scene differs, on purpose, from the reference code's.
NOTES = {
    0: "The data gives the fixed joints a spurious coordinate q = 0; fixed joints have none here.",
    10: "The reference writes a (0, 0, 100) wrench in its scene function that is overwritten before use; "
        "it is left out. The constant point force has the potential energy -F . x here (the reference "
        "books none for it), so H differs from the reference CSV by the work of that force. "
        "Linearly implicit Euler (springs and dampers only, Eq. 2.86) uses the exact stiffness matrix of "
        "the point force here (Eq. 1.32, not symmetric); the reference code computes it and then sets it "
        "to zero, so the force is explicit in its Euler runs. The two choices move the Euler run's joint "
        "angles apart by up to about 0.15 rad over the 2 s at the reference step, a gap that halves with "
        "the step (both are first order); RK45 uses no stiffness matrix and is the same under both. "
        "scene(10, stiffness='reference') builds the reference's choice.",
    23: "Linearly implicit Euler (springs and dampers only, Eq. 2.86) uses the exact stiffness matrices of "
        "the point springs, which are not symmetric (the spring force turns with neither body); the "
        "reference code uses their symmetric parts (K + K^T)/2. The two choices move the Euler run's joint "
        "angles apart by up to about 0.015 rad over the 2 s at the reference step, a gap that halves with "
        "the step (both are first order); RK45 uses no stiffness matrix and is the same under both. "
        "scene(23, stiffness='reference') builds the reference's choice.",
    24: "The spring-damper uses the physical damping sign, f = (k (l - L) + d ldot) / L (the reference "
        "subtracts d ldot / L), and its energy k (l - L)^2 / (2 L) (the reference books "
        "k ((l - L)/L)^2 / 2).",
    25: "The composite body's mass, inertia and frame are the reference's (cross-checked against "
        "redmax_edu.inertia.composite in the tests).",
    12: "The chains' end nodes are attached exactly (an attached node moves with its body point and is "
        "not a coordinate, Eq. 2.94-2.97), where the reference keeps every node as a coordinate and holds "
        "the ends by Baumgarte-stabilised constraints (ConstraintAttachSpring): q has the 2 joint angles "
        "and the 3 coordinates of the one free node instead of the reference's 17 numbers. "
        "scene(12, attachment='constraint') builds the reference's way (17 coordinates, 4 node attachments).",
    26: "The mesh body's mass properties are the reference's mesh integration of cuboid.obj, a 1 x 2 x 3 cm "
        "box (cross-checked against redmax_edu.inertia.mesh of box_mesh in the tests).",
}

_LOOP = ("The loop closure's two rows measure the gap between the two points in the first body's "
         "frame (Loop.hinge), where the reference projects it on world directions (Eq. 2.102); the "
         "rows agree wherever the loop is closed, and these are the exact derivative of their error.")
_VELOCITY_LEVEL = ("Prescribed motion at the velocity level asks for G qdot1 = w + h dw/dt - gamma g, "
                   "with the position error g at the start of the step (the writeup's Eq. 2.114 with a "
                   "Baumgarte term); the reference asks for the velocity at the end of the step, which "
                   "lags the ramp by a step.")
_FRICTION = ("Friction by bilateral staggered projections (redmax_edu.friction.bisp) with this library's "
             "contact patterns around each joint, the reactions of Eq. 2.124 with the h Jdot qdot term the "
             "printed formula lacks, the end velocity without Eq. 2.127's second J^T f_alpha, bounds "
             "mu |alpha| for the signed joint impulses, and a friction stage that sees the constraints' "
             "response, accelerated (Anderson); the reference code's stopping rule and patterns differ, so "
             "its trajectories do too.")
NOTES.update({
    4: _LOOP, 8: _LOOP, 15: _LOOP,
    6: ("At the velocity level a limit that still holds keeps the step from crossing it "
        "(C qdot1 >= -c/h), so the joint stops on its bound; the reference adds the limit's row only "
        "once it is passed and pushes the joint back with gamma c: it overshoots by up to a step."),
    9: _VELOCITY_LEVEL + " The sigmoid starts 4.3 mrad above q = 0 and jumps by as much when it is "
       "held at t1 (as in the reference); Baumgarte's terms close both gaps.",
    13: "The prescribed twist's rate (for RK45) includes the rotation of the world-frame velocity into the "
        "turning body frame, d(R^T v)/dt = -[omega] R^T v + R^T dv/dt.",
    20: _VELOCITY_LEVEL,
    27: _FRICTION, 28: _FRICTION, 29: _FRICTION, 31: _FRICTION,
    30: _LOOP + " " + _FRICTION + " The closing hinge takes friction too (ClosureFriction).",
    32: _LOOP + " The crank's speed is prescribed through a maximal constraint between its two bodies, "
        "whose reduced row is exactly the crank's coordinate (PrescribedJointVelocity).",
    33: _LOOP + " " + _FRICTION,
})

@lru_cache(maxsize=1)
def reference_data():
    """The reference scene data (the parsed JSON file shipped with the package), a dict.

    Keys: ``conventions`` (how to read it), ``scenes`` (by id as a string, "-1" to "35"),
    ``matlab_diff_scenes_BDF1_setup``. Treat it as read-only.
    """
    text = resources.files("redmax_edu").joinpath(DATA_FILE).read_text(encoding="utf-8")
    return json.loads(text)


#: The ids of the reference scenes, in the catalogue's order.
SCENE_IDS = tuple(sorted(int(k) for k in reference_data()["scenes"]))


def check_scene_id(scene_id):
    if isinstance(scene_id, bool) or not isinstance(scene_id, (int, np.integer)) or scene_id not in SCENE_IDS:
        raise ValueError(f"argument 'scene_id' must be one of the reference scene ids "
                         f"{SCENE_IDS[0]}..{SCENE_IDS[-1]}, got {scene_id!r}")
    return int(scene_id)


def reference_setup(scene_id, integrator="euler"):
    """The raw reference data of one scene as set up for ``integrator`` ("rk45" or "euler"), a dict.

    Lengths in cm, masses in g; see ``reference_data()["conventions"]``.
    """
    scene_id = check_scene_id(scene_id)
    if integrator not in SETUP_OF:
        raise ValueError(f"argument 'integrator' must be one of {', '.join(SETUP_OF)}, got {integrator!r}")
    return reference_data()["scenes"][str(scene_id)]["setups"][SETUP_OF[integrator]]


def _classes(items):
    return [item["class"] for item in items]


def unsupported_reason(scene_id):
    """Why this release cannot build the scene, or None."""
    setup = reference_setup(scene_id)
    reasons = []
    unknown = sorted(set(_classes(setup["constraints"])) - set(CONSTRAINT_CLASSES))
    if unknown:
        reasons.append(f"needs the constraint type(s) {', '.join(unknown)}")
    known = {"redmax.DeformableNull", "redmax.DeformableSpring"}
    unknown = sorted(set(_classes(setup["deformables"])) - known)
    if unknown:
        reasons.append(f"needs the deformable type(s) {', '.join(unknown)}")
    missing = sorted({joint_type(j) for j in setup["joints"]} - set(JOINT_TYPES))
    if missing:
        reasons.append(f"needs the joint type(s) {', '.join(missing)}, not registered in redmax_edu.joints")
    return "; ".join(reasons) or None

def joint_type(jdata):
    cls = jdata["class"]
    return {"redmax.JointFixed": "fixed", "redmax.JointRevolute": "revolute",
            "redmax.JointPrismatic": "prismatic", "redmax.JointPlanar": "planar",
            "redmax.JointTranslational": "translational", "redmax.JointUniversal": "universal",
            "redmax.JointSphericalExp": "spherical_exp", "redmax.JointFree3D": "free3d_exp",
            "redmax.JointFree": "free3d_exp", "redmax.JointFree2D": "free2d",
            "redmax.JointComposite": "composite", "redmax.JointSplineCurve": "spline_curve",
            "redmax.JointSplineSurface": "spline_surface"}.get(cls, cls)


def dof_units(jdata):
    if jdata["class"] == "redmax.JointComposite":
        return dof_units(jdata["joint1"]) + dof_units(jdata["joint2"])
    return DOF_UNITS[jdata["class"]]

# --- the catalogue ------------------------------------------------------------------------------

@dataclass(frozen=True)
class CatalogueEntry:
    """One reference scene in the catalogue.

    Attributes
    ----------
    id : int
    name : str
    summary : str
        What the scene shows, from the reference data.
    features : tuple of str
    supported : bool
        Whether :func:`scene` can build it in this release.
    reason : str or None
        What it needs, when it is not supported.
    """

    id: int
    name: str
    summary: str
    features: tuple
    supported: bool
    reason: str | None


def catalogue():
    """All 37 reference scenes, in id order, as :class:`CatalogueEntry` objects.

    Examples
    --------
    >>> entries = catalogue()
    >>> len(entries), entries[0].id, entries[-1].id
    (37, -1, 35)
    >>> entry = {e.id: e for e in entries}[27]
    >>> entry.name, entry.supported, entry.reason
    ('Internal friction revolute', True, None)
    """
    out = []
    for sid in SCENE_IDS:
        raw = reference_data()["scenes"][str(sid)]
        reason = unsupported_reason(sid)
        out.append(CatalogueEntry(sid, raw["name"], raw["summary"], tuple(raw["features"]),
                                  reason is None, reason))
    return out
