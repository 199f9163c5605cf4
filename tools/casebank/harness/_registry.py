"""inspect_ai's entry point (``[project.entry-points.inspect_ai]`` in pyproject.toml).

inspect_ai imports this module when a name in the ``casebank/`` namespace is asked for
(``inspect eval casebank/osce``, ``--model casebank/smoke``); importing the task and the
smoke model registers them.
"""

from __future__ import annotations

from casebank.harness.osce import osce
from casebank.harness.smoke import casebank_models

__all__ = ["casebank_models", "osce"]
