"""Live ipywidgets explorers for Jupyter and Voila (they need a running Python kernel).

Import this module only where widgets are wanted: the rest of the library runs without
ipywidgets. Each explorer redraws the scene of its explorer function on every change.
In the static HTML book the controls are a snapshot of the first state; the plotly
players next to them are the views that respond there.
"""

import matplotlib.pyplot as plt

from .draw import draw_scene
from .explorers import TWIST_PRESETS, adjoint_scene, observer_pose, twist_scene

try:
    import ipywidgets as W
except ImportError as exc:  # pragma: no cover - ipywidgets is in the [widgets] extra
    raise ImportError("the live explorers need ipywidgets: pip install 'redmax_edu[widgets]'") from exc


def scene_widget(make_scene, controls, *, columns=2):
    """Controls on top, a matplotlib drawing of ``make_scene(**values)`` below, redrawn on change.

    Parameters
    ----------
    make_scene : callable
        Takes the controls' values as keyword arguments and returns a Scene.
    controls : dict of str to ipywidgets.ValueWidget

    Returns
    -------
    ipywidgets.VBox
    """
    def show(**values):
        draw_scene(make_scene(**values))
        plt.show()

    out = W.interactive_output(show, controls)
    boxes = list(controls.values())
    rows = [W.HBox(boxes[k:k + columns]) for k in range(0, len(boxes), columns)]
    return W.VBox([*rows, out])


def _slider(value, lo, hi, description, step=0.05):
    return W.FloatSlider(value=float(value), min=lo, max=hi, step=step, description=description,
                         continuous_update=False, readout_format=".2f")


def twist_explorer(phi=None, t=1.0):
    """Sliders for the six twist coordinates and the time ``t`` of :func:`.twist_scene`.

    Starts at ``phi`` (default: the first of ``TWIST_PRESETS``, as in the static figure).
    """
    phi = TWIST_PRESETS["pure rotation"] if phi is None else phi
    names = ["omega_x", "omega_y", "omega_z", "nu_x", "nu_y", "nu_z"]
    controls = {n: _slider(v, -3.0, 3.0, n) for n, v in zip(names, phi, strict=True)}
    controls["t"] = _slider(t, 0.0, 1.0, "t")

    def make(t, **coords):
        twist = [coords[n] for n in names]
        if not any(twist):
            twist[2] = 1e-9  # the zero twist has no screw; show it as (almost) no motion
        return twist_scene(twist, t)

    return scene_widget(make, controls)


def adjoint_explorer(s=0.0):
    """A slider that moves the observer frame b of :func:`.adjoint_scene` (``observer_pose(s)``)."""
    return scene_widget(lambda s: adjoint_scene(observer_pose(s)), {"s": _slider(s, 0.0, 1.0, "observer s")},
                        columns=1)


def force_explorer(examples):
    """Pick a force from ``examples`` and see its f, K and D and their finite-difference check.

    Parameters
    ----------
    examples : dict of str to (Force, E, phi)
        Each force with the state (poses (n, 4, 4), twists (n, 6)) to evaluate it at.
    """
    from ..checks import check_derivative
    from .plots import plot_force_terms

    def show(name):
        force, E, phi = examples[name]
        terms = force.evaluate(E, phi)
        n = len(E)
        k_check = check_derivative(lambda X: force.evaluate(X, phi).f, E, terms.K, space="se3")
        d_check = check_derivative(lambda p: force.evaluate(E, p.reshape(n, 6)).f, phi.ravel(), terms.D)
        fig, axes = plt.subplots(1, 3, figsize=(11, 3.2))
        plot_force_terms(terms, axes, title=name)
        plt.show()
        print(k_check.verdict("K"), "| relative error", f"{k_check.error:.0e}")
        print(d_check.verdict("D"), "| relative error", f"{d_check.error:.0e}")

    choice = W.Dropdown(options=list(examples), description="force")
    return W.VBox([choice, W.interactive_output(show, {"name": choice})])


def joint_explorer(kind="revolute"):
    """Pick a joint type and drag its coordinates: the scene of :func:`.joint_scene`, redrawn live.

    Starts at the preset ``kind`` of :data:`~redmax_edu.viz.joint_explorer.JOINT_PRESETS` with
    its starting coordinates (the first panel of the joints page's static figure). Sliders
    beyond the joint's number of coordinates are disabled.
    """
    from .joint_explorer import joint_presets, joint_scene

    presets = joint_presets()
    if kind not in presets:
        raise ValueError(f"argument 'kind' must be one of {list(presets)}, got {kind!r}")
    choice = W.Dropdown(options=list(presets), value=kind, description="joint")
    sliders = [_slider(0.0, -3.2, 3.2, f"q{k + 1}") for k in range(6)]

    def reset(change=None):
        joint, q0, _ = presets[choice.value]
        for k, slider in enumerate(sliders):
            slider.disabled = k >= joint.ndof
            slider.value = float(q0[k]) if k < joint.ndof else 0.0

    def show(name, **values):
        joint = presets[name][0]
        q = [values[f"q{k + 1}"] for k in range(joint.ndof)]
        draw_scene(joint_scene(joint, q))
        plt.show()

    reset()
    choice.observe(reset, names="value")
    controls = {"name": choice, **{f"q{k + 1}": s for k, s in enumerate(sliders)}}
    out = W.interactive_output(show, controls)
    return W.VBox([choice, W.HBox(sliders[:3]), W.HBox(sliders[3:]), out])
