"""The kernel-free force explorer of §1.9: one plotly frame per force, each redrawing f, K and D."""

import numpy as np
import pytest

from redmax_edu.lie import random_transform
from redmax_edu.maximal.forces import Attachment, BodyDamping, PointSpring

pytest.importorskip("plotly")

from redmax_edu.viz.force_player import force_terms_player  # noqa: E402


def _examples(rng):
    def state():
        return np.stack([random_transform(rng) for _ in range(2)]), rng.standard_normal((2, 6))

    return {
        "damping": (BodyDamping(0, 0.7), *state()),
        "point spring": (PointSpring(Attachment(0, [0.1, 0, 0]), Attachment(1, [0, 0.2, 0]), 5.0,
                                     damping=0.8), *state()),
    }


def test_one_frame_per_force_and_each_frame_shows_that_force(rng):
    examples = _examples(rng)
    fig = force_terms_player(examples)
    assert len(fig.frames) == 2
    assert [s.label for s in fig.layout.sliders[0].steps] == ["damping", "point spring"]
    for frame, (force, E, phi) in zip(fig.frames, examples.values(), strict=True):
        terms = force.evaluate(E, phi)
        np.testing.assert_allclose(frame.data[0].y, terms.f, atol=1e-6)
        np.testing.assert_allclose(frame.data[1].z, terms.K, atol=1e-6)
        np.testing.assert_allclose(frame.data[2].z, terms.D, atol=1e-6)
        assert frame.data[2].zmin == -frame.data[2].zmax  # symmetric colour scale
    # the figure starts at the first frame
    np.testing.assert_allclose(fig.data[0].y, fig.frames[0].data[0].y)


def test_no_forces_is_refused():
    with pytest.raises(ValueError, match="examples"):
        force_terms_player({})
