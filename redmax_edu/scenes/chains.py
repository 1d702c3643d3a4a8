"""Two small chains the later chapters use as test scenes (not from the reference catalogue).

A hanging chain of rods on hinges (Part 3's implicit integrators, the adjoint method) and a chain
of boxes floating in space on a free joint with springy hinges (the variational integrators).

Taught in book/03_differentiable/04_implicit_integrators and book/05_variational/.
"""

import numpy as np

from ..inertia import cuboid
from ..joints import Free3DEuler, Revolute
from ..model import Body, Model

__all__ = ["hanging_chain", "floating_chain"]


def hanging_chain(n, length=0.2, mass=0.5, damping=0.0):
    """A planar chain of ``n`` uniform rods on hinges about y, hanging from the world: a scene of our own.

    Not one of the reference catalogue's: the chain the §3.4 claims and benchmark time
    (a 10-body chain over 100 BDF2 steps). Rod i is ``length`` long (m), 2 cm thick, of ``mass``
    kg, its hinge at the end of rod i - 1; at ``q = 0`` the chain hangs straight down. With
    ``damping`` (N m s/rad) on every hinge; without, the chain conserves its energy.

    Returns
    -------
    Model
        n bodies, nq = n.

    Examples
    --------
    >>> chain = hanging_chain(10)
    >>> chain.nq, chain.bodies[3].parent, round(float(chain.bodies[0].mass), 3)
    (10, 2, 0.5)

    Taught in book/03_differentiable/04_implicit_integrators.
    """
    T_pj, T_jb = np.eye(4), np.eye(4)
    T_pj[2, 3], T_jb[2, 3] = -length, -length / 2
    inertia = cuboid([0.02, 0.02, length], mass=mass).inertia
    return Model([Body(f"rod{i}", i - 1, Revolute([0, 1, 0]), np.eye(4) if i == 0 else T_pj, T_jb, mass,
                       inertia, damping=damping) for i in range(n)])


def floating_chain(n, length=0.2, mass=0.5, thickness=0.08, stiffness=0.5):
    """A chain of ``n`` boxes floating in space, hinged about z with joint springs: a scene of our own.

    The first box has a free joint (``Free3DEuler("ZYX")``: position, then yaw, pitch, roll);
    each next box a hinge about z at the far end of the one before, with a spring of
    ``stiffness`` (N m/rad) towards ``q = 0``, where the chain lies straight along +x. There is
    no gravity: no force from outside acts, so the chain's linear and angular momentum are
    constant and so is its energy. The conservative scene of the variational-integrator chapter.

    Parameters
    ----------
    n : int
        Number of boxes (nq = 6 + (n - 1)).
    length, thickness : float
        Sides of each box (m): ``length x thickness x thickness``.
    mass : float
        Of each box (kg).
    stiffness : float
        Of every hinge's spring (N m/rad).

    Returns
    -------
    Model

    Examples
    --------
    >>> chain = floating_chain(3)
    >>> chain.nq, chain.bodies[2].parent, chain.gravity.tolist()
    (8, 1, [0.0, 0.0, 0.0])

    Taught in book/05_variational/01_what_is_preserved.
    """
    T_pj, T_jb = np.eye(4), np.eye(4)
    T_pj[0, 3], T_jb[0, 3] = length, length / 2
    inertia = cuboid([length, thickness, thickness], mass=mass).inertia
    bodies = [Body("box0", -1, Free3DEuler("ZYX"), np.eye(4), T_jb, mass, inertia)]
    bodies += [Body(f"box{i}", i - 1, Revolute([0, 0, 1]), T_pj, T_jb, mass, inertia, stiffness=stiffness)
               for i in range(1, n)]
    return Model(bodies, gravity=[0.0, 0.0, 0.0])
