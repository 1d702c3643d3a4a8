"""Unit tests of redmax_edu.scenes: the reference scene catalogue built in SI units."""

import json
from pathlib import Path

import numpy as np
import pytest

from redmax_edu import scenes
from redmax_edu.inertia import box_mesh, composite, cuboid, cylinder, mesh
from redmax_edu.integrators import simulate
from redmax_edu.jacobian import jacobian
from redmax_edu.kinematics import forward_kinematics
from redmax_edu.maximal.forces import BodyDamping, PointForce, PointSpring, Spring
from redmax_edu.scenes import build

SHARED = Path(__file__).resolve().parents[3] / "shared" / "reference" / "redmax_scenes" / "scenes.json"

#: Every reference scene: joints, springs, damping, torques, deformables, constraints, prescribed
#: motion and friction.
SUPPORTED = set(range(-1, 36))
#: The frictional scenes (bilateral staggered projections, §2.11).
FRICTIONAL = {27, 28, 29, 30, 31, 33}


def _reference_poses(scene_id):
    """``E_wi_initial`` of the reference data, converted to metres."""
    E = np.array([b["E_wi_initial"] for b in scenes.reference_setup(scene_id)["bodies"]], dtype=float)
    E[:, :3, 3] *= 1e-2
    return E


# --- the data and the catalogue ------------------------------------------------------------------

@pytest.mark.skipif(not SHARED.exists(), reason="the shared reference data is not on this machine")
def test_the_packaged_data_equals_the_shared_reference():
    assert scenes.reference_data() == json.loads(SHARED.read_text(encoding="utf-8"))


def test_the_catalogue_lists_all_37_reference_scenes():
    entries = scenes.catalogue()
    assert [e.id for e in entries] == list(range(-1, 36))
    assert all(e.name and e.summary and e.features for e in entries)


def test_the_catalogue_says_every_scene_is_built():
    entries = {e.id: e for e in scenes.catalogue()}
    assert {i for i, e in entries.items() if e.supported} == SUPPORTED
    assert all(entries[i].reason is None for i in SUPPORTED)


def test_frictional_scenes_carry_the_reference_friction():
    """Joint friction with the data's contact geometry and mu[0] on every joint that has one,
    the closures' hinges too, and the floor contacts' own mu[1] (scenes 27-33)."""
    from redmax_edu.constraints import FloorContact
    from redmax_edu.friction.patterns import ClosureFriction, Cylinder, JointFriction, Sphere

    for sid in FRICTIONAL:
        s = scenes.scene(sid)
        setup = scenes.reference_setup(sid)
        assert s.model.friction and all(f.mu == setup["mu"][0] for f in s.model.friction)
        floors = [c for c in s.model.constraints if isinstance(c, FloorContact)]
        assert all(c.mu == setup["mu"][1] for c in floors)
    (a, b) = scenes.scene(27).model.friction
    assert isinstance(a, JointFriction) and a.geometry == Cylinder(0.005, 0.01)
    assert scenes.scene(28).model.friction[0].geometry == Sphere(0.01)
    assert any(isinstance(f, ClosureFriction) for f in scenes.scene(30).model.friction)
    assert not scenes.scene(34).model.friction  # the gears' joints have geometry, but no friction


def test_scene_30_runs_rk45_without_friction_and_euler_with_it():
    """The reference's ode45 runs of scene 30 have no friction and a longer span."""
    s = scenes.scene(30)
    assert s.spans["rk45"] == (0.0, 1.5) and s.spans["euler"] == (0.0, 1.0)
    euler = s.simulate("euler", t_span=(0.0, 0.02))
    assert euler.friction_iterations is not None and len(euler.friction_iterations) == 4
    assert s.simulate("rk45", t_span=(0.0, 0.02)).friction_iterations is None
    with pytest.raises(ValueError, match="'rk45' cannot simulate friction"):
        simulate(s.model, s.q0, s.qdot0, (0.0, 0.1), "rk45")


@pytest.mark.parametrize("bad", [36, -2, 1.0, "3", True, None])
def test_an_unknown_scene_id_is_a_value_error(bad):
    with pytest.raises(ValueError, match="'scene_id'"):
        scenes.scene(bad)


# --- every supported scene ------------------------------------------------------------------------

@pytest.mark.parametrize("scene_id", sorted(SUPPORTED))
def test_every_supported_scene_builds_with_a_consistent_state(scene_id):
    s = scenes.scene(scene_id)
    nq = s.model.nq
    assert s.id == scene_id and s.q0.shape == s.qdot0.shape == (nq,) and len(s.units) == nq
    assert s.t_span[1] > s.t_span[0] and s.h > 0 and "euler" in s.integrators
    assert s.model.n == len(scenes.reference_setup(scene_id)["bodies"])
    assert all(b.shape is not None and b.shape["type"] for b in s.model.bodies)
    assert s.coordinate_scale.shape == (nq,)


@pytest.mark.parametrize("scene_id", sorted(SUPPORTED))
def test_forward_kinematics_at_q0_reproduces_the_reference_poses(scene_id):
    """E_wi_initial of scenes.json, in metres, to 1e-9 relative (the data has 16 digits; a
    wrong offset, axis, unit or dof order is off by 1e-3 or more)."""
    s = scenes.scene(scene_id)
    E = forward_kinematics(s.model, s.q0).E_wi
    ref = _reference_poses(scene_id)
    scale = max(1.0, np.abs(ref[:, :3, 3]).max())
    np.testing.assert_allclose(E[:, :3, :3], ref[:, :3, :3], rtol=0, atol=1e-9)
    np.testing.assert_allclose(E[:, :3, 3], ref[:, :3, 3], rtol=0, atol=1e-9 * scale)


def test_the_initial_state_is_each_joints_own_q0_not_the_reversed_y0():
    """Scene 23 starts at q = (pi/2, pi/16, pi/16, pi/16); its y0 lists these leaf first."""
    s = scenes.scene(23)
    np.testing.assert_allclose(s.q0, [np.pi / 2, np.pi / 16, np.pi / 16, np.pi / 16], rtol=1e-15)
    y0 = np.array(scenes.reference_setup(23)["y0"])
    perm = np.array(scenes.reference_setup(23)["perm"]) - 1
    np.testing.assert_array_equal(s.q0, y0[:4][perm])


@pytest.mark.parametrize("scene_id", sorted(SUPPORTED))
def test_the_scene_is_the_same_physics_in_si_and_in_cgs_numbers(scene_id):
    """Built from the raw cgs numbers, the scene must move identically: angles equal, lengths
    x 100, energies x 1e7, over 20 Euler steps. This checks every conversion factor (a wrong one
    changes the motion at order one), e.g. the split of body damping into two SI coefficients."""
    si, cgs = build._build(scene_id, True), build._build(scene_id, False)
    span = (0.0, 20 * si.h)
    a = simulate(si.model, si.q0, si.qdot0, span, "euler", h=si.h, tau=si.tau)
    b = simulate(cgs.model, cgs.q0, cgs.qdot0, span, "euler", h=cgs.h, tau=cgs.tau)
    scale = si.coordinate_scale
    # round-off only: 1e-12 relative leaves 1000x margin over the measured 5e-14
    np.testing.assert_allclose(a.q / scale, b.q, rtol=0, atol=1e-12 * max(1.0, np.abs(b.q).max()))
    np.testing.assert_allclose(a.qdot / scale, b.qdot, rtol=0, atol=1e-12 * max(1.0, np.abs(b.qdot).max()))
    np.testing.assert_allclose(a.T * 1e7, b.T, rtol=0, atol=1e-12 * max(b.T.max(), 1e-300))
    np.testing.assert_allclose(a.H * 1e7, b.H, rtol=0, atol=1e-11 * max(np.abs(b.H).max(), 1e-300))


# --- particular scenes ----------------------------------------------------------------------------

def test_units_of_a_chain_scene():
    s = scenes.scene(-1)
    body = s.model.bodies[0]
    assert body.mass == pytest.approx(0.01)                                  # 10 g
    np.testing.assert_allclose(np.diag(body.inertia), np.array([1, 50.5, 50.5]) * 10 / 6 * 1e-7)
    np.testing.assert_allclose(body.T_joint_body[:3, 3], [0.05, 0, 0])          # 5 cm
    np.testing.assert_allclose(s.model.T_parent_joint[1][:3, 3], [0.1, 0, 0])   # 10 cm
    np.testing.assert_allclose(s.model.gravity, [0, 0, -9.8])                   # -980 cm/s^2
    assert body.shape == {"type": "cuboid", "sides": [0.1, 0.01, 0.01]}


def test_scene_5_torques_are_piecewise_constant_in_newton_metres():
    tau = scenes.scene(5).tau
    np.testing.assert_allclose(tau(0.0), [0, 0, 1e-5])                       # 100 g cm^2/s^2
    np.testing.assert_allclose(tau(2.999), [0, 0, 1e-5])
    np.testing.assert_allclose(tau(3.0), [0, 1e-5, -1e-5])
    np.testing.assert_allclose(tau(7.0), [1e-5, -1e-5, 0])
    assert scenes.scene(5).conservative is False


def test_scene_10_has_the_point_force_and_split_body_damping():
    s = scenes.scene(10)
    forces = s.model.forces
    point = [f for f in forces if isinstance(f, PointForce)]
    damping = [f for f in forces if isinstance(f, BodyDamping)]
    assert len(point) == 1 and point[0].point.body == 2
    np.testing.assert_allclose(point[0].F, [0, 0, 0.01])                    # 1000 dyn along z
    np.testing.assert_allclose(point[0].point.r, [0.05, 0, 0])
    assert [f.body for f in damping] == [0, 1, 2]
    np.testing.assert_allclose(damping[0].coefficients, [1e-6] * 3 + [1e-2] * 3)  # 10 g cm^2/s, 10 g/s
    assert all(b.body_damping == 0 for b in s.model.bodies) and not s.conservative


def test_scene_11_joint_springs_rest_at_the_initial_angles():
    s = scenes.scene(11)
    np.testing.assert_allclose(s.model.stiffness, [1e-3] * 3)               # 1e4 g cm^2/s^2 per rad
    np.testing.assert_allclose(s.model.damping, [1e-4] * 3)                 # 1e3 g cm^2/s per rad
    np.testing.assert_array_equal(s.model.q_rest, s.q0)
    np.testing.assert_allclose(s.qdot0, [1, 0, 0])


def test_scene_23_springs_and_scene_24_spring_damper():
    springs = scenes.scene(23).model.forces
    assert len(springs) == 3 and all(isinstance(f, PointSpring) for f in springs)
    assert springs[0].ks == pytest.approx(0.1)                              # 100 dyn/cm = 0.1 N/m
    assert [p.body for p in springs[2].points] == [2, 3]
    (spring,) = scenes.scene(24).model.forces
    assert isinstance(spring, Spring)
    assert spring.law.k == pytest.approx(10.0) and spring.law.d == pytest.approx(0.01)  # 1e6 dyn, 1e3 dyn s
    s = scenes.scene(24)
    l0, _ = spring.length(forward_kinematics(s.model, s.q0).E_wi)
    assert spring.law.L == pytest.approx(l0, rel=1e-14)                     # rest = initial length


def test_scene_12_mass_spring_chains_in_si():
    """Two chains of 1 g (K = 1e5 erg per segment); only the middle node of the first is free."""
    s = scenes.scene(12)
    cable, strut = s.model.deformables
    assert s.model.nr == 2 and s.model.nq == 5 and s.units[2:] == ("length",) * 3
    np.testing.assert_allclose(s.q0, [0, 0, 0.25, 0, 0.05])                  # node (25, 0, 5) cm
    assert cable.stiffness == pytest.approx(0.01) and cable.mass == pytest.approx(1e-3)  # 1e5 erg, 1 g
    assert cable.attachments[0].body == -1 and cable.attachments[2].body == 1
    np.testing.assert_allclose(cable.attachments[0].r, [0.3, 0, 0.1])      # world point (30, 0, 10) cm
    np.testing.assert_allclose(cable.rest_lengths, [0.05 * np.sqrt(2)] * 2)
    assert strut.nfree == 0 and [a.body for a in strut.attachments.values()] == [0, 1]


def test_scene_19_composite_joint_has_mixed_units():
    s = scenes.scene(19)
    assert s.units == ("angle", "length")
    np.testing.assert_allclose(s.q0, [0.1, 0.0])
    np.testing.assert_allclose(s.qdot0, [0.0, 0.01])                        # 1 cm/s
    np.testing.assert_allclose(s.rk45_atol(), [1e-6, 1e-8, 1e-6, 1e-8])


def test_scene_25_composite_body_matches_inertia_composite():
    """The reference's composite body (cuboid 1x1x10 cm + cylinder r 1 cm, h 10 cm, density 1) has
    the mass, centre of mass and principal moments that redmax_edu.inertia.composite gives."""
    body = scenes.scene(25).model.bodies[0]
    E_jb = body.T_joint_body
    parts = [(cuboid([0.01, 0.01, 0.1], density=1000.0), E_jb @ np.array(body.shape["parts"][0]["E"])),
             (cylinder(0.01, 0.1, density=1000.0), E_jb @ np.array(body.shape["parts"][1]["E"]))]
    props = composite(parts)
    assert props.mass == pytest.approx(body.mass, rel=1e-12)
    np.testing.assert_allclose(props.com, E_jb[:3, 3], atol=1e-14)
    R = E_jb[:3, :3]
    np.testing.assert_allclose(R.T @ props.inertia @ R, body.inertia, atol=1e-12 * np.abs(body.inertia).max())
    np.testing.assert_allclose(parts[0][1][:3, 3], [0, 0, -0.05], atol=1e-15)  # the summary's placement
    np.testing.assert_allclose(parts[1][1][:3, 3], [0.05, 0, -0.1], atol=1e-15)


def test_scene_26_mesh_body_matches_a_box_mesh():
    """cuboid.obj is a 1 x 2 x 3 cm box; the reference's mesh integration gave mass 6.000001 g,
    so compare the inertia at that mass to 1e-6 relative (the mesh file's rounding)."""
    body = scenes.scene(26).model.bodies[0]
    props = mesh(*box_mesh(np.array(body.shape["sides"])), mass=body.mass)
    E = np.array(body.shape["E"])                                          # mesh frame in body frame
    np.testing.assert_allclose(E[:3, :3] @ props.inertia @ E[:3, :3].T, body.inertia, rtol=0,
                               atol=1e-6 * np.abs(body.inertia).max())
    assert body.mass == pytest.approx(6e-3, rel=1e-6)


def test_scene_18_free_body_follows_the_analytic_parabola():
    """z(t) = 3 t - t^2/2 cm (launched at 3 cm/s under 1 cm/s^2), x = y = 0, and the body angular
    velocity stays (0.2, 0.4, 0.6) rad/s (isotropic cube), over the reference's 7 s under RK45.

    Free fall is a quadratic in t, which RK45 integrates exactly; the tolerance 1e-9 cm covers
    round-off of the coupled 12-dimensional solve. The spin passes |r| = 1.5 pi near t = 6.3 s,
    so the exponential coordinates are reparameterised on the way."""
    s = scenes.scene(18)
    tr = s.simulate("rk45")
    z_cm = tr.q[:, 2] / 1e-2
    np.testing.assert_allclose(z_cm, 3 * tr.t - tr.t**2 / 2, rtol=0, atol=1e-9)
    np.testing.assert_allclose(tr.q[:, :2], 0.0, atol=1e-15)
    omega = np.array([(jacobian(m, q) @ qd)[:3] for m, q, qd in zip(tr.models, tr.q, tr.qdot, strict=True)])
    # zero angular acceleration for an isotropic body: every RK stage is exact up to round-off (3e-15)
    np.testing.assert_allclose(omega, np.tile([0.2, 0.4, 0.6], (len(tr.t), 1)), rtol=0, atol=1e-10)
    assert len(tr.reparameterized) >= 1


def test_the_reference_disables_ode45_for_scenes_3_and_24():
    for scene_id in (3, 24):
        s = scenes.scene(scene_id)
        assert s.integrators == ("euler",)
        with pytest.raises(ValueError, match=rf"scene {scene_id} .*'rk45' is not available"):
            s.simulate("rk45")
    assert scenes.scene(0).integrators == ("rk45_recursive", "rk45", "euler")


def test_scene_simulate_uses_the_reference_step_and_span():
    s = scenes.scene(25)
    tr = s.simulate("euler", t_span=(0.0, 0.1))
    assert tr.h == s.h and tr.t[-1] == pytest.approx(0.1)


def test_piecewise_constant_checks_its_arguments():
    with pytest.raises(ValueError, match="'breaks'"):
        scenes.PiecewiseConstant([2.0, 1.0], np.zeros((3, 1)))
    with pytest.raises(ValueError, match="'values'"):
        scenes.PiecewiseConstant([1.0], np.zeros((3, 1)))


# --- constraints and prescribed motion ---------------------------------------------------------------

def test_scene_12_attached_by_constraints_has_the_reference_coordinates():
    """attachment="constraint": every node is a coordinate (2 + 5 x 3 = 17, the reference's
    count) and four node attachments hold the chains' ends, satisfied at the start."""
    from redmax_edu.constrained import constraint_errors
    from redmax_edu.constraints import NodeAttachment

    s = scenes.scene(12, attachment="constraint")
    assert s.model.nq == 17 and len(s.q0) == 17
    assert all(isinstance(c, NodeAttachment) for c in s.model.constraints) and len(s.model.constraints) == 4
    assert max(np.abs(e).max() for e in constraint_errors(s.model, s.q0)) < 1e-12
    assert scenes.scene(12).model.nq == 5
    with pytest.raises(ValueError, match="'attachment' must be one of exact, constraint"):
        scenes.scene(12, attachment="glue")


@pytest.mark.parametrize("scene_id", [4, 7, 8, 15, 32, 34])
def test_constrained_scenes_start_closed(scene_id):
    """The reference's initial states satisfy their loops and couplings (to the data's digits)."""
    from redmax_edu.constrained import constraint_errors

    s = scenes.scene(scene_id)
    errors = [e for e, c in zip(constraint_errors(s.model, s.q0), s.model.constraints, strict=True)
              if not c.inequality]
    assert max(np.abs(e).max() for e in errors) < 1e-9


def _central(f, t, h=1e-6):
    return (np.asarray(f(t + h)) - np.asarray(f(t - h))) / (2 * h)


def test_sigmoid_rates_are_the_derivatives_of_its_angle():
    ramp = scenes.Sigmoid(a=7.0, b=1.5 * np.pi, t0=0.0, t1=7.0)
    for t in (0.3, 2.0, 3.5, 6.0):
        q, qdot, qddot = ramp(t)
        assert qdot[0] == pytest.approx(_central(lambda s: ramp(s)[0][0], t), rel=1e-7)
        assert qddot[0] == pytest.approx(_central(lambda s: ramp(s)[1][0], t), rel=1e-6, abs=1e-9)
    assert ramp(7.0)[0][0] == 1.5 * np.pi and ramp(9.0)[1][0] == 0.0


def test_body_twist_schedule_rates_follow_the_rotating_body():
    """wdot = d/dt of the wanted (omega_y, nu_x, nu_z) along a motion with that omega."""
    from redmax_edu.lie import exp_so3

    sched = scenes.BodyTwistSchedule(0.01)
    omega = np.array([0.3, -0.5, 0.2])
    phi = np.concatenate([omega, np.zeros(3)])
    for t in (1.0, 3.0, 5.0, 7.0):
        def w(s):
            E = np.eye(4)
            E[:3, :3] = exp_so3(omega * s)                   # the body turning at omega
            return sched(s, E, phi)[0]
        E = np.eye(4)
        E[:3, :3] = exp_so3(omega * t)
        np.testing.assert_allclose(sched(t, E, phi)[1], _central(w, t), atol=1e-8)


RUNS = [(sid, m) for sid in sorted(SUPPORTED) for m in scenes.scene(sid).integrators]


def test_every_scene_offers_the_reference_integrator_types():
    """Every type the reference ran a scene with is offered: 1 = rk45_recursive, 2 = rk45, 3 = euler."""
    kinds = {"itype1": "rk45_recursive", "itype2": "rk45", "itype3": "euler"}
    for sid in SUPPORTED:
        setups = scenes.reference_data()["scenes"][str(sid)]["setups"]
        ran = {kinds[k] for k, v in setups.items() if v["tspan"][1] > v["tspan"][0]}
        assert set(scenes.scene(sid).integrators) == ran, sid
    wall_times = Path(__file__).resolve().parents[2] / "benchmarks" / "octave_wall_times.json"
    timed = json.loads(wall_times.read_text(encoding="utf-8"))
    types = {1: "rk45_recursive", 2: "rk45", 3: "euler"}
    assert sorted(RUNS) == sorted((r["scene"], types[r["itype"]]) for r in timed["runs"])  # all 90


@pytest.mark.parametrize("scene_id, method", RUNS)
def test_every_scene_runs_with_every_integrator_type_it_offers(scene_id, method):
    """A tenth of a second (at least three Euler steps) of every scene with every type: finite,
    on the sample grid, the friction passes recorded exactly for frictional Euler runs."""
    s = scenes.scene(scene_id)
    t0 = s.spans[method][0]
    span = (t0, t0 + max(0.1, 3 * s.h) if method == "euler" else t0 + 0.1)
    if method == "euler":
        span = (t0, t0 + s.h * round((span[1] - t0) / s.h))
    tr = s.simulate(method, t_span=span)
    assert np.isfinite(tr.q).all() and np.isfinite(tr.qdot).all() and np.isfinite(tr.H).all()
    assert tr.t[0] == t0 and np.isclose(tr.t[-1], span[1])
    frictional = method == "euler" and (s.model.friction or any(getattr(c, "mu", 0) > 0
                                                                for c in s.model.constraints))
    assert (tr.friction_iterations is not None) == bool(frictional)
