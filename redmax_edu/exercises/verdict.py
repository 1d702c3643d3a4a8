"""What a check ends with: a verdict, a fraction of its points and a message in words.

The lowest module of the graders: :mod:`~redmax_edu.exercises.calls` raises these when a call of
the student's function goes wrong, and :mod:`~redmax_edu.exercises.core` turns them into results.
"""


class Verdict(Exception):  # noqa: N818 - a verdict, not an error
    """Ends a check with ``fraction`` of its points and a message saying what is wrong.

    Raised (or returned) by check bodies and by :func:`~redmax_edu.exercises.calls.call`.
    """

    status = "wrong"

    def __init__(self, message, fraction=0.0):
        super().__init__(message)
        self.message = message
        self.fraction = float(min(max(fraction, 0.0), 1.0))
        if 0 < self.fraction < 1:
            self.status = "partial"


class Unanswered(Verdict):
    """The part is not answered yet (the placeholder is still there)."""

    status = "unanswered"
