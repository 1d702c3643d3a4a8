"""Input checks shared by the library: clear ``ValueError`` messages that name the argument.

Every public function converts its array arguments through these helpers, so that a wrong
shape, a NaN or a matrix that is not a rotation is reported in the reader's terms
("argument 'E': ...") instead of surfacing later as an obscure numpy error or, worse, as a
silently wrong answer.
"""

import inspect

import numpy as np

#: Largest allowed ``max|R^T R - I|`` for a matrix accepted as a rotation. Products of a few
#: hundred rotations stay far below it; a scaled or sheared matrix fails it by orders of magnitude.
ROTATION_TOL = 1e-8

#: Largest magnitude accepted in an array argument. Beyond it squares and products overflow
#: (1e200 squared is inf), so a norm, an energy or a mass matrix would silently become
#: infinite or zero; no quantity of this library (in SI units) comes anywhere near it.
MAX_MAGNITUDE = 1e100


#: An adaptive integration whose step falls below this fraction of its span has collapsed: at that
#: size the span would take 1e12 steps, far more than any run may take, so the motion is blowing up
#: (or has reached a singularity) rather than being resolved; the run stops with an error naming
#: what changes fastest instead of crawling on with ever smaller steps.
STEP_COLLAPSE = 1e-12


def _contains_bool(x):
    """Whether a (nested) list or tuple holds a bool: numpy would silently turn it into 0 or 1."""
    if isinstance(x, (bool, np.bool_)):
        return True
    if isinstance(x, (list, tuple)):
        return any(_contains_bool(v) for v in x)
    return False


def as_array(x, shape, name, real=False):
    """Return ``x`` as a finite float (or complex) array of the given shape.

    ``shape`` is a tuple, a tuple of alternatives (a tuple of tuples) for functions that
    accept several shapes, such as ``brac`` (3 or 6 vectors), or None for any shape.
    Complex entries are kept (the complex step of :mod:`redmax_edu.checks` passes through the
    Lie-group and joint functions) unless ``real`` is true. Booleans, strings, None, NaN,
    infinities and magnitudes above :data:`MAX_MAGNITUDE` are refused.
    """
    if _contains_bool(x):
        raise ValueError(f"argument '{name}' must be numeric, got a boolean in {x!r}")
    try:
        a = np.asarray(x)
    except (TypeError, ValueError, OverflowError) as exc:  # ragged nested lists, huge ints
        raise ValueError(f"argument '{name}' is not a numeric array: {exc}") from None
    if a.dtype.kind not in "iufc":
        what = "boolean" if a.dtype.kind == "b" else f"dtype {a.dtype}"
        raise ValueError(f"argument '{name}' must be numeric, got {what}")
    if real and a.dtype.kind == "c":
        raise ValueError(f"argument '{name}' must be real, got complex values")
    shapes = shape if shape and isinstance(shape[0], tuple) else (shape,)
    if shape is not None and a.shape not in shapes:
        wanted = " or ".join(str(s) for s in shapes)
        raise ValueError(f"argument '{name}' must have shape {wanted}, got {a.shape}")
    if a.dtype.kind != "c":
        try:
            a = a.astype(float, copy=False)
        except OverflowError:  # Python ints beyond the float range
            raise ValueError(f"argument '{name}' has entries too large for a float") from None
    if not (np.abs(a) <= MAX_MAGNITUDE).all():
        if not np.isfinite(a).all():
            raise ValueError(f"argument '{name}' contains NaN or infinite entries")
        raise ValueError(f"argument '{name}' has an entry of magnitude {np.abs(a).max():.3g}, above "
                         f"{MAX_MAGNITUDE:g}: such values overflow (their squares are infinite)")
    return a


def as_real(x, shape, name):
    """:func:`as_array` for quantities that must be real (masses, stiffnesses, states)."""
    return as_array(x, shape, name, real=True)


def as_scalar(x, name, minimum=None, strict=False):
    """Return ``x`` as a finite real float; ``minimum`` bounds it from below (``strict``: ``>``)."""
    a = as_array(x, (), name, real=True)
    value = float(a)
    if minimum is not None and (value < minimum or (strict and value == minimum)):
        bound = f"> {minimum:g}" if strict else f">= {minimum:g}"
        word = "positive" if strict and minimum == 0 else bound
        raise ValueError(f"argument '{name}' must be {word}, got {value:g}")
    return value


def as_columns(x, rows, name):
    """``x`` as a float array of shape (rows,) or (rows, k): one vector, or k of them side by side."""
    x = as_array(x, None, name, real=True)
    if x.ndim not in (1, 2) or x.shape[0] != rows:
        raise ValueError(f"argument '{name}' must have shape ({rows},) or ({rows}, k), got {x.shape}")
    return x


def as_flag(x, name):
    """Return ``x`` as a bool; anything but True or False is refused (``progress="no"`` is truthy)."""
    if not isinstance(x, (bool, np.bool_)):
        raise ValueError(f"argument '{name}' must be True or False, got {type(x).__name__} {x!r}")
    return bool(x)


def as_positive(x, shape, name):
    """:func:`as_real` with every entry ``> 0`` (sizes, half-sizes, lengths)."""
    a = as_real(x, shape, name)
    if not (a > 0).all():
        raise ValueError(f"argument '{name}' must be positive, got {np.round(a, 12).tolist()}")
    return a


def as_positive_definite(M, shape, name, real=False, semidefinite=False, rtol=1e-9):
    """Return ``M`` as a symmetric positive definite matrix (a mass or an inertia), or raise.

    Symmetric to ``rtol`` times its largest entry, and every eigenvalue of its real part
    (complex-step perturbations live in the imaginary part) above ``1e-12`` times the largest
    (``semidefinite``: above minus that, as for the spatial inertia of a point mass): a negative
    mass would give accelerations and energies of the wrong sign, a singular one none at all.
    """
    M = as_array(M, shape, name, real)
    Mr = M.real
    asym = np.abs(Mr - Mr.T).max()
    if asym > rtol * np.abs(Mr).max():
        raise ValueError(f"argument '{name}' must be symmetric, got max|{name} - {name}^T| = {asym:.3g}")
    eigenvalues = np.linalg.eigvalsh(0.5 * (Mr + Mr.T))
    floor = 1e-12 * max(eigenvalues[-1], 0.0)
    if not (eigenvalues[0] >= -floor if semidefinite else eigenvalues[0] > floor):
        what = "semidefinite" if semidefinite else "definite"
        raise ValueError(f"argument '{name}' must be positive {what} (a mass matrix), but its eigenvalues "
                         f"run from {eigenvalues[0]:.3g} to {eigenvalues[-1]:.3g}")
    return M


def as_int_array(x, name, what="integers"):
    """Return ``x`` as an int64 array of ``what`` (indices such as a mesh's faces); booleans,
    floats, strings and ragged lists (rows of different lengths) are refused by name."""
    if _contains_bool(x):
        raise ValueError(f"argument '{name}' must hold {what}, got a boolean in {x!r}")
    try:
        a = np.asarray(x)
    except (TypeError, ValueError):  # ragged nested lists
        raise ValueError(f"argument '{name}' must be a rectangular array of {what}: its rows have "
                         "different lengths") from None
    if a.size and a.dtype.kind not in "iu":  # (an empty list is float64: its shape is the error)
        raise ValueError(f"argument '{name}' must hold {what}, got dtype {a.dtype}")
    return a.astype(np.int64)


def as_index(x, name, minimum=0):
    """Return ``x`` as a Python int ``>= minimum`` (booleans and floats are refused)."""
    if isinstance(x, (bool, np.bool_)) or not isinstance(x, (int, np.integer)):
        raise ValueError(f"argument '{name}' must be an integer, got {type(x).__name__} {x!r}")
    if x < minimum:
        raise ValueError(f"argument '{name}' must be >= {minimum}, got {x}")
    return int(x)


class ArgumentTypeError(TypeError, ValueError):
    """An argument of the wrong kind of object: both a TypeError and (like every bad input) a ValueError."""


def as_instance(x, cls, name):
    """Return ``x`` if it is a ``cls`` (a class or a tuple of classes), else an :class:`ArgumentTypeError`."""
    if not isinstance(x, cls):
        names = " or ".join(c.__name__ for c in (cls if isinstance(cls, tuple) else (cls,)))
        raise ArgumentTypeError(f"argument '{name}' must be a {names}, got {type(x).__name__}")
    return x


def as_callable(f, name, arguments):
    """Return ``f`` if it is callable with the positional ``arguments`` (their names, as in
    ``("t",)``), else an :class:`ArgumentTypeError` naming ``name`` and the call it must accept.

    The arity is read from ``inspect.signature``; a callable without one (some builtins) passes.
    """
    call = f"{name}({', '.join(arguments)})"
    if not callable(f):
        raise ArgumentTypeError(f"argument '{name}' must be a function {call}, got {type(f).__name__}")
    try:
        signature = inspect.signature(f)
    except (TypeError, ValueError):
        return f
    try:
        signature.bind(*arguments)
    except TypeError as err:
        raise ArgumentTypeError(f"argument '{name}' must accept the call {call}, but its signature "
                                f"is {signature} ({err})") from None
    return f


def as_sequence(x, name, what):
    """``tuple(x)`` for a list, tuple or other iterable of ``what``; a single object, a string or a
    dict is an :class:`ArgumentTypeError` naming ``name`` (``System(body)`` instead of ``System([body])``)."""
    if (isinstance(x, (str, bytes, dict)) or not hasattr(x, "__iter__")
            or (isinstance(x, np.ndarray) and x.ndim == 0)):
        raise ArgumentTypeError(f"argument '{name}' must be a list of {what}, got {type(x).__name__} "
                                f"(wrap a single one in a list: [{name[:-1]}])")
    return tuple(x)


def as_count(x, name, what, limit, minimum=1):
    """``x`` as an int between ``minimum`` and ``limit``: the number of samples, steps or frames
    that argument ``name`` asks a loop or an allocation for (:func:`as_index`, :func:`check_count`)."""
    return check_count(as_index(x, name, minimum), limit, what, name)


def check_count(count, limit, what, name):
    """Refuse to loop or allocate more than ``limit`` items (steps, samples) that ``name`` asks for."""
    if count > limit:
        shown = f"{count:.4g}" if count < 1e300 else "more than 1e300"
        raise ValueError(f"argument '{name}' asks for {shown} {what}, more than the limit of "
                         f"{limit:,}; use a larger step or a shorter span")
    return count


def as_rotation(R, name, real=False):
    """Return ``R`` as a 3x3 rotation matrix, or raise if it is not one (within ``ROTATION_TOL``)."""
    R = as_array(R, (3, 3), name, real)
    check_rotation_block(R, name)
    return R


def as_transform(E, name, real=False):
    """Return ``E`` as a 4x4 rigid transform ``[[R, p], [0, 1]]`` (Eq. 1.1), or raise."""
    E = as_array(E, (4, 4), name, real)
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
