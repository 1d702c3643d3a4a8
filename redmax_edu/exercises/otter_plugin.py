"""An otter-grader plugin that gives the graders' partial credit to the autograder's scores.

Otter scores a test case all or nothing. The checks of :mod:`redmax_edu.exercises` give
partial credit (3 of 4 angles right: 0.75 of the points), and their autograder test cases
(:meth:`~redmax_edu.exercises.core.Assignment.require`) fail with a message that starts with
``[points/max points]``. After grading, this plugin reads that prefix back from every failed
test case and sets each question's score to the sum of the points earned, scaled to the
test case's points in otter. A failure without the prefix (an error outside the checks)
earns nothing, as in otter itself.

The assignments name it in their configuration (``generate: plugins:``). Otter looks its
events up by name, so the class needs nothing from otter: this module imports without it.
"""

import re

#: The prefix of a failed check's message (see ``CheckFailed``).
POINTS = re.compile(r"\[(\d+(?:\.\d+)?)/(\d+(?:\.\d+)?) points\]")


def earned(passed, points, message):
    """Points earned by one test case worth ``points``: all if passed, else its check's share.

    Examples
    --------
    >>> earned(False, 2, "AssertionError: [1.5/2 points] general twists: ...")
    1.5
    >>> earned(False, 1, "NameError: name 'exp_se3' is not defined")
    0.0
    """
    if passed:
        return float(points)
    match = POINTS.search(message or "")
    if not match or float(match.group(2)) == 0:
        return 0.0
    return float(points) * float(match.group(1)) / float(match.group(2))


class PartialCredit:
    """Otter plugin (``redmax_edu.exercises.otter_plugin.PartialCredit``): see the module docstring."""

    def __init__(self, submission_path=None, submission_metadata=None, plugin_config=None):
        self.submission_path = submission_path
        self.submission_metadata = submission_metadata
        self.plugin_config = plugin_config or {}

    def after_grading(self, results):
        """Set every question's score to the points its checks earned (otter's results, in place)."""
        for name in list(results.test_files):
            test_file = results.get_result(name)
            total = sum(earned(r.passed, r.test_case.points or 0, r.message)
                        for r in test_file.test_case_results)
            results.update_score(name, round(total, 4))
