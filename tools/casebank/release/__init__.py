"""Releasing: the git layer (the only code that runs git), the one-pass history scan, the pure
plan, apply (the only writer), verify, the manifest and the changelog, and the reviewer's diff.
Imports the format side, never the check side."""
