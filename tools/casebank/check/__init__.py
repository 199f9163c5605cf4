"""Checking: the rule engine, the rules, the cache, the reporters and the validation run.
Imports the format side, never the release side."""
