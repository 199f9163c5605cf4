"""The dataset as a static website: plain data in (``model``), files out (``build``).

This side renders; it never reads git, releases or the working tree. ``commands/site.py``
gathers the cases, their released history and the field-level diffs, and hands them over as
``SiteInput``; what each audience may see comes from ``casebank.serve.views``.
"""
