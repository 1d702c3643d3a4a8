"""Wireframes of the shapes of :mod:`redmax_edu.inertia`, as polylines for scene ``Path`` items.

Each function returns one array of points, shape (N, 3), in which strokes are separated by
rows of NaN (the convention of :func:`redmax_edu.viz.scene.box_edges`), placed at a pose
``E`` (4x4): the shape's own frame in the frame of the drawing. The shapes are in the
frames the inertia constructors use: centred at the origin, the axis of a cylinder or
capsule along z.
"""

import numpy as np

from .._validate import as_array, as_transform

__all__ = ["cylinder_wireframe", "capsule_wireframe", "mesh_edges"]

_GAP = np.full((1, 3), np.nan)


def _place(strokes, E):
    """Join local strokes (each shape (k, 3)) with NaN rows and move them by E."""
    E = as_transform(E, "E")
    local = np.concatenate([np.vstack([s, _GAP]) for s in strokes])
    return local @ E[:3, :3].T + E[:3, 3]


def _circle(radius, z, segments):
    t = np.linspace(0.0, 2 * np.pi, segments + 1)
    return np.column_stack([radius * np.cos(t), radius * np.sin(t), np.full_like(t, z)])


def _positive(x, name):
    x = float(as_array(x, (), name))
    if x <= 0:
        raise ValueError(f"argument '{name}' must be positive, got {x}")
    return x


def cylinder_wireframe(E, radius, height, *, segments=24, lines=8):
    """The rims and ``lines`` straight generators of a cylinder (axis z, centred), placed at E.

    Parameters
    ----------
    E : array_like, shape (4, 4)
        The cylinder's frame in the drawing's frame.
    radius, height : float
        Positive.
    segments : int
        Straight pieces per rim circle.
    lines : int
        Generators along the side, evenly spaced in angle.

    Returns
    -------
    ndarray, shape (N, 3)
        Strokes separated by NaN rows.

    Examples
    --------
    >>> pts = cylinder_wireframe(np.eye(4), 0.5, 2.0, segments=12, lines=4)
    >>> bool(np.allclose(np.nanmax(np.abs(pts), axis=0), [0.5, 0.5, 1.0]))
    True
    """
    r, h = _positive(radius, "radius"), _positive(height, "height")
    rims = [_circle(r, -h / 2, segments), _circle(r, h / 2, segments)]
    angles = 2 * np.pi * np.arange(lines) / lines
    sides = [np.array([[r * np.cos(a), r * np.sin(a), -h / 2], [r * np.cos(a), r * np.sin(a), h / 2]])
             for a in angles]
    return _place(rims + sides, E)


def capsule_wireframe(E, radius, length, *, segments=24, meridians=4):
    """A capsule (axis z, centred; ``length`` of the cylindrical part) as rings and meridians.

    With ``length = 0`` it is a sphere. Drawn: the two rims where the caps meet the cylinder,
    and ``meridians`` closed outlines through the axis (each runs over both caps and down
    the sides).

    Parameters
    ----------
    E : array_like, shape (4, 4)
    radius : float
        Positive.
    length : float
        ``>= 0``.
    segments : int
        Straight pieces per half circle of a cap outline (and per half rim).
    meridians : int
        Outlines through the axis, evenly spaced in angle over a half turn.

    Returns
    -------
    ndarray, shape (N, 3)
        Strokes separated by NaN rows.

    Examples
    --------
    >>> pts = capsule_wireframe(np.eye(4), 0.2, 1.0)
    >>> float(np.round(np.nanmax(pts[:, 2]), 12))  # the tip of the top cap: length/2 + radius
    0.7
    """
    r = _positive(radius, "radius")
    L = float(as_array(length, (), "length"))
    if L < 0:
        raise ValueError(f"argument 'length' must be >= 0, got {L}")
    t = np.linspace(0.0, np.pi, segments + 1)
    # an outline in the xz plane: up the +x side, over the top cap, down the -x side, under the bottom
    top = np.column_stack([r * np.cos(t), np.zeros_like(t), L / 2 + r * np.sin(t)])
    bottom = np.column_stack([-r * np.cos(t), np.zeros_like(t), -L / 2 - r * np.sin(t)])
    outline = np.vstack([top, bottom, top[:1]])
    strokes = []
    for a in np.pi * np.arange(meridians) / meridians:
        c, s = np.cos(a), np.sin(a)
        strokes.append(outline @ np.array([[c, s, 0.0], [-s, c, 0.0], [0.0, 0.0, 1.0]]))
    strokes += [_circle(r, L / 2, 2 * segments), _circle(r, -L / 2, 2 * segments)]
    return _place(strokes, E)


def mesh_edges(vertices, faces, E=None):
    """Every edge of a triangle mesh once, as strokes separated by NaN rows.

    Parameters
    ----------
    vertices : array_like, shape (n, 3)
    faces : array_like of int, shape (m, 3)
    E : array_like, shape (4, 4), optional
        Pose of the mesh's frame; identity by default.

    Returns
    -------
    ndarray, shape (3 k, 3)
        For each of the k undirected edges: its two ends and a NaN row.

    Examples
    --------
    >>> from redmax_edu.inertia import box_mesh
    >>> mesh_edges(*box_mesh([1.0, 1.0, 1.0])).shape  # 12 box edges and 6 face diagonals
    (54, 3)
    """
    V = as_array(vertices, None, "vertices")
    F = np.asarray(faces)
    if V.ndim != 2 or V.shape[1] != 3:
        raise ValueError(f"argument 'vertices' must have shape (n, 3), got {V.shape}")
    if F.ndim != 2 or F.shape[1] != 3 or F.dtype.kind not in "iu":
        raise ValueError(f"argument 'faces' must be integers of shape (m, 3), got {F.dtype} {F.shape}")
    edges = np.sort(np.concatenate([F[:, [0, 1]], F[:, [1, 2]], F[:, [2, 0]]]), axis=1)
    edges = np.unique(edges, axis=0)
    return _place([V[e] for e in edges], np.eye(4) if E is None else E)
