"""Model parameters and the derivatives of the equations of motion in them (§3.5).

The adjoint method (:mod:`redmax_edu.adjoint`) differentiates a simulation with respect to
parameters ``p``; for the physical ones it needs how the equations of motion ``M qddot = f +
tau`` (Eq. 3.53) change with them: ``dM/dp`` (nq, nq, np) and ``df/dp`` (nq, np) at a state
``(q, qdot)``, derivative index last. A parameter is named by a :class:`Parameter`, a kind and
a body:

``"stiffness"``, ``"damping"``
    The joint spring stiffness ``k_j`` or damping ``d_j`` of one coordinate j of the body's
    joint (§2.5; ``index`` picks the coordinate, optional for a one-coordinate joint). The
    joint force is ``-k_j (q_j - q_rest_j) - d_j qdot_j``, so ``df/dk_j = -(q_j - q_rest_j) e_j``,
    ``df/dd_j = -qdot_j e_j`` and ``dM/dp = 0``.
``"body_damping"``
    The viscous damping ``d`` of the body's own twist, the wrench ``-d phi_i`` (§1.9):
    ``df/dd = -J_i^T phi_i``.
``"mass"``
    The body's mass ``m``, its rotational inertia scaled with it (the shape, hence the centre
    of mass and the principal axes, stay fixed): ``M_i = m Mhat_i`` with ``Mhat_i = M_i / m``
    constant. Everything in Eq. (2.19) that holds the body's inertia is linear in it: ``dM/dm =
    J_i^T Mhat_i J_i``, and ``df/dm = J_i^T (ad(phi_i)^T Mhat_i phi_i + (0; R_i^T g) - Mhat_i
    Jdot_i qdot)``: the Coriolis wrench (Eq. 1.21), the weight (Eq. 1.34) and the quadratic
    velocity vector (Eq. 2.19) per unit mass.
``"length"``
    The distance ``s = |t|`` of the body's joint from its parent's joint frame: ``t`` is the
    translation of the body's fixed transform ``T_parent_joint`` (the joint frame in the parent
    joint's frame at ``q = 0``), and the parameter scales it along its own direction, ``t = s
    u``, ``u = t / |t|``. The joint, the body and the whole subtree below move with it; the
    parent body's mass distribution does not (its ``T_joint_body`` is untouched), so lengthening
    a link moves the next joint, not the link's own centre of mass.

How the length derivative is computed, without new kinematics: with ``T_parent_joint = (R, t)``,
moving ``t`` by ``ds u`` is ``T_parent_joint Trans(ds R^T u)``, a slider of axis ``R^T u``
placed right after the fixed transform and sitting at zero. So the length is a prismatic
coordinate ``x = 0`` with ``xdot = 0`` of an augmented model whose body has the joint
``Composite([Prismatic(R^T u), joint])``; Algorithm 11 and Eq. (3.54)-(3.58) of that model
(:func:`redmax_edu.derivatives.dynamics_derivatives`) give ``dM/dx`` and ``K[:, x] = df/dx``,
whose rows and columns at the original coordinates are ``dM/ds`` and ``df/ds``, because the
augmented model at ``x = xdot = 0`` is the original one.

Every malformed parameter raises a ``ValueError`` that names the parameter and the body.

Writeup §3.5 (the parameters ``p`` of Eq. 3.84). Taught in book/03_differentiable/05_adjoint and
06_optimisation.
"""

from dataclasses import dataclass, replace

import numpy as np

from ._validate import as_real
from .derivatives import dynamics_derivatives_unchecked
from .jacobian import fill_jacobian, jacobian
from .joints import Composite, Prismatic
from .kinematics import forward_kinematics_unchecked
from .lie import ad_unchecked
from .model import Model, check_model

__all__ = ["KINDS", "Parameter", "ParameterDerivatives", "model_parameters", "parameter_values",
           "with_parameters", "parameter_derivatives", "parameter_twists"]

#: The kinds of model parameter.
KINDS = ("stiffness", "damping", "body_damping", "mass", "length")


@dataclass(frozen=True)
class Parameter:
    """One physical parameter of a model: a kind of :data:`KINDS` and the body it belongs to.

    Parameters
    ----------
    kind : str
        ``"stiffness"``, ``"damping"`` (of the body's joint, N m/rad or N/m and N m s/rad or
        N s/m), ``"body_damping"`` (N s/m), ``"mass"`` (kg) or ``"length"`` (m): see the module
        docstring.
    body : str
        The body's name.
    index : int, optional
        For ``"stiffness"`` and ``"damping"``: which coordinate of the joint (needed when the
        joint has more than one).

    Examples
    --------
    >>> Parameter("damping", "upper")
    Parameter(kind='damping', body='upper', index=None)
    """

    kind: str
    body: str
    index: int | None = None

    def __str__(self):
        return f"{self.kind} of body {self.body!r}" + ("" if self.index is None else f" [{self.index}]")


@dataclass(frozen=True)
class ParameterDerivatives:
    """``dM/dp`` (nq, nq, np) and ``df/dp`` (nq, np) at one state, derivative index last."""

    dM_dp: np.ndarray
    df_dp: np.ndarray


@dataclass(frozen=True)
class _Resolved:
    """A checked parameter: its kind, body index, and coordinate (joint parameters) in q."""

    param: Parameter
    body: int
    coordinate: int | None


def _as_parameter(spec, k):
    if isinstance(spec, Parameter):
        p = spec
    elif isinstance(spec, tuple | list) and 2 <= len(spec) <= 3:
        p = Parameter(*spec)
    else:
        raise ValueError(f"params[{k}] must be a Parameter or a tuple (kind, body[, index]), got {spec!r}")
    if p.kind not in KINDS:
        raise ValueError(f"params[{k}]: kind {p.kind!r} is not one of {KINDS}")
    if not isinstance(p.body, str):
        raise ValueError(f"params[{k}] ({p.kind}): the body must be given by its name, got {p.body!r}")
    return p


def resolve_parameters(model, params):
    """The parameters checked against the model: a list of :class:`_Resolved`."""
    check_model(model)
    if isinstance(params, Parameter | str) or not hasattr(params, "__len__"):
        raise ValueError("argument 'params' must be a list of Parameter or (kind, body[, index]) tuples")
    out, seen = [], set()
    for k, spec in enumerate(params):
        p = _as_parameter(spec, k)
        if p.body not in model.names:
            raise ValueError(f"params[{k}] ({p.kind}): no body named {p.body!r}; "
                             f"bodies: {', '.join(model.names)}")
        i = model.index(p.body)
        body, where = model.bodies[i], f"params[{k}] ({p})"
        coordinate = None
        if p.kind in ("stiffness", "damping"):
            n = body.joint.ndof
            if n == 0:
                raise ValueError(f"{where}: body {p.body!r} hangs from a {body.joint.kind} joint, which has "
                                 f"no coordinates and so no {p.kind}")
            index = p.index
            if index is None and n > 1:
                raise ValueError(f"{where}: the joint of body {p.body!r} ({body.joint.kind}) has {n} "
                                 "coordinates; give the index of one")
            index = 0 if index is None else index
            if not isinstance(index, int | np.integer) or isinstance(index, bool) or not 0 <= index < n:
                raise ValueError(f"{where}: index must be an integer from 0 to {n - 1} (the coordinates of "
                                 f"the {body.joint.kind} joint of body {p.body!r}), got {p.index!r}")
            coordinate = model.dofs[i].start + int(index)
            p = replace(p, index=int(index))
        elif p.index is not None:
            raise ValueError(f"{where}: only joint stiffness and damping take an index")
        elif p.kind == "length" and not np.linalg.norm(body.T_parent_joint[:3, 3]) > 0:
            raise ValueError(f"{where}: the joint of body {p.body!r} sits at the origin of its parent's "
                             "joint frame (T_parent_joint has no translation), so it has no length to scale")
        key = (p.kind, i, coordinate)
        if key in seen:
            raise ValueError(f"{where}: given twice in argument 'params'")
        seen.add(key)
        out.append(_Resolved(p, i, coordinate))
    return out


def model_parameters(model, kinds=KINDS):
    """Every parameter of the given kinds that the model has: a list of :class:`Parameter`.

    Joint stiffness and damping per coordinate (joints with coordinates only), body damping and
    mass per body, lengths of the bodies whose ``T_parent_joint`` has a translation.

    Examples
    --------
    >>> from redmax_edu.joints import Revolute
    >>> from redmax_edu.model import Body
    >>> T = np.eye(4); T[2, 3] = -1.0
    >>> arm = Model([Body("upper", -1, Revolute([0, 1, 0]), np.eye(4), T, 1.0, 0.1 * np.eye(3)),
    ...              Body("lower", 0, Revolute([0, 1, 0]), T, T, 1.0, 0.1 * np.eye(3))])
    >>> [str(p) for p in model_parameters(arm, ["mass", "length"])]
    ["mass of body 'upper'", "mass of body 'lower'", "length of body 'lower'"]
    """
    check_model(model)
    for kind in kinds:
        if kind not in KINDS:
            raise ValueError(f"argument 'kinds': {kind!r} is not one of {KINDS}")
    out = []
    for kind in kinds:
        for b in model.bodies:
            if kind in ("stiffness", "damping"):
                out += [Parameter(kind, b.name, j) for j in range(b.joint.ndof)]
            elif kind != "length" or np.linalg.norm(b.T_parent_joint[:3, 3]) > 0:
                out.append(Parameter(kind, b.name))
    return out


def _value(model, r):
    body, kind = model.bodies[r.body], r.param.kind
    if kind in ("stiffness", "damping"):
        return float(getattr(model, kind)[r.coordinate])
    if kind == "length":
        return float(np.linalg.norm(body.T_parent_joint[:3, 3]))
    return float(getattr(body, kind))


def parameter_values(model, params):
    """The current values of ``params`` in ``model``, shape (np,), in SI units.

    Examples
    --------
    >>> from redmax_edu.joints import Revolute
    >>> from redmax_edu.model import Body
    >>> T = np.eye(4); T[2, 3] = -1.0
    >>> bob = Model([Body("bob", -1, Revolute([0, 1, 0]), np.eye(4), T, 2.0, 0.01 * np.eye(3), damping=0.5)])
    >>> parameter_values(bob, [("mass", "bob"), ("damping", "bob")])
    array([2. , 0.5])
    """
    return np.array([_value(model, r) for r in resolve_parameters(model, params)], dtype=float)


def with_parameters(model, params, values):
    """A new :class:`~redmax_edu.model.Model` with ``params`` set to ``values`` (np,).

    The mass scales the body's inertia with it; a length rescales the translation of the body's
    ``T_parent_joint`` along its direction (see the module docstring). Values are checked as the
    model checks its fields: a negative stiffness or a non-positive mass or length is a
    ``ValueError`` naming the body.

    Examples
    --------
    >>> from redmax_edu.joints import Revolute
    >>> from redmax_edu.model import Body
    >>> T = np.eye(4); T[2, 3] = -1.0
    >>> arm = Model([Body("upper", -1, Revolute([0, 1, 0]), np.eye(4), T, 1.0, 0.1 * np.eye(3)),
    ...              Body("lower", 0, Revolute([0, 1, 0]), T, T, 1.0, 0.1 * np.eye(3))])
    >>> longer = with_parameters(arm, [("length", "lower"), ("mass", "lower")], [2.0, 3.0])
    >>> longer.bodies[1].T_parent_joint[:3, 3], round(float(longer.bodies[1].inertia[0, 0]), 12)
    (array([ 0.,  0., -2.]), 0.3)

    Writeup §3.5. Taught in book/03_differentiable/05_adjoint and 06_optimisation.
    """
    resolved = resolve_parameters(model, params)
    values = as_real(values, (len(resolved),), "values")
    changes = {}                                  # body index -> its new fields: one rebuild per body
    for r, v in zip(resolved, values, strict=True):
        b, kind, where = model.bodies[r.body], r.param.kind, f"{r.param}"
        fields = changes.setdefault(r.body, {})
        if kind in ("stiffness", "damping"):
            a = fields.get(kind, getattr(b, kind)).copy()
            a[r.param.index] = v
            fields[kind] = a
        elif kind == "mass":
            if not v > 0:
                raise ValueError(f"argument 'values': the {where} must be positive, got {v}")
            fields.update(mass=v, inertia=b.inertia * (v / b.mass))
        elif kind == "length":
            if not v > 0:
                raise ValueError(f"argument 'values': the {where} must be positive, got {v}")
            T = b.T_parent_joint.copy()
            T[:3, 3] *= v / np.linalg.norm(T[:3, 3])
            fields["T_parent_joint"] = T
        else:
            fields["body_damping"] = v
    bodies = [replace(b, **changes[i]) if i in changes else b for i, b in enumerate(model.bodies)]
    return Model(bodies, model.gravity, model.forces, model.deformables, model.constraints, model.friction)


def _slider_axis(T):
    """``R^T u``: the direction ``u = t / |t|`` of the translation of ``T = (R, t)`` in the frame that
    follows ``T``, where the slider of a length sits."""
    t = T[:3, 3]
    return T[:3, :3].T @ t / np.linalg.norm(t)


def _length_model(model, bodies):
    """The augmented model of the module docstring: body i's joint preceded by a slider along its
    ``T_parent_joint`` offset, for each i in ``bodies``. Returns ``(model, orig, slider)``: the
    original coordinates' indices in the augmented q, and each slider's."""
    new, orig, slider, start = list(model.bodies), [], {}, 0
    for i, b in enumerate(model.bodies):
        n = b.joint.ndof
        if i in bodies:
            axis = Prismatic(_slider_axis(b.T_parent_joint))
            kind = b.joint.kind
            joint = (axis if kind == "fixed" else Composite((axis, *b.joint.joints)) if kind == "composite"
                     else Composite((axis, b.joint)))
            zero = np.zeros(1)
            new[i] = replace(b, joint=joint, stiffness=np.concatenate([zero, b.stiffness]),
                             damping=np.concatenate([zero, b.damping]),
                             q_rest=np.concatenate([zero, b.q_rest]))
            slider[i] = start
            start += 1
        orig += range(start, start + n)
        start += n
    orig += range(start, start + model.nq - model.nr)          # deformable nodes follow the joints
    augmented = Model(new, model.gravity, model.forces, model.deformables)
    return augmented, np.array(orig), slider


def _augmented_state(model, q, qdot, lengths):
    """The augmented model of the lengths' bodies, its state (sliders at zero), the original
    coordinates' indices in it and each slider's index."""
    augmented, orig, slider = _length_model(model, set(lengths))
    qa, qda = np.zeros(augmented.nq), np.zeros(augmented.nq)
    qa[orig], qda[orig] = q, qdot
    return augmented, qa, qda, orig, slider


def parameter_twists(model, params, q):
    """The body twists per unit change of each parameter at fixed ``q``, shape (6n, np).

    Only a length moves the bodies (the others change forces and inertia, not poses): its
    column is the twist, in each body's frame, of the subtree sliding along the offset, i.e.
    the slider's column of ``J_mr`` of the augmented model (module docstring). A body point
    ``r`` of body i then moves by ``R_i Gamma(r) [twists]_i`` per unit parameter (Eq. 2.94).

    Examples
    --------
    Lengthening the lower link moves the lower body down its offset (0, 0, -1) in the first
    hinge's frame, here turned by 0.3 rad: in the lower body's own axes, straight along -z.

    >>> from redmax_edu.joints import Revolute
    >>> from redmax_edu.model import Body
    >>> T = np.eye(4); T[2, 3] = -1.0
    >>> arm = Model([Body("upper", -1, Revolute([0, 1, 0]), np.eye(4), T, 1.0, 0.1 * np.eye(3)),
    ...              Body("lower", 0, Revolute([0, 1, 0]), T, T, 1.0, 0.1 * np.eye(3))])
    >>> tw = parameter_twists(arm, [("length", "lower")], [0.3, 0.0])
    >>> np.round(tw[6:, 0], 12) + 0.0
    array([ 0.,  0.,  0.,  0.,  0., -1.])

    Writeup §3.5. Taught in book/03_differentiable/05_adjoint.
    """
    resolved = resolve_parameters(model, params)
    q = model.check_state(q)
    out = np.zeros((6 * model.n, len(resolved)))
    lengths = {k: r.body for k, r in enumerate(resolved) if r.param.kind == "length"}
    if lengths:
        augmented, qa, _, _, slider = _augmented_state(model, q, np.zeros_like(q), lengths.values())
        J = jacobian(augmented, qa)
        for k, i in lengths.items():
            out[:, k] = J[:, slider[i]]
    return out


def parameter_derivatives(model, params, q, qdot):
    """``dM/dp`` (nq, nq, np) and ``df/dp`` (nq, np) at ``(q, qdot)``: a :class:`ParameterDerivatives`.

    ``M`` and ``f = f_r + J^T f_m + f_QVV`` are those of Eq. (3.53) (without ``tau``), as in
    :func:`redmax_edu.derivatives.dynamics_derivatives`; the formulas per kind are in the
    module docstring.

    Parameters
    ----------
    model : Model
        Without constraints.
    params : sequence of Parameter or (kind, body[, index]) tuples
    q, qdot : array_like, shape (nq,)

    Returns
    -------
    ParameterDerivatives

    Examples
    --------
    A pendulum of mass m and length L below its hinge: ``M = I + m L^2`` grows with the mass by
    ``I/m + L^2``, and the gravity torque ``-m g L sin(q)`` by ``-g L sin(q)``:

    >>> from redmax_edu.joints import Revolute
    >>> from redmax_edu.model import Body
    >>> T = np.eye(4); T[2, 3] = -1.0
    >>> bob = Model([Body("bob", -1, Revolute([0, 1, 0]), np.eye(4), T, 2.0, 0.01 * np.eye(3))])
    >>> d = parameter_derivatives(bob, [("mass", "bob")], [0.3], [0.0])
    >>> dM, df = float(d.dM_dp[0, 0, 0]), float(d.df_dp[0, 0])
    >>> round(dM, 12), round(df, 12), round(float(-9.81 * np.sin(0.3)), 12)
    (1.005, -2.899053227348, -2.899053227348)

    Writeup §3.5. Taught in book/03_differentiable/05_adjoint.
    """
    resolved = resolve_parameters(model, params)
    if model.constraints:
        raise ValueError("argument 'model' has constraints: the parameter derivatives are those of the "
                         "unconstrained equations M qddot = f + tau (Eq. 3.53)")
    q, qdot = model.check_state(q, qdot)
    nq, npar = model.nq, len(resolved)
    dM, df = np.zeros((nq, nq, npar)), np.zeros((nq, npar))
    kin = forward_kinematics_unchecked(model, q, qdot)
    J, Jdot = fill_jacobian(model, kin, with_derivative=True)
    Jb, Jdb = J.reshape(model.n, 6, nq), Jdot.reshape(model.n, 6, nq)
    lengths = {}
    for k, r in enumerate(resolved):
        kind, i, j = r.param.kind, r.body, r.coordinate
        if kind == "stiffness":
            df[j, k] = -(q[j] - model.q_rest[j])
        elif kind == "damping":
            df[j, k] = -qdot[j]
        elif kind == "body_damping":
            df[:, k] = -Jb[i].T @ kin.phi[i]
        elif kind == "mass":
            Mhat = model.spatial_inertias[i] / model.bodies[i].mass
            phi, R = kin.phi[i], kin.E_wi[i, :3, :3]
            wrench = ad_unchecked(phi).T @ Mhat @ phi - Mhat @ (Jdb[i] @ qdot)     # Eq. (1.21), (2.19)
            wrench[3:] += R.T @ model.gravity                                      # Eq. (1.34)
            dM[:, :, k] = Jb[i].T @ Mhat @ Jb[i]
            df[:, k] = Jb[i].T @ wrench
        else:
            lengths[k] = i
    if lengths:
        augmented, qa, qda, orig, slider = _augmented_state(model, q, qdot, lengths.values())
        d = dynamics_derivatives_unchecked(augmented, qa, qda)
        for k, i in lengths.items():
            x = slider[i]
            dM[:, :, k] = d.dM_dq[np.ix_(orig, orig, [x])][:, :, 0]
            df[:, k] = d.K[orig, x]
    return ParameterDerivatives(dM, df)
