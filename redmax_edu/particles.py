"""A chain of point masses stepped by the four integrators of the ArtiSynth notes (§0.9-0.10).

The state is the node positions ``x`` and velocities ``v`` (k, 3). The forces are the strain
springs of :class:`redmax_edu.deformable.DeformableSpring` (with their ``K = df/dx`` and
``D = df/dv``) and gravity. Every method finds the new velocity from one linear system
``A v+ = b`` (or two, for Bridson-Marino) and the constraints of §0.10:

* a bilateral pin holding node 0 at a world point (three rows ``G v = r_G``);
* a floor ``z >= floor`` for every node (unilateral rows ``N v >= r_N``);
* friction on the floor, either *box* friction: tangential impulses bounded by ``mu`` times an
  estimate of the normal impulse (a frictionless solve of the same step), or the
  Anitescu-Stewart *cone*: impulses along ``directions`` tangents whose sum is at most ``mu``
  times the normal impulse of the same step, with maximal dissipation.

Without contacts the KKT system is solved directly (:func:`redmax_edu.maximal.solve.kkt_solve`);
with contacts and box friction the box LCP in the impulses goes to projected Gauss-Seidel
(:func:`redmax_edu.maximal.solve.projected_gauss_seidel`); the friction-cone LCP goes to
Lemke's method (:func:`redmax_edu.maximal.pivoting.lemke`).

Taught in book/appendix/engineer_integrators and book/appendix/engineer_friction_cone.
"""

from dataclasses import dataclass, field

import numpy as np

from ._validate import as_flag, as_index, as_real, as_scalar
from .deformable import DeformableSpring
from .maximal.pivoting import lemke, mixed_lcp_to_lcp
from .maximal.solve import kkt_solve, projected_gauss_seidel

__all__ = ["METHODS", "METHOD_LABELS", "FRICTIONS", "ParticleChain", "ChainTrajectory", "friction_directions",
           "chain_step", "simulate_chain"]

#: The integrators of the notes' §0.9, in their order.
METHODS = ("symplectic", "implicit", "trapezoidal", "bridson_marino")

#: How the page names them.
METHOD_LABELS = {
    "symplectic": "symplectic Euler",
    "implicit": "implicit Euler",
    "trapezoidal": "trapezoidal",
    "bridson_marino": "Bridson-Marino",
}

#: The friction models of §0.10: box friction (Eq. 0.5-0.6) and the Anitescu-Stewart cone.
FRICTIONS = ("box", "cone")

#: A run is stopped as diverged when a node moves faster than this (m/s).
DIVERGED = 1e6


@dataclass(frozen=True)
class ParticleChain:
    """A chain of point masses on strain springs, with an optional pin, floor and friction.

    Parameters
    ----------
    spring : DeformableSpring
        The chain; its nodes are all free (no attachments: the pin is a constraint here).
    gravity : array_like, shape (3,)
        m/s^2.
    pin : array_like, shape (3,), optional
        World point at which node 0 is held (bilateral constraint).
    floor : float, optional
        Height of a floor ``z >= floor`` (unilateral constraints), in m.
    mu : float
        Friction coefficient on the floor.
    friction : {"box", "cone"}
        Box friction, or the Anitescu-Stewart polyhedral cone (notes §0.10).
    directions : int
        Number of tangent directions of the polyhedral cone (>= 3), at equal angles from +x.
    """

    spring: DeformableSpring
    gravity: np.ndarray = (0.0, 0.0, -9.81)
    pin: np.ndarray = None
    floor: float = None
    mu: float = 0.0
    friction: str = "box"
    directions: int = 4
    _constants: dict = field(init=False, repr=False, compare=False)

    def __post_init__(self):
        if not isinstance(self.spring, DeformableSpring):
            raise ValueError(f"argument 'spring' must be a DeformableSpring, "
                             f"got {type(self.spring).__name__}")
        if self.spring.attachments:
            raise ValueError(f"argument 'spring': deformable {self.spring.name!r} has attached ends; a "
                             "particle chain holds its nodes by constraints ('pin') instead")
        object.__setattr__(self, "gravity", as_real(self.gravity, (3,), "gravity"))
        if self.pin is not None:
            object.__setattr__(self, "pin", as_real(self.pin, (3,), "pin"))
        if self.floor is not None:
            object.__setattr__(self, "floor", as_scalar(self.floor, "floor"))
        object.__setattr__(self, "mu", as_scalar(self.mu, "mu", minimum=0.0))
        if self.friction not in FRICTIONS:
            raise ValueError(f"argument 'friction' must be one of {', '.join(FRICTIONS)}, "
                             f"got {self.friction!r}")
        object.__setattr__(self, "directions", as_index(self.directions, "directions", minimum=3))
        k, count = self.spring.nnodes, self.directions
        identity = np.eye(3 * k)
        cone = np.zeros((k, count, k, 3))  # the friction cone's tangent rows, `count` per node
        cone[np.arange(k), :, np.arange(k), :] = friction_directions(count)
        object.__setattr__(self, "_constants", {  # what every step reuses
            "M": np.diag(np.full(3 * k, self.spring.node_mass)),
            "weights": np.tile(self.spring.node_mass * self.gravity, k),
            "pin": identity[:3],  # the rows of node 0
            "normal": identity[2::3],  # the z row of every node
            "tangent": np.delete(identity, np.s_[2::3], axis=0),  # its x and y rows
            "cone": cone.reshape(k * count, 3 * k),
            "cone_sums": np.kron(np.eye(k), np.ones((count, 1))),  # E: sums each node's directions
        })
        for value in self._constants.values():
            value.setflags(write=False)

    @property
    def mass(self):
        """The (diagonal) mass of each coordinate, shape (3k,)."""
        return np.full(3 * self.spring.nnodes, self.spring.node_mass)

    def forces(self, x, v):
        """``f`` (3k,), ``K = df/dx`` and ``D = df/dv`` (3k, 3k): springs plus gravity."""
        terms = self.spring.elastic(x, v)
        return terms.f.ravel() + self._constants["weights"], terms.K, terms.D

    def energy(self, x, v):
        """Kinetic + elastic + gravitational energy (J)."""
        m = self.spring.node_mass
        return (0.5 * m * float(np.sum(v * v)) + self.spring.elastic(x, v, derivatives=False).energy
                - m * float(np.sum(x @ self.gravity)))

    def check_state(self, x, v):
        k = self.spring.nnodes
        return as_real(x, (k, 3), "x"), as_real(v, (k, 3), "v")


def friction_directions(count):
    """The tangent directions of a polyhedral friction cone on a horizontal floor (notes §0.10).

    Parameters
    ----------
    count : int
        Number of directions, >= 3.

    Returns
    -------
    ndarray, shape (count, 3)
        Unit vectors ``(cos a_j, sin a_j, 0)`` with ``a_j = 2 pi j / count``. Their convex hull,
        scaled by ``mu`` times the normal impulse, is the polygon inscribed in the circular
        friction cone's cross-section.

    Examples
    --------
    >>> friction_directions(4).round(12) + 0.0
    array([[ 1.,  0.,  0.],
           [ 0.,  1.,  0.],
           [-1.,  0.,  0.],
           [ 0., -1.,  0.]])

    Taught in book/appendix/engineer_friction_cone.
    """
    count = as_index(count, "count", minimum=3)
    angles = 2 * np.pi * np.arange(count) / count
    return np.column_stack([np.cos(angles), np.sin(angles), np.zeros(count)])


def _cone_velocity(chain, A, b, G, r_G, N, r_N):
    """The velocity solve with the Anitescu-Stewart friction cone (notes §0.10), as one LCP.

    Impulses ``theta`` (normal, one per node), ``phi`` (one per node and tangent direction) and
    a slack ``xi`` per node: ``A v = b + G^T lam + N^T theta + D^T phi`` with

        nu    = N v - r_N           >= 0  perp  theta >= 0   (no penetration)
        sigma = D v + E xi          >= 0  perp  phi   >= 0   (maximal dissipation)
        gamma = mu theta - E^T phi  >= 0  perp  xi    >= 0   (inside the cone)

    where ``E`` sums each node's directions. Eliminating ``(v, lam)`` through the KKT matrix
    (:func:`redmax_edu.maximal.pivoting.mixed_lcp_to_lcp`) leaves an LCP in
    ``(theta, phi, xi)`` whose matrix is copositive but not a P-matrix: Lemke's method solves it.
    """
    k, count = len(N), chain.directions
    rows = np.vstack([N, chain._constants["cone"]])  # N and D
    L0, q0, recover = mixed_lcp_to_lcp(A, b, G, r_G, rows, np.concatenate([r_N, np.zeros(k * count)]))
    E = chain._constants["cone_sums"]
    n_rows = len(rows)
    L = np.zeros((n_rows + k, n_rows + k))
    L[:n_rows, :n_rows] = L0
    L[k:n_rows, n_rows:] = E
    L[n_rows:, :k] = chain.mu * np.eye(k)
    L[n_rows:, k:n_rows] = -E.T
    z = lemke(L, np.concatenate([q0, np.zeros(k)])).z
    return recover(z[:n_rows])[0]


def _constrained_velocity(chain, A, b, x, h):
    """Solve ``A v = b + C^T lam`` with the pin, floor and friction rows of §0.10 (Eq. 0.5-0.6)."""
    k = chain.spring.nnodes
    rows = chain._constants
    G = np.zeros((0, 3 * k))
    r_G = np.zeros(0)
    if chain.pin is not None:
        G = rows["pin"]
        r_G = -(x[0] - chain.pin) / h  # velocity that puts node 0 back on the pin
    if chain.floor is None:
        if len(G):
            return kkt_solve(A, b, G, r_G).phi
        return np.linalg.solve(A, b)
    gap = x[:, 2] - chain.floor
    N = rows["normal"]
    r_N = -gap / h  # a node may approach the floor by at most its gap in one step
    if chain.mu > 0 and chain.friction == "cone":
        return _cone_velocity(chain, A, b, G, r_G, N, r_N)
    T = rows["tangent"]  # x and y rows of every node
    C = np.vstack([G, N, T])
    AinvCt = np.linalg.solve(A, C.T)
    S = C @ AinvCt
    q = AinvCt.T @ b - np.concatenate([r_G, r_N, np.zeros(2 * k)])
    nG = len(G)
    lower = np.concatenate([np.full(nG, -np.inf), np.zeros(k), np.zeros(2 * k)])
    upper = np.concatenate([np.full(nG, np.inf), np.full(k, np.inf), np.zeros(2 * k)])
    lam, _ = projected_gauss_seidel(S, q, lower, upper, iterations=5000, tol=1e-13)  # frictionless first
    if chain.mu > 0:
        bound = np.repeat(chain.mu * lam[nG: nG + k], 2)  # box from the estimated normal impulses
        lower[nG + k:], upper[nG + k:] = -bound, bound
        lam, _ = projected_gauss_seidel(S, q, lower, upper, z0=lam, iterations=5000, tol=1e-13)
    return np.linalg.solve(A, b + C.T @ lam)


def chain_step(chain, x, v, h, method="trapezoidal"):
    """One step of one of the notes' four integrators (§0.9), with the constraints of §0.10.

    With ``M`` the mass, ``f``, ``K = df/dx`` and ``D = df/dv`` at the start of the step:

    * symplectic Euler: ``M v+ = M v + h f``, ``x+ = x + h v+``;
    * implicit Euler: ``(M - h D - h^2 K) v+ = M v + h (f - D v)``, ``x+ = x + h v+``;
    * trapezoidal: ``(M - h/2 D - h^2/4 K) v+ = M v + h (f - D v / 2 + h K v / 4)``,
      ``x+ = x + h (v + v+) / 2``;
    * Bridson-Marino: ``(M - h/2 D) v' = (M - h/2 D) v + h/2 f``, constrained, ``x+ = x + h v'``,
      then ``(M - h/2 D) v+ = (M - h/2 D) v + h/2 (f + f(x+, v))``, constrained. ``K`` is not used.

    Each velocity solve takes the chain's pin, floor and friction (box, or the Anitescu-Stewart
    cone solved by Lemke's method: see :class:`ParticleChain`).

    Parameters
    ----------
    chain : ParticleChain
    x, v : array_like, shape (k, 3)
        Node positions (m) and velocities (m/s).
    h : float
        Step (s), > 0.
    method : str
        One of :data:`METHODS`.

    Returns
    -------
    x, v : ndarray, shape (k, 3)

    Raises
    ------
    ValueError
        For an unknown method, a bad argument, or a step that diverged.

    Examples
    --------
    A free falling pair of nodes: every method gives ``v+ = v + h g`` here.

    >>> pair = ParticleChain(DeformableSpring([[0, 0, 1.0], [1, 0, 1.0]], stiffness=10.0, mass=2.0))
    >>> x1, v1 = chain_step(pair, pair.spring.nodes, np.zeros((2, 3)), 0.1, "implicit")
    >>> v1[:, 2]
    array([-0.981, -0.981])

    Taught in book/appendix/engineer_integrators.
    """
    if method not in METHODS:
        raise ValueError(f"argument 'method' must be one of {', '.join(METHODS)}, got {method!r}")
    x, v = chain.check_state(x, v)
    return _chain_step(chain, x, v, as_scalar(h, "h", minimum=0.0, strict=True), method)


def _chain_step(chain, x, v, h, method):
    """:func:`chain_step` of a checked state, step and method."""
    M = chain._constants["M"]
    f, K, D = chain.forces(x, v)
    V = v.ravel()
    if method == "symplectic":
        Vn = _constrained_velocity(chain, M, M @ V + h * f, x, h)
        Xn = x.ravel() + h * Vn
    elif method == "implicit":
        Vn = _constrained_velocity(chain, M - h * D - h * h * K, M @ V + h * (f - D @ V), x, h)
        Xn = x.ravel() + h * Vn
    elif method == "trapezoidal":
        A = M - 0.5 * h * D - 0.25 * h * h * K
        Vn = _constrained_velocity(chain, A, M @ V + h * (f - 0.5 * D @ V + 0.25 * h * K @ V), x, h)
        Xn = x.ravel() + 0.5 * h * (V + Vn)
    else:  # Bridson-Marino
        A = M - 0.5 * h * D
        Vh = _constrained_velocity(chain, A, A @ V + 0.5 * h * f, x, h)
        Xn = x.ravel() + h * Vh
        f_new = chain.forces(Xn.reshape(x.shape), v)[0]
        Vn = _constrained_velocity(chain, A, A @ V + 0.5 * h * (f + f_new), Xn.reshape(x.shape), h)
    if not np.isfinite(Vn).all() or np.abs(Vn).max() > DIVERGED:
        raise ValueError(f"the {METHOD_LABELS[method]} step diverged (a node faster than {DIVERGED:g} m/s): "
                         "reduce 'h'")
    return Xn.reshape(x.shape), Vn.reshape(x.shape)


@dataclass
class ChainTrajectory:
    """Times (T,), positions and velocities (T, k, 3), energies (T,) of a simulated chain."""

    t: np.ndarray
    x: np.ndarray
    v: np.ndarray
    energy: np.ndarray

    @property
    def height(self):
        """Height of the chain's centre of mass (m), shape (T,)."""
        return self.x[:, :, 2].mean(axis=1)


def simulate_chain(chain, x0, v0, h, steps, method="trapezoidal", *, stop_on_divergence=False):
    """Take ``steps`` steps of :func:`chain_step` from ``(x0, v0)``.

    Parameters
    ----------
    chain : ParticleChain
    x0, v0 : array_like, shape (k, 3)
    h : float
    steps : int
    method : str
    stop_on_divergence : bool
        If true, a step that diverges ends the run (the trajectory stops before it) instead
        of raising ``ValueError``.

    Returns
    -------
    ChainTrajectory

    Examples
    --------
    >>> pair = ParticleChain(DeformableSpring([[0, 0, 1.0], [1, 0, 1.0]], stiffness=10.0, mass=2.0))
    >>> run = simulate_chain(pair, pair.spring.nodes, np.zeros((2, 3)), 0.01, 10, "bridson_marino")
    >>> bool(abs(run.energy[-1] - run.energy[0]) < 1e-9)   # free fall: exact for this method
    True

    Taught in book/appendix/engineer_integrators.
    """
    x, v = chain.check_state(x0, v0)
    if isinstance(steps, (bool, np.bool_)) or not isinstance(steps, (int, np.integer)) or steps < 1:
        raise ValueError(f"argument 'steps' must be a whole number >= 1, got {steps!r}")
    if method not in METHODS:
        raise ValueError(f"argument 'method' must be one of {', '.join(METHODS)}, got {method!r}")
    h = as_scalar(h, "h", minimum=0.0, strict=True)
    stop_on_divergence = as_flag(stop_on_divergence, "stop_on_divergence")
    xs, vs, es = [x], [v], [chain.energy(x, v)]
    for _ in range(steps):
        try:
            x, v = _chain_step(chain, x, v, h, method)
        except ValueError as err:
            if stop_on_divergence and "diverged" in str(err):
                break
            raise
        xs.append(x)
        vs.append(v)
        es.append(chain.energy(x, v))
    return ChainTrajectory(h * np.arange(len(xs)), np.array(xs), np.array(vs), np.array(es))
