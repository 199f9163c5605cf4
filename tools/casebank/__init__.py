"""casebank: validation and versioned releases for a git-native bank of clinical cases."""

from __future__ import annotations

__version__ = "0.1.0"
