#!/usr/bin/env node
// A `solc` command backed by solc-js (npm `solc`, offline), speaking the part of the native
// compiler's command line that foundry's forge uses: `--version`, and `--standard-json` with
// the input on stdin and the output on stdout (forge passes its path flags too; the sources
// arrive with their content, and an import it did not include is read from the file system).
//
//   forge build --offline --use tests/contracts/solc-cli.js
"use strict";
const fs = require("fs");
const path = require("path");
const solc = require("solc");

const args = process.argv.slice(2);
if (args.includes("--version")) {
  // the native compiler's two lines; forge reads the version from the last one
  process.stdout.write("solc, the solidity compiler commandline interface\n");
  process.stdout.write("Version: " + solc.version() + "\n");
  process.exit(0);
}
if (!args.includes("--standard-json")) {
  process.stderr.write("solc-cli.js: only --version and --standard-json are supported\n");
  process.exit(2);
}
const valued = (flag) => {
  const at = args.indexOf(flag);
  return at === -1 ? [] : args[at + 1].split(",");
};
const roots = [...valued("--base-path"), ...valued("--include-path"), process.cwd()];

function findImports(file) {
  for (const root of roots) {
    const candidate = path.resolve(root, file);
    if (fs.existsSync(candidate)) return { contents: fs.readFileSync(candidate, "utf8") };
  }
  return { error: "file not found: " + file };
}

const chunks = [];
process.stdin.on("data", (chunk) => chunks.push(chunk));
process.stdin.on("end", () => {
  const input = Buffer.concat(chunks).toString("utf8");
  process.stdout.write(solc.compile(input, { import: findImports }));
});
