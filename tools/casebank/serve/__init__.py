"""Serving a case: the role views and the results oracle (pure, over a case and the catalog),
and what builds on them: the export bundle, the scorer, the harness task and the site. The pure
modules (views, oracle) import only the format side, so the check side may use them too."""
