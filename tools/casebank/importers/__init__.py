"""Importers: records of other case formats turned into draft casebank cases.

Each importer is pure: a file's bytes in, records and their draft case data out, with nothing
read or written; the `import` command opens the file, names and writes the drafts and prints the
report. Importers stand on the format side alone (``casebank.format`` and ``casebank.errors``),
so that a draft is described by the same schema, catalog and units as every other case.

- ``base``: the ``Importer`` protocol and the data an import passes around.
- ``registry``: the importers by FORMAT name; adding one is its module and one line there.
- ``agentclinic``: AgentClinic's OSCE and NEJM records (JSON Lines), see docs/importing.md.
- ``draft``: a draft built from the `casebank new` scaffold, in the schema's order.
- ``results``, ``exam``: results and examination findings, read the same way for every format.
- ``jsonlines``, ``text``, ``values``: reading lines, text and values written as text.
- ``render``: writing a draft as block YAML in the case template's order.
"""
