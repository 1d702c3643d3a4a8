"""Units: the library works in SI (m, kg, s); the reference scene catalogue uses cm, g, s.

The RedMax reference code writes its scenes in centimetres and grams (gravity -980 cm/s^2).
:func:`from_cgs` converts such numbers to SI, one physical quantity at a time.

Taught in book/00_intro/conventions.
"""

import numpy as np

from ._validate import as_array

#: Default gravity of a model, m/s^2, world z up.
GRAVITY = np.array([0.0, 0.0, -9.81])

#: SI value of one cgs unit of each quantity (1 cm = 1e-2 m, 1 g = 1e-3 kg), written as exact
#: decimal literals so that round numbers convert to round numbers.
CGS_TO_SI = {
    "length": 1e-2,
    "mass": 1e-3,
    "time": 1.0,
    "angle": 1.0,
    "velocity": 1e-2,
    "acceleration": 1e-2,
    "density": 1e3,  # g/cm^3 -> kg/m^3
    "inertia": 1e-7,  # g cm^2 -> kg m^2
    "force": 1e-5,  # dyn = g cm/s^2 -> N
    "torque": 1e-7,
    "energy": 1e-7,  # erg -> J
    "stiffness": 1e-3,  # dyn/cm -> N/m
    "damping": 1e-3,  # dyn s/cm -> N s/m
}


def from_cgs(value, quantity):
    """Convert a value (scalar or array) from cm-g-s units to SI.

    Parameters
    ----------
    value : float or array_like
    quantity : str
        One of the keys of ``CGS_TO_SI``, e.g. ``"length"``, ``"inertia"``.

    Returns
    -------
    float or ndarray

    Examples
    --------
    >>> float(from_cgs(-980.0, "acceleration"))
    -9.8
    >>> float(from_cgs(1.0, "density"))  # 1 g/cm^3 is 1000 kg/m^3
    1000.0
    """
    if quantity not in CGS_TO_SI:
        raise ValueError(f"argument 'quantity' must be one of {sorted(CGS_TO_SI)}, got {quantity!r}")
    return as_array(value, None, "value") * CGS_TO_SI[quantity]
