"""Figures, animations and widgets for the book.

A picture is described once, as a :class:`~redmax_edu.viz.scene.Scene` built by a library
function from the mathematics (for example :func:`~redmax_edu.viz.explorers.twist_scene`).
The same scene is then rendered three ways: a static matplotlib figure (``draw``), a
kernel-free plotly figure with a slider that responds in the published HTML
(``interactive``), and live ipywidgets for Jupyter and Voila (``widgets``, imported lazily).
"""
