"""redmax_edu: articulated rigid-body dynamics, from maximal coordinates to differentiable RedMax.

The library behind the redmax_edu book. Every numbered equation and algorithm of the
writeup it follows is a function here; the book's notebooks call them and the tests check
them against finite differences and reference data.
"""

__version__ = "0.1.0"
