"""How many examples a generated-input (hypothesis) test draws. Each test names its count for
the ``ci`` profile, what ``make test`` runs; ``make test-fast`` loads ``dev``
(``--hypothesis-profile=dev``), which draws a quarter of every count: the same properties,
checked on fewer inputs while one works, and on all of them before a change lands."""

from __future__ import annotations

from hypothesis import settings

CI_EXAMPLES = 100  # hypothesis' own default: ``ci`` changes nothing
settings.register_profile("ci", max_examples=CI_EXAMPLES)
settings.register_profile("dev", max_examples=CI_EXAMPLES // 4)


def examples(count: int) -> int:
    """``count`` examples under ``ci``, scaled to the profile loaded (``dev``: a quarter)."""
    return max(10, count * settings.default.max_examples // CI_EXAMPLES)
