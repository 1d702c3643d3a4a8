"""Derivative checking, taught as a tool: finite differences, the step sweep and the complex step.

Every analytic derivative in this library is tested against these functions. They compute
the derivative numerically with the *derivative index last* convention of the library:
for ``f: x -> y`` the result has shape ``y.shape + (n,)`` where ``n`` is the number of
independent directions of ``x``.

Three kinds of argument ``x`` are supported through ``space``:

``"vector"``
    ``x`` is any array, perturbed entry by entry: ``x + h e_k`` (``n = x.size``).
``"se3"``
    ``x`` is a 4x4 rigid transform, perturbed along body twists, ``E exp(h [e_k])``, the
    perturbation of Eq. (1.11) and (1.20) of the writeup (``n = 6``). A plain ``E + h e_k``
    would leave SE(3) and test the wrong thing. A stack of transforms, shape ``(m, 4, 4)``
    (the poses of m bodies), is perturbed body by body: ``n = 6 m``, body-major, which is the
    layout of maximal coordinates.
``"so3"``
    ``x`` is a 3x3 rotation (or a stack of them), perturbed as ``R exp(h [e_k])`` (``n = 3``
    per rotation).

Three difference formulas are offered through ``method``: ``"forward"`` (error O(h)),
``"central"`` (error O(h^2)) and ``"complex"``, the complex step ``Im f(x + i h e_k) / h``
(error O(h^2) with no subtractive cancellation, so ``h = 1e-20`` gives machine precision;
it needs ``f`` to be analytic in its argument: no ``abs``, ``norm`` or comparisons on the
perturbed values).

Taught in book/appendix/derivative_checks.
"""

from dataclasses import dataclass

import numpy as np

from ._validate import as_callable, as_real, as_scalar
from .lie import exp_se3, exp_so3

__all__ = ["perturb", "tangent_dim", "numerical_derivative", "relative_error", "step_sweep",
           "check_derivative", "DerivativeCheck", "METHODS", "SPACES"]

METHODS = ("forward", "central", "complex")
SPACES = ("vector", "se3", "so3")

#: Default steps of a sweep: 1e-1 down to 1e-12, one per decade.
DEFAULT_STEPS = np.logspace(-1, -12, 12)

#: Most step sizes one sweep may try (each costs a full numerical derivative).
MAX_STEPS = 1000


def _check_choice(value, choices, name):
    if value not in choices:
        raise ValueError(f"argument '{name}' must be one of {choices}, got {value!r}")


def tangent_dim(x, space="vector"):
    """Number of independent perturbation directions of ``x`` in ``space``.

    Parameters
    ----------
    x : array_like
        An array (``"vector"``), a 4x4 transform or a stack of them, shape ``(m, 4, 4)``
        (``"se3"``), or a 3x3 rotation or a stack of them (``"so3"``).
    space : {"vector", "se3", "so3"}

    Returns
    -------
    int
        ``x.size``, ``6 m`` or ``3 m``.

    Examples
    --------
    >>> tangent_dim(np.zeros((2, 3))), tangent_dim(np.eye(4), "se3"), tangent_dim(np.eye(3), "so3")
    (6, 6, 3)
    >>> tangent_dim(np.stack([np.eye(4)] * 5), "se3")
    30
    """
    _check_choice(space, SPACES, "space")
    shape = np.shape(x)
    if space == "vector":
        return int(np.prod(shape))
    size = {"se3": 4, "so3": 3}[space]
    if len(shape) not in (2, 3) or shape[-2:] != (size, size):
        raise ValueError(f"argument 'x' must have shape ({size}, {size}) or (m, {size}, {size}) "
                         f"for space {space!r}, got {shape}")
    count = 1 if len(shape) == 2 else shape[0]
    return {"se3": 6, "so3": 3}[space] * count


def perturb(x, dx, space="vector"):
    """Move ``x`` by the tangent vector ``dx``: ``x + dx``, or ``E exp([dx])`` on SE(3)/SO(3).

    On SE(3) this is the perturbation of the finite differences of Eq. (1.11) and (1.20).

    Parameters
    ----------
    x : array_like
        The point: an array, a 4x4 transform (or a stack ``(m, 4, 4)``), or a 3x3 rotation
        (or a stack ``(m, 3, 3)``).
    dx : array_like, shape (tangent_dim(x, space),)
        The step, real or complex; for a stack, body-major (``dx[6 k: 6 k + 6]`` moves
        transform ``k``).
    space : {"vector", "se3", "so3"}

    Returns
    -------
    ndarray, shape of ``x``

    Examples
    --------
    >>> E = perturb(np.eye(4), [0, 0, 0, 1e-3, 0, 0], "se3")
    >>> E[:3, 3]
    array([0.001, 0.   , 0.   ])
    >>> Es = perturb(np.stack([np.eye(4)] * 2), [0] * 6 + [0, 0, 0, 0, 0, 2.0], "se3")
    >>> Es[:, 2, 3]
    array([0., 2.])
    """
    n = tangent_dim(x, space)
    x = np.asarray(x)
    dx = np.asarray(dx)
    if dx.shape != (n,):
        raise ValueError(f"argument 'dx' must have shape ({n},), got {dx.shape}")
    if space == "vector":
        return x + dx.reshape(x.shape)
    exp = exp_se3 if space == "se3" else exp_so3
    if x.ndim == 2:
        return x @ exp(dx)
    k = n // len(x)
    return np.stack([xi @ exp(dx[k * i: k * i + k]) for i, xi in enumerate(x)])


def numerical_derivative(f, x, h=None, *, method="central", space="vector"):
    """The derivative of ``f`` at ``x`` by finite differences or the complex step.

    Parameters
    ----------
    f : callable
        ``f(x)`` returns an array (or a float).
    x : array_like
        Where to differentiate.
    h : float, optional
        Step; default 1e-6 for ``"forward"``/``"central"`` and 1e-20 for ``"complex"``.
    method : {"forward", "central", "complex"}
    space : {"vector", "se3", "so3"}
        How ``x`` is perturbed (see the module docstring).

    Returns
    -------
    ndarray, shape ``np.shape(f(x)) + (n,)``
        ``[..., k]`` is the derivative along the k-th direction.

    Examples
    --------
    >>> d = numerical_derivative(lambda x: np.array([x[0] * x[1], np.sin(x[1])]), [2.0, 0.0])
    >>> np.round(d, 8)
    array([[0., 2.],
           [0., 1.]])
    """
    _check_choice(method, METHODS, "method")
    as_callable(f, "f", ("x",))
    x = as_real(x, None, "x")
    if h is None:
        h = 1e-20 if method == "complex" else 1e-6
    h = as_scalar(h, "h", minimum=0.0, strict=True)
    n = tangent_dim(x, space)
    columns = []
    if method == "forward":
        f0 = np.asarray(f(x))
    for k in range(n):
        e = np.zeros(n)
        e[k] = h
        if method == "central":
            col = (np.asarray(f(perturb(x, e, space))) - np.asarray(f(perturb(x, -e, space)))) / (2 * h)
        elif method == "forward":
            col = (np.asarray(f(perturb(x, e, space))) - f0) / h
        else:
            col = np.imag(np.asarray(f(perturb(x, 1j * e, space)))) / h
        columns.append(col)
    return np.stack(columns, axis=-1)


_TINY = np.finfo(float).tiny


def relative_error(a, b, floor=_TINY):
    """``|a - b| / max(|a|, |b|, floor)`` in the Frobenius norm: 0 if equal, 2 for opposite arrays.

    Examples
    --------
    >>> relative_error([1.0, 2.0], [1.0, 2.0]), relative_error([1.0], [-1.0])
    (0.0, 2.0)
    """
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    if a.shape != b.shape:
        raise ValueError(f"cannot compare arrays of shapes {a.shape} and {b.shape}")
    scale = max(np.linalg.norm(a), np.linalg.norm(b), floor)
    return float(np.linalg.norm(a - b) / scale)


def step_sweep(f, x, analytic, steps=None, *, method="central", space="vector"):
    """Relative error of the numerical derivative against ``analytic`` for a range of steps.

    Plotted on log-log axes this is the V-shaped curve of the appendix: truncation error
    falls as h (forward) or h^2 (central) until round-off, which grows as eps/h, takes over.
    The complex step has no round-off branch.

    Parameters
    ----------
    f, x, method, space
        As in :func:`numerical_derivative`.
    analytic : array_like, shape ``np.shape(f(x)) + (n,)``
        The derivative under test.
    steps : array_like, optional
        Default ``DEFAULT_STEPS`` (1e-1 ... 1e-12); for the complex step, down to 1e-20.

    Returns
    -------
    steps : ndarray, shape (k,)
    errors : ndarray, shape (k,)

    Examples
    --------
    >>> steps, errors = step_sweep(np.exp, [0.5], np.exp([[0.5]]))
    >>> bool(errors.min() < 1e-9)
    True
    """
    if steps is None:
        steps = np.logspace(-1, -20, 20) if method == "complex" else DEFAULT_STEPS
    steps = as_real(steps, None, "steps")
    if steps.ndim != 1 or not 1 <= len(steps) <= MAX_STEPS:
        raise ValueError(f"argument 'steps' must be a list of 1 to {MAX_STEPS} step sizes, "
                         f"got shape {steps.shape}")
    analytic = np.asarray(analytic)
    errors = []
    for h in steps:
        numeric = numerical_derivative(f, x, h, method=method, space=space)
        if numeric.shape != analytic.shape:
            raise ValueError(f"argument 'analytic' has shape {analytic.shape}, but the numerical "
                             f"derivative has shape {numeric.shape} (derivative index last)")
        errors.append(relative_error(analytic, numeric))
    return steps, np.array(errors)


@dataclass(frozen=True)
class DerivativeCheck:
    """Outcome of :func:`check_derivative`: truthy fields, and a one-line verdict for notebooks."""

    ok: bool
    error: float
    step: float
    rtol: float
    method: str
    steps: np.ndarray
    errors: np.ndarray

    def verdict(self, what="analytic derivative"):
        """A sentence for a notebook check cell, e.g. ``'analytic derivative matches ...: True'``."""
        return f"{what} matches {self.method} differences: {self.ok}"


def check_derivative(f, x, analytic, *, method="central", space="vector", rtol=1e-6, steps=None):
    """Compare an analytic derivative with numerical differences over a step sweep.

    The check passes when the best relative error over the sweep is below ``rtol``. Taking
    the best step makes the test independent of the scale of the problem, while a wrong
    derivative (a flipped sign, a missing term) stays wrong at every step.

    Parameters
    ----------
    f : callable
    x : array_like
    analytic : array_like, shape ``np.shape(f(x)) + (n,)``
    method : {"forward", "central", "complex"}
    space : {"vector", "se3", "so3"}
    rtol : float
        Largest accepted relative error. The default 1e-6 sits well above the ~1e-10 a
        central difference reaches on smooth functions and far below the O(1) error of a
        wrong derivative.
    steps : array_like, optional
        As in :func:`step_sweep`.

    Returns
    -------
    DerivativeCheck

    Examples
    --------
    >>> from redmax_edu.lie import exp_se3, brac
    >>> rng = np.random.default_rng(0)
    >>> phi = rng.standard_normal(6)
    >>> E = exp_se3(rng.standard_normal(6))
    >>> # Eq. (1.8): d/dt E exp(t [phi]) at t = 0 is E [phi]
    >>> check = check_derivative(lambda t: E @ exp_se3(t[0] * phi), [0.0], (E @ brac(phi))[..., None])
    >>> check.ok
    True
    """
    rtol = as_scalar(rtol, "rtol", minimum=0.0, strict=True)
    steps, errors = step_sweep(f, x, analytic, steps, method=method, space=space)
    best = int(np.argmin(errors))
    return DerivativeCheck(ok=bool(errors[best] < rtol), error=float(errors[best]),
                           step=float(steps[best]), rtol=rtol, method=method,
                           steps=steps, errors=errors)
