"""How many examples a generated-input (hypothesis) test draws. Each test names its count for
the ``ci`` profile, what ``make test`` runs; ``make test-fast`` loads ``dev``
(``--hypothesis-profile=dev``), which draws a quarter of every count: the same properties,
checked on fewer inputs while one works, and on all of them before a change lands."""

from __future__ import annotations

import warnings

from hypothesis import Phase, settings
from hypothesis import strategies as st
from hypothesis.errors import HypothesisSideeffectWarning

CI_EXAMPLES = 100  # hypothesis' own default
# Every phase but ``explain``: once a test fails, it shrinks the example under a line tracer, which
# before Python 3.12 (sys.settrace) ran a graph test's shrinking past its 300 s timeout, and the
# run ended on the timeout instead of the falsifying example. The example and its traceback are
# what a failure needs.
PHASES = tuple(phase for phase in Phase if phase is not Phase.explain)
settings.register_profile("ci", max_examples=CI_EXAMPLES, phases=PHASES)
settings.register_profile("dev", max_examples=CI_EXAMPLES // 4, phases=PHASES)
settings.load_profile("ci")  # a plain `pytest` too; --hypothesis-profile picks another


def examples(count: int) -> int:
    """``count`` examples under ``ci``, scaled to the profile loaded (``dev``: a quarter)."""
    return max(10, count * settings.default.max_examples // CI_EXAMPLES)


def build_unicode_tables() -> None:
    """Have Hypothesis build its Unicode tables (which characters UTF-8 encodes, by category)
    into its storage directory, ``.hypothesis`` in the checkout, if they are not there yet:
    building them takes a process about 2.5 s of CPU, and in a fresh clone every worker would
    otherwise build them at once, at its first text strategy. Called by the run's controller,
    before any worker starts (``make collect`` builds them first in ``make test``)."""
    with warnings.catch_warnings():  # "slow code in plugin": here on purpose, once per run
        warnings.simplefilter("ignore", HypothesisSideeffectWarning)
        st.text().validate()
        st.characters(categories=["Cc"]).validate()
