"""The repository's policy file, ``casebank.toml``: what the dataset is and what a release demands.

    [dataset]
    name = "casebank"            # the name in dataset cards and citations
    licence = "CC-BY-4.0"        # SPDX identifier: the dataset's licence, and the default
                                 # licence of a case that states none
    [release]
    require_review = true        # every added or changed case version needs a reviewer who
                                 # is not one of its authors (a Reviewed-by trailer)

Every key is optional; a repository without the file gets the defaults below. The file is read
from the commit being released (never from the working tree), so a release and its
verification agree on it.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Any

from casebank.errors import CasebankError
from casebank.format.layout import POLICY_FILE

DEFAULT_LICENCE = "CC-BY-4.0"
DEFAULT_NAME = "casebank"

_KNOWN: dict[str, dict[str, type]] = {
    "dataset": {"name": str, "licence": str},
    "release": {"require_review": bool},
}


@dataclass(frozen=True)
class Policy:
    name: str = DEFAULT_NAME
    licence: str = DEFAULT_LICENCE
    require_review: bool = False


def _toml() -> Any:
    if sys.version_info >= (3, 11):
        import tomllib

        return tomllib
    import tomli  # the same parser, as a package before Python 3.11

    return tomli


def load_policy(raw: bytes | None, file: str = POLICY_FILE) -> Policy:
    """The policy ``raw`` states (the defaults when there is no file). A file that is not
    valid TOML, or holds an unknown key or a value of the wrong type, raises CasebankError
    naming the file, the line where the parser says so, and the key."""
    if raw is None:
        return Policy()
    toml = _toml()
    try:
        data = toml.loads(raw.decode("utf-8"))
    except UnicodeDecodeError:
        raise CasebankError(f"{file}: not UTF-8 text", "save it as UTF-8") from None
    except toml.TOMLDecodeError as exc:
        raise CasebankError(f"{file}: not valid TOML: {exc}", "fix the line it names") from None
    values: dict[str, Any] = {}
    for table, content in data.items():
        keys = _KNOWN.get(table)
        if keys is None or not isinstance(content, dict):
            raise CasebankError(
                f"{file}: `{table}` is not a table of the policy file",
                f"use only the tables {', '.join(f'[{t}]' for t in _KNOWN)}",
            )
        for key, value in content.items():
            kind = keys.get(key)
            if kind is None:
                raise CasebankError(
                    f"{file}: `{table}.{key}` is not a policy setting",
                    f"[{table}] takes {', '.join(f'`{k}`' for k in keys)}",
                )
            if not isinstance(value, kind) or (isinstance(value, str) and not value.strip()):
                shown = "true or false" if kind is bool else "a non-empty string"
                raise CasebankError(
                    f"{file}: `{table}.{key}` must be {shown}", f"set it to {shown}"
                )
            values[key] = value
    return Policy(**values)
