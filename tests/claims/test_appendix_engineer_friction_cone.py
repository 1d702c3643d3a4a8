"""Claims of book/appendix/engineer_friction_cone (ArtiSynth notes §0.10): the Anitescu-Stewart LCP solved
by Lemke's method, stick and slip on an incline, maximal dissipation, the QP's lift-off, and the polygon's
approach to the circular cone."""

import numpy as np
import pytest

from redmax_edu.deformable import DeformableSpring
from redmax_edu.maximal.pivoting import lemke, principal_pivoting
from redmax_edu.maximal.random_problems import random_friction_cone_lcp
from redmax_edu.maximal.solve import contact_qp
from redmax_edu.particles import METHODS, ParticleChain, chain_step, friction_directions, simulate_chain

G_EARTH, MU, H = 9.81, 0.5, 0.01
PAIR = DeformableSpring([[0.0, 0.0, 0.0], [0.0, 0.1, 0.0]], stiffness=0.0, mass=0.2)
AT_REST = np.zeros((2, 3))


def incline(angle, mu=MU, directions=4):
    return ParticleChain(PAIR, gravity=G_EARTH * np.array([np.sin(angle), 0.0, -np.cos(angle)]), floor=0.0,
                         mu=mu, friction="cone", directions=directions)


def defect(L, q, z):
    w = L @ z + q
    return max(-z.min(), -w.min(), abs(z @ w))


@pytest.mark.parametrize("seed", range(4))
def test_lemke_solves_all_principal_pivoting_fails_on_more_than_half(seed):
    """'Lemke solves all (complementarity to 1e-9)', 'principal pivoting fails on more than half of them',
    'more than 50 of 100' (over seeds 0-11: 83 to 92 failures; Lemke's worst defect 4e-11)."""
    rng = np.random.default_rng(seed)
    worst, failed = 0.0, 0
    for _ in range(100):
        L, q = random_friction_cone_lcp(rng, rng.integers(1, 4), rng.integers(3, 9))
        worst = max(worst, defect(L, q, lemke(L, q).z))
        try:
            failed += defect(L, q, principal_pivoting(L, q, max_pivots=200).z) > 1e-8
        except (ValueError, np.linalg.LinAlgError):
            failed += 1
    assert worst < 1e-9 and failed > 50


def test_the_lcp_matrix_is_copositive_but_not_a_p_matrix(rng):
    """'the matrix is not a P-matrix', 'still copositive'."""
    L, _ = random_friction_cone_lcp(rng, 2, 4)
    assert np.linalg.det(L[-2:, -2:]) == 0  # a principal minor that is zero
    z = rng.random((1000, len(L)))
    assert np.einsum("ij,jk,ik->i", z, L, z).min() >= -1e-12


def test_stick_below_the_friction_angle_slide_above_at_the_analytic_speed_for_every_method():
    """'sticks below atan(mu), slides above at g(sin a - mu cos a) t, every method (to 1e-12 m/s)'."""
    T = 0.5
    for alpha in np.radians(np.arange(10, 42, 2.0)):
        exact = max(G_EARTH * (np.sin(alpha) - MU * np.cos(alpha)), 0.0) * T
        for method in METHODS:
            run = simulate_chain(incline(alpha), PAIR.nodes, AT_REST, H, round(T / H), method)
            assert np.abs(run.v[-1, :, 0] - exact).max() < 1e-12
            assert np.abs(run.v[:, :, 1:]).max() < 1e-12


def test_a_triangle_of_directions_slides_from_tan_alpha_above_mu_over_2():
    """'a triangle of directions lets it slide from tan a > mu / 2'; the page's grid shows 16 degrees."""
    critical = np.arctan(MU / 2)
    for alpha, slides in ((critical - 0.01, False), (critical + 0.01, True)):
        v = simulate_chain(incline(alpha, directions=3), PAIR.nodes, AT_REST, H, 50).v[-1, 0, 0]
        expected = max(G_EARTH * (np.sin(alpha) - MU / 2 * np.cos(alpha)), 0.0) * 0.5
        assert (v > 1e-9) == slides and abs(v - expected) < 1e-12
    grid = np.radians(np.arange(10, 42, 2.0))
    speeds = [simulate_chain(incline(a, directions=3), PAIR.nodes, AT_REST, H, 50).v[-1, 0, 0] for a in grid]
    first = grid[np.argmax(np.array(speeds) > 1e-9)]
    assert round(np.degrees(first)) == 16


@pytest.mark.parametrize("seed", range(3))
def test_sliding_friction_in_the_polygon_and_maximally_dissipative(seed):
    """'friction in the polygon, and 1% more is not', 'dissipates the polygon's support value (to 1e-13)'."""
    rng = np.random.default_rng(seed)
    for n in (3, 4, 5, 8):
        level = ParticleChain(PAIR, floor=0.0, mu=MU, friction="cone", directions=n)
        d = friction_directions(n)[:, :2]
        normals = friction_directions(2 * n)[1::2, :2]
        for _ in range(20):
            psi = rng.uniform(0, 2 * np.pi, 2)
            v0 = np.column_stack([np.cos(psi), np.sin(psi), [0.0, 0.0]])
            v1 = chain_step(level, PAIR.nodes, v0, H, "symplectic")[1]
            impulse = level.spring.node_mass * (v1 - v0 - H * level.gravity)
            F, theta = impulse[:, :2], impulse[:, 2]
            bound = (MU * np.cos(np.pi / n) * theta)[:, None]
            assert np.all(F @ normals.T <= bound + 1e-12)
            assert not np.all(1.01 * F @ normals.T <= bound + 1e-12)
            support = MU * theta * np.max(-v1[:, :2] @ d.T, axis=1)
            assert np.abs(-np.sum(F * v1[:, :2], axis=1) - support).max() < 1e-13


def test_the_qp_agrees_when_sticking_and_lifts_off_at_mu_vt_when_sliding():
    """'sticking: LCP and QP agree (to 1e-6)', 'the LCP stays on the floor (to 1e-12)', 'the QP lifts off
    at mu |v_t| (to 1e-6)'."""
    def as_qp(chain, v0):
        m = chain.spring.node_mass
        b = m * v0.ravel() + H * np.tile(m * chain.gravity, 2)
        T = np.kron(np.eye(2), friction_directions(4))
        qp = contact_qp(m * np.eye(6), b, N=np.eye(6)[2::3], r_N=np.zeros(2), T=T, mu=np.full(2, MU))
        return qp.phi[:3]

    stick, slide = incline(0.3), incline(0.6)
    v_slide = np.tile([0.2, 0.0, 0.0], (2, 1))
    lcp_stick = chain_step(stick, PAIR.nodes, AT_REST, H)[1][0]
    lcp_slide = chain_step(slide, PAIR.nodes, v_slide, H)[1][0]
    qp_slide = as_qp(slide, v_slide)
    assert np.abs(lcp_stick - as_qp(stick, AT_REST)).max() < 1e-6
    assert abs(lcp_slide[2]) < 1e-12
    assert abs(qp_slide[2] - MU * np.hypot(*qp_slide[:2])) < 1e-6 and qp_slide[2] > 1e-2


def test_the_polygon_falls_short_of_the_circle_by_at_most_1_minus_cos_pi_over_n_second_order():
    """'worst shortfall between 0.9 and 1 times 1 - cos(pi/n)', 'each doubling of n divides it by more
    than 3.5' (second order in 1/n)."""
    psi = np.radians(np.arange(360) + 0.5).reshape(180, 2)
    ns = np.array([4, 8, 16, 32, 64])
    shortfall = []
    for n in ns:
        level = ParticleChain(PAIR, floor=0.0, mu=MU, friction="cone", directions=n)
        deceleration = []
        for two in psi:
            v0 = np.column_stack([np.cos(two), np.sin(two), [0.0, 0.0]])
            v1 = chain_step(level, PAIR.nodes, v0, H)[1]
            deceleration.extend(-np.sum((v1 - v0)[:, :2] * v0[:, :2], axis=1) / H)
        shortfall.append(1 - min(deceleration) / (MU * G_EARTH))
    shortfall, bound = np.array(shortfall), 1 - np.cos(np.pi / ns)
    assert np.all((shortfall > 0.9 * bound) & (shortfall <= bound + 1e-12))
    assert np.all(shortfall[:-1] / shortfall[1:] > 3.5)
