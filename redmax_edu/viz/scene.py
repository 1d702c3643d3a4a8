"""A small, renderer-independent description of a 3D picture: frames, paths, arrows, markers.

Explorer functions return a :class:`Scene`; :mod:`.draw` renders it with matplotlib and
:mod:`.interactive` with plotly. A sequence of scenes made by the same function with
different parameters has the same items in the same order, which is what an animation
with a slider needs.
"""

from dataclasses import dataclass, field

import numpy as np

AXIS_COLORS = ("#d62728", "#2ca02c", "#1f77b4")  # x red, y green, z blue

#: Most frames a player or a sweep draws, and most points on one drawn path or curve: a
#: caller asking for more gets a ValueError instead of a page, or a loop, that never ends.
MAX_FRAMES = 2_000
MAX_POINTS = 100_000


@dataclass(frozen=True)
class Frame:
    """A coordinate frame drawn as its three unit axes (scaled), placed at pose ``E`` (4x4)."""

    E: np.ndarray
    label: str
    scale: float = 1.0
    alpha: float = 1.0


@dataclass(frozen=True)
class Path:
    """A polyline through ``points`` (shape (N, 3))."""

    points: np.ndarray
    label: str
    color: str = "black"
    width: float = 2.0
    dashed: bool = False
    alpha: float = 1.0


@dataclass(frozen=True)
class Arrow:
    """An arrow from ``origin`` along ``vector`` (both shape (3,))."""

    origin: np.ndarray
    vector: np.ndarray
    label: str
    color: str = "black"


@dataclass(frozen=True)
class Marker:
    """A labelled point."""

    position: np.ndarray
    label: str
    color: str = "black"


@dataclass(frozen=True)
class Scene:
    """Items to draw, the box to draw them in (``bounds``, shape (3, 2)), a title and text notes."""

    items: tuple
    bounds: np.ndarray
    title: str = ""
    notes: tuple = field(default_factory=tuple)


def cube_bounds(points, margin=0.3):
    """A cube (equal ranges on x, y, z) around ``points`` (shape (N, 3)), padded by ``margin``.

    Equal ranges keep right angles looking right in 3D views.
    """
    points = np.asarray(points, dtype=float).reshape(-1, 3)
    lo, hi = points.min(axis=0), points.max(axis=0)
    center = 0.5 * (lo + hi)
    half = 0.5 * (hi - lo).max() + margin
    return np.column_stack([center - half, center + half])


def union_bounds(scenes):
    """The smallest cube containing the bounds of every scene (one box for a whole animation)."""
    corners = np.concatenate([s.bounds.T for s in scenes])
    return cube_bounds(corners, margin=0.0)


def box_edges(E, half_sizes):
    """The 12 edges of a box with the given half sizes, placed at pose ``E``, as one polyline.

    Strokes are separated by NaN rows, which both renderers draw as gaps.
    """
    hx, hy, hz = half_sizes
    c = np.array([[sx * hx, sy * hy, sz * hz] for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)])
    edges = [(a, b) for a in range(8) for b in range(a + 1, 8) if bin(a ^ b).count("1") == 1]
    world = c @ E[:3, :3].T + E[:3, 3]
    gap = np.full(3, np.nan)
    return np.array([p for a, b in edges for p in (world[a], world[b], gap)])


def fmt(v, digits=2):
    """A vector as a short string, e.g. ``(0.00, 1.50, -2.00)``, for scene notes."""
    v = np.asarray(v, dtype=float).reshape(-1) + 0.0
    return "(" + ", ".join(f"{x:.{digits}f}" for x in v) + ")"
