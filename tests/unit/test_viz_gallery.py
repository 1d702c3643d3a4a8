"""Unit tests of the gallery plumbing: viz.player (light players), viz.gallery (energy measures,
motion planes, energy figures) and the parts of viz.reduced they rely on (shape frames,
composite shapes, springs, one model per sample)."""

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
    # an unknown part: the body falls back to a stick
    broken = _pendulum(shape={"type": "composite", "parts": [part, {"type": "blob"}]})
    assert len(_points(body_strokes(broken, kin, 0))) < 10


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
    assert list(runs) == ["rk45", "euler"]
    tr = runs["euler"]
    scale = max(tr.T.max(), np.abs(tr.V - tr.V[0]).max())
    assert gallery.energy_scale(tr) == pytest.approx(scale)
    assert gallery.drift(tr) == pytest.approx(np.abs(tr.H - tr.H[0]).max() / scale)
    assert gallery.net_change(tr) == pytest.approx((tr.H[-1] - tr.H[0]) / scale)
    assert gallery.drift(tr) >= abs(gallery.net_change(tr))
    text = gallery.verdict(runs)
    assert text.startswith("RK45 drift ") and "; Euler drift " in text and ", net " in text
    assert list(gallery.run(3, t_span=(0.0, 0.1))) == ["euler"]  # the reference runs 3 with Euler only


def test_energy_figure_has_a_panel_per_run_and_a_zoom():
    runs = gallery.run(-1, t_span=(0.0, 0.2))
    fig = gallery.plot_energies(runs, title="scene -1")
    assert len(fig.axes) == 3
    zoom = fig.axes[-1]
    assert len(zoom.get_lines()) == 3  # the two runs and the zero line
    np.testing.assert_allclose(zoom.get_lines()[1].get_ydata(),
                               (runs["euler"].H - runs["euler"].H[0]) / gallery.energy_scale(runs["euler"]))


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
    assert kinds == ["HTML", "HTML", "Figure"] * 2
    assert "Scene 3: Spherical joint" in shown[3].data and "<canvas" in shown[4].data
    printed = capsys.readouterr().out.splitlines()
    assert printed == [f"scene -1: {gallery.verdict(short[-1])}", f"scene 3: {gallery.verdict(short[3])}"]
    table = gallery.verdict_table([-1, 3], short.get).splitlines()
    assert table == [f"scene  -1: {gallery.verdict(short[-1])}", f"scene   3: {gallery.verdict(short[3])}"]
