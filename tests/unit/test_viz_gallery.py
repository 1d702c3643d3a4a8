"""Unit tests of the gallery plumbing: viz.player (light players), viz.gallery (energy measures,
motion planes, energy figures) and the parts of viz.reduced they rely on (shape frames,
composite shapes, springs, one model per sample)."""

import matplotlib.pyplot as plt
import numpy as np
import pytest

from redmax_edu import scenes
from redmax_edu.joints import Revolute
from redmax_edu.kinematics import forward_kinematics
from redmax_edu.maximal.forces import Attachment, PointSpring
from redmax_edu.model import Body, Model
from redmax_edu.viz import gallery
from redmax_edu.viz.player import light_player, scene_polylines
from redmax_edu.viz.reduced import body_strokes, model_scene, spring_points, trajectory_scenes
from redmax_edu.viz.scene import Frame, Marker, Path, Scene


def _T(x=0.0, y=0.0, z=0.0):
    E = np.eye(4)
    E[:3, 3] = [x, y, z]
    return E


def _pendulum(shape=None, forces=()):
    inertia = np.diag([0.1, 0.1, 0.02])
    bodies = [Body("a", -1, Revolute([0, 1, 0]), _T(), _T(z=-0.5), 1.0, inertia, shape=shape),
              Body("b", 0, Revolute([0, 1, 0]), _T(z=-1.0), _T(z=-0.5), 1.0, inertia)]
    return Model(bodies, forces=forces)


def _points(pts):
    return pts[~np.isnan(pts[:, 0])]


def test_a_shape_frame_places_the_shape_in_the_body_frame(rng):
    R = np.array([[0.0, -1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]])  # 90 deg about z
    E_shape = np.eye(4)
    E_shape[:3, :3], E_shape[:3, 3] = R, [0.1, 0.0, 0.0]
    sides = [0.2, 0.4, 1.0]
    model = _pendulum(shape={"type": "cuboid", "sides": sides, "E": E_shape.tolist()})
    kin = forward_kinematics(model, rng.standard_normal(2))
    local = np.linalg.inv(kin.E_wi[0] @ E_shape)
    pts = _points(body_strokes(model, kin, 0)) @ local[:3, :3].T + local[:3, 3]
    np.testing.assert_allclose(np.abs(pts).max(axis=0), 0.5 * np.array(sides), atol=1e-12)


def test_a_composite_shape_draws_every_part():
    part = {"type": "cuboid", "sides": [0.1, 0.1, 0.1]}
    parts = [dict(part, E=_T(x=-0.3).tolist()), dict(part, E=_T(x=0.3).tolist())]
    shape = {"type": "composite", "parts": parts}
    model = _pendulum(shape=shape)
    kin = forward_kinematics(model, np.zeros(2))
    pts = _points(body_strokes(model, kin, 0))
    assert len(pts) == 48  # two boxes of 12 edges
    centre = kin.E_wi[0][:3, 3]
    xs = sorted({round(x, 9) for x in pts[:, 0] - centre[0]})
    np.testing.assert_allclose(xs, [-0.35, -0.25, 0.25, 0.35])
    # a part with no wireframe (a reference scene's mesh): the body falls back to a stick
    mesh = _pendulum(shape={"type": "composite", "parts": [part, {"type": "mesh", "source": "bunny.obj"}]})
    assert len(_points(body_strokes(mesh, kin, 0))) < 10


def test_springs_are_drawn_between_their_attachment_points(rng):
    spring = PointSpring(Attachment(-1, [0.5, 0.0, 0.0]), Attachment(1, [0.0, 0.0, -0.5]), 10.0)
    model = _pendulum(forces=[spring])
    q = rng.standard_normal(2)
    kin = forward_kinematics(model, q)
    [(x, label)] = spring_points(model, kin.E_wi)
    np.testing.assert_allclose(x[0], [0.5, 0.0, 0.0])
    np.testing.assert_allclose(x[1], (kin.E_wi[1] @ [0.0, 0.0, -0.5, 1.0])[:3], atol=1e-14)
    assert label == "PointSpring0"
    dashed = [item for item in model_scene(model, q).items if isinstance(item, Path) and item.dashed]
    assert len(dashed) == 1 and np.array_equal(dashed[0].points, x)
    assert not [i for i in model_scene(model, q, springs=False).items if isinstance(i, Path) and i.dashed]


def test_trajectory_scenes_use_one_model_per_sample():
    model = _pendulum()
    moved = model.with_forces([])  # same bodies: same drawing
    t = np.linspace(0.0, 1.0, 3)
    q = np.zeros((3, 2))
    scenes_ = trajectory_scenes(model, t, q, models=[model, moved, model])
    assert len(scenes_) == 3
    with pytest.raises(ValueError, match="models"):
        trajectory_scenes(model, t, q, models=[model])


def test_polylines_of_every_item_type():
    items = (Path(np.zeros((4, 3)), "p", dashed=True), Frame(np.eye(4), "f", scale=0.5),
             Marker(np.ones(3), "m"))
    lines = scene_polylines(Scene(items, np.array([[-1.0, 1.0]] * 3)))
    assert len(lines) == 1 + 3 + 1
    assert lines[0][1]["linestyle"] == "--"
    np.testing.assert_allclose(lines[1][0][1], [0.5, 0.0, 0.0])  # the frame's x axis
    assert lines[4][0].shape == (1, 3) and lines[4][1]["marker"] == "o"


@pytest.mark.parametrize("plane", [None, "xz"])
def test_light_player_has_one_png_frame_per_scene_and_no_cdn(plane):
    model = _pendulum()
    t = np.linspace(0.0, 1.0, 5)
    scenes_ = trajectory_scenes(model, t, np.outer(t, [1.0, -0.5]))
    html = light_player(scenes_, plane=plane)
    assert html.count("data:image/png") == 5
    assert "cdnjs" not in html and "font-awesome" not in html
    with pytest.raises(ValueError, match="plane"):
        light_player(scenes_, plane="xw")
    with pytest.raises(ValueError, match="different items"):
        light_player([scenes_[0], Scene(scenes_[1].items[:1], scenes_[1].bounds)])


def test_motion_plane_finds_the_plane_of_a_planar_motion():
    model = _pendulum()  # hinges about y: the motion stays in xz
    t = np.linspace(0.0, 1.0, 5)
    flat = trajectory_scenes(model, t, np.outer(t, [1.0, -0.5]), joint_frames=False)
    assert gallery.motion_plane(flat) == "xz"
    tilted = _pendulum()
    bodies = list(tilted.bodies)
    bodies[1] = Body("b", 0, Revolute([1, 0, 0]), _T(z=-1.0), _T(z=-0.5), 1.0, np.diag([0.1, 0.1, 0.02]))
    spatial = trajectory_scenes(Model(bodies), t, np.outer(t, [1.0, -0.5]), joint_frames=False)
    assert gallery.motion_plane(spatial) is None


def test_energy_measures_of_a_run():
    runs = gallery.run(-1, t_span=(0.0, 0.5))
    assert list(runs) == ["rk45_recursive", "rk45", "euler"]  # the reference's types 1, 2, 3
    tr = runs["euler"]
    scale = max(tr.T.max(), np.abs(tr.V - tr.V[0]).max())
    assert gallery.energy_scale(tr) == pytest.approx(scale)
    assert gallery.drift(tr) == pytest.approx(np.abs(tr.H - tr.H[0]).max() / scale)
    assert gallery.net_change(tr) == pytest.approx((tr.H[-1] - tr.H[0]) / scale)
    assert gallery.drift(tr) >= abs(gallery.net_change(tr))
    text = gallery.verdict(runs)
    assert text.startswith("RK45 (types 1, 2) drift ") and "; Euler drift " in text and ", net " in text
    assert text.endswith("; types 1 and 2 agree to 1e-08")
    assert list(gallery.run(3, t_span=(0.0, 0.1))) == ["euler"]  # the reference runs 3 with Euler only
    assert list(gallery.run(12, t_span=(0.0, 0.05))) == ["rk45", "euler"]  # no type 1 with deformables
    attached = scenes.scene(12, attachment="constraint")
    assert gallery.run(attached, t_span=(0.0, 0.05))["euler"].q.shape[1] == 17  # a Scene is run as it is


def test_energy_figure_has_a_panel_per_run_and_a_zoom():
    runs = gallery.run(-1, t_span=(0.0, 0.2))
    fig = gallery.plot_energies(runs, title="scene -1")
    assert len(fig.axes) == 4  # types 1, 2 and 3, and the zoom (two by two)
    assert [ax.get_title() for ax in fig.axes[:3]] == ["type 1: RK45, recursive", "type 2: RK45, RedMax",
                                                       "type 3: Euler, h = 0.01 s"]
    zoom = fig.axes[-1]
    assert len(zoom.get_lines()) == 4  # the three runs and the zero line
    np.testing.assert_allclose(zoom.get_lines()[2].get_ydata(),
                               (runs["euler"].H - runs["euler"].H[0]) / gallery.energy_scale(runs["euler"]))
    plt.close(fig)


def test_summary_rows_and_animation_of_a_scene():
    rows = gallery.summary([3], runs_of=lambda sid: gallery.run(sid, t_span=(0.0, 0.1)))
    assert rows[0]["id"] == 3 and rows[0]["rk45"] is None and len(rows[0]["euler"]) == 2
    s = scenes.scene(-1)
    tr = s.simulate("rk45", t_span=(0.0, 0.2))
    html = gallery.animate(s, tr, max_frames=4)
    assert "data:image" not in html and "xz plane" in html  # a vector player, drawn flat
    data = _player_data(html)
    assert len(data["frames"]) == 4 and data["notes"][0] == "t = 0.00 s"
    frames = trajectory_scenes(s.model, tr.t, tr.q, max_frames=4, joint_frames=False)
    assert gallery.motion_plane(frames) == "xz"  # so the player draws it flat


def _player_data(html):
    import json
    import re

    return json.loads(re.search(r"var D=(\{.*?\}),c=document", html, re.S).group(1))


def test_measure_text_prints_two_digits_or_the_round_off_bound():
    assert gallery.measure_text(0.2612) == "0.26"
    assert gallery.measure_text(0.2) == "0.20"
    assert gallery.measure_text(9.04e-4) == "9.0e-04"
    assert gallery.measure_text(-0.045, percent=True, signed=True) == "-4.5%"
    assert gallery.measure_text(4.5e-4, signed=True) == "+4.5e-04"
    assert gallery.measure_text(12.3) == "12"
    for tiny in (0.0, 5.3e-16, -5.9e-16, 9.9e-10):
        assert gallery.measure_text(tiny, percent=True, signed=True) == "below 1e-09"
    assert gallery.measure_text(1.1e-9) == "1.1e-09"


def test_verdict_is_portable_flags_a_measure_at_a_rounding_boundary():
    class Run:  # only what drift and net_change read
        def __init__(self, H):
            self.H, self.T, self.V = np.asarray(H, float), np.array([1.0, 1.0]), np.zeros(2)

    assert gallery.verdict_is_portable({"rk45": Run([0.0, 0.26])})
    assert not gallery.verdict_is_portable({"rk45": Run([0.0, 0.255])})  # 0.26 or 0.25
    assert gallery.verdict_is_portable({"rk45": Run([0.0, 4e-16])})      # below the bound
    assert gallery.verdict({"rk45": Run([0.0, 4e-16])}) == "RK45 drift below 1e-09, |net| below 1e-09"


def test_vector_player_projects_planes_and_3d_views():
    box = np.array([[-1.0, 1.0]] * 3)
    rod = [Scene((Path(np.array([[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [np.nan] * 3, [0.0, 0.0, 1.0]]), "rod"),),
                 box, notes=(f"t = {k}",)) for k in range(2)]
    flat = _player_data(gallery.vector_player(rod, plane="xz", size=100))
    (pts,) = flat["frames"][0]
    assert pts[:4] == [50, 50, 96, 50]          # the origin in the centre, +x to the right
    assert pts[4:6] == [None, None]             # a gap
    assert pts[6:] == [50, 4]                   # +z up (pixel rows grow downwards)
    assert flat["fixed"] == [] and flat["notes"] == ["t = 0", "t = 1"]
    view = _player_data(gallery.vector_player(rod, elev=90, azim=-90, size=100))
    assert view["frames"][0][0][:4] == flat["frames"][0][0][:4] and len(view["fixed"]) == 1  # floor
    with pytest.raises(ValueError, match="plane"):
        gallery.vector_player(rod, plane="xw")
    with pytest.raises(ValueError, match="size"):
        gallery.vector_player(rod, size=10)
    with pytest.raises(ValueError, match="at least one"):
        gallery.vector_player([])
    with pytest.raises(ValueError, match="different items"):
        gallery.vector_player([rod[0], Scene(rod[0].items * 2, box)])


def test_show_scenes_displays_a_heading_player_verdict_and_figure_per_scene(capsys, monkeypatch):
    import IPython.display

    shown = []
    monkeypatch.setattr(IPython.display, "display", lambda obj: shown.append(obj))
    short = {}

    def runs_of(sid):
        short[sid] = gallery.run(sid, t_span=(0.0, 0.1))
        return short[sid]

    out = gallery.show_scenes([-1, 3], runs_of=runs_of, frames=3)
    assert out == short
    kinds = [type(obj).__name__ for obj in shown]
    assert kinds == ["HTML", "HTML", "Image"] * 2
    assert "Scene 3: Spherical joint" in shown[3].data and "<canvas" in shown[4].data
    printed = capsys.readouterr().out
    assert printed == (f"{gallery.wrap(f'scene -1: {gallery.verdict(short[-1])}')}\n"
                       f"scene 3: {gallery.verdict(short[3])}\n")
    assert max(len(line) for line in printed.splitlines()) <= 78  # the page's column
    table = gallery.verdict_table([-1, 3], short.get).splitlines()
    assert table[0].startswith("scene  -1: RK45 (types 1, 2) drift ") and table[-1].startswith("scene   3: ")
    assert " ".join(line.strip() for line in table[:-1]) == f"scene  -1: {gallery.verdict(short[-1])}"


class _Run:
    """What the energy measures and the agreement read of a Trajectory."""

    def __init__(self, H, x=None):
        self.H = np.asarray(H, float)
        self.t = np.arange(len(self.H), dtype=float)
        self.T, self.V = np.ones(len(self.H)), np.zeros(len(self.H))
        self.E_wi = np.tile(np.eye(4), (len(self.H), 1, 1, 1))
        self.E_wi[:, 0, 0, 3] = np.arange(len(self.H)) if x is None else x


def test_agreement_of_two_runs_is_the_larger_of_energy_and_position_gaps():
    a = _Run([0.0, 0.1, 0.2])
    assert gallery.agreement(a, a) == 0.0
    assert gallery.agreement(_Run([0.0, 0.1, 0.2 + 3e-3]), a) == pytest.approx(3e-3)  # energy scale 1
    # a body 1e-2 away at one sample, over a motion 2 long
    assert gallery.agreement(_Run([0.0, 0.1, 0.2], x=[0.0, 1.01, 2.0]), a) == pytest.approx(5e-3)
    with pytest.raises(ValueError, match="same times"):
        gallery.agreement(_Run([0.0, 0.1]), a)
    runs = gallery.run(-1, t_span=(0.0, 0.3))
    assert gallery.agreement(runs["rk45_recursive"], runs["rk45"]) < 1e-10  # one ODE, two algorithms


def test_verdict_prints_types_1_and_2_once_when_they_agree_and_apart_when_they_do_not():
    same = {"rk45_recursive": _Run([0.0, 0.26]), "rk45": _Run([0.0, 0.26]), "euler": _Run([0.0, -0.5])}
    assert gallery.verdict(same) == ("RK45 (types 1, 2) drift 0.26, net +26%; Euler drift 0.50, net -50%; "
                                     "types 1 and 2 agree to 1e-08")
    apart = {"rk45_recursive": _Run([0.0, 0.3]), "rk45": _Run([0.0, 0.26])}
    assert gallery.verdict(apart) == ("RK45 type 1 drift 0.30, net +30%; RK45 type 2 drift 0.26, net +26%; "
                                      "types 1 and 2 differ by 0.040")
    assert gallery.verdict({"rk45": _Run([0.0, 0.26])}) == "RK45 drift 0.26, net +26%"


def test_error_units_follow_the_constrained_coordinates():
    assert gallery.error_units(scenes.scene(8)) == ["m", "rad"]       # loop, coupling of hinges
    assert gallery.error_units(scenes.scene(20)) == [None, "rad"]     # prescribed twist, joint
    assert gallery.error_units(scenes.scene(6)) == ["rad"]            # joint limit
    assert gallery.error_units(scenes.scene(33))[-1] is None          # prescribed joint velocity
    assert set(gallery.error_units(scenes.scene(33))[:-1]) == {"m"}   # loop and floor contacts
    assert gallery.error_units(scenes.scene(12, attachment="constraint")) == ["m"] * 4


def test_position_errors_take_the_largest_error_and_the_largest_violation():
    from redmax_edu.constrained import constraint_errors
    from redmax_edu.integrators import Trajectory

    def trajectory(s, q):
        q = np.asarray(q, float)
        return Trajectory(np.arange(len(q), dtype=float), q, np.zeros_like(q), "euler", (s.model,) * len(q),
                          0.01, len(q), len(q), np.zeros(0))

    s6 = scenes.scene(6)  # joint 2 limited to [-pi/4, pi/4]
    over = np.pi / 4 + np.array([-0.1, 0.0, 0.05, 0.2])
    errors = gallery.position_errors(s6, trajectory(s6, np.c_[np.zeros(4), over]))
    assert list(errors) == ["joint limit violation (rad)"]
    np.testing.assert_allclose(errors["joint limit violation (rad)"], [0.0, 0.0, 0.05, 0.2], atol=1e-15)
    s8 = scenes.scene(8)
    q = s8.q0 + 0.05 * np.arange(1, 7)  # off both the loop and the coupling
    errors = gallery.position_errors(s8, trajectory(s8, [s8.q0, q]))
    loop, coupling = constraint_errors(s8.model, q)
    assert list(errors) == ["loop closure (m)", "coupling (rad)"]
    assert errors["loop closure (m)"][1] == np.abs(loop).max() > 0
    assert errors["coupling (rad)"][1] == np.abs(coupling).max() > 0
    assert errors["loop closure (m)"][0] < 1e-12  # the initial state closes the loop
    s13 = scenes.scene(13)  # a prescribed twist: velocities only
    assert gallery.position_errors(s13, trajectory(s13, [s13.q0])) == {}


def test_drift_verdict_and_its_portability():
    errors = {"rk45_recursive": {"loop closure (m)": np.array([0.0, 3.3e-8])},
              "rk45": {"loop closure (m)": np.array([0.0, 3.3e-8])},
              "euler": {"loop closure (m)": np.array([0.0, 9.1e-6]),
                        "floor contact violation (m)": np.zeros(2)}}
    assert gallery.drift_verdict(errors) == ("loop closure (m) RK45 (types 1, 2) 3.3e-08, Euler 9.1e-06; "
                                             "floor contact violation (m) Euler below 1e-09")
    runs = {"euler": _Run([0.0, 0.26])}
    assert gallery.verdict_is_portable(runs, errors={"euler": {"loop closure (m)": np.array([0.0, 9.1e-6])}})
    assert not gallery.verdict_is_portable(runs, errors={"euler": {"loop closure (m)": np.array([9.15e-6])}})


def test_friction_iterations_are_summed_up_and_plotted():
    s = scenes.scene(27)
    runs = gallery.run(27, t_span=(0.0, 0.1))
    it = runs["euler"].friction_iterations
    assert len(it) == 10 and it.min() >= 1
    assert gallery.friction_text(runs) == (f"Euler: {it.min()} to {it.max()} friction iterations per step, "
                                           f"{np.mean(it):.0f} on average")
    assert gallery.friction_text(gallery.run(-1, t_span=(0.0, 0.05))) == ""
    fig = gallery.plot_energies(runs)
    assert len(fig.axes) == 3 and fig.axes[-1].get_title() == "friction iterations per step"
    np.testing.assert_array_equal(fig.axes[-1].get_lines()[0].get_ydata(), it)
    plt.close(fig)
    assert s.integrators == ("euler",)


def test_constrained_figure_has_a_drift_panel_per_unit():
    s = scenes.scene(8)
    runs = gallery.run(8, t_span=(0.0, 0.2))
    errors = {m: gallery.position_errors(s, tr) for m, tr in runs.items()}
    fig = gallery.plot_energies(runs, errors=errors)
    assert [ax.get_title() for ax in fig.axes[-2:]] == ["constraint error (m)", "constraint error (rad)"]
    assert len(fig.axes) == 6
    euler = fig.axes[-2].get_lines()[2]  # type 3's loop error, floored at the round-off bound
    floored = np.maximum(errors["euler"]["loop closure (m)"], gallery.ROUNDOFF)
    np.testing.assert_allclose(euler.get_ydata(), floored)
    plt.close(fig)


def test_the_player_draws_the_floor_of_a_floor_contact():
    s = scenes.scene(31)
    tr = s.simulate("euler", t_span=(0.0, 0.05))
    data = _player_data(gallery.animate(s, tr, max_frames=3))
    floor = [k for k, st in enumerate(data["styles"]) if st[0] == "#8c564b"]
    assert len(floor) == 1
    (ys,) = {tuple(data["frames"][0][floor[0]][1::2])}  # a horizontal line in the xz plane
    assert len(set(ys)) == 1


def test_show_scenes_takes_labelled_scenes_and_prints_their_constraint_errors(capsys, monkeypatch):
    import IPython.display

    monkeypatch.setattr(IPython.display, "display", lambda obj: None)

    def runs_of(item):
        return gallery.run(item, t_span=(0.0, 0.05))

    attached = scenes.scene(12, attachment="constraint")
    out = gallery.show_scenes({"12 by constraints": attached, "13": 13}, runs_of=runs_of, frames=2)
    assert list(out) == ["12 by constraints", "13"]
    printed = capsys.readouterr().out
    assert printed.startswith("scene 12 by constraints: RK45 drift ")
    assert "\n  constraint error: node attachment (m) RK45 " in printed
    assert printed.endswith("\n  constraint error: none positional (velocities only)\n")
    rows = gallery.summary({"12 by constraints": attached}, runs_of=runs_of)
    assert rows[0]["agreement"] is None and rows[0]["rk45_recursive"] is None
    assert set(rows[0]["errors"]["node attachment (m)"]) == {"rk45", "euler"}
    table = gallery.verdict_table({"12 by constraints": attached}, runs_of)
    assert table.startswith("scene 12 by constraints: RK45 drift ")


def test_constraint_work_is_what_changes_the_energy_of_a_prescribed_motion():
    s9 = scenes.scene(9)  # joint 1 prescribed, no gravity: H changes only by the joint's work
    tr = s9.simulate("rk45", t_span=(0.0, 1.0))
    work = gallery.constraint_work(s9, tr)
    gained = tr.H - tr.H[0]
    # trapezoidal work over 0.01 s samples against RK45 at rtol 1e-4: a few 1e-3 of the scale
    assert np.abs(gained - work).max() < 5e-3 * gallery.energy_scale(tr)
    assert np.abs(work).max() > 0.5 * gallery.energy_scale(tr)  # and the work is most of it
    assert np.abs(gained + work).max() > 0.5 * gallery.energy_scale(tr)  # a flipped sign is caught
    s8 = scenes.scene(8)  # a loop and a coupling: no work but Baumgarte's, tiny
    tr8 = s8.simulate("rk45", t_span=(0.0, 0.3))
    assert np.abs(gallery.constraint_work(s8, tr8)).max() < 1e-4 * gallery.energy_scale(tr8)
    with pytest.raises(ValueError, match="acceleration-level"):
        gallery.constraint_work(s9, s9.simulate("euler", t_span=(0.0, 0.1)))
