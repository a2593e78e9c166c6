// Compile the Solidity sources of this folder with solc-js (npm `solc`, offline) and print one
// JSON artifact per contract: ABI, creation bytecode, runtime bytecode, the exact compiler
// version and settings, and the keccak-256 of the source it came from.
//
//   node compile.js Token.sol > Token.json
"use strict";
const fs = require("fs");
const path = require("path");
const solc = require("solc");
const { keccak256 } = require("js-sha3");

const file = process.argv[2];
const source = fs.readFileSync(path.join(__dirname, file), "utf8");
const settings = {
  optimizer: { enabled: true, runs: 200 },
  evmVersion: "prague",
  outputSelection: { "*": { "*": ["abi", "evm.bytecode.object", "evm.deployedBytecode.object"] } },
};
const input = { language: "Solidity", sources: { [file]: { content: source } }, settings };
const output = JSON.parse(solc.compile(JSON.stringify(input)));
const errors = (output.errors || []).filter((e) => e.severity === "error");
if (errors.length) {
  for (const e of errors) process.stderr.write(e.formattedMessage + "\n");
  process.exit(1);
}
const contracts = {};
for (const [name, c] of Object.entries(output.contracts[file])) {
  contracts[name] = {
    abi: c.abi,
    bytecode: "0x" + c.evm.bytecode.object,
    deployedBytecode: "0x" + c.evm.deployedBytecode.object,
  };
}
const artifact = {
  compiler: "solc-js " + solc.version(),
  settings: { optimizer: settings.optimizer, evmVersion: settings.evmVersion },
  source: file,
  sourceKeccak256: "0x" + keccak256(source),
  contracts,
};
process.stdout.write(JSON.stringify(artifact, null, 1) + "\n");
