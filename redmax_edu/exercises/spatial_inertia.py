"""Grader of the assignment "Spatial inertias off the centre of mass and of a composite body" (§1.7).

A body of mass ``m`` whose centre of mass sits at ``c`` in a frame F, with rotational inertia
``J`` about the centre of mass (in F's axes), has the spatial inertia about F's origin

    M = [[J - m [c][c], m [c]], [-m [c], m I]]          (angular block first)

(Eq. 1.24 at the centre of mass; the ArtiSynth notes, §0.1, off it), and parts glued into
one body add up once moved to a common frame c, ``M_c = sum_k Ad(E_k_c)^T M_k Ad(E_k_c)``
(Eq. 1.26). The students write ``spatial_inertia(mass, com, inertia)`` (6, 6) and
``composite_spatial_inertia(inertias, frames)`` (6, 6) for parts' spatial inertias (K, 6, 6)
about their own frames and those frames ``E_c_k`` (K, 4, 4) in c; ``brac``, ``adjoint`` and
``inv_se3`` are allowed. The checks compare with
:meth:`redmax_edu.inertia.MassProperties.spatial_inertia` and :func:`redmax_edu.inertia.composite`
(two unit cubes make a box, :func:`~redmax_edu.inertia.cuboid`), and name the usual slips: the
parallel-axis term left out or with its sign flipped, the coupling blocks with their signs
exchanged or left out, the linear block first, the adjoint of the wrong frame, ``Ad M Ad^T``
for ``Ad^T M Ad``, parts summed without moving them.

Examples
--------
>>> from redmax_edu.inertia import MassProperties
>>> def spatial_inertia(mass, com, inertia):
...     return MassProperties(mass, com, inertia).spatial_inertia()
>>> print(check("spatial_inertia", spatial_inertia).results[0].message)
spatial_inertia calls inertia.MassProperties.__init__, which this assignment does not let you call
(it lets you call only lie.brac, lie.adjoint, lie.inv_se3): write it yourself.

Taught in book/01_maximal/07_inertia.
"""

import numpy as np

from .. import lie
from ..inertia import MassProperties, composite, cuboid, from_spatial_inertia
from .calls import call, describe
from .compare import asymmetry, judge_cases
from .core import Assignment, Verdict, entry_points

ASSIGNMENT = Assignment(
    "05_spatial_inertia", "Spatial inertias off the centre of mass and of a composite body",
    allowed=[lie.brac, lie.adjoint, lie.inv_se3],
)
check_of = ASSIGNMENT.check
check = entry_points(ASSIGNMENT)

PARALLEL_AXIS = ("Off the centre of mass the rotational block grows by the parallel-axis term -m [c][c] "
                 "= m (|c|^2 I - c c^T).")


def _body(rng, com_scale=0.5):
    """``(mass, com, inertia)``: a random box-like body, its inertia turned away from the axes."""
    mass, sides = float(rng.uniform(0.5, 3.0)), rng.uniform(0.2, 1.0, 3)
    R = lie.random_rotation(rng)
    inertia = R @ cuboid(sides, mass=mass).inertia @ R.T
    return mass, com_scale * rng.standard_normal(3), inertia


def _label(mass, com, inertia):
    return f"mass = {mass:.3g}, com = {describe(com)}, inertia = {describe(inertia)}"


def _blocks(top_left, top_right, bottom_left, bottom_right):
    return np.block([[top_left, top_right], [bottom_left, bottom_right]])


# --- spatial_inertia -----------------------------------------------------------------------------


def single_mistakes(mass, com, inertia):
    """The usual wrong spatial inertias, with what went wrong."""
    C, I3 = lie.brac(com), np.eye(3)
    return [
        ("the parallel-axis term is missing: the rotational block about F's origin is J - m [c][c], not "
         "J (which is about the centre of mass).", lambda: _blocks(inertia, mass * C, -mass * C, mass * I3)),
        ("the parallel-axis term has the wrong sign: it is J - m [c][c] (and -[c][c] = |c|^2 I - c c^T is "
         "positive semidefinite: the inertia grows away from the centre of mass).",
         lambda: _blocks(inertia + mass * C @ C, mass * C, -mass * C, mass * I3)),
        ("the coupling blocks have their signs exchanged: the top-right block is m [c], the bottom-left "
         "-m [c].", lambda: _blocks(inertia - mass * C @ C, -mass * C, mass * C, mass * I3)),
        ("the coupling blocks are missing: off the centre of mass, turning and moving are coupled by "
         "m [c].", lambda: _blocks(inertia - mass * C @ C, 0 * C, 0 * C, mass * I3)),
    ]


def _single_cases(fn, cases, **kwargs):
    return judge_cases(fn, cases, name="spatial_inertia", shape=(6, 6),
                       reference=lambda m, c, J: MassProperties(m, c, J).spatial_inertia(),
                       mistakes=single_mistakes, what="the spatial inertia", **kwargs)


@check_of("spatial_inertia", "centre", "the frame at the centre of mass (c = 0)", 1)
def single_centre(fn, rng):
    mass, _, inertia = _body(rng)
    com = np.zeros(3)
    return _single_cases(fn, [((mass, com, inertia), _label(mass, com, inertia))])


@check_of("spatial_inertia", "axis", "the centre of mass on an axis", 1)
def single_axis(fn, rng):
    cases = []
    for k in range(3):
        mass, _, _ = _body(rng)
        com, inertia = np.eye(3)[k] * rng.uniform(0.3, 1.0), np.diag(np.diag(_body(rng)[2]))
        cases.append(((mass, com, inertia), _label(mass, com, inertia)))
    return _single_cases(fn, cases, hint=PARALLEL_AXIS)


@check_of("spatial_inertia", "general", "general bodies", 2)
def single_general(fn, rng):
    cases = []
    for _ in range(4):
        mass, com, inertia = _body(rng)
        cases.append(((mass, com, inertia), _label(mass, com, inertia)))
    return _single_cases(fn, cases)


@check_of("spatial_inertia", "corner", "a unit cube about one of its corners", 1)
def single_corner(fn, rng):
    cube = cuboid([1.0, 1.0, 1.0], density=1.0)
    com = np.full(3, 0.5)
    return _single_cases(fn, [((cube.mass, com, np.array(cube.inertia)), "a unit cube of density 1 about a "
                               "corner: mass = 1, com = (0.5, 0.5, 0.5), inertia = I / 6")],
                         hint="About its corner a unit cube has the rotational inertia (2/3) I - (1/4) "
                         "(J - I), with J the matrix of ones.")


@check_of("spatial_inertia", "definite", "symmetric and positive definite", 1)
def single_definite(fn, rng):
    mass, com, inertia = _body(rng, com_scale=2.0)
    label = _label(mass, com, inertia)
    M = call(fn, mass, com, inertia, name="spatial_inertia", shape=(6, 6), label=label)
    problem = asymmetry(M, "M")
    if problem:
        return Verdict(f"spatial_inertia({label}): {problem} The kinetic energy phi^T M phi / 2 makes M "
                       "symmetric.")
    if np.linalg.eigvalsh(M).min() <= 0:
        return Verdict(f"spatial_inertia({label}): M is not positive definite: the kinetic energy "
                       "phi^T M phi / 2 of every motion phi != 0 is positive.")
    return None


# --- composite_spatial_inertia -------------------------------------------------------------------


def composite_mistakes(inertias, frames):
    """The usual wrong composite inertias, with what went wrong."""
    A = [lie.adjoint(lie.inv_se3(E)) for E in frames]  # Ad(E_k_c)
    B = [lie.adjoint(E) for E in frames]  # Ad(E_c_k): the wrong frame
    return [
        ("the adjoint of the wrong frame: part k's inertia moves to c by Ad(E_k_c), the adjoint of the "
         "inverse of E_c_k (twists of c, seen in k's frame).",
         lambda: sum(b.T @ M @ b for b, M in zip(B, inertias, strict=True))),
        ("it is Ad M Ad^T: inertias map twists to wrenches, so they move by Ad^T M Ad (Eq. 1.26).",
         lambda: sum(a @ M @ a.T for a, M in zip(A, inertias, strict=True))),
        ("the parts are summed without being moved to c: each M_k is about its own frame's origin.",
         lambda: sum(inertias)),
    ]


def _reference_composite(inertias, frames):
    parts = [(from_spatial_inertia(M), E) for M, E in zip(inertias, frames, strict=True)]
    return composite(parts).spatial_inertia()


def _composite_cases(fn, cases, **kwargs):
    return judge_cases(fn, cases, name="composite_spatial_inertia", shape=(6, 6),
                       reference=_reference_composite, mistakes=composite_mistakes,
                       what="the composite spatial inertia", **kwargs)


def _parts(rng, count, rotate=True):
    inertias, frames = [], []
    for _ in range(count):
        mass, com, inertia = _body(rng, 0.2)
        inertias.append(MassProperties(mass, com, inertia).spatial_inertia())
        E = lie.random_transform(rng) if rotate else np.eye(4)
        if not rotate:
            E[:3, 3] = rng.standard_normal(3)
        frames.append(E)
    return np.stack(inertias), np.stack(frames)


def _parts_label(inertias, frames, what):
    return f"{len(inertias)} {what}, frames E_c_k with origins {describe(frames[:, :3, 3])}"


@check_of("composite_spatial_inertia", "one", "one part in c's own frame", 1)
def composite_one(fn, rng):
    inertias, _ = _parts(rng, 1)
    frames = np.eye(4)[None]
    return _composite_cases(fn, [((inertias, frames), "one part, E_c_0 = I")])


@check_of("composite_spatial_inertia", "moved", "parts moved without turning", 1)
def composite_moved(fn, rng):
    inertias, frames = _parts(rng, 2, rotate=False)
    return _composite_cases(fn, [((inertias, frames), _parts_label(inertias, frames, "parts, not turned"))])


@check_of("composite_spatial_inertia", "box", "two unit cubes side by side make a 2 x 1 x 1 box", 1)
def composite_box(fn, rng):
    cube = cuboid([1.0, 1.0, 1.0], density=1.0).spatial_inertia()
    frames = np.stack([np.eye(4), np.eye(4)])
    frames[0, 0, 3], frames[1, 0, 3] = -0.5, 0.5
    inertias = np.stack([cube, cube])
    box = cuboid([2.0, 1.0, 1.0], density=1.0).spatial_inertia()
    return judge_cases(fn, [((inertias, frames), "two unit cubes of density 1 centred at x = -0.5 and 0.5")],
                       name="composite_spatial_inertia", shape=(6, 6), reference=lambda *a: box,
                       mistakes=composite_mistakes, what="the box's spatial inertia")


@check_of("composite_spatial_inertia", "general", "parts turned and moved", 2)
def composite_general(fn, rng):
    cases = []
    for count in (2, 3, 3):
        inertias, frames = _parts(rng, count)
        cases.append(((inertias, frames), _parts_label(inertias, frames, "parts")))
    return _composite_cases(fn, cases)
