"""inspect_ai's entry point (``[project.entry-points.inspect_ai]`` in pyproject.toml).

inspect_ai imports this module when a name in the ``casebank/`` namespace is asked for
(``inspect eval casebank/osce``); importing the task registers it.
"""

from __future__ import annotations

from casebank.harness.osce import osce

__all__ = ["osce"]
