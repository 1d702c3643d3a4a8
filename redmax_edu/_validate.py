"""Input checks shared by the library: clear ``ValueError`` messages that name the argument.

Every public function converts its array arguments through these helpers, so that a wrong
shape, a NaN or a matrix that is not a rotation is reported in the reader's terms
("argument 'E': ...") instead of surfacing later as an obscure numpy error or, worse, as a
silently wrong answer.
"""

import numpy as np

#: Largest allowed ``max|R^T R - I|`` for a matrix accepted as a rotation. Products of a few
#: hundred rotations stay far below it; a scaled or sheared matrix fails it by orders of magnitude.
ROTATION_TOL = 1e-8


def as_array(x, shape, name):
    """Return ``x`` as a finite float (or complex) array of the given shape.

    ``shape`` is a tuple, a tuple of alternatives (a tuple of tuples) for functions that
    accept several shapes, such as ``brac`` (3 or 6 vectors), or None for any shape.
    """
    try:
        a = np.asarray(x)
    except (TypeError, ValueError) as exc:  # ragged nested lists
        raise ValueError(f"argument '{name}' is not a numeric array: {exc}") from None
    if a.dtype.kind not in "biufc":
        raise ValueError(f"argument '{name}' must be numeric, got dtype {a.dtype}")
    shapes = shape if shape and isinstance(shape[0], tuple) else (shape,)
    if shape is not None and a.shape not in shapes:
        wanted = " or ".join(str(s) for s in shapes)
        raise ValueError(f"argument '{name}' must have shape {wanted}, got {a.shape}")
    if a.dtype.kind != "c":
        a = a.astype(float, copy=False)
    if not np.isfinite(a).all():
        raise ValueError(f"argument '{name}' contains NaN or infinite entries")
    return a


def as_rotation(R, name):
    """Return ``R`` as a 3x3 rotation matrix, or raise if it is not one (within ``ROTATION_TOL``)."""
    R = as_array(R, (3, 3), name)
    check_rotation_block(R, name)
    return R


def as_transform(E, name):
    """Return ``E`` as a 4x4 rigid transform ``[[R, p], [0, 1]]`` (Eq. 1.1), or raise."""
    E = as_array(E, (4, 4), name)
    if np.abs(E[3] - (0.0, 0.0, 0.0, 1.0)).max() > ROTATION_TOL:
        raise ValueError(f"argument '{name}' is not a rigid transform: its last row must be "
                         f"[0, 0, 0, 1], got {np.real(E[3]).tolist()}")
    check_rotation_block(E[:3, :3], name)
    return E


def check_rotation_block(R, name):
    """Raise unless ``R`` satisfies Eq. (1.3): ``R^T R = I`` and ``det R = +1``."""
    Rr = R.real  # complex-step perturbations live in the imaginary part
    err = np.abs(Rr.T @ Rr - np.eye(3)).max()
    if err > ROTATION_TOL:
        raise ValueError(f"argument '{name}' is not a rotation: max|R^T R - I| = {err:.2e} "
                         f"exceeds the tolerance {ROTATION_TOL:g}")
    if np.linalg.det(Rr) < 0:
        raise ValueError(f"argument '{name}' is a reflection (det R = -1), not a rotation")
