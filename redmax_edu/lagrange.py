"""Lagrange's equations of a revolute chain, derived symbolically with sympy (companion chapter).

For a tree of bodies joined by revolute joints, the kinetic energy of body i is
``T_i = 1/2 qdot^T (m_i Jv_i^T Jv_i + Jw_i^T I_i Jw_i) qdot``, where ``Jv_i = d p_i / d q`` is
the Jacobian of its centre of mass (world axes) and ``Jw_i`` maps ``qdot`` to its angular
velocity in body axes. So

    M(q) = sum_i m_i Jv_i^T Jv_i + Jw_i^T I_i Jw_i,
    C(q, qdot)_kj = sum_i Gamma_kji qdot_i,  Gamma_kji = 1/2 (dM_kj/dq_i + dM_ki/dq_j - dM_ij/dq_k),
    g(q) = dV/dq,  V = -sum_i m_i gravity . p_i,

and the equations of motion are ``M qddot + C qdot + g = tau``. In the RedMax notation of
:mod:`redmax_edu.dynamics` (no joint springs, dampers or body damping) the reduced force is
``f_r = -(C qdot + g)``.

Everything is built from plain sympy expressions, so the same function gives exact symbolic
matrices (symbols for masses and lengths) or expressions in q alone (numbers from a
:class:`redmax_edu.model.Model`), which :meth:`LagrangeTerms.numeric` turns into numpy
functions.

Taught in book/04_companions/01_lagrangian_arm.
"""

from dataclasses import dataclass

import numpy as np
import sympy as sp

from ._validate import as_array, as_flag, as_instance
from .joints import Revolute
from .model import Model, check_model

__all__ = ["GRAVITY", "Link", "LagrangeTerms", "chain_lagrangian", "model_links", "planar_two_link"]


@dataclass(frozen=True)
class Link:
    """One body of a revolute tree, in the frames of :class:`redmax_edu.model.Body`.

    Parameters
    ----------
    parent : int
        Index of the parent link, -1 for the world; parents come first.
    T_parent_joint : sympy.Matrix, shape (4, 4)
        The joint frame in the parent joint's frame at ``q = 0``.
    axis : sympy.Matrix, shape (3, 1)
        Unit hinge axis in the joint frame.
    T_joint_body : sympy.Matrix, shape (4, 4)
        The body frame (at the centre of mass) in the joint frame.
    mass : sympy expression or number
    inertia : sympy.Matrix, shape (3, 3)
        Rotational inertia about the centre of mass in body axes.
    """

    parent: int
    T_parent_joint: sp.Matrix
    axis: sp.Matrix
    T_joint_body: sp.Matrix
    mass: object
    inertia: sp.Matrix


@dataclass(frozen=True)
class LagrangeTerms:
    """The symbolic terms of ``M qddot + C qdot + g = tau``.

    Attributes
    ----------
    q, qdot : tuple of sympy.Symbol
    M : sympy.Matrix, shape (n, n)
        Mass matrix.
    C : sympy.Matrix, shape (n, n)
        Coriolis matrix from the Christoffel symbols (linear in ``qdot``).
    g : sympy.Matrix, shape (n, 1)
        Gravity vector ``dV/dq``.
    T, V : sympy expression
        Kinetic and potential energy.
    positions : list of sympy.Matrix
        Centre-of-mass position of each link (world axes).
    rotations : list of sympy.Matrix
        Rotation of each body frame (world from body).
    """

    q: tuple
    qdot: tuple
    M: sp.Matrix
    C: sp.Matrix
    g: sp.Matrix
    T: object
    V: object
    positions: list
    rotations: list

    def mass_matrix_dot(self):
        """``Mdot = sum_i dM/dq_i qdot_i`` (symbolic)."""
        return sum((sp.diff(self.M, qi) * vi for qi, vi in zip(self.q, self.qdot, strict=True)),
                   sp.zeros(*self.M.shape))

    def numeric(self):
        """Numpy functions ``M(q)``, ``C(q, qdot)``, ``g(q)`` and ``Mdot(q, qdot)`` of arrays of length n.

        Every symbol other than ``q`` and ``qdot`` must have been given a number.
        """
        args = (*self.q, *self.qdot)
        exprs = {"M": self.M, "C": self.C, "g": self.g, "Mdot": self.mass_matrix_dot()}
        for name, e in exprs.items():
            extra = e.free_symbols - set(self.q) - set(self.qdot)
            if extra:
                raise ValueError(f"term {name} still holds the symbols {sorted(map(str, extra))}: "
                                 "substitute numbers for them before calling numeric()")
        f = {k: sp.lambdify(args, e, "numpy") for k, e in exprs.items()}
        n = len(self.q)

        def call(name, q, qdot=None):
            q = as_array(q, (n,), "q")
            qdot = np.zeros(n) if qdot is None else as_array(qdot, (n,), "qdot")
            return np.array(f[name](*q, *qdot), dtype=float)

        return {
            "M": lambda q: call("M", q),
            "C": lambda q, qdot: call("C", q, qdot),
            "g": lambda q: call("g", q).ravel(),
            "Mdot": lambda q, qdot: call("Mdot", q, qdot),
        }


def _rotation(axis, angle):
    """Rodrigues' formula, Eq. (1.10), in sympy."""
    a = sp.Matrix(axis)
    K = sp.Matrix([[0, -a[2], a[1]], [a[2], 0, -a[0]], [-a[1], a[0], 0]])
    return sp.eye(3) + sp.sin(angle) * K + (1 - sp.cos(angle)) * K * K


#: Default gravity, (0, 0, -9.81) m/s^2 as exact rationals.
GRAVITY = (0, 0, sp.Rational(-981, 100))


def chain_lagrangian(links, gravity=GRAVITY, simplify=False):
    """Kinetic and potential energy, ``M``, Christoffel ``C`` and ``g`` of a tree of revolute links.

    Parameters
    ----------
    links : sequence of Link
    gravity : sequence of 3 sympy expressions or numbers
        Gravitational acceleration in world axes (default ``(0, 0, -9.81)``).
    simplify : bool
        Apply ``sympy.simplify`` to ``M`` (slow beyond two or three links).

    Returns
    -------
    LagrangeTerms
    """
    simplify = as_flag(simplify, "simplify")
    links = list(links)
    if not links:
        raise ValueError("argument 'links' must hold at least one Link")
    n = len(links)
    q = sp.symbols(f"q1:{n + 1}", real=True)
    qdot = sp.symbols(f"qdot1:{n + 1}", real=True)
    if isinstance(gravity, (str, bytes)) or not hasattr(gravity, "__len__") or len(gravity) != 3:
        raise ValueError(f"argument 'gravity' must hold 3 components, got {gravity!r}")
    gvec = sp.Matrix(list(gravity))
    joint_frames, positions, rotations, axes_world = [], [], [], []
    M = sp.zeros(n, n)
    V = sp.Integer(0)
    for i, link in enumerate(links):
        as_instance(link, Link, f"links[{i}]")
        if not -1 <= link.parent < i:
            raise ValueError(f"links[{i}]: field 'parent' must be -1 or an earlier link, got {link.parent}")
        base = sp.eye(4) if link.parent < 0 else joint_frames[link.parent]
        Q = sp.eye(4)
        Q[:3, :3] = _rotation(link.axis, q[i])
        E_wj = base * sp.Matrix(link.T_parent_joint) * Q
        E_wi = E_wj * sp.Matrix(link.T_joint_body)
        joint_frames.append(E_wj)
        axes_world.append(E_wj[:3, :3] * sp.Matrix(link.axis))
        p, R = E_wi[:3, 3], E_wi[:3, :3]
        positions.append(p)
        rotations.append(R)
        Jv = p.jacobian(sp.Matrix(q))
        Jw = sp.zeros(3, n)
        k = i
        while k >= 0:  # the ancestors' hinges turn body i
            Jw[:, k] = R.T * axes_world[k]
            k = links[k].parent
        M += link.mass * Jv.T * Jv + Jw.T * sp.Matrix(link.inertia) * Jw
        V -= link.mass * (gvec.T * p)[0, 0]
    M = M.applyfunc(sp.simplify if simplify else sp.expand)
    dM = [sp.diff(M, qi) for qi in q]
    C = sp.zeros(n, n)
    for kk in range(n):
        for j in range(n):
            C[kk, j] = sum(sp.Rational(1, 2) * (dM[i][kk, j] + dM[j][kk, i] - dM[kk][i, j]) * qdot[i]
                           for i in range(n))
    g = sp.Matrix([sp.diff(V, qi) for qi in q])
    qd = sp.Matrix(qdot)
    T = sp.Rational(1, 2) * (qd.T * M * qd)[0, 0]
    return LagrangeTerms(tuple(q), tuple(qdot), M, C, g, T, V, positions, rotations)


def model_links(model):
    """The :class:`Link` list of a :class:`redmax_edu.model.Model` whose joints are all revolute.

    Numbers become sympy Floats, so the terms depend on ``q`` and ``qdot`` only.
    """
    model = check_model(as_instance(model, Model, "model"))
    if model.deformables or model.forces:
        raise ValueError("argument 'model' must have no deformables and no extra forces")
    links = []
    for b in model.bodies:
        if not isinstance(b.joint, Revolute):
            raise ValueError(f"body {b.name!r}: field 'joint' must be Revolute for chain_lagrangian, "
                             f"got {type(b.joint).__name__}")
        if np.any(b.stiffness) or np.any(b.damping) or b.body_damping:
            raise ValueError(f"body {b.name!r}: stiffness, damping and body_damping must be zero")
        links.append(Link(b.parent, sp.Matrix(b.T_parent_joint), sp.Matrix(b.joint.axis),
                          sp.Matrix(b.T_joint_body), sp.Float(b.mass), sp.Matrix(b.inertia)))
    return links


def planar_two_link():
    """Symbolic links of a planar two-link arm hinged about z, moving in the x-y plane.

    Link lengths ``l1`` (only the first link's length matters), centre-of-mass distances
    ``r1, r2`` from each hinge along the link, masses ``m1, m2`` and inertias ``I1, I2`` about
    the centre of mass and z. Returns ``(links, symbols)`` with ``symbols`` a dict by name.
    """
    m1, m2, l1, r1, r2, I1, I2 = sp.symbols("m1 m2 l1 r1 r2 I1 I2", positive=True)
    z = sp.Matrix([0, 0, 1])

    def shift(x):
        T = sp.eye(4)
        T[0, 3] = x
        return T

    def inertia(Izz):
        return sp.diag(Izz, Izz, Izz)  # only the z entry acts in the plane

    links = [Link(-1, sp.eye(4), z, shift(r1), m1, inertia(I1)),
             Link(0, shift(l1), z, shift(r2), m2, inertia(I2))]
    return links, dict(m1=m1, m2=m2, l1=l1, r1=r1, r2=r2, I1=I1, I2=I2)
