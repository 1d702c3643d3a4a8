"""A system of rigid bodies in maximal coordinates: bodies, forces, joints and contacts.

Taught in book/01_maximal/08_integration.
"""

from dataclasses import dataclass, field

import numpy as np
import scipy.linalg

from .._validate import ROTATION_TOL, ArgumentTypeError, as_real, as_sequence, check_rotation_block
from ..units import GRAVITY
from .body import RigidBody, spatial_momentum
from .constraints import BodyContact, GroundContact, Joint
from .forces import Force, ForceTerms, coriolis_terms, gravity_terms

__all__ = ["System"]


@dataclass(frozen=True)
class System:
    """Rigid bodies with the forces, joints and contacts acting on them.

    Gravity and the Coriolis wrench of each body (Eq. 1.21-1.22) are always included;
    ``forces`` adds the rest (springs, damping, penalty contact, ...).

    Parameters
    ----------
    bodies : sequence of RigidBody
    forces : sequence of Force
    joints : sequence of Joint
    contacts : sequence of GroundContact or BodyContact
    gravity : array_like, shape (3,)
        World gravity, m/s^2 (zero to switch it off).

    Examples
    --------
    >>> body = RigidBody("ball", 1.0, [0.4, 0.4, 0.4])
    >>> system = System([body])
    >>> E, phi = system.rest_state()
    >>> system.evaluate(E, phi).f
    array([ 0.  ,  0.  ,  0.  ,  0.  ,  0.  , -9.81])
    """

    bodies: tuple
    forces: tuple = ()
    joints: tuple = ()
    contacts: tuple = ()
    gravity: np.ndarray = field(default_factory=lambda: GRAVITY.copy())
    _inertias: np.ndarray = field(init=False, repr=False, compare=False)
    _weights: np.ndarray = field(init=False, repr=False, compare=False)
    _mass_matrix: np.ndarray = field(init=False, repr=False, compare=False)

    def __post_init__(self):
        for name, what in (("bodies", "RigidBody"), ("forces", "Force"), ("joints", "Joint"),
                           ("contacts", "GroundContact or BodyContact")):
            object.__setattr__(self, name, as_sequence(getattr(self, name), name, what))
        object.__setattr__(self, "gravity", as_real(self.gravity, (3,), "gravity"))
        n = len(self.bodies)
        if n == 0:
            raise ValueError("a system needs at least one body")
        for k, body in enumerate(self.bodies):
            if not isinstance(body, RigidBody):
                raise ArgumentTypeError(f"argument 'bodies': bodies[{k}] is a {type(body).__name__}, "
                                        "not a RigidBody")
        names = [b.name for b in self.bodies]
        if len(set(names)) != n:
            raise ValueError(f"body names must be unique, got {names}")
        for k, force in enumerate(self.forces):
            if not isinstance(force, Force):
                raise ArgumentTypeError(f"argument 'forces': forces[{k}] must be a Force object, "
                                        f"got {type(force).__name__}")
            force.check_bodies(n)
        for joint in self.joints:
            if not isinstance(joint, Joint) or joint.a >= n or joint.b >= n:
                raise ValueError(f"{getattr(joint, 'label', joint)} refers to a body the system lacks")
        for contact in self.contacts:
            if not isinstance(contact, (GroundContact, BodyContact)) or max(
                    contact.body, getattr(contact, "j", 0)) >= n:
                raise ValueError(f"contact on body {getattr(contact, 'body', '?')} refers to a missing body")
        # constants of the bodies' own terms (Eq. 1.21-1.24): inertias, weights m g, the mass matrix
        inertias = np.stack([b.M for b in self.bodies])
        weights = np.array([b.mass * self.gravity for b in self.bodies])
        for name, value in (("_inertias", inertias), ("_weights", weights),
                            ("_mass_matrix", scipy.linalg.block_diag(*inertias))):
            value.setflags(write=False)
            object.__setattr__(self, name, value)

    @property
    def n(self):
        """Number of bodies."""
        return len(self.bodies)

    def mass_matrix(self):
        """The block-diagonal maximal mass matrix, shape (6n, 6n)."""
        return self._mass_matrix.copy()

    def rest_state(self):
        """All bodies at the world origin, at rest: ``E`` (n, 4, 4) and ``phi`` (n, 6)."""
        return np.stack([np.eye(4)] * self.n), np.zeros((self.n, 6))

    def check_state(self, E, phi):
        """Validate a state; returns float arrays ``E`` (n, 4, 4) and ``phi`` (n, 6).

        Raises ValueError naming the body whose pose is not rigid or whose values are not finite.
        """
        shapes = []
        for x, name in ((E, "E"), (phi, "phi")):
            try:
                shapes.append(np.shape(x))
            except ValueError as err:  # ragged nested lists
                raise ValueError(f"argument '{name}' is not a numeric array: {err}") from None
        if shapes[0] != (self.n, 4, 4) or shapes[1] != (self.n, 6):
            raise ValueError(f"state must have E of shape ({self.n}, 4, 4) and phi of shape ({self.n}, 6), "
                             f"got {shapes[0]} and {shapes[1]}")
        try:
            E, phi = as_real(E, None, "E"), as_real(phi, None, "phi")
        except ValueError as whole:  # find the body at fault
            for i, body in enumerate(self.bodies):
                try:
                    as_real(E[i], (4, 4), f"E[{i}]")
                    as_real(phi[i], (6,), f"phi[{i}]")
                except ValueError as err:
                    msg = str(err).replace("NaN or infinite entries", "NaN or infinite values")
                    raise ValueError(f"body {body.name!r}: the state is not valid: {msg}") from None
            raise whole from None
        # Eq. (1.1)-(1.3) for every body at once; the loop below runs only to name a body at fault
        R = E[:, :3, :3]
        if (np.abs(E[:, 3] - (0.0, 0.0, 0.0, 1.0)).max() <= ROTATION_TOL
                and np.abs(np.swapaxes(R, 1, 2) @ R - np.eye(3)).max() <= ROTATION_TOL
                and not (np.linalg.det(R) < 0).any()):
            return E, phi
        for i, body in enumerate(self.bodies):
            try:  # Eq. (1.1)-(1.3): last row [0, 0, 0, 1] and rotation block
                if np.abs(E[i, 3] - (0.0, 0.0, 0.0, 1.0)).max() > ROTATION_TOL:
                    raise ValueError(f"its last row must be [0, 0, 0, 1], got {E[i, 3].tolist()}")
                check_rotation_block(E[i, :3, :3], f"E[{i}]")
            except ValueError as err:
                raise ValueError(f"body {body.name!r}: pose is not a rigid transform: {err}") from None
        return E, phi

    def evaluate(self, E, phi):
        """Sum of all forces with their stiffness and damping matrices (:class:`.ForceTerms`)."""
        return self._sum_forces(E, phi, derivatives=True)

    def wrench(self, E, phi):
        """The sum of all forces ``f`` (6n,) alone, ``evaluate(E, phi).f``: for the explicit integrators."""
        return self._sum_forces(E, phi, derivatives=False).f

    def _sum_forces(self, E, phi, derivatives):
        total = ForceTerms.zeros(self.n)
        bodies = np.arange(self.n)
        f, D = coriolis_terms(self._inertias, phi, derivatives)  # Eq. (1.21), every body at once
        total.add_body_terms(bodies, f, D=D)
        if np.any(self.gravity != 0):
            f, K = gravity_terms(E[:, :3, :3], self._weights)  # Eq. (1.34)-(1.35)
            total.add_body_terms(bodies, f, K if derivatives else None)
        for force in self.forces:
            if not derivatives:
                total.f += force.wrench(E, phi)
                continue
            terms = force.evaluate(E, phi)
            total.f += terms.f
            total.K += terms.K
            total.D += terms.D
        return total

    def kinetic_energy(self, phi):
        """Sum of ``phi_i^T M_i phi_i / 2``."""
        return 0.5 * sum(float(p @ M @ p) for M, p in zip(self._inertias, phi, strict=True))

    def potential_energy(self, E):
        """Gravity plus the potential energy of every conservative force."""
        gravity = -np.einsum("ni,ni->", self._weights, E[:, :3, 3])  # -m g . p summed over the bodies
        return float(gravity + sum(f.potential_energy(E) for f in self.forces))

    def energy(self, E, phi):
        """Total mechanical energy."""
        return self.kinetic_energy(phi) + self.potential_energy(E)

    def momentum(self, E, phi):
        """Total spatial momentum in world coordinates (angular about the origin, linear), shape (6,)."""
        return sum(spatial_momentum(E[i], M, phi[i]) for i, M in enumerate(self._inertias))
