"""Unit tests of redmax_edu.lagrange: the symbolic Lagrangian equals RedMax's dense dynamics."""

import numpy as np
import pytest
import sympy as sp

from redmax_edu.dynamics import mass_matrix, reduced_forces
from redmax_edu.joints import Prismatic, Revolute
from redmax_edu.lagrange import Link, chain_lagrangian, model_links, planar_two_link
from redmax_edu.model import Body, Model


def _link(name, parent, axis, L=1.0, m=1.0):
    top, com = np.eye(4), np.eye(4)
    if parent >= 0:
        top[:3, 3] = [L, 0, 0]
    com[:3, 3] = [L / 2, 0.05, 0]
    inertia = np.diag([0.01, m * L**2 / 12, m * L**2 / 12 + 0.003])
    return Body(name, parent, Revolute(axis), top, com, m, inertia)


@pytest.fixture(scope="module")
def arm3d():
    model = Model([_link("a", -1, [0, 0, 1]), _link("b", 0, [0, 1, 0]), _link("c", 1, [1, 1, 0], m=0.7)])
    return model, chain_lagrangian(model_links(model)).numeric()


def test_mass_matrix_and_forces_match_redmax(arm3d):
    model, f = arm3d
    rng = np.random.default_rng(1)
    for _ in range(5):
        q, v = rng.uniform(-2, 2, 3), rng.standard_normal(3)
        assert np.allclose(f["M"](q), mass_matrix(model, q), atol=1e-10, rtol=0)
        assert np.allclose(-(f["C"](q, v) @ v + f["g"](q)), reduced_forces(model, q, v), atol=1e-10, rtol=0)


def test_mdot_minus_2c_is_skew(arm3d):
    _, f = arm3d
    q, v = np.array([0.3, -0.7, 1.1]), np.array([1.0, -2.0, 0.5])
    N = f["Mdot"](q, v) - 2 * f["C"](q, v)
    assert np.abs(N + N.T).max() < 1e-12
    assert np.abs(N).max() > 1e-3  # not trivially zero


def test_two_link_symbolic_mass_matrix():
    links, s = planar_two_link()
    M = chain_lagrangian(links, simplify=True).M
    q2 = sp.Symbol("q2", real=True)
    m1, m2, l1, r1, r2, I1, I2 = (s[k] for k in ("m1", "m2", "l1", "r1", "r2", "I1", "I2"))
    off = I2 + m2 * (r2**2 + l1 * r2 * sp.cos(q2))
    expected = sp.Matrix([[I1 + I2 + m1 * r1**2 + m2 * (l1**2 + r2**2 + 2 * l1 * r2 * sp.cos(q2)), off],
                          [off, I2 + m2 * r2**2]])
    assert sp.simplify(M - expected) == sp.zeros(2, 2)


def test_bad_input():
    with pytest.raises(ValueError, match="links"):
        chain_lagrangian([])
    with pytest.raises(ValueError, match=r"links\[0\]"):
        chain_lagrangian(["not a link"])
    links, _ = planar_two_link()
    bad = Link(5, links[1].T_parent_joint, links[1].axis, links[1].T_joint_body, 1, sp.eye(3))
    with pytest.raises(ValueError, match="parent"):
        chain_lagrangian([links[0], bad])
    with pytest.raises(ValueError, match="gravity"):
        chain_lagrangian(links, gravity=(0, -9.81))
    with pytest.raises(ValueError, match="symbols"):
        chain_lagrangian(links).numeric()
    slider = Body("s", -1, Prismatic([1, 0, 0]), np.eye(4), np.eye(4), 1.0, np.eye(3))
    with pytest.raises(ValueError, match="'s'.*Revolute"):
        model_links(Model([slider]))
    with pytest.raises(ValueError, match="model"):
        model_links("arm")
