"""The importers `casebank import FORMAT` knows, by the FORMAT that names each.

Adding an importer is its module (an object with the ``importers.base.Importer`` protocol) and
one line here; the command's FORMAT choices and its help come from this table.
"""

from __future__ import annotations

from casebank.importers import agentclinic
from casebank.importers.base import Importer

IMPORTERS: dict[str, Importer] = {
    "agentclinic": agentclinic.IMPORTER,
}
