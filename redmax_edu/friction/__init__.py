"""Coulomb friction (§2.11 of the writeup): staggered projections and bilateral staggered projections.

* :mod:`redmax_edu.friction.staggered`: Algorithm 7 on plain arrays (Part 1's maximal
  coordinates), the friction QP of Eq. (2.121) and the contact stage both algorithms share.
* :mod:`redmax_edu.friction.patterns`: where a joint's bearings touch, the implicit contacts that
  BISP places around a hinge, a ball joint or a slider, and the friction a model carries
  (:class:`~redmax_edu.friction.patterns.JointFriction`,
  :class:`~redmax_edu.friction.patterns.ClosureFriction`).
* :mod:`redmax_edu.friction.external`: a model's constraints as the external rows of a BISP step
  (Eq. 2.126-2.127), with the friction of floor contacts and of closing hinges.
* :mod:`redmax_edu.friction.bisp`: Algorithm 8, bilateral staggered projections, and the
  linearly implicit Euler step of a model with friction.

The patterns sit below :mod:`redmax_edu.model` (a model names its friction), the algorithms above
:mod:`redmax_edu.dynamics` (they solve its equations): import each from its module.

Taught in book/02_reduced/11_friction.
"""
