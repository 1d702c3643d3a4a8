"""Part 1 of the writeup: rigid bodies in maximal coordinates (§1.6-1.13).

Every body carries its own pose ``E_i`` (4x4) and body twist ``phi_i`` (6,); a system of n
bodies stores them as arrays of shape ``(n, 4, 4)`` and ``(n, 6)``, and its generalised
quantities are body-major vectors of length ``6 n``.

* :mod:`.body`: rigid bodies, the Newton-Euler equations, energy and momentum (§1.6-1.7).
* :mod:`.forces`: forces with their stiffness ``K = df/dq`` and damping ``D = df/dphi``
  matrices (§1.9), reused by the reduced-coordinate chapters through ``J^T``.
* :mod:`.constraints`: joints as adjoint rows, contacts, the friction pyramid,
  Baumgarte stabilisation and soft constraints (§1.10-1.13).
* :mod:`.solve`: the KKT system, the contact QP and LCP, projected Gauss-Seidel.
* :mod:`.attachments`: attachments eliminated from the KKT system, one constraint row projected
  per component, prescribed velocities eliminated (ArtiSynth notes §0.17-0.21).
* :mod:`.pivoting`: a mixed LCP reduced to an LCP, principal pivoting with columns on demand
  (ArtiSynth notes §0.7-0.8).
* :mod:`.random_problems`: the random KKT systems, contact steps and friction-cone LCPs the
  appendix pages and their tests check solvers on.
* :mod:`.simulate`: explicit, symplectic and linearly implicit Euler steps (§1.8).
"""
