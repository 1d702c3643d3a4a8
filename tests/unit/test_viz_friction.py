"""Pictures and runs of §2.11 (redmax_edu.viz.friction, redmax_edu.viz.slide_explorer): the joints'
contact patterns drawn as the library defines them, the incline stepped by Algorithm 7, BISP runs
that keep each step's record, and the slide explorer's three layers from one set of runs."""

import numpy as np
import pytest

from redmax_edu.friction.patterns import Box, Cylinder, JointFriction, Sphere
from redmax_edu.joints import Prismatic, Revolute, SphericalExp
from redmax_edu.scenes import scene
from redmax_edu.viz.friction import (
    NORMAL_COLOR,
    TANGENT_COLOR,
    contact_directions,
    friction_scenes_figure,
    frictional_steps,
    incline_box,
    joint_contact_figure,
    joint_contact_scene,
    joint_rates,
    joint_sticks,
)
from redmax_edu.viz.scene import Arrow, Marker, Path
from redmax_edu.viz.slide_explorer import (
    G,
    coulomb_slide,
    slide_figure,
    slide_model,
    slide_player,
    slide_runs,
)

PATTERNS = [(Revolute([0, 1.0, 0]), Cylinder(0.01, 0.04), 8, 16, 8),
            (SphericalExp(), Sphere(0.02), 6, 6, 12),
            (Prismatic([0, 0, 1.0]), Box((0.02, 0.03, 0.1)), 8, 16, 8)]


@pytest.mark.parametrize(("joint", "geometry", "points", "normals", "tangents"), PATTERNS)
def test_the_drawn_contacts_are_the_librarys_points_and_directions(joint, geometry, points, normals,
                                                                   tangents):
    contacts = JointFriction(0, 0.3, geometry).contacts(joint)
    n, t = contact_directions(contacts)
    assert (len(n), len(t)) == (normals, tangents)
    # each drawn direction, applied at its point, reproduces the library's row (p x d; d)
    for (p, d), row in zip(n + t, np.vstack([contacts.normals, contacts.tangents]), strict=True):
        np.testing.assert_allclose(np.r_[np.cross(p, d), d], row, atol=1e-15)
        assert np.linalg.norm(d) == pytest.approx(1.0)
    scene_ = joint_contact_scene(joint, geometry, length=0.01)
    markers = [i for i in scene_.items if isinstance(i, Marker)]
    arrows = [i for i in scene_.items if isinstance(i, Arrow)]
    assert len(markers) == points
    assert [a.color for a in arrows] == [NORMAL_COLOR] * normals + [TANGENT_COLOR] * tangents
    assert all(np.linalg.norm(a.vector) == pytest.approx(0.01) for a in arrows)
    # the outline passes through the contact points (a flipped or rotated outline would not)
    outline = next(i for i in scene_.items if isinstance(i, Path)).points
    outline = outline[~np.isnan(outline[:, 0])]
    gaps = [np.linalg.norm(outline - m.position, axis=1).min() for m in markers]
    assert max(gaps) < 1e-3 * max(np.ptp(outline, axis=0))


def test_a_hinge_outline_follows_its_axis_and_a_wrong_geometry_is_refused():
    joint = Revolute([1.0, 0, 0])
    outline = joint_contact_scene(joint, Cylinder(0.01, 0.04)).items[0].points
    outline = outline[~np.isnan(outline[:, 0])]
    assert np.ptp(outline[:, 0]) == pytest.approx(0.04)      # the height lies along x
    with pytest.raises(ValueError, match="length"):
        joint_contact_scene(joint, Cylinder(0.01, 0.04), length=0.0)
    with pytest.raises(ValueError, match="geometry"):
        joint_contact_scene(joint, "pin")


def test_the_contact_figure_has_one_panel_per_joint():
    fig = joint_contact_figure([(j, g, str(k)) for k, (j, g, *_) in enumerate(PATTERNS)])
    assert len(fig.axes) == 3


def test_the_incline_box_sticks_below_arctan_mu_and_slides_coulombs_distance_above():
    mu, h, T = 0.5, 0.01, 0.3
    stuck = incline_box(20.0, mu, t_end=T)
    assert np.abs(stuck.s).max() < 1e-8 and np.abs(stuck.lift).max() < 1e-12
    theta = np.radians(35.0)
    n = int(round(T / h))
    a = G * (np.sin(theta) - mu * np.cos(theta))
    sliding = incline_box(35.0, mu, t_end=T)
    # the n-step Euler distance of a steady acceleration, to round-off of the contact solves
    assert sliding.s[-1] == pytest.approx(a * h * h * n * (n + 1) / 2, rel=1e-9)
    assert sliding.iterations[1:].max() <= 2 and len(sliding.iterations) == n
    assert incline_box(35.0, mu, t_end=T, solver="qp").lift.max() > 1e-4   # Part 1's QP hovers
    for bad in (dict(solver="lcp"), dict(t_end=-1.0)):
        with pytest.raises(ValueError, match="solver|t_end"):
            incline_box(35.0, mu, **bad)
    with pytest.raises(ValueError, match="90 degrees"):
        incline_box(90.0, mu)


def test_frictional_steps_are_simulates_steps_with_their_records():
    s = scene(31)
    run = frictional_steps(s.model, s.q0, s.qdot0, s.h, 30, baumgarte=s.baumgarte)
    tr = s.simulate("euler", t_span=(0.0, 30 * s.h))
    np.testing.assert_array_equal(run.q, tr.q)
    np.testing.assert_array_equal(run.iterations, tr.friction_iterations)
    assert len(run.infos) == 30 and run.t[-1] == pytest.approx(30 * s.h)


def test_joint_rates_and_sticks_take_each_joints_own_coordinates():
    model = scene(28).model                                   # two ball joints, three rates each
    qdot = np.zeros((2, 6))
    qdot[1, 4] = -0.3
    np.testing.assert_array_equal(joint_rates(model, qdot), [[0.0, 0.0], [0.0, 0.3]])
    assert joint_sticks(model, qdot).tolist() == [[True, True], [True, False]]
    with pytest.raises(ValueError, match="6 columns"):
        joint_rates(model, np.zeros((2, 5)))


def test_the_scenes_figure_has_three_rows_per_run():
    s = scene(29)
    tr = s.simulate("euler", t_span=(0.0, 0.05))
    fig = friction_scenes_figure([("29", s.model, tr)])
    assert len(fig.axes) == 3


# ----------------------------------------------------------------------------- the slide explorer
def test_coulombs_slide_stops_then_sticks_or_slides_back():
    theta, v0 = 30.0, 1.0
    s, c = np.sin(np.radians(theta)), np.cos(np.radians(theta))
    for mu, back in ((0.8, 0.0), (0.3, G * (s - 0.3 * c))):
        t1 = v0 / (G * (s + mu * c))
        v, f = coulomb_slide(mu, theta, v0, [0.0, t1, t1 + 0.5])
        np.testing.assert_allclose(v, [v0, 0.0, -0.5 * back], atol=1e-12)
        assert f[0] == pytest.approx(-mu * G * c)             # opposes the climb
        assert f[2] == pytest.approx(G * s if back == 0 else mu * G * c)


@pytest.fixture(scope="module")
def runs():
    return slide_runs((0.3, 0.8), (30.0,), t_end=0.3)


def test_the_slide_moves_as_coulomb_says(runs):
    for mu in (0.3, 0.8):
        run = runs.get(mu, 30.0)
        v, f = coulomb_slide(mu, 30.0, runs.v0, run.t)
        # within one step's change at the stop, exact elsewhere (to the regulariser's bias)
        assert np.abs(run.v - v).max() <= runs.h * G * (0.5 + mu * np.cos(np.pi / 6))
        assert run.v[5] == pytest.approx(v[5], abs=1e-9)
        assert (np.abs(run.friction) <= run.bound * (1 + 1e-12)).all()
    assert runs.get(0.8, 30.0).friction[-1] == pytest.approx(0.5 * G, rel=1e-9)   # holds m g sin
    assert slide_model(30.0, 0.5).friction[0].geometry == Box((0.1, 0.1, 0.1))
    with pytest.raises(ValueError, match="90 degrees"):
        slide_model(95.0, 0.5)
    with pytest.raises(ValueError, match="whole steps"):
        slide_runs((0.3,), (30.0,), t_end=0.3, h=0.07)


def test_the_three_layers_open_on_the_same_setting(runs):
    fig = slide_figure(runs, [(0.8, 30.0), (0.3, 30.0)])
    assert len(fig.axes) == 4
    pytest.importorskip("plotly")
    player = slide_player(runs, (0.3, 0.8), (30.0,), first=(0.8, 30.0), points=10)
    assert len(player.frames) == 2 and player.layout.sliders[0].active == 1
    np.testing.assert_allclose(player.data[0].y, player.frames[1].data[0].y)
    np.testing.assert_allclose(player.data[0].y[0], runs.v0)
    with pytest.raises(ValueError, match="grid"):
        slide_player(runs, (0.3, 0.8), (30.0,), first=(0.5, 30.0))
    pytest.importorskip("ipywidgets")
    from redmax_edu.viz.slide_explorer import slide_widget

    sliders = slide_widget(runs, mu=0.8, theta=30.0).children[0].children
    assert (sliders[0].value, sliders[1].value) == (0.8, 30.0)
