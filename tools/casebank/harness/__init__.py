"""The evaluation harness: casebank's grounded OSCE as an inspect_ai task (docs/harness.md).

``grounding`` is pure (what the patient and the doctor are told, how a reply is checked, how
a final message becomes a submission) and needs nothing beyond casebank; ``osce`` is the
inspect_ai task and the only module that imports inspect_ai. Nothing else in casebank imports
this package, so ``casebank`` runs without inspect_ai installed (``pip install
'casebank[inspect]'`` brings it). ``_registry`` is inspect_ai's entry point.
"""
