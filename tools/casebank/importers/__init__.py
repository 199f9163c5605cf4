"""Importers: records of other case formats turned into draft casebank cases.

Each importer is pure: a parsed record in, the case data and what the importer decided out,
with nothing read or written; the `import` command does the reading, the writing and the
report. Importers stand on the format side alone (``casebank.format`` and ``casebank.errors``),
so that a draft is described by the same schema, catalog and units as every other case.

- ``agentclinic``: AgentClinic OSCE records (JSON Lines), see docs/importing.md.
- ``values``: reading values written as text (measurements, flags, statuses).
- ``render``: writing a draft as block YAML in the case template's order.
"""
