"""The evaluation harness: casebank's grounded OSCE as an inspect_ai task (docs/harness.md).

``grounding`` is pure (what the patient and the doctor are told, how a reply is checked, how
a final message becomes a submission) and needs nothing beyond casebank; ``osce`` is the
inspect_ai task, ``smoke`` the scripted model ``casebank/smoke`` and ``evaluate`` what
``nox -s eval`` runs (``inspect eval``, then a check of its logs): these use inspect_ai.
Nothing else in casebank imports this package, so ``casebank`` runs without inspect_ai
installed (in a clone, ``python3 -m pip install -e ".[inspect]"`` brings it). ``_registry``
is inspect_ai's entry point.
"""
