"""Unit tests of redmax_edu.viz: the explorer scenes, their renderers and the live widgets.

The scenes are pictures of mathematics, so besides the plumbing (same items for every
parameter value, one plotly frame per scene) the tests check the physics they display
against the library functions.
"""

import matplotlib
import matplotlib.pyplot as plt
import numpy as np
import plotly.graph_objects as go
import pytest

from redmax_edu.checks import check_derivative
from redmax_edu.lie import adjoint, exp_se3, inv_se3, material_jacobian, random_transform
from redmax_edu.viz.draw import draw_panels, draw_scene
from redmax_edu.viz.explorers import (
    ADJOINT_SETUP,
    BODY_HALF_SIZES,
    TWIST_PRESETS,
    adjoint_scene,
    observer_pose,
    twist_scene,
)
from redmax_edu.viz.interactive import scene_player, scene_traces
from redmax_edu.viz.scene import Arrow, Scene, box_edges, cube_bounds, union_bounds

OBSERVER_S = [0.0, 0.25, 0.6, 1.0]
TIMES = [0.0, 0.3, 0.5, 1.0]



def signature(scene):
    """What a plotly animation needs to stay the same from frame to frame."""
    return [(type(item).__name__, item.label) for item in scene.items]


def items_labelled(scene, label):
    return [item for item in scene.items if item.label == label]


def world_point(E, r):
    return (E @ np.append(r, 1.0))[:3]


# --- scene structure --------------------------------------------------------------------------


@pytest.mark.parametrize("preset", TWIST_PRESETS)
def test_twist_scene_items_are_identical_across_times(preset):
    scenes = [twist_scene(TWIST_PRESETS[preset], t) for t in TIMES]
    assert all(signature(s) == signature(scenes[0]) for s in scenes)
    assert len(scenes[0].items) == 8


def test_twist_scene_items_are_identical_across_twists():
    scenes = [twist_scene(phi, 0.5) for phi in TWIST_PRESETS.values()]
    assert all(signature(s) == signature(scenes[0]) for s in scenes)


def test_adjoint_scene_items_are_identical_across_observer_poses():
    scenes = [adjoint_scene(observer_pose(s)) for s in OBSERVER_S]
    assert all(signature(s) == signature(scenes[0]) for s in scenes)
    assert len(scenes[0].items) == 12  # 3 frames, body, axis, 4 body-point arrows, nu_w, nu_b, force


@pytest.mark.parametrize("t", [-0.1, 1.0 + 1e-9, 2.0])
def test_twist_scene_rejects_t_outside_0_t_max(t):
    with pytest.raises(ValueError, match="'t'"):
        twist_scene(TWIST_PRESETS["screw"], t)


def test_twist_scene_accepts_t_up_to_a_larger_t_max():
    scene = twist_scene(TWIST_PRESETS["screw"], 1.5, t_max=2.0)
    np.testing.assert_allclose(items_labelled(scene, "E(t)")[0].E, exp_se3(1.5 * TWIST_PRESETS["screw"]),
                               rtol=0, atol=1e-15)


def test_twist_scene_rejects_the_zero_twist():
    with pytest.raises(ValueError, match="'phi'"):
        twist_scene(np.zeros(6))


# --- physics displayed ------------------------------------------------------------------------


@pytest.mark.parametrize("preset", TWIST_PRESETS)
def test_twist_scene_shows_the_pose_and_velocity_of_the_tracked_point(rng, preset):
    phi, r, E0 = TWIST_PRESETS[preset], np.array([0.8, 0.0, 0.0]), random_transform(rng)

    def marker(t):
        return items_labelled(twist_scene(phi, t[0], E0=E0, r=r), "r")[0].position

    scene = twist_scene(phi, 0.5, E0=E0, r=r, velocity_scale=0.3)
    E_t = E0 @ exp_se3(0.5 * phi)
    np.testing.assert_allclose(items_labelled(scene, "E(t)")[0].E, E_t, rtol=0, atol=1e-14)
    np.testing.assert_allclose(marker([0.5]), world_point(E_t, r), rtol=0, atol=1e-14)
    arrow = items_labelled(scene, "velocity of r")[0]
    np.testing.assert_allclose(arrow.origin, world_point(E_t, r), rtol=0, atol=1e-14)
    # the drawn velocity is the time derivative of the drawn point
    check = check_derivative(marker, [0.5], (arrow.vector / 0.3)[:, None])
    assert check.ok, check.error


def test_twist_scene_velocity_check_catches_a_flipped_sign():
    # the derivative check used above does catch a velocity of the wrong sign
    phi = TWIST_PRESETS["screw"]
    arrow = items_labelled(twist_scene(phi, 0.5), "velocity of r")[0]
    check = check_derivative(lambda t: items_labelled(twist_scene(phi, t[0]), "r")[0].position, [0.5],
                             -(arrow.vector / 0.3)[:, None])
    assert not check.ok


@pytest.mark.parametrize("s", OBSERVER_S)
def test_adjoint_scene_nu_b_is_the_world_velocity_of_the_body_point_at_b(s):
    E_w_b = observer_pose(s)
    E_w_i, phi_i = ADJOINT_SETUP["E_w_i"], ADJOINT_SETUP["phi_i"]
    phi_w = adjoint(E_w_i) @ phi_i
    phi_b = adjoint(inv_se3(E_w_b) @ E_w_i) @ phi_i
    p_b = E_w_b[:3, 3]
    v_w = np.cross(phi_w[:3], p_b) + phi_w[3:]
    # the same velocity from the body side: material Jacobian at the body point under p_b
    r = world_point(inv_se3(E_w_i), p_b)
    np.testing.assert_allclose(material_jacobian(E_w_i, r) @ phi_i, v_w, rtol=0, atol=1e-13)
    np.testing.assert_allclose(E_w_b[:3, :3] @ phi_b[3:], v_w, rtol=0, atol=1e-13)
    # and the scene draws exactly that, at b's origin, at half scale
    arrow = items_labelled(adjoint_scene(E_w_b), "nu_b at b's origin (drawn in w)")[0]
    np.testing.assert_allclose(arrow.origin, p_b, rtol=0, atol=0)
    np.testing.assert_allclose(arrow.vector, 0.5 * v_w, rtol=0, atol=1e-13)


@pytest.mark.parametrize("s", OBSERVER_S)
def test_adjoint_scene_body_point_arrows_are_material_velocities(s):
    scene = adjoint_scene(observer_pose(s))
    E_w_i, phi_i = ADJOINT_SETUP["E_w_i"], ADJOINT_SETUP["phi_i"]
    arrows = [item for item in scene.items if isinstance(item, Arrow) and item.color == "#9467bd"]
    assert len(arrows) == 4
    for arrow in arrows:
        r = world_point(inv_se3(E_w_i), arrow.origin)
        expected = 0.5 * material_jacobian(E_w_i, r) @ phi_i
        np.testing.assert_allclose(arrow.vector, expected, rtol=0, atol=1e-13)
    nu_w = items_labelled(scene, "nu_w at w's origin")[0]
    np.testing.assert_allclose(nu_w.vector, 0.5 * (adjoint(E_w_i) @ phi_i)[3:], rtol=0, atol=1e-15)


@pytest.mark.parametrize("s", OBSERVER_S)
def test_adjoint_scene_power_is_the_same_in_both_frames(s):
    E_w_b = observer_pose(s)
    E_w_i, phi_i = ADJOINT_SETUP["E_w_i"], ADJOINT_SETUP["phi_i"]
    r_force, f_world = ADJOINT_SETUP["r_force"], ADJOINT_SETUP["f_world"]
    x_force = world_point(E_w_i, r_force)
    phi_w = adjoint(E_w_i) @ phi_i
    phi_b = adjoint(inv_se3(E_w_b) @ E_w_i) @ phi_i
    wrench_w = np.concatenate([np.cross(x_force, f_world), f_world])
    wrench_b = adjoint(E_w_b).T @ wrench_w
    power = f_world @ (material_jacobian(E_w_i, r_force) @ phi_i)  # force times point velocity
    assert abs(power) > 0.1  # a nontrivial check
    assert wrench_w @ phi_w == pytest.approx(power, abs=1e-13)
    assert wrench_b @ phi_b == pytest.approx(power, abs=1e-13)
    force = items_labelled(adjoint_scene(E_w_b), "force")[0]
    np.testing.assert_allclose(force.origin, x_force, rtol=0, atol=1e-15)
    np.testing.assert_allclose(force.vector, 0.5 * f_world, rtol=0, atol=0)


# --- plotly player ----------------------------------------------------------------------------


def test_scene_player_has_one_frame_per_scene_with_matching_traces():
    scenes = [twist_scene(TWIST_PRESETS["screw"], t) for t in TIMES]
    labels = [f"{t:.1f}" for t in TIMES]
    fig = scene_player(scenes, labels, slider_label="t = ")
    assert isinstance(fig, go.Figure)
    assert len(fig.frames) == len(scenes)
    names = [trace.name for trace in fig.data]
    assert len(fig.data) == len(scene_traces(scenes[0])) == 3 * 2 + 6  # two frames, six more items
    for frame in fig.frames:
        assert len(frame.data) == len(fig.data)
        assert [trace.name for trace in frame.data] == names
    assert [step.label for step in fig.layout.sliders[0].steps] == labels


def test_scene_player_of_adjoint_scenes_has_matching_traces():
    scenes = [adjoint_scene(observer_pose(s)) for s in OBSERVER_S]
    fig = scene_player(scenes, [str(s) for s in OBSERVER_S])
    assert len(fig.frames) == len(OBSERVER_S)
    assert all(len(frame.data) == len(fig.data) for frame in fig.frames)


def test_scene_player_keeps_notes_legend_and_controls_off_the_view():
    """Issue 23: the notes sat over the top tick, the legend's right edge and the last slider label
    were clipped, and white grid lines on a white page left tick numbers floating."""
    from redmax_edu.viz.interactive import LEGEND_ENTRY, NOTE_LINE, TITLE_BAND

    scenes = [twist_scene(TWIST_PRESETS["screw"], t) for t in TIMES]
    fig = scene_player(scenes, [f"{t:.1f}" for t in TIMES], slider_label="t = ", title="twist")
    notes, legend = fig.layout.annotations[0], fig.layout.legend
    # both sit in the band above the view, side by side
    assert (notes.y, notes.yanchor, legend.y, legend.yanchor) == (1.0, "bottom", 1.0, "bottom")
    entries = sum(1 for trace in fig.data if trace.showlegend is not False and trace.name)
    band = fig.layout.margin.t - TITLE_BAND
    assert band >= max(len(scenes[0].notes) * NOTE_LINE, entries * LEGEND_ENTRY)
    assert all(frame.layout.annotations[0].yanchor == "bottom" for frame in fig.frames)
    slider = fig.layout.sliders[0]
    assert slider.x + slider.len <= 0.97 and slider.x >= 0.2      # clear of the buttons and the edge
    for axis in (fig.layout.scene.xaxis, fig.layout.scene.yaxis, fig.layout.scene.zaxis):
        assert axis.showbackground and axis.gridcolor != "white" and axis.showline


def test_2d_figures_show_no_toolbar_and_3d_views_a_short_one():
    """Issue 23: plotly's toolbar sat over subplot titles and legend entries, and stays on touch screens."""
    from redmax_edu.viz.interactive import GRID_PLAYER, SLIDER_SYNC, figure_config, player_scripts

    flat = go.Figure(go.Scatter(x=[0, 1], y=[0, 1])).to_dict()
    view = scene_player([twist_scene(TWIST_PRESETS["screw"], t) for t in TIMES], [str(t) for t in TIMES])
    assert figure_config(flat) == {"displayModeBar": False}
    kept = figure_config(view.to_dict())
    assert kept["displaylogo"] is False and "resetCameraDefault3d" not in kept["modeBarButtonsToRemove"]
    assert player_scripts(flat) is None and player_scripts(view.to_dict()) == [SLIDER_SYNC]
    grid = dict(view.to_dict(), layout={"meta": {"grid": {"frames": [["0"]], "menu": 0, "slider": 0}}})
    assert player_scripts(grid) == [SLIDER_SYNC, GRID_PLAYER]


def test_scene_player_rejects_labels_and_scenes_of_different_length():
    scenes = [twist_scene(TWIST_PRESETS["screw"], t) for t in TIMES]
    with pytest.raises(ValueError, match="4 scenes but 3 labels"):
        scene_player(scenes, ["a", "b", "c"])


# --- matplotlib -------------------------------------------------------------------------------


def test_draw_scene_runs_on_agg_and_draws_into_a_3d_axes():
    assert matplotlib.get_backend().lower() == "agg"
    scene = adjoint_scene(observer_pose(0.25))
    ax = draw_scene(scene)
    assert ax.name == "3d"
    assert ax.get_title() == scene.title
    np.testing.assert_allclose(ax.get_xlim(), scene.bounds[0])
    assert any("power" in text.get_text() for text in ax.texts)  # the notes are printed
    ax.figure.canvas.draw()
    plt.close(ax.figure)
    assert plt.get_fignums() == []


def test_draw_scene_uses_a_given_axes_and_title():
    fig = plt.figure()
    ax = fig.add_subplot(projection="3d")
    assert draw_scene(twist_scene(TWIST_PRESETS["screw"]), ax, title="mine", show_notes=False) is ax
    assert ax.get_title() == "mine"
    assert ax.texts and not any("omega" in text.get_text() for text in ax.texts)


def test_draw_panels_makes_one_3d_axes_per_scene():
    scenes = [twist_scene(phi) for phi in TWIST_PRESETS.values()] + [adjoint_scene(observer_pose(0.5))]
    fig = draw_panels(scenes, titles=list("abcd"), ncols=3)
    assert [ax.get_title() for ax in fig.axes] == list("abcd")
    assert all(ax.name == "3d" for ax in fig.axes)
    fig.canvas.draw()
    plt.close(fig)
    assert plt.get_fignums() == []


def test_renderers_reject_unknown_scene_items():
    scene = Scene(items=("not an item",), bounds=cube_bounds(np.zeros((1, 3))))
    with pytest.raises(ValueError, match="str"):
        draw_scene(scene)
    with pytest.raises(ValueError, match="str"):
        scene_traces(scene)


# --- widgets ----------------------------------------------------------------------------------


def sliders_of(box):
    import ipywidgets as W

    found = {}
    for child in box.children:
        for widget in getattr(child, "children", ()):
            if isinstance(widget, W.FloatSlider):
                found[widget.description] = widget
    return found


def test_twist_explorer_starts_at_the_pure_rotation_preset():
    from redmax_edu.viz.widgets import twist_explorer

    box = twist_explorer()
    sliders = sliders_of(box)
    names = ["omega_x", "omega_y", "omega_z", "nu_x", "nu_y", "nu_z"]
    assert list(sliders) == [*names, "t"]
    np.testing.assert_array_equal([sliders[n].value for n in names], TWIST_PRESETS["pure rotation"])
    assert sliders["t"].value == 1.0


def test_twist_explorer_redraws_through_the_zero_twist():
    from redmax_edu.viz.widgets import twist_explorer

    sliders = sliders_of(twist_explorer())
    sliders["omega_z"].value = 0.0  # every coordinate zero: the explorer must not raise
    assert plt.get_fignums()  # it redrew


def test_adjoint_explorer_builds_with_one_slider():
    from redmax_edu.viz.widgets import adjoint_explorer

    box = adjoint_explorer(s=0.25)
    sliders = sliders_of(box)
    assert list(sliders) == ["observer s"] and sliders["observer s"].value == 0.25
    sliders["observer s"].value = 0.75  # redraws without error


# --- scene helpers ----------------------------------------------------------------------------


def test_box_edges_are_the_twelve_edges_of_the_placed_box(rng):
    E = random_transform(rng)
    half = np.array(BODY_HALF_SIZES)
    pts = box_edges(E, half)
    assert pts.shape == (36, 3)
    gaps = np.isnan(pts).all(axis=1)
    np.testing.assert_array_equal(gaps, np.arange(36) % 3 == 2)
    starts, ends = pts[0::3], pts[1::3]
    lengths = np.sort(np.linalg.norm(ends - starts, axis=1))
    np.testing.assert_allclose(lengths, np.repeat(np.sort(2 * half), 4), rtol=0, atol=1e-14)
    corners = np.unique(np.round(np.concatenate([starts, ends]), 12), axis=0)
    assert len(corners) == 8
    np.testing.assert_allclose(np.linalg.norm(corners - E[:3, 3], axis=1), np.linalg.norm(half),
                               rtol=0, atol=1e-12)  # rounded to 1e-12 above
    body = (corners - E[:3, 3]) @ E[:3, :3]  # back to body coordinates: (+-hx, +-hy, +-hz)
    np.testing.assert_allclose(np.abs(body), np.tile(half, (8, 1)), rtol=0, atol=1e-12)


def test_union_bounds_contains_every_scene():
    scenes = [twist_scene(phi) for phi in TWIST_PRESETS.values()]
    b = union_bounds(scenes)
    for s in scenes:
        assert (b[:, 0] <= s.bounds[:, 0] + 1e-12).all() and (s.bounds[:, 1] <= b[:, 1] + 1e-12).all()
    assert np.ptp(b, axis=1) == pytest.approx(np.ptp(b[0]))  # a cube


def _first_frame_size(html):
    import base64
    import io
    import re

    from PIL import Image

    data = re.search(r"data:image/png;base64,([A-Za-z0-9+/=\\\n]+)", html).group(1)
    return Image.open(io.BytesIO(base64.b64decode(data.replace("\\\n", "")))).size


@pytest.mark.parametrize("dpi", [30, 50])
def test_animation_html_saves_frames_at_the_dpi_it_is_given(dpi):
    from redmax_edu.viz.animate import animation_html

    scenes = [twist_scene(TWIST_PRESETS["pure rotation"], t) for t in (0.0, 0.5)]
    # figsize (2, 2) inches at dpi pixels per inch; savefig's tight box may trim a few pixels.
    # The book sets savefig.dpi (redmax_edu._book.setup): the player's dpi must win over it.
    with plt.rc_context({"savefig.dpi": 96}):
        width, height = _first_frame_size(animation_html(scenes, figsize=(2, 2), dpi=dpi))
    assert abs(width - 2 * dpi) <= 4 and abs(height - 2 * dpi) <= 4
