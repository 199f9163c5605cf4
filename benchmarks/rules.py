"""Where one process's validation time goes, case by case: the loader, the schema's yes/no,
and each case rule, summed over the cases of a repository (the profile that guided round 8).

    python3 benchmarks/rules.py REPO [--tools DIR] [--top N]

``--tools`` times another tree's code (a ``git archive`` of its ``tools/``). A rule's time
includes what it computes first for the rules after it (the oracle, the results read once), so
the first rule to ask for a shared reading carries it. One process, so only the shares and a
before/after taken back to back mean much on a shared machine.
"""

from __future__ import annotations

import argparse
import gc
import sys
import time
from collections import Counter
from pathlib import Path


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("repo", type=Path)
    parser.add_argument("--tools", type=Path, default=Path(__file__).parents[1] / "tools")
    parser.add_argument("--top", type=int, default=20)
    args = parser.parse_args()
    sys.path.insert(0, str(args.tools.resolve()))
    from casebank.check.engine import Checker
    from casebank.check.registry import CaseContext
    from casebank.format.catalog import build_catalog
    from casebank.format.loader import load_data, load_document

    root = args.repo
    files = sorted((root / "cases").glob("*.yaml"))
    raws = [(f"cases/{p.name}", p.read_bytes()) for p in files]
    catalog = build_catalog(load_data("catalog.yaml", (root / "catalog.yaml").read_bytes()))
    checker = Checker(catalog)
    schema = checker.case_schema
    gc.freeze()  # as validation's workers do: the catalog is not traced again and again
    times: Counter[str] = Counter()
    start = time.perf_counter()
    docs = [load_document(name, raw).document for name, raw in raws]
    times["(loader)"] = time.perf_counter() - start
    for doc in docs:
        assert doc is not None
        start = time.perf_counter()
        list(schema.check(doc))
        times["(schema)"] += time.perf_counter() - start
        context = CaseContext(doc, catalog)
        for rule in checker.case_rules:
            assert rule.check is not None
            start = time.perf_counter()
            list(rule.check(context))
            times[rule.code] += time.perf_counter() - start
    rules = sum(v for k, v in times.items() if not k.startswith("("))
    print(f"{len(docs):,} cases, code {args.tools}")
    print(f"{'loader':<10} {times['(loader)']:7.3f} s")
    print(f"{'schema':<10} {times['(schema)']:7.3f} s")
    print(f"{'rules':<10} {rules:7.3f} s  ({len(checker.case_rules)} rules)")
    for code, seconds in times.most_common():
        if not code.startswith("(") and args.top > 0:
            print(f"  {code:<8} {seconds:7.3f} s")
            args.top -= 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
