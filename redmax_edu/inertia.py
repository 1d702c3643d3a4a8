"""Mass properties of rigid bodies: shapes, triangle meshes, composite bodies, principal axes.

This module is §1.7 of the writeup as code, with the spatial inertia about an arbitrary
point from the ArtiSynth notes (§0.1, reordered to our angular-first twists).

A body's mass properties are three things, held by :class:`MassProperties`: its mass ``m``,
its centre of mass ``c`` expressed in some frame F, and its rotational inertia ``J`` about
the centre of mass, with F's axes. The library's body frames sit at the centre of mass on
the principal axes, where the 6x6 spatial inertia is ``diag(I1, I2, I3, m, m, m)``
(Eq. 1.24); the functions here get a body there from whatever description is at hand:

* a primitive shape (:func:`cuboid`, :func:`cylinder`, :func:`sphere`, :func:`capsule`),
* a closed triangle mesh (:func:`mesh`, by the divergence theorem),
* several parts glued together (:func:`composite`, Eq. 1.25-1.26),

followed by :meth:`MassProperties.principal`, which finds the right-handed principal frame.

Conventions: SI units; twists are ``(omega, nu)``, angular part first; ``E_a_b`` maps
b-coordinates to a-coordinates and ``adjoint(E_a_b)`` is Eq. (1.14).

Taught in book/01_maximal/07_inertia.
"""

from dataclasses import dataclass

import numpy as np

from ._validate import as_int_array, as_real, as_transform
from .lie import adjoint, brac, inv_se3, unbrac

__all__ = [
    "MassProperties", "from_spatial_inertia", "composite",
    "cuboid", "cylinder", "sphere", "capsule", "mesh", "box_mesh",
    "SYMMETRY_RTOL", "TRIANGLE_RTOL",
]

#: Relative tolerance of the symmetry checks (of J and of a spatial inertia): round-off in a
#: sum of a few hundred transformed inertias stays orders of magnitude below it.
SYMMETRY_RTOL = 1e-9

#: Relative tolerance of the triangle inequality ``I_a + I_b >= I_c`` on principal moments.
#: A flat plate meets it with equality, so computed plates must not be rejected for round-off.
TRIANGLE_RTOL = 1e-9

# A smallest principal moment below this fraction of the largest is zero up to the round-off of
# the eigenvalue computation: the body is a point or a line, not a solid.
_DEGENERATE_RTOL = 8 * np.finfo(float).eps


def _prefix(name):
    return f"body {name!r}: " if name else ""


def _fmt(x):
    return f"{float(x):.6g}"


def _positive_scalar(value, what, prefix=""):
    """``value`` as a finite positive float, or a ValueError that names ``what``."""
    try:
        a = np.asarray(value)
        if a.shape != () or a.dtype.kind not in "iuf" or isinstance(value, (bool, np.bool_)):
            raise TypeError(value)  # complex, boolean, string, array: not a positive number
        x = float(a)
    except (TypeError, ValueError, OverflowError):
        raise ValueError(f"{prefix}{what} must be a positive number, got {value!r}") from None
    if not np.isfinite(x) or x <= 0:
        raise ValueError(f"{prefix}{what} must be positive and finite, got {value!r}")
    if x > _LARGEST:
        raise ValueError(f"{prefix}{what} is {x:.3g}, above {_LARGEST:g}: its volume or moments "
                         "(cubes and fifth powers) would overflow")
    return x


#: The largest length, mass or density a shape takes (a volume cubes a length, a moment multiplies it in).
_LARGEST = 1e50


def _frozen(a):
    a = np.array(a, dtype=float)
    a.flags.writeable = False
    return a


@dataclass(frozen=True, eq=False)
class MassProperties:
    """Mass, centre of mass and rotational inertia of a rigid body, expressed in a frame F.

    Parameters
    ----------
    mass : float
        Positive and finite (kg).
    com : array_like, shape (3,)
        The centre of mass in F coordinates (m).
    inertia : array_like, shape (3, 3)
        The rotational inertia about the centre of mass, with F's axes (kg m^2). It must be
        symmetric (to ``SYMMETRY_RTOL``), positive definite, and its principal moments must
        satisfy the triangle inequality ``I_a + I_b >= I_c`` (to ``TRIANGLE_RTOL``), which
        every solid obeys because ``I_a + I_b - I_c = 2 * integral of (distance along c)^2 dm``.
        A point mass or an infinitely thin rod has a zero moment: a degenerate limit,
        rejected because a body frame cannot be built on it.
    name : str, optional
        Used in error messages, ``"body 'head': ..."``.

    Raises
    ------
    ValueError
        Naming the field (and the body, when named) that is wrong.

    Examples
    --------
    >>> p = MassProperties(2.0, [0.0, 0.0, 0.1], np.diag([0.02, 0.02, 0.01]), name="puck")
    >>> p.mass, p.com
    (2.0, array([0. , 0. , 0.1]))
    >>> MassProperties(1.0, np.zeros(3), np.diag([1.0, 1.0, 3.0]), name="head")
    Traceback (most recent call last):
    ...
    ValueError: body 'head': inertia violates the triangle inequality (I1 + I2 = 2 < I3 = 3)

    Taught in book/01_maximal/07_inertia.
    """

    mass: float
    com: np.ndarray
    inertia: np.ndarray
    name: str = ""

    def __post_init__(self):
        prefix = _prefix(self.name)
        object.__setattr__(self, "mass", _positive_scalar(self.mass, "mass", prefix))
        try:
            com = as_real(self.com, (3,), "com")
            J = as_real(self.inertia, (3, 3), "inertia")
        except ValueError as err:
            raise ValueError(f"{prefix}{err}") from None
        if np.iscomplexobj(com) or np.iscomplexobj(J):
            raise ValueError(f"{prefix}com and inertia must be real")
        scale = np.abs(J).max()
        asym = np.abs(J - J.T).max()
        if asym > SYMMETRY_RTOL * scale:
            raise ValueError(f"{prefix}inertia is not symmetric: max|J - J^T| = {asym:.3g} exceeds "
                             f"{SYMMETRY_RTOL:g} times its largest entry {_fmt(scale)}")
        J = 0.5 * (J + J.T)
        moments = np.linalg.eigvalsh(J)
        if moments[0] <= _DEGENERATE_RTOL * max(moments[2], 0.0):
            raise ValueError(
                f"{prefix}inertia must be positive definite, but its principal moments are "
                f"({', '.join(_fmt(x) for x in moments)}); a point mass or a thin rod is a degenerate "
                "limit, not a solid body")
        if moments[0] + moments[1] < moments[2] * (1 - TRIANGLE_RTOL):
            raise ValueError(
                f"{prefix}inertia violates the triangle inequality (I1 + I2 = "
                f"{_fmt(moments[0] + moments[1])} < I3 = {_fmt(moments[2])})")
        object.__setattr__(self, "com", _frozen(com))
        object.__setattr__(self, "inertia", _frozen(J))

    def spatial_inertia(self):
        """The 6x6 spatial inertia about the origin of F, angular block first.

        From the kinetic energy ``T = 1/2 phi^T M phi`` of a body moving with twist ``phi``
        (in F coordinates): summing ``1/2 m_k |Gamma(r_k) phi|^2`` over its mass elements
        gives ``M = sum_k m_k Gamma(r_k)^T Gamma(r_k)`` (Eq. 1.12 for Gamma), which in terms
        of the mass ``m``, centre of mass ``c`` and inertia ``J`` about it is

        ``M = [[J - m [c][c], m [c]], [-m [c], m I]]``

        (the ArtiSynth notes, §0.1, with the blocks reordered to angular first). With F at
        the centre of mass (``c = 0``) on the principal axes this is the diagonal matrix of
        Eq. (1.24).

        Returns
        -------
        ndarray, shape (6, 6)
            Symmetric positive definite.

        Examples
        --------
        >>> M = cuboid([1.0, 2.0, 3.0], mass=12.0).spatial_inertia()
        >>> np.diag(M)
        array([13., 10.,  5., 12., 12., 12.])
        >>> off = MassProperties(2.0, [0.0, 0.0, 1.0], np.eye(3)).spatial_inertia()
        >>> off[:3, 3:]  # m [c]: the coupling of spin and translation
        array([[ 0., -2.,  0.],
               [ 2.,  0.,  0.],
               [ 0.,  0.,  0.]])

        Taught in book/01_maximal/07_inertia.
        """
        m, C = self.mass, brac(self.com)
        M = np.zeros((6, 6))
        M[:3, :3] = self.inertia - m * (C @ C)
        M[:3, 3:] = m * C
        M[3:, :3] = -m * C
        M[3:, 3:] = m * np.eye(3)
        return M

    def transformed(self, E_a_b):
        """The same body's properties expressed in frame a, given they are now in frame b.

        The centre of mass is a point, ``c_a = R c_b + p``; the inertia about it only turns,
        ``J_a = R J_b R^T``, where ``E_a_b = [[R, p], [0, 1]]``.

        Parameters
        ----------
        E_a_b : array_like, shape (4, 4)
            Frame b (the current frame) in frame a.

        Returns
        -------
        MassProperties
            Expressed in frame a.

        Examples
        --------
        A rod-like box along x, turned a quarter turn about z and lifted by 1:

        >>> from redmax_edu.lie import exp_se3
        >>> box = cuboid([2.0, 0.2, 0.2], mass=3.0)
        >>> moved = box.transformed(exp_se3([0, 0, np.pi / 2, 0, 0, 1.0]))
        >>> np.round(moved.com, 12) + 0.0, np.round(np.diag(moved.inertia), 12)
        (array([0., 0., 1.]), array([1.01, 0.02, 1.01]))

        Taught in book/01_maximal/07_inertia.
        """
        E = as_transform(E_a_b, "E_a_b", real=True)
        R, p = E[:3, :3], E[:3, 3]
        return MassProperties(self.mass, R @ self.com + p, R @ self.inertia @ R.T, self.name)

    def principal(self):
        """The principal moments and the principal body frame, right-handed.

        The eigen-decomposition ``J = V diag(I) V^T`` gives the moments and the axes. An
        eigenvector's sign is arbitrary, so ``V`` may be a reflection (``det V = -1``), which
        would mirror the body. Here the first two axes are turned so that their largest
        component is positive, and the third is their cross product: still an eigenvector,
        and ``V`` is a rotation that does not depend on the eigen-solver's sign choices
        (when the moments are distinct). For repeated moments (a cylinder, a sphere) any
        orthonormal basis of the eigenspace is principal, and the one returned is as good
        as any other.

        Returns
        -------
        moments : ndarray, shape (3,)
            ``I1 <= I2 <= I3``.
        E_f_p : ndarray, shape (4, 4)
            The principal frame p in frame F: origin at the centre of mass, axes along the
            principal axes, ``det R = +1``. In frame p the spatial inertia is
            ``diag(I1, I2, I3, m, m, m)`` (Eq. 1.24).

        Examples
        --------
        >>> p = MassProperties(1.0, [1.0, 2.0, 3.0], [[2.0, 0.5, 0], [0.5, 2.0, 0], [0, 0, 3.0]])
        >>> moments, E = p.principal()
        >>> moments
        array([1.5, 2.5, 3. ])
        >>> E[:3, 3], bool(np.isclose(np.linalg.det(E[:3, :3]), 1.0))
        (array([1., 2., 3.]), True)

        Taught in book/01_maximal/07_inertia.
        """
        moments, V = np.linalg.eigh(self.inertia)
        for k in (0, 1):
            if V[np.argmax(np.abs(V[:, k])), k] < 0:
                V[:, k] = -V[:, k]
        V[:, 2] = np.cross(V[:, 0], V[:, 1])  # right-handed: det V = +1
        E = np.eye(4)
        E[:3, :3] = V
        E[:3, 3] = self.com
        return moments, E

    def __add__(self, other):
        """Two bodies in the same frame glued together: :func:`composite` with identity poses."""
        if not isinstance(other, MassProperties):
            return NotImplemented
        name = "+".join(n for n in (self.name, other.name) if n)
        return composite([(self, np.eye(4)), (other, np.eye(4))], name=name)


def from_spatial_inertia(M, name=""):
    """The mass properties behind a 6x6 spatial inertia: the inverse of ``spatial_inertia``.

    Reads ``M = [[J - m [c][c], m [c]], [-m [c], m I]]`` (ArtiSynth notes §0.1, angular
    first): the mass from the translational block, the centre of mass from the coupling
    block, and the inertia about the centre of mass by the parallel-axis theorem,
    ``J = M_rot + m [c][c]``.

    Parameters
    ----------
    M : array_like, shape (6, 6)
        A spatial inertia about the origin of some frame F.
    name : str, optional
        Used in error messages.

    Returns
    -------
    MassProperties
        Expressed in F.

    Raises
    ------
    ValueError
        If ``M`` is not symmetric, its translational block is not ``m I`` with ``m > 0``, or
        its coupling block is not ``m`` times a cross-product matrix (relative tolerance
        ``SYMMETRY_RTOL``), or the inertia it implies is not physical.

    Examples
    --------
    >>> body = MassProperties(2.0, [0.1, -0.2, 0.3], np.diag([0.1, 0.2, 0.25]))
    >>> back = from_spatial_inertia(body.spatial_inertia())
    >>> back.mass, bool(np.allclose(back.com, body.com)), bool(np.allclose(back.inertia, body.inertia))
    (2.0, True, True)

    Taught in book/01_maximal/07_inertia.
    """
    prefix = _prefix(name)
    try:
        M = as_real(M, (6, 6), "M")
    except ValueError as err:
        raise ValueError(f"{prefix}{err}") from None
    scale = np.abs(M).max()
    tol = SYMMETRY_RTOL * scale
    if np.abs(M - M.T).max() > tol:
        raise ValueError(f"{prefix}argument 'M' is not symmetric (max|M - M^T| = "
                         f"{np.abs(M - M.T).max():.3g}), so it is not a spatial inertia")
    M = 0.5 * (M + M.T)
    T = M[3:, 3:]
    m = float(np.trace(T)) / 3
    if m <= 0 or np.abs(T - m * np.eye(3)).max() > SYMMETRY_RTOL * abs(m):
        raise ValueError(f"{prefix}argument 'M' has translational block {np.round(T, 6).tolist()}, "
                         "which is not m I with m > 0")
    C = M[:3, 3:]
    if np.abs(C + C.T).max() > tol:
        raise ValueError(f"{prefix}argument 'M' has a coupling block M[:3, 3:] that is not "
                         "skew-symmetric, so it is not m [c] for any centre of mass c")
    c = unbrac(C) / m
    Cc = brac(c)
    return MassProperties(m, c, M[:3, :3] + m * (Cc @ Cc), name)


def composite(parts, name=""):
    """The mass properties of several rigid parts glued into one body (Eq. 1.25-1.26).

    The total mass is the sum and the centre of mass the mass-weighted average (Eq. 1.25).
    Each part's spatial inertia ``M_k`` (about the origin of its own frame k) is moved to an
    axis-aligned frame g at the composite centre of mass and summed (Eq. 1.26):
    ``M_g = sum_k A_k_g^T M_k A_k_g`` with ``A_k_g = adjoint(E_k_g)``. The rotational
    inertia is then read back by :func:`from_spatial_inertia`. Summing at the centre of mass
    rather than at c's origin avoids the cancellation of large parallel-axis terms when c's
    origin is far away.

    Parameters
    ----------
    parts : sequence of (MassProperties, array_like shape (4, 4))
        Pairs ``(props_k, E_c_k)``: part k's properties expressed in its frame k, and frame
        k in the common frame c.
    name : str, optional
        Name of the composite, used in error messages.

    Returns
    -------
    MassProperties
        Expressed in frame c. Its inertia is in general not diagonal; see
        :meth:`MassProperties.principal`.

    Examples
    --------
    Two unit cubes side by side make a 2 x 1 x 1 box:

    >>> cube = cuboid([1.0, 1.0, 1.0], density=1.0)
    >>> left, right = np.eye(4), np.eye(4)
    >>> left[0, 3], right[0, 3] = -0.5, 0.5
    >>> both = composite([(cube, left), (cube, right)])
    >>> bool(np.allclose(both.inertia, cuboid([2.0, 1.0, 1.0], density=1.0).inertia))
    True

    Taught in book/01_maximal/07_inertia.
    """
    prefix = _prefix(name)
    try:
        parts = list(parts)
    except TypeError:
        raise ValueError(f"{prefix}argument 'parts' must be a sequence of (MassProperties, E_c_k) "
                         "pairs") from None
    if not parts:
        raise ValueError(f"{prefix}argument 'parts' is empty; a composite needs at least one part")
    checked = []
    for k, part in enumerate(parts):
        if not (isinstance(part, tuple | list) and len(part) == 2
                and isinstance(part[0], MassProperties)):
            raise ValueError(f"{prefix}parts[{k}] must be a pair (MassProperties, E_c_k), "
                             f"got {type(part).__name__}")
        try:
            E = as_transform(part[1], f"parts[{k}][1]", real=True)
        except ValueError as err:
            raise ValueError(f"{prefix}{err}") from None
        checked.append((part[0], E))
    # Eq. (1.25): total mass, and the mass-weighted centre of mass in frame c
    masses = np.array([props.mass for props, _ in checked])
    centres = np.array([E[:3, :3] @ props.com + E[:3, 3] for props, E in checked])
    m_c = masses.sum()
    p_c = masses @ centres / m_c
    # Eq. (1.26): spatial inertias moved to the frame g at p_c with c's axes, and summed
    E_c_g = np.eye(4)
    E_c_g[:3, 3] = p_c
    M_g = np.zeros((6, 6))
    for props, E_c_k in checked:
        A_k_g = adjoint(inv_se3(E_c_k) @ E_c_g)
        M_g += A_k_g.T @ props.spatial_inertia() @ A_k_g
    about_com = from_spatial_inertia(M_g, name)
    return MassProperties(m_c, p_c, about_com.inertia, name)


def _mass_of(volume, density, mass, prefix):
    """The mass from exactly one of ``density`` and ``mass``."""
    if (density is None) == (mass is None):
        got = "both" if density is not None else "neither"
        raise ValueError(f"{prefix}arguments 'density' and 'mass': give exactly one of them, got {got}")
    if mass is not None:
        return _positive_scalar(mass, "argument 'mass'", prefix)
    return _positive_scalar(density, "argument 'density'", prefix) * volume


def cuboid(sides, *, density=None, mass=None, name=""):
    """A solid box centred at the origin with its edges along the axes (Eq. 1.24).

    ``m = rho dx dy dz`` and ``J = m/12 diag(dy^2 + dz^2, dz^2 + dx^2, dx^2 + dy^2)``.

    Parameters
    ----------
    sides : array_like, shape (3,)
        Side lengths ``(dx, dy, dz)``, positive (m).
    density, mass : float
        Exactly one of them: density (kg/m^3) or total mass (kg).
    name : str, optional

    Returns
    -------
    MassProperties
        Centre of mass at the origin; the axes are principal.

    Examples
    --------
    >>> brick = cuboid([0.2, 0.1, 0.05], density=1000.0)
    >>> round(brick.mass, 12), np.round(np.diag(brick.inertia) * 1e4, 4)
    (1.0, array([10.4167, 35.4167, 41.6667]))

    Taught in book/01_maximal/07_inertia.
    """
    prefix = _prefix(name)
    try:
        s = as_real(sides, (3,), "sides")
    except ValueError as err:
        raise ValueError(f"{prefix}{err}") from None
    if np.any(s <= 0):
        raise ValueError(f"{prefix}argument 'sides' must be positive, got {s.tolist()}")
    m = _mass_of(np.prod(s), density, mass, prefix)
    sq = s * s
    J = m / 12 * np.diag([sq[1] + sq[2], sq[2] + sq[0], sq[0] + sq[1]])
    return MassProperties(m, np.zeros(3), J, name)


def cylinder(radius, height, *, density=None, mass=None, name=""):
    """A solid circular cylinder centred at the origin, its axis along z.

    ``m = rho pi r^2 h``, ``Ixx = Iyy = m (3 r^2 + h^2) / 12``, ``Izz = m r^2 / 2``.

    Parameters
    ----------
    radius, height : float
        Positive (m).
    density, mass : float
        Exactly one of them.
    name : str, optional

    Returns
    -------
    MassProperties
        Centre of mass at the origin; the axes are principal.

    Examples
    --------
    >>> rod = cylinder(0.1, 1.2, mass=3.0)
    >>> np.round(np.diag(rod.inertia), 6)
    array([0.3675, 0.3675, 0.015 ])

    Taught in book/01_maximal/07_inertia.
    """
    prefix = _prefix(name)
    r = _positive_scalar(radius, "argument 'radius'", prefix)
    h = _positive_scalar(height, "argument 'height'", prefix)
    m = _mass_of(np.pi * r * r * h, density, mass, prefix)
    side = m * (3 * r * r + h * h) / 12
    return MassProperties(m, np.zeros(3), np.diag([side, side, m * r * r / 2]), name)


def sphere(radius, *, density=None, mass=None, name=""):
    """A solid ball centred at the origin: ``m = rho 4/3 pi r^3``, ``J = 2/5 m r^2 I``.

    Parameters
    ----------
    radius : float
        Positive (m).
    density, mass : float
        Exactly one of them.
    name : str, optional

    Returns
    -------
    MassProperties
        Centre of mass at the origin; every axis is principal.

    Examples
    --------
    >>> ball = sphere(0.5, mass=4.0)
    >>> np.diag(ball.inertia)
    array([0.4, 0.4, 0.4])

    Taught in book/01_maximal/07_inertia.
    """
    prefix = _prefix(name)
    r = _positive_scalar(radius, "argument 'radius'", prefix)
    m = _mass_of(4 / 3 * np.pi * r**3, density, mass, prefix)
    return MassProperties(m, np.zeros(3), 0.4 * m * r * r * np.eye(3), name)


def capsule(radius, length, *, density=None, mass=None, name=""):
    """A capsule: a cylinder of the given length along z, capped by two hemispheres.

    In closed form, with the cylinder's mass ``m_c = rho pi r^2 L`` and each cap's
    ``m_h = rho 2/3 pi r^3``: ``Izz = m_c r^2/2 + 2 (2/5) m_h r^2`` and
    ``Ixx = Iyy = m_c (L^2/12 + r^2/4) + 2 m_h (2 r^2/5 + L^2/4 + 3 L r/8)``. The cap term is
    a hemisphere's inertia about its own centre of mass (at ``3 r / 8`` from its flat face)
    moved by the parallel-axis theorem to the capsule's centre.

    Parameters
    ----------
    radius : float
        Positive (m).
    length : float
        Length of the cylindrical part, ``>= 0``; the capsule's total length is
        ``length + 2 radius``. Zero gives a sphere.
    density, mass : float
        Exactly one of them; ``mass`` is the total of cylinder and caps.
    name : str, optional

    Returns
    -------
    MassProperties
        Centre of mass at the origin; the axes are principal.

    Examples
    --------
    >>> ball = capsule(0.5, 0.0, mass=4.0)  # no cylinder: a sphere
    >>> np.round(np.diag(ball.inertia), 12)
    array([0.4, 0.4, 0.4])

    Taught in book/01_maximal/07_inertia.
    """
    prefix = _prefix(name)
    r = _positive_scalar(radius, "argument 'radius'", prefix)
    try:
        a = np.asarray(length)
        if a.shape != () or a.dtype.kind not in "iuf" or isinstance(length, (bool, np.bool_)):
            raise TypeError(length)  # complex, boolean, string, array: not a length
        L = float(a)
    except (TypeError, ValueError, OverflowError):
        raise ValueError(f"{prefix}argument 'length' must be a number, got {length!r}") from None
    if not np.isfinite(L) or L < 0:
        raise ValueError(f"{prefix}argument 'length' must be finite and >= 0, got {length!r}")
    v_cyl, v_cap = np.pi * r * r * L, 2 / 3 * np.pi * r**3
    m = _mass_of(v_cyl + 2 * v_cap, density, mass, prefix)
    rho = m / (v_cyl + 2 * v_cap)
    m_c, m_h = rho * v_cyl, rho * v_cap
    axial = m_c * r * r / 2 + 2 * 0.4 * m_h * r * r
    side = m_c * (L * L / 12 + r * r / 4) + 2 * m_h * (0.4 * r * r + L * L / 4 + 3 * L * r / 8)
    return MassProperties(m, np.zeros(3), np.diag([side, side, axial]), name)


def _check_mesh(vertices, faces, prefix):
    try:
        V = as_real(vertices, None, "vertices")
    except ValueError as err:
        raise ValueError(f"{prefix}{err}") from None
    if V.ndim != 2 or V.shape[1] != 3 or np.iscomplexobj(V):
        raise ValueError(f"{prefix}argument 'vertices' must be a real array of shape (n, 3), got {V.shape}")
    try:
        F = as_int_array(faces, "faces", "integer vertex indices")  # a quad among triangles: ragged
    except ValueError as err:
        raise ValueError(f"{prefix}{err}") from None
    if F.ndim != 2 or F.shape[1] != 3 or len(F) == 0:
        raise ValueError(f"{prefix}argument 'faces' must have shape (m, 3) with m > 0, got {F.shape}")
    bad = np.flatnonzero((F < 0).any(axis=1) | (F >= len(V)).any(axis=1))
    if bad.size:
        raise ValueError(f"{prefix}argument 'faces': face {bad[0]} {F[bad[0]].tolist()} has an index "
                         f"outside 0..{len(V) - 1}")
    repeated = np.flatnonzero((F[:, 0] == F[:, 1]) | (F[:, 1] == F[:, 2]) | (F[:, 2] == F[:, 0]))
    if repeated.size:
        raise ValueError(f"{prefix}argument 'faces': face {repeated[0]} {F[repeated[0]].tolist()} is "
                         "degenerate (it repeats a vertex index)")
    # Closed and consistently oriented: each directed edge once, and its reverse once.
    edges = np.concatenate([F[:, [0, 1]], F[:, [1, 2]], F[:, [2, 0]]])
    unique, counts = np.unique(edges, axis=0, return_counts=True)
    if counts.max() > 1:
        a, b = unique[np.argmax(counts)].tolist()
        raise ValueError(f"{prefix}argument 'faces': the directed edge ({a}, {b}) appears "
                         f"{counts.max()} times; neighbouring faces must run along a shared edge in "
                         "opposite directions (consistent orientation, no more than two faces per edge)")
    known = set(map(tuple, unique.tolist()))
    for a, b in unique.tolist():
        if (b, a) not in known:
            raise ValueError(f"{prefix}argument 'faces' does not describe a closed surface: the edge "
                             f"({a}, {b}) has no opposite edge ({b}, {a})")
    return V, F


def mesh(vertices, faces, *, density=None, mass=None, name=""):
    """Mass properties of the solid bounded by a closed triangle mesh, by the divergence theorem.

    Choose a reference point o (the mean vertex, for accuracy). Each face ``(a, b, c)`` and o
    span a tetrahedron whose signed volume ``det[a, b, c] / 6`` (vertices relative to o) is
    positive when the face looks away from o. The signed sum over a closed, outward-oriented
    surface is the enclosed solid: the divergence theorem turns the volume integrals of
    ``1``, ``x`` and ``x x^T`` into sums over the faces, and for each tetrahedron they are
    ``V``, ``V (a + b + c) / 4`` and ``V / 20 (a a^T + b b^T + c c^T + s s^T)`` with
    ``s = a + b + c``. The inertia about the centre of mass follows from the second moment
    about it, ``J = tr(C) I - C``. This is the approach the writeup points to (Mirtich 1996),
    in its simplest form.

    Parameters
    ----------
    vertices : array_like, shape (n, 3)
    faces : array_like of int, shape (m, 3)
        Vertex indices of each triangle, counter-clockwise seen from outside (normals out).
        Every directed edge must appear exactly once and its reverse exactly once (a closed,
        consistently oriented surface).
    density, mass : float
        Exactly one of them.
    name : str, optional

    Returns
    -------
    MassProperties
        In the coordinates of ``vertices``: the centre of mass is where it falls, the inertia
        is about it with the mesh's axes (in general not diagonal).

    Raises
    ------
    ValueError
        If a face index is out of range or repeated within a face, the surface is not closed
        or not consistently oriented, or the enclosed volume is not positive (faces oriented
        inward).

    Examples
    --------
    >>> V, F = box_mesh([1.0, 2.0, 3.0])
    >>> body = mesh(V + [5.0, 0.0, 0.0], F, mass=12.0)
    >>> np.round(body.com, 12) + 0.0, np.round(np.diag(body.inertia), 12)
    (array([5., 0., 0.]), array([13., 10.,  5.]))
    >>> mesh(V, F[:, ::-1], mass=12.0)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: argument 'faces': the enclosed volume is -6 < 0, so the faces appear to be oriented inward ...

    Taught in book/01_maximal/07_inertia.
    """
    prefix = _prefix(name)
    V, F = _check_mesh(vertices, faces, prefix)
    origin = V.mean(axis=0)
    a, b, c = (V[F[:, k]] - origin for k in range(3))
    vol = np.einsum("ij,ij->i", a, np.cross(b, c)) / 6  # signed tetrahedron volumes
    volume = vol.sum()
    if not volume > 0:
        detail = ("the faces appear to be oriented inward (list each triangle's vertices "
                  "counter-clockwise seen from outside)" if volume < 0 else "the mesh encloses no volume")
        raise ValueError(f"{prefix}argument 'faces': the enclosed volume is {_fmt(volume)} "
                         f"{'<' if volume < 0 else '='} 0, so {detail}")
    s = a + b + c
    first = vol @ s / 4  # integral of x dV about the reference point
    second = np.einsum("k,ki,kj->ij", vol / 20, a, a) + np.einsum("k,ki,kj->ij", vol / 20, b, b) \
        + np.einsum("k,ki,kj->ij", vol / 20, c, c) + np.einsum("k,ki,kj->ij", vol / 20, s, s)
    m = _mass_of(volume, density, mass, prefix)
    rho = m / volume
    g = first / volume  # centre of mass relative to the reference point
    C = rho * (second - volume * np.outer(g, g))  # second moment about the centre of mass
    return MassProperties(m, origin + g, np.trace(C) * np.eye(3) - C, name)


def box_mesh(sides):
    """A closed, outward-oriented triangle mesh of a box centred at the origin.

    Parameters
    ----------
    sides : array_like, shape (3,)
        Side lengths, positive.

    Returns
    -------
    vertices : ndarray, shape (8, 3)
        Corner ``k`` has coordinate ``+-sides/2`` along axis ``j`` by bit ``2 - j`` of k
        (the corners' order of :func:`redmax_edu.viz.scene.box_edges`).
    faces : ndarray of int, shape (12, 3)
        Two triangles per side, counter-clockwise seen from outside.

    Examples
    --------
    >>> V, F = box_mesh([2.0, 2.0, 2.0])
    >>> V.shape, F.shape, mesh(V, F, density=1.0).mass
    ((8, 3), (12, 3), 8.0)

    Taught in book/01_maximal/07_inertia.
    """
    s = as_real(sides, (3,), "sides")
    if np.any(s <= 0):
        raise ValueError(f"argument 'sides' must be positive, got {s.tolist()}")
    signs = np.array([[sx, sy, sz] for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)], float)
    vertices = 0.5 * signs * s
    # each side as a quad (corner indices), counter-clockwise seen from outside
    quads = [(0, 1, 3, 2), (4, 6, 7, 5),  # x = -, x = +
             (0, 4, 5, 1), (2, 3, 7, 6),  # y = -, y = +
             (0, 2, 6, 4), (1, 5, 7, 3)]  # z = -, z = +
    faces = np.array([tri for q in quads for tri in ((q[0], q[1], q[2]), (q[0], q[2], q[3]))])
    return vertices, faces
