"""The four integrators of the ArtiSynth notes on a particle chain (redmax_edu.particles, §0.9-0.10)."""

import numpy as np
import pytest

from redmax_edu.deformable import DeformableSpring
from redmax_edu.maximal.forces import Attachment
from redmax_edu.particles import METHODS, ParticleChain, chain_step, friction_directions, simulate_chain


def straight(k=4, length=0.3, z=0.0):
    return np.column_stack([np.linspace(0.0, length, k), np.zeros(k), np.full(k, z)])


def test_forces_match_the_deformable_spring_plus_gravity(rng):
    nodes = straight()
    chain = ParticleChain(DeformableSpring(nodes, stiffness=20.0, mass=0.4), gravity=[0, 0, -2.0])
    x, v = nodes + 0.01 * rng.standard_normal((4, 3)), rng.standard_normal((4, 3))
    f, K, D = chain.forces(x, v)
    terms = chain.spring.elastic(x, v)
    np.testing.assert_allclose(f, terms.f.ravel() + np.tile([0, 0, -0.2], 4), atol=1e-14)
    assert K is not None and K.shape == (12, 12) and D.shape == (12, 12)


@pytest.mark.parametrize("method", METHODS)
def test_a_step_without_springs_or_constraints_is_free_fall(method):
    """Constant gravity and slack-free rest: every method gives v+ = v + h g and the exact position
    of its own position update."""
    chain = ParticleChain(DeformableSpring(straight(2, 1.0), stiffness=0.0, mass=2.0))
    v = np.tile([0.3, 0.0, 0.1], (2, 1))
    x1, v1 = chain_step(chain, chain.spring.nodes, v, 0.1, method)
    np.testing.assert_allclose(v1, v + [0, 0, -0.981], atol=1e-14)
    moved = {"symplectic": v1, "implicit": v1, "trapezoidal": 0.5 * (v + v1),
             "bridson_marino": v + [0, 0, -0.4905]}
    np.testing.assert_allclose(x1, chain.spring.nodes + 0.1 * moved[method], atol=1e-14)


@pytest.mark.parametrize("method", METHODS)
def test_pin_holds_and_floor_is_not_crossed_by_the_position_update(method):
    nodes = straight(5, 0.4, z=0.02)
    chain = ParticleChain(DeformableSpring(nodes, stiffness=30.0, mass=0.5), pin=nodes[0], floor=0.0, mu=0.3)
    run = simulate_chain(chain, nodes, np.zeros((5, 3)), 0.002, 100, method)
    np.testing.assert_allclose(run.x[:, 0], np.broadcast_to(nodes[0], (101, 3)), atol=1e-12)
    bound = -1e-3 if method == "trapezoidal" else -1e-12  # the trapezoid moves with the mean velocity
    assert run.x[:, :, 2].min() > bound


def test_divergence_raises_or_stops_as_asked():
    nodes = straight(6, 0.5)
    chain = ParticleChain(DeformableSpring(nodes, stiffness=50.0, mass=0.6), pin=nodes[0])
    with pytest.raises(ValueError, match="diverged"):
        simulate_chain(chain, nodes, np.zeros((6, 3)), 0.01, 200, "symplectic")
    run = simulate_chain(chain, nodes, np.zeros((6, 3)), 0.01, 200, "symplectic", stop_on_divergence=True)
    assert 2 < len(run.t) < 201 and np.isfinite(run.energy).all()


@pytest.mark.parametrize(("make", "words"), [
    (lambda s: ParticleChain("spring"), "argument 'spring'"),
    (lambda s: ParticleChain(DeformableSpring(straight(), 1.0, 1.0, first=Attachment(-1, [0, 0, 0]))),
     "attached ends"),
    (lambda s: ParticleChain(s, mu=-1.0), "argument 'mu'"),
    (lambda s: ParticleChain(s, pin=[0.0, 0.0]), "argument 'pin'"),
    (lambda s: chain_step(ParticleChain(s), straight(), np.zeros((4, 3)), 0.01, "rk4"), "argument 'method'"),
    (lambda s: chain_step(ParticleChain(s), straight(), np.zeros((4, 3)), 0.0), "argument 'h'"),
    (lambda s: chain_step(ParticleChain(s), straight(), np.zeros((3, 3)), 0.01), "argument 'v'"),
    (lambda s: simulate_chain(ParticleChain(s), straight(), np.zeros((4, 3)), 0.01, 0), "argument 'steps'"),
])
def test_bad_input_names_the_argument(make, words):
    with pytest.raises(ValueError) as err:
        make(DeformableSpring(straight(), stiffness=10.0, mass=1.0))
    assert words in str(err.value)


# --- The Anitescu-Stewart friction cone (notes §0.10) ---------------------------------------------

G_EARTH = 9.81


def two_particles():
    """Two nodes joined by a spring of zero stiffness: two independent particles on the floor."""
    return DeformableSpring(straight(2, 0.1), stiffness=0.0, mass=0.2)


def incline(angle, mu, directions=4):
    """A floor tilted by `angle` (rad) about y: gravity rotated instead of the floor."""
    gravity = G_EARTH * np.array([np.sin(angle), 0.0, -np.cos(angle)])
    return ParticleChain(two_particles(), gravity=gravity, floor=0.0, mu=mu, friction="cone",
                         directions=directions)


def cone_step_impulse(chain, v0, h):
    """One symplectic step from the floor: the tangential friction impulse and the normal impulse per node."""
    x1, v1 = chain_step(chain, chain.spring.nodes, v0, h, "symplectic")
    impulse = chain.spring.node_mass * (v1 - v0 - h * chain.gravity)
    return impulse[:, :2], impulse[:, 2], v1


def inside_polygon(friction, normal, mu, directions, slack=1e-12):
    """The friction impulse lies in the polyhedral cone: below every facet of the polygon."""
    half = np.pi / directions
    facets = np.column_stack([np.cos(2 * half * np.arange(directions) + half),
                              np.sin(2 * half * np.arange(directions) + half)])
    return bool(np.all(friction @ facets.T <= (mu * np.cos(half) * normal + slack)[:, None]))


@pytest.mark.parametrize("method", METHODS)
def test_cone_friction_sticks_below_the_friction_angle_and_slides_above(method):
    mu = 0.5
    critical = np.arctan(mu)
    for angle, sticks in ((critical - 0.02, True), (critical + 0.02, False), (0.6, False)):
        run = simulate_chain(incline(angle, mu), two_particles().nodes, np.zeros((2, 3)), 0.01, 50, method)
        expected = 0.0 if sticks else G_EARTH * (np.sin(angle) - mu * np.cos(angle)) * 0.5
        np.testing.assert_allclose(run.v[-1, :, 0], expected, atol=1e-12)
        assert np.abs(run.v[:, :, 1:]).max() < 1e-12  # no sideways or normal motion


def test_the_stick_slip_check_catches_a_wrong_friction_coefficient():
    """Mutant: the analytic velocity with mu 1% off is refused by the test's tolerance."""
    angle, mu = 0.6, 0.5
    run = simulate_chain(incline(angle, mu), two_particles().nodes, np.zeros((2, 3)), 0.01, 50, "symplectic")
    v = run.v[-1, 0, 0]
    assert abs(v - G_EARTH * (np.sin(angle) - 1.01 * mu * np.cos(angle)) * 0.5) > 1e-3


@pytest.mark.parametrize("directions", [3, 4, 5, 8, 16])
def test_sliding_friction_is_in_the_cone_and_dissipates_the_most(rng, directions):
    """Maximal dissipation: -friction . v+ is the polygon's support value mu theta max_j (-d_j . v+)
    (a vertex, or an edge when v+ is normal to it)."""
    mu, h = 0.4, 0.01
    chain = ParticleChain(two_particles(), floor=0.0, mu=mu, friction="cone", directions=directions)
    tangents = friction_directions(directions)[:, :2]
    for _ in range(10):
        psi = rng.uniform(0, 2 * np.pi, 2)
        v0 = np.column_stack([np.cos(psi), np.sin(psi), np.zeros(2)])
        friction, normal, v1 = cone_step_impulse(chain, v0, h)
        np.testing.assert_allclose(normal, chain.spring.node_mass * G_EARTH * h, rtol=1e-12)
        assert inside_polygon(friction, normal, mu, directions)
        assert not inside_polygon(1.01 * friction, normal, mu, directions)  # mutant: 1% outside
        support = mu * normal * np.max(-v1[:, :2] @ tangents.T, axis=1)
        np.testing.assert_allclose(-np.sum(friction * v1[:, :2], axis=1), support, atol=1e-13)
        # mutant: the vertex along the motion instead of against it
        wrong = mu * normal[:, None] * tangents[np.argmax(v1[:, :2] @ tangents.T, axis=1)]
        assert np.all(np.abs(-np.sum(wrong * v1[:, :2], axis=1) - support) > 1e-4)


def test_the_cone_approaches_the_circular_cone_as_directions_increase():
    """Worst shortfall of the sliding deceleration, over 360 sliding directions, against mu g: it is
    1 - cos(pi / n), at most, and approaches it."""
    mu, h = 0.5, 0.01
    psi = np.radians(np.arange(360) + 0.5).reshape(180, 2)  # two particles per step
    worst = []
    for directions in (4, 8, 16, 32):
        chain = ParticleChain(two_particles(), floor=0.0, mu=mu, friction="cone", directions=directions)
        deceleration = []
        for pair in psi:
            v0 = np.column_stack([np.cos(pair), np.sin(pair), np.zeros(2)])
            v1 = chain_step(chain, chain.spring.nodes, v0, h, "symplectic")[1]
            deceleration.extend(-np.sum((v1 - v0)[:, :2] * v0[:, :2], axis=1) / h)
        shortfall = 1 - min(deceleration) / (mu * G_EARTH)
        bound = 1 - np.cos(np.pi / directions)
        assert 0.9 * bound < shortfall <= bound + 1e-12
        worst.append(shortfall)
    assert all(a / b > 3.5 for a, b in zip(worst, worst[1:], strict=False))  # second order in 1/n


@pytest.mark.parametrize(("kwargs", "words"), [
    ({"friction": "circle"}, "argument 'friction'"),
    ({"friction": "cone", "directions": 2}, "argument 'directions' must be >= 3"),
    ({"friction": "cone", "directions": 4.0}, "argument 'directions' must be an integer"),
])
def test_friction_options_refuse_bad_input(kwargs, words):
    with pytest.raises(ValueError, match=words):
        ParticleChain(two_particles(), floor=0.0, mu=0.3, **kwargs)
    with pytest.raises(ValueError, match="argument 'count'"):
        friction_directions(2)


@pytest.mark.parametrize("method", METHODS)
def test_a_thrown_chain_with_springs_and_a_pin_stops_on_the_cone(method):
    """The cone goes through the same elimination as the pin: the pin holds, the floor is not crossed
    (beyond the trapezoid's dip), and a chain thrown sideways comes to rest."""
    nodes = straight(5, 0.4, z=0.03)
    chain = ParticleChain(DeformableSpring(nodes, stiffness=30.0, mass=0.5), pin=nodes[0], floor=0.0, mu=0.5,
                          friction="cone", directions=6)
    thrown = np.tile([0.0, 1.0, 0.0], (5, 1))
    thrown[0] = 0.0  # the pinned node starts at rest
    run = simulate_chain(chain, nodes, thrown, 0.002, 400, method)
    np.testing.assert_allclose(run.x[:, 0], np.broadcast_to(nodes[0], (401, 3)), atol=1e-12)
    assert run.x[:, :, 2].min() > (-1e-3 if method == "trapezoidal" else -1e-12)
    assert np.abs(run.v[-1]).max() < 1e-6 < np.abs(run.v[1]).max()
