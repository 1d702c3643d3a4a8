"""Objectives of a simulated trajectory, with their partial derivatives (§3.5, Eq. 3.82-3.85).

The adjoint method (:mod:`redmax_edu.adjoint`) minimises an objective ``Psi(p, qbar)`` of the
parameters ``p`` and of the states of a run. It needs ``Psi`` and its *partial* derivatives:
in the state of every step it reads (``dPsi/dq^(k)`` and ``dPsi/dqdot^(k)``: the velocities are
functions of the positions, and the adjoint turns these into position gradients with each
scheme's velocity formula) and in the parameters it depends on directly (``dPsi/dp``). An
objective is called on the :class:`States` of a run and returns :class:`ObjectiveTerms`;
objectives add with ``+``.

The objectives here:

:class:`EndEffectorTarget`
    ``w_pos/2 |x_ee(q^(m)) - x_target|^2``, the second term of Eq. (3.82): a body point at the
    last step (or any step) reaching a target; ``dx_ee/dq = R Gamma(r) J_i`` (Eq. 2.94), and a
    length parameter moves the point at fixed q (:func:`redmax_edu.parameters.parameter_twists`).
:class:`Regularizer`
    ``w_reg/2 |p - p_ref|^2``, the first term of Eq. (3.82), on the per-step joint torques or on
    the model parameters.
:class:`Tracking`
    ``w/2 sum_k |q^(k) - q_obs^(k)|^2``: a run following an observed trajectory, the objective of
    identification.
:class:`ComeToRest`
    The kinetic energy ``1/2 qdot^T M(q) qdot`` at the last step (``dT/dq = 1/2 qdot^T dM/dq
    qdot``, Eq. 3.54), or ``w/2 |qdot^(m)|^2``.

Writeup §3.5. Taught in book/03_differentiable/05_adjoint and 06_optimisation.
"""

from dataclasses import dataclass, field

import numpy as np

from ._validate import as_real
from .derivatives import mass_matrix_derivative
from .dynamics import mass_matrix
from .jacobian import fill_jacobian
from .kinematics import forward_kinematics_unchecked
from .lie import gamma
from .model import check_model
from .parameters import parameter_derivatives, parameter_twists

__all__ = ["States", "ObjectiveTerms", "Objective", "EndEffectorTarget", "Regularizer", "Tracking",
           "ComeToRest"]


@dataclass(frozen=True, eq=False)
class States:
    """The states of a run at the end of every step, as an objective sees them.

    Attributes
    ----------
    model : Model
    t : ndarray, shape (m + 1,)
        Times (s): the initial state, then the end of each of the m steps.
    q, qdot : ndarray, shape (m + 1, nq)
    tau : ndarray, shape (m, nq)
        The joint torques of each step (zeros if none were applied).
    params : tuple of Parameter
        The model parameters being differentiated (:mod:`redmax_edu.parameters`).
    p : ndarray, shape (np,)
        Their values.
    """

    model: object
    t: np.ndarray
    q: np.ndarray
    qdot: np.ndarray
    tau: np.ndarray
    params: tuple = ()
    p: np.ndarray = field(default_factory=lambda: np.zeros(0))


@dataclass(frozen=True)
class ObjectiveTerms:
    """An objective's value and its partial derivatives, each shaped like what it differentiates.

    Attributes
    ----------
    value : float
    dq, dqdot : ndarray, shape (m + 1, nq)
        ``dPsi/dq^(k)``, ``dPsi/dqdot^(k)`` at fixed other states.
    dtau : ndarray, shape (m, nq)
        ``dPsi/dtau_k`` (the torques' direct part).
    dp : ndarray, shape (np,)
        ``dPsi/dp`` (the model parameters' direct part).
    """

    value: float
    dq: np.ndarray
    dqdot: np.ndarray
    dtau: np.ndarray
    dp: np.ndarray

    def __add__(self, other):
        return ObjectiveTerms(self.value + other.value, self.dq + other.dq, self.dqdot + other.dqdot,
                              self.dtau + other.dtau, self.dp + other.dp)


def _zeros(states, value=0.0):
    return ObjectiveTerms(float(value), np.zeros_like(states.q), np.zeros_like(states.qdot),
                          np.zeros_like(states.tau), np.zeros_like(states.p))


class Objective:
    """Base class: ``objective(states)`` gives :class:`ObjectiveTerms`; ``a + b`` is their sum."""

    def __call__(self, states):
        return self.evaluate(states)

    def evaluate(self, states):  # pragma: no cover - every subclass defines it
        raise NotImplementedError

    def __add__(self, other):
        if not isinstance(other, Objective):
            return NotImplemented
        return _Sum(self, other)


class _Sum(Objective):
    def __init__(self, a, b):
        self.parts = (a, b)

    def evaluate(self, states):
        a, b = self.parts
        return a(states) + b(states)

    def __repr__(self):
        return " + ".join(map(repr, self.parts))


def _step(states, step, name="step"):
    m = len(states.t) - 1
    if not -(m + 1) <= step <= m:
        raise ValueError(f"argument '{name}' is {step}, but the run has steps 0 to {m}")
    return step % (m + 1)


class EndEffectorTarget(Objective):
    """``w_pos/2 |x_ee(q^(k)) - x_target|^2``: a body point reaching a target (Eq. 3.82).

    Parameters
    ----------
    body : str
        The body carrying the end effector.
    point : array_like, shape (3,)
        The point in the body's frame (m).
    target : array_like, shape (3,)
        The target in the world (m).
    weight : float
        ``w_pos`` (1/m^2 times the objective's unit).
    step : int
        Which state: default -1, the last one (``q^(m)``).

    Examples
    --------
    >>> from redmax_edu.joints import Revolute
    >>> from redmax_edu.model import Body, Model
    >>> T = np.eye(4); T[2, 3] = -1.0
    >>> bob = Model([Body("bob", -1, Revolute([0, 1, 0]), np.eye(4), T, 2.0, 0.01 * np.eye(3))])
    >>> states = States(bob, np.array([0.0]), np.array([[0.0]]), np.array([[0.0]]), np.zeros((0, 1)))
    >>> terms = EndEffectorTarget("bob", [0, 0, 0], [1.0, 0, -1.0])(states)
    >>> terms.value, terms.dq  # x = (-sin q, 0, -cos q): dPsi/dq = (x - target) . dx/dq = -1 * -1
    (0.5, array([[1.]]))

    Writeup §3.5. Taught in book/03_differentiable/05_adjoint.
    """

    def __init__(self, body, point, target, weight=1.0, step=-1):
        self.body = body
        self.point = as_real(point, (3,), "point")
        self.target = as_real(target, (3,), "target")
        self.weight = float(as_real(weight, (), "weight"))
        self.step = int(step)

    def position(self, model, q):
        """``x_ee`` (3,) at ``q`` and its Jacobian ``dx_ee/dq = R Gamma(r) J_i`` (3, nq)."""
        check_model(model)
        i = model.index(self.body)
        kin = forward_kinematics_unchecked(model, model.check_state(q))
        E = kin.E_wi[i]
        J = fill_jacobian(model, kin).reshape(model.n, 6, model.nq)[i]
        return E[:3, :3] @ self.point + E[:3, 3], E[:3, :3] @ gamma(self.point) @ J

    def evaluate(self, states):
        k = _step(states, self.step)
        x, dx = self.position(states.model, states.q[k])
        e = x - self.target
        out = _zeros(states, 0.5 * self.weight * e @ e)
        out.dq[k] = self.weight * e @ dx
        if len(states.params):                  # a length moves the point at fixed q
            model = states.model
            i = model.index(self.body)
            R = forward_kinematics_unchecked(model, states.q[k]).E_wi[i, :3, :3]
            twists = parameter_twists(model, states.params, states.q[k])[6 * i:6 * i + 6]
            out.dp[...] = self.weight * e @ (R @ gamma(self.point) @ twists)
        return out

    def __repr__(self):
        return f"EndEffectorTarget({self.body!r}, target={self.target.tolist()})"


class Regularizer(Objective):
    """``w_reg/2 |p - p_ref|^2`` (the first term of Eq. 3.82) on the torques or the model parameters.

    Parameters
    ----------
    weight : float
        ``w_reg``.
    wrt : {"tau", "params"}
        The per-step joint torques (all steps and coordinates) or the model parameters.
    reference : array_like, optional
        ``p_ref``, shaped like what is regularised (default zero).

    Examples
    --------
    >>> states = States(None, np.zeros(3), np.zeros((3, 1)), np.zeros((3, 1)), np.ones((2, 1)))
    >>> Regularizer(0.1)(states).value, Regularizer(0.1)(states).dtau.ravel()
    (0.1, array([0.1, 0.1]))

    Writeup §3.5. Taught in book/03_differentiable/05_adjoint.
    """

    def __init__(self, weight, wrt="tau", reference=None):
        if wrt not in ("tau", "params"):
            raise ValueError(f"argument 'wrt' must be 'tau' or 'params', got {wrt!r}")
        self.weight = float(as_real(weight, (), "weight"))
        self.wrt = wrt
        self.reference = None if reference is None else as_real(reference, None, "reference")

    def evaluate(self, states):
        x = states.tau if self.wrt == "tau" else states.p
        ref = np.zeros_like(x) if self.reference is None else self.reference
        if np.shape(ref) != np.shape(x):
            raise ValueError(f"argument 'reference' has shape {np.shape(ref)}, but the {self.wrt} of the run "
                             f"have shape {np.shape(x)}")
        e = x - ref
        out = _zeros(states, 0.5 * self.weight * np.sum(e * e))
        getattr(out, "dtau" if self.wrt == "tau" else "dp")[...] = self.weight * e
        return out

    def __repr__(self):
        return f"Regularizer({self.weight}, wrt={self.wrt!r})"


class Tracking(Objective):
    """``w/2 sum_k |q^(k) - q_obs^(k)|^2`` over the states of a run (identification).

    Parameters
    ----------
    observed : array_like, shape (m + 1, nq)
        The observed positions at the run's states (the initial one included; its term is
        constant unless the initial state is a parameter).
    weight : float
        ``w``.

    Examples
    --------
    >>> states = States(None, np.zeros(2), np.array([[0.0], [1.0]]), np.zeros((2, 1)), np.zeros((1, 1)))
    >>> t = Tracking([[0.0], [0.5]])(states)
    >>> t.value, t.dq.ravel()
    (0.125, array([0. , 0.5]))

    Writeup §3.5. Taught in book/03_differentiable/06_optimisation.
    """

    def __init__(self, observed, weight=1.0):
        self.observed = as_real(observed, None, "observed")
        self.weight = float(as_real(weight, (), "weight"))

    def evaluate(self, states):
        if self.observed.shape != states.q.shape:
            raise ValueError(f"argument 'observed' has shape {self.observed.shape}, but the run has states "
                             f"of shape {states.q.shape} (m + 1 states of nq coordinates)")
        e = states.q - self.observed
        out = _zeros(states, 0.5 * self.weight * np.sum(e * e))
        out.dq[...] = self.weight * e
        return out

    def __repr__(self):
        return f"Tracking({len(self.observed)} states)"


class ComeToRest(Objective):
    """The motion left at the end of a run: its kinetic energy, or ``w/2 |qdot|^2``.

    Parameters
    ----------
    weight : float
        ``w``: ``w T(q, qdot)`` (kinetic, J times w) or ``w/2 |qdot|^2``.
    kind : {"kinetic", "velocity"}
        ``"kinetic"``: ``T = 1/2 qdot^T M(q) qdot``, depending on q through ``M`` (Eq. 3.54)
        and on the mass parameters; ``"velocity"``: the coordinates' rates alone.
    steps : int or sequence of int
        Which states (default -1, the last); over several the terms add up, so that
        ``steps=range(-10, 0)`` asks for rest over the last ten states and not just a turning point.

    Examples
    --------
    >>> from redmax_edu.joints import Revolute
    >>> from redmax_edu.model import Body, Model
    >>> T = np.eye(4); T[2, 3] = -1.0
    >>> bob = Model([Body("bob", -1, Revolute([0, 1, 0]), np.eye(4), T, 2.0, 0.01 * np.eye(3))])
    >>> states = States(bob, np.zeros(1), np.zeros((1, 1)), np.array([[2.0]]), np.zeros((0, 1)))
    >>> round(ComeToRest()(states).value, 12)  # 1/2 (0.01 + 2 * 1^2) 2^2
    4.02

    Writeup §3.5. Taught in book/03_differentiable/06_optimisation.
    """

    def __init__(self, weight=1.0, kind="kinetic", steps=-1):
        if kind not in ("kinetic", "velocity"):
            raise ValueError(f"argument 'kind' must be 'kinetic' or 'velocity', got {kind!r}")
        self.weight = float(as_real(weight, (), "weight"))
        self.kind = kind
        self.steps = tuple(int(k) for k in np.atleast_1d(steps))

    def evaluate(self, states):
        out = _zeros(states)
        for step in self.steps:
            out = out + self._one(states, _step(states, step, "steps"))
        return out

    def _one(self, states, k):
        q, v, w = states.q[k], states.qdot[k], self.weight
        if self.kind == "velocity":
            out = _zeros(states, 0.5 * w * v @ v)
            out.dqdot[k] = w * v
            return out
        M = mass_matrix(states.model, q)
        out = _zeros(states, 0.5 * w * v @ M @ v)
        out.dqdot[k] = w * M @ v
        out.dq[k] = 0.5 * w * np.einsum("i,ijk,j->k", v, mass_matrix_derivative(states.model, q), v)
        if len(states.params):
            dM = parameter_derivatives(states.model, states.params, q, v).dM_dp
            out.dp[...] = 0.5 * w * np.einsum("i,ijk,j->k", v, dM, v)
        return out

    def __repr__(self):
        return f"ComeToRest({self.kind!r})"
