"""The scene catalogue of the RedMax reference code, and two test chains of the later chapters.

* :mod:`redmax_edu.scenes.reference`: the reference scenes as data, read from the JSON file that
  ships with the package (:func:`catalogue`, :func:`reference_setup`);
* :mod:`redmax_edu.scenes.build`: a reference scene as a model in SI units (:func:`scene`, :class:`Scene`);
* :mod:`redmax_edu.scenes.forces`: the time functions and point forces the reference scenes use;
* :mod:`redmax_edu.scenes.chains`: :func:`hanging_chain` and :func:`floating_chain`.

Every public name is importable from ``redmax_edu.scenes``.

Taught in book/02_reduced/gallery.
"""

from .build import ATTACHMENT_CHOICES, STIFFNESS_CHOICES, Scene, scene
from .chains import floating_chain, hanging_chain
from .forces import BodyTwistSchedule, PiecewiseConstant, ReferencePointForce, ReferencePointSpring, Sigmoid
from .reference import DATA_FILE, SCENE_IDS, CatalogueEntry, catalogue, reference_data, reference_setup

__all__ = ["CatalogueEntry", "Scene", "PiecewiseConstant", "Sigmoid", "BodyTwistSchedule", "catalogue",
           "scene", "reference_data", "reference_setup", "SCENE_IDS", "DATA_FILE", "STIFFNESS_CHOICES",
           "ATTACHMENT_CHOICES", "ReferencePointForce", "ReferencePointSpring", "hanging_chain",
           "floating_chain"]
