"""What a case and the catalog are: the schema (the single source of truth) and its views,
the loader, canonical content, and the catalog as a lookup. Imports nothing else of casebank
but ``errors``; the check, release and serving sides all build on it."""
