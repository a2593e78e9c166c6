// Compile sources/*.sol and the test suites' ERC-20 (tests/contracts/Token.sol, the one
// source of the token every client test uses) with solc-js (npm `solc`, offline: the compiler
// is JavaScript) into Ape contract types, contracts/<Name>.json, which Ape loads with no
// compiler plugin.
//
//   node compile.js [OUT_DIR]      (solc from ../../../../tests/contracts: npm ci there first)
"use strict";
const fs = require("fs");
const path = require("path");
const shared = path.join(__dirname, "../../../../tests/contracts");
const solc = require(path.join(shared, "node_modules/solc"));

const out = process.argv[2] || path.join(__dirname, "contracts");
const folder = path.join(__dirname, "sources");
const sources = { "Token.sol": { content: fs.readFileSync(path.join(shared, "Token.sol"), "utf8") } };
for (const file of fs.readdirSync(folder).filter((f) => f.endsWith(".sol")).sort()) {
  sources[file] = { content: fs.readFileSync(path.join(folder, file), "utf8") };
}
// cancun: what the three providers the benchmark compares all run (eth-tester's py-evm too).
const settings = {
  optimizer: { enabled: true, runs: 200 },
  evmVersion: "cancun",
  outputSelection: { "*": { "*": ["abi", "evm.bytecode.object", "evm.deployedBytecode.object"] } },
};
const output = JSON.parse(solc.compile(JSON.stringify({ language: "Solidity", sources, settings })));
const errors = (output.errors || []).filter((e) => e.severity === "error");
if (errors.length) {
  for (const e of errors) process.stderr.write(e.formattedMessage + "\n");
  process.exit(1);
}
fs.mkdirSync(out, { recursive: true });
for (const file of Object.keys(sources)) {
  for (const [name, c] of Object.entries(output.contracts[file])) {
    if (!c.evm.bytecode.object) continue; // an interface
    const contractType = {
      contractName: name,
      sourceId: "sources/" + file,
      abi: c.abi,
      deploymentBytecode: { bytecode: "0x" + c.evm.bytecode.object },
      runtimeBytecode: { bytecode: "0x" + c.evm.deployedBytecode.object },
    };
    fs.writeFileSync(path.join(out, name + ".json"), JSON.stringify(contractType, null, 1) + "\n");
  }
}
