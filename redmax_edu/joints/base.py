"""The joint interface of §2.4: every joint is ``Q(q)``, ``S(q)`` and ``Sdot(q, qdot)``.

A joint sits between a parent frame and a child frame. Its transform relative to its rest
pose is ``Q(q)`` (4x4, Eq. 2.23), and its *joint Jacobian* ``S(q)`` (6 x ndof) maps the joint
velocity to the twist of the child frame in its own coordinates,
``[S qdot] = Q^{-1} dQ/dt`` (Eq. 2.24, 2.31). ``Sdot = dS/dt`` enters the Jacobian's time
derivative (Eq. 2.16).

A subclass sets ``kind`` (its name in the scene format) and ``ndof``, and implements
``_Q``, ``_S`` and ``_Sdot`` on already validated arrays; it may override ``_evaluate`` when
the three share work (and ``_reparameterize`` when it has charts to leave). The public ``Q``,
``S``, ``Sdot`` (and ``reparameterize``) check their arguments first.

Taught in book/02_reduced/04_joints.
"""

import numpy as np

from .._validate import as_array

__all__ = ["Joint", "spec_array", "check_keys", "COMMON_JOINT_KEYS"]

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
    """Base class of the joints. Instances are immutable; equal specs give equal joints."""

    kind = None
    ndof = 0
    #: Whether the joint has singular coordinates that :meth:`reparameterize` may leave (the
    #: spherical joints); the integrators do not reparameterize models without such a joint.
    has_charts = False
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
