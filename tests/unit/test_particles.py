"""The four integrators of the ArtiSynth notes on a particle chain (redmax_edu.particles, §0.9-0.10)."""

import numpy as np
import pytest

from redmax_edu.deformable import DeformableSpring
from redmax_edu.maximal.forces import Attachment
from redmax_edu.particles import METHODS, ParticleChain, chain_step, simulate_chain


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
