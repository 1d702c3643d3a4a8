"""The joint interface of §2.4: every joint is ``Q(q)``, ``S(q)`` and ``Sdot(q, qdot)``.

A joint sits between a parent frame and a child frame. Its transform relative to its rest
pose is ``Q(q)`` (4x4, Eq. 2.23), and its *joint Jacobian* ``S(q)`` (6 x ndof) maps the joint
velocity to the twist of the child frame in its own coordinates,
``[S qdot] = Q^{-1} dQ/dt`` (Eq. 2.24, 2.31). ``Sdot = dS/dt`` enters the Jacobian's time
derivative (Eq. 2.16).

Part 3 differentiates these in q (§3.2), with the derivative index last:

=========================  ===============  =================================================
method                     shape            what
=========================  ===============  =================================================
``dQ_dq(q)``               (4, 4, ndof)     ``[:, :, k] = dQ/dq_k``
``dA_dq(q)``               (6, 6, ndof)     the derivative of ``A = Ad(Q)`` (Eq. 3.7, 3.16)
``dS_dq(q)``               (6, ndof, ndof)  the joint Hessian, ``[:, j, k] = dS_j/dq_k``
``dSdot_dq(q, qdot)``      (6, ndof, ndof)  ``[:, j, k] = dSdot_j/dq_k`` at fixed qdot
``dSdot_dqdot(q, qdot)``   (6, ndof, ndof)  ``[:, j, k] = dSdot_j/dqdot_k`` (= ``dS_dq``)
``dAdot_dq(q, qdot)``      (6, 6, ndof)     the derivative of ``Adot = A ad(S qdot)``
``derivatives(q, qdot)``   tuple            ``dA_dq``, ``dS_dq``, ``dAdot_dq``, ``dSdot_dq`` at once
=========================  ===============  =================================================

Three identities make most of these one general rule each, exact for every joint:
``dQ/dq_k = Q [S_k]`` (Eq. 2.31 read column by column), ``dA/dq_k`` is the product rule on
``Ad(Q) = [[R, 0], [[p] R, R]]`` (Eq. 1.14), and because ``Sdot = sum_k dS/dq_k qdot_k``
(Eq. 3.39) is linear in qdot, ``dSdot/dqdot = dS/dq``. What each family supplies is its
Hessian ``_dS_dq`` and ``_dSdot_dq`` (the second derivatives of S contracted with qdot), and
where the writeup gives one, a closed form of ``_dQ_dq``.

A subclass sets ``kind`` (its name in the scene format) and ``ndof``, and implements
``_Q``, ``_S`` and ``_Sdot`` on already validated arrays; it may override ``_evaluate`` when
the three share work (and ``_reparameterize`` when it has charts to leave). For Part 3 it
implements ``_dS_dq`` and ``_dSdot_dq`` (and optionally ``_dQ_dq``), and ``_singularity``
when its coordinates have a singular set. The public methods check their arguments first,
and the derivative methods refuse a configuration at a chart's singularity (see
:data:`redmax_edu.lie.SINGULAR_DET`).

Taught in book/02_reduced/04_joints (Q, S, Sdot); the derivatives (§3.2 of the writeup) are
taught in book/03_differentiable/02_joint_derivatives.
"""

import numpy as np

from .._validate import as_array
from ..lie import SINGULAR_DET, ad_unchecked, adjoint_unchecked, hat_unchecked

__all__ = ["Joint", "build_joint", "spec_array", "check_keys", "COMMON_JOINT_KEYS",
           "adjoint_derivative", "adjoint_derivative_stack", "adjoint_dot_derivative_stack"]

#: The generators of so(3), stacked derivative index last: ``GENERATORS[:, :, k] = brac(e_k)``
#: (k = x, y, z), the derivative of ``brac(w)`` in ``w_k``.
GENERATORS = np.moveaxis(hat_unchecked(np.eye(3)), 0, -1)
GENERATORS.setflags(write=False)


def adjoint_derivative(Q, dQ):
    """The derivative of ``Ad(Q)`` from that of ``Q``: the product rule on Eq. (1.14).

    With ``Q = [[R, p], [0, 1]]`` and ``Ad(Q) = [[R, 0], [[p] R, R]]``,
    ``dAd = [[dR, 0], [[dp] R + [p] dR, dR]]`` for every slice of ``dQ``.

    Parameters
    ----------
    Q : ndarray, shape (4, 4)
    dQ : ndarray, shape (4, 4, n)
        Derivative index last.

    Returns
    -------
    ndarray, shape (6, 6, n)
    """
    return np.moveaxis(adjoint_derivative_stack(Q, np.moveaxis(dQ, -1, 0)), 0, -1)


def adjoint_derivative_stack(Q, dQ):
    """:func:`adjoint_derivative` with the derivative index first: ``dQ`` (n, 4, 4) -> (n, 6, 6).

    The layout in which Algorithm 11 multiplies the slices (a stack of matrices for matmul).
    """
    R, p = Q[:3, :3], Q[:3, 3]
    dR, dp = dQ[:, :3, :3], dQ[:, :3, 3]
    dA = np.zeros((dQ.shape[0], 6, 6), dtype=np.result_type(Q, dQ))
    dA[:, :3, :3] = dR
    dA[:, 3:, 3:] = dR
    dA[:, 3:, :3] = hat_unchecked(dp) @ R + hat_unchecked(p) @ dR
    return dA


def adjoint_dot_derivative_stack(Q, S, dA, H, qdot):
    """``dAdot/dq_k = dA/dq_k ad(S qdot) + A ad(d(S qdot)/dq_k)`` (Eq. 3.13-3.14, see
    :meth:`Joint.dAdot_dq`), the derivative index first.

    Parameters
    ----------
    Q : ndarray, shape (4, 4)
    S : ndarray, shape (6, ndof)
    dA : ndarray, shape (ndof, 6, 6)
        ``dA/dq`` from :func:`adjoint_derivative_stack`.
    H : ndarray, shape (6, ndof, ndof)
        The joint Hessian ``dS/dq``.
    qdot : ndarray, shape (ndof,)

    Returns
    -------
    ndarray, shape (ndof, 6, 6)
    """
    twist_rate = (np.swapaxes(H, 1, 2) @ qdot).T  # row k: d(S qdot)/dq_k
    return dA @ ad_unchecked(S @ qdot) + adjoint_unchecked(Q) @ ad_unchecked(twist_rate)


#: Keys every joint spec may carry besides its own (the model reads them: §2.5 springs).
COMMON_JOINT_KEYS = ("type", "T_parent_joint", "stiffness", "damping", "rest")


def check_keys(spec, allowed, where):
    """Refuse keys of ``spec`` not in ``allowed``, naming ``where`` and the closest valid key.

    A typo such as ``"stifness"`` would otherwise be ignored silently.
    """
    import difflib

    for key in spec:
        if key not in allowed:
            close = difflib.get_close_matches(str(key), [str(k) for k in allowed], n=1, cutoff=0.6)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise ValueError(f"{where}: unknown field {key!r}{hint} (valid fields: {', '.join(allowed)})")


def build_joint(spec, where, types, common):
    """The joint of scene-format dict ``spec``, one of ``types`` (a dict kind -> class), whose spec
    may carry the keys ``common`` besides its type's own; errors name ``where``."""
    if not isinstance(spec, dict):
        raise ValueError(f"{where}: must be a dict with a 'type' field, got {type(spec).__name__}")
    if "type" not in spec:
        raise ValueError(f"{where}: missing field 'type'")
    kind = spec["type"]
    if not isinstance(kind, str) or kind not in types:
        raise ValueError(f"{where}: unknown joint type {kind!r}; known types: {', '.join(types)}")
    check_keys(spec, tuple(common) + types[kind].spec_keys, where)
    return types[kind].from_spec(spec, where)


def spec_array(spec, key, shape, where, default=None):
    """Read ``spec[key]`` as a float array of ``shape``; errors name ``where`` and the field."""
    if key not in spec:
        if default is not None:
            return np.array(default, dtype=float)
        raise ValueError(f"{where}: missing field '{key}'")
    try:
        return as_array(spec[key], shape, key, real=True)
    except ValueError as err:
        raise ValueError(f"{where}: {err}") from None


class Joint:
    """Base class of the joints. Instances are immutable; equal specs give equal joints.

    Each joint gives the three terms of Eq. (2.24): ``Q``, ``S`` and ``Sdot``."""

    kind = None
    ndof = 0
    #: Whether the joint has singular coordinates that :meth:`reparameterize` may leave (the
    #: spherical joints); the integrators do not reparameterize models without such a joint.
    has_charts = False
    #: Whether ``S`` is the same at every ``q`` (and so never loses rank): the joints of §2.4.1-2.4.4.
    constant_jacobian = False
    #: The keys of this joint's scene format besides ``COMMON_JOINT_KEYS``.
    spec_keys = ()

    # --- the three quantities of Eq. (2.24), checked ------------------------------------
    def Q(self, q):
        """The joint transform ``Q(q)``, shape (4, 4)."""
        return self._Q(self._coordinates(q, "q"))

    def S(self, q):
        """The joint Jacobian ``S(q)``, shape (6, ndof): child twist = ``S @ qdot``."""
        return self._S(self._coordinates(q, "q"))

    def Sdot(self, q, qdot):
        """The time derivative of ``S`` along ``qdot``, shape (6, ndof)."""
        return self._Sdot(self._coordinates(q, "q"), self._coordinates(qdot, "qdot"))

    def evaluate(self, q, qdot):
        """``(Q, S, Sdot)`` in one call."""
        return self._evaluate(self._coordinates(q, "q"), self._coordinates(qdot, "qdot"))

    # --- their derivatives in q (§3.2), checked -----------------------------------------
    def dQ_dq(self, q):
        """The derivative of the joint transform, shape (4, 4, ndof): ``[:, :, k] = dQ/dq_k``.

        For every joint ``dQ/dq_k = Q [S_k]`` (Eq. 2.31); the revolute, prismatic, planar,
        translational, universal and Euler joints use the closed forms of Eq. (3.16)-(3.29),
        composite joints the product rule on ``Q = Q_1 ... Q_m`` (Eq. 2.53).

        Parameters
        ----------
        q : array_like, shape (ndof,)
            Real, or complex for the complex step.

        Returns
        -------
        ndarray, shape (4, 4, ndof)

        Raises
        ------
        ValueError
            If q has the wrong shape or non-finite entries, or lies at a chart's singularity.

        Examples
        --------
        >>> from redmax_edu.joints import Prismatic
        >>> Prismatic([0, 0, 1]).dQ_dq([0.4])[:3, 3, 0]
        array([0., 0., 1.])
        """
        return self._dQ_dq(self._regular(q))

    def dA_dq(self, q):
        """The derivative of the joint's adjoint ``A = Ad(Q)``, shape (6, 6, ndof) (Eq. 3.7).

        ``A = [[R, 0], [[p] R, R]]`` (Eq. 1.14) is differentiated slice by slice from
        :meth:`dQ_dq` by the product rule: ``dA/dq_k = [[dR, 0], [[dp] R + [p] dR, dR]]``,
        the rule behind Eq. (3.16), (3.18), (3.20), (3.22), (3.25), (3.29), (3.41) and (3.48).
        It equals ``A ad(S_k)`` (Eq. 1.18 with the twist ``S_k``).

        Parameters
        ----------
        q : array_like, shape (ndof,)

        Returns
        -------
        ndarray, shape (6, 6, ndof)

        Examples
        --------
        A revolute joint: ``dA/dq = [[R [a], 0], [0, R [a]]]`` (Eq. 3.16), so at q = 0 the
        two diagonal blocks are ``[a]``.

        >>> from redmax_edu.joints import Revolute
        >>> dA = Revolute([0, 0, 1]).dA_dq([0.0])[:, :, 0]
        >>> bool(np.array_equal(dA[:3, :3], dA[3:, 3:])), dA[:3, :3].tolist()
        (True, [[0.0, -1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 0.0]])
        """
        q = self._regular(q)
        return adjoint_derivative(self._Q(q), self._dQ_dq(q))

    def dS_dq(self, q):
        """The joint Hessian, shape (6, ndof, ndof): ``[:, j, k] = dS_j/dq_k`` (Eq. 3.10).

        Zero for the joints whose Jacobian is constant (§3.2.1-3.2.4); Eq. (3.27) for Euler
        angles, (3.30) for the universal joint, (3.34) for exponential coordinates (here in
        closed form, the small angles by series), (3.45) and (3.52) for the free joints as
        instances of the composite rule, and Alg. 3-4 for the spline joints.

        The Hessian is not symmetric in (j, k): ``dS_j/dq_k - dS_k/dq_j = ad(S_j) S_k``,
        the bracket of the two columns (zero when they commute, as for the free 2D joint's
        two translations).

        Parameters
        ----------
        q : array_like, shape (ndof,)

        Returns
        -------
        ndarray, shape (6, ndof, ndof)

        Examples
        --------
        The universal joint's first column ``(c2, 0, s2, 0, 0, 0)`` turns with q2 (Eq. 3.30);
        the check of :mod:`redmax_edu.checks` confirms it against central differences:

        >>> from redmax_edu.checks import check_derivative
        >>> from redmax_edu.joints import Universal
        >>> j, q = Universal(), np.array([0.3, 0.0])
        >>> j.dS_dq(q)[:3, 0, 1] + 0.0     # d/dq2 of (c2, 0, s2) at q2 = 0
        array([0., 0., 1.])
        >>> check_derivative(j.S, q, j.dS_dq(q)).ok
        True
        """
        return self._dS_dq(self._regular(q))

    def dSdot_dq(self, q, qdot):
        """The derivative of ``Sdot`` in q at fixed qdot, shape (6, ndof, ndof): ``[:, j, k] = dSdot_j/dq_k``.

        ``Sdot = sum_l dS/dq_l qdot_l`` (Eq. 3.39), so this is the second derivative of S
        contracted with qdot: ``dSdot_j/dq_k = sum_l d2S_j/(dq_l dq_k) qdot_l`` (Eq. 3.27 for
        XYZ Euler angles, Eq. 3.30 and 3.46 for the universal and free 2D joints).

        Parameters
        ----------
        q, qdot : array_like, shape (ndof,)

        Returns
        -------
        ndarray, shape (6, ndof, ndof)
        """
        q, qdot = self._regular(q), self._coordinates(qdot, "qdot")
        return self._dSdot_dq(q, qdot)

    def dSdot_dqdot(self, q, qdot):
        """The derivative of ``Sdot`` in qdot, shape (6, ndof, ndof): ``[:, j, k] = dSdot_j/dqdot_k``.

        ``Sdot`` is linear in qdot with coefficients ``dS/dq`` (Eq. 3.39), so this equals
        :meth:`dS_dq` for every joint; qdot is checked but does not enter.

        Parameters
        ----------
        q, qdot : array_like, shape (ndof,)

        Returns
        -------
        ndarray, shape (6, ndof, ndof)

        Examples
        --------
        >>> from redmax_edu.joints import SphericalExp
        >>> j, q = SphericalExp(), np.array([0.1, -0.2, 0.3])
        >>> bool(np.array_equal(j.dSdot_dqdot(q, [1.0, 2.0, 3.0]), j.dS_dq(q)))
        True
        """
        q, qdot = self._regular(q), self._coordinates(qdot, "qdot")
        H = self._dS_dq(q)
        return H.astype(np.result_type(H, qdot), copy=False)

    def dAdot_dq(self, q, qdot):
        """The derivative of ``Adot`` in q at fixed qdot, shape (6, 6, ndof) (Eq. 3.13-3.14).

        ``Adot = A ad(S qdot)`` (Eq. 1.18 with the joint's twist ``S qdot``; ``lie.adjoint_dot``),
        so ``dAdot/dq_k = dA/dq_k ad(S qdot) + A ad(d(S qdot)/dq_k)`` with
        ``d(S qdot)/dq_k = sum_j dS_j/dq_k qdot_j``. Algorithm 11 uses it (line 9).

        Parameters
        ----------
        q, qdot : array_like, shape (ndof,)

        Returns
        -------
        ndarray, shape (6, 6, ndof)
        """
        return np.moveaxis(self._derivatives(self._regular(q), self._coordinates(qdot, "qdot"))[2], 0, -1)

    def derivatives(self, q, qdot=None):
        """``(dA/dq, dS/dq, dAdot/dq, dSdot/dq)`` in one call: what Algorithm 11 needs per joint.

        The same arrays as :meth:`dA_dq`, :meth:`dS_dq`, :meth:`dAdot_dq` and :meth:`dSdot_dq`,
        with the arguments checked once and ``Q``, ``dQ/dq`` and the Hessian computed once.
        Without ``qdot`` the last two are None.

        Parameters
        ----------
        q : array_like, shape (ndof,)
        qdot : array_like, shape (ndof,), optional

        Returns
        -------
        tuple of ndarray
            Shapes (6, 6, ndof), (6, ndof, ndof), (6, 6, ndof), (6, ndof, ndof).

        Examples
        --------
        >>> from redmax_edu.joints import Universal
        >>> j, q, qdot = Universal(), np.array([0.3, -0.2]), np.array([1.0, 2.0])
        >>> dA, dS, dAdot, dSdot = j.derivatives(q, qdot)
        >>> bool(np.array_equal(dAdot, j.dAdot_dq(q, qdot))), bool(np.array_equal(dS, j.dS_dq(q)))
        (True, True)
        """
        q = self._regular(q)
        dA, H, dAdot, dSdot = self._derivatives(q, None if qdot is None else self._coordinates(qdot, "qdot"))
        return np.moveaxis(dA, 0, -1), H, None if dAdot is None else np.moveaxis(dAdot, 0, -1), dSdot

    def _derivatives(self, q, qdot=None):
        """:meth:`derivatives` of checked coordinates off the singular set, with ``dA/dq`` and
        ``dAdot/dq`` in the layout Algorithm 11 multiplies: the derivative index first, (ndof, 6, 6).

        A joint whose quantities share work (a composite) overrides this to compute them once.
        """
        Q, H = self._Q(q), self._dS_dq(q)
        dA = adjoint_derivative_stack(Q, np.moveaxis(self._dQ_dq(q), -1, 0))
        if qdot is None:
            return dA, H, None, None
        return dA, H, adjoint_dot_derivative_stack(Q, self._S(q), dA, H, qdot), self._dSdot_dq(q, qdot)

    # --- chart changes (spherical joints): identity by default ---------------------------
    def reparameterize(self, q, qdot):
        """Return ``(joint, q, qdot)`` describing the same motion away from a singularity.

        Most joints have no singular coordinates and return themselves unchanged; the
        spherical joints switch chart (Euler angles) or shorten the rotation vector
        (exponential coordinates) here, §2.4.5 and §2.4.8.
        """
        q, qdot = self._coordinates(q, "q", real=True), self._coordinates(qdot, "qdot", real=True)
        return self._reparameterize(q, qdot)

    # --- scene format -------------------------------------------------------------------
    def spec(self):
        """The joint as a scene-format dict (without ``T_parent_joint``)."""
        return {"type": self.kind}

    @classmethod
    def from_spec(cls, spec, where):
        """Build the joint from a scene-format dict; ``where`` names it in error messages."""
        return cls()

    # --- for subclasses -----------------------------------------------------------------
    def _coordinates(self, x, name, real=False):
        return as_array(x, (self.ndof,), f"{name} of {self.kind} joint", real)

    def _regular(self, q):
        """Checked ``q`` for the derivative methods: refused at a chart's singularity."""
        return self._refuse_singular(self._coordinates(q, "q"))

    def _refuse_singular(self, q):
        """``q`` (checked) itself, or a ValueError if it lies at a chart's singularity."""
        reason = self._singularity(q)
        if reason:
            raise ValueError(f"argument 'q' of {self.kind} joint: {reason}; its derivatives are not "
                             f"taken at a singular configuration (|det S| < SINGULAR_DET = "
                             f"{SINGULAR_DET:.2g}): move off it first with reparameterize(q, qdot)")
        return q

    def _singularity(self, q):
        """``None``, or a sentence saying why ``q`` is at a singularity of the coordinates."""
        return None

    def _dQ_dq(self, q):
        """``dQ/dq_k = Q [S_k]`` (Eq. 2.31): exact for every joint, given its ``_Q`` and ``_S``."""
        Q, S = self._Q(q), self._S(q)
        twists = np.zeros((4, 4, self.ndof), dtype=S.dtype)
        twists[:3, :3] = np.moveaxis(hat_unchecked(S[:3].T), 0, -1)
        twists[:3, 3] = S[3:]
        return np.einsum("ab,bck->ack", Q, twists)

    def _dS_dq(self, q):
        raise NotImplementedError

    def _dSdot_dq(self, q, qdot):
        raise NotImplementedError

    def _Q(self, q):
        raise NotImplementedError

    def _S(self, q):
        raise NotImplementedError

    def _Sdot(self, q, qdot):
        raise NotImplementedError

    def _evaluate(self, q, qdot):
        return self._Q(q), self._S(q), self._Sdot(q, qdot)

    def _reparameterize(self, q, qdot):
        """:meth:`reparameterize` of checked coordinates (real arrays of shape (ndof,))."""
        return self, q, qdot

    def __repr__(self):
        fields = {k: v for k, v in self.spec().items() if k != "type"}
        inner = ", ".join(f"{k}={np.round(v, 6).tolist() if isinstance(v, np.ndarray) else v!r}"
                          for k, v in fields.items())
        return f"{type(self).__name__}({inner})"

    def __eq__(self, other):
        if type(self) is not type(other):
            return NotImplemented
        a, b = self.spec(), other.spec()
        return a.keys() == b.keys() and all(np.array_equal(a[k], b[k]) if isinstance(a[k], np.ndarray)
                                            else a[k] == b[k] for k in a)

    def __hash__(self):
        return hash((type(self), repr(self)))
