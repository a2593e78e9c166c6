// ethers.js v6 reading the rpc-compat chain (the execution-apis conformance chain) from a live
// ethread server: the answers its conformance cases know. tests/clients/test_ethers.py runs:
//
//   node ethers_rpc_compat.mjs HTTP_URL
//
// Prints one line per group of checks; exits 0 only when every check passed.

import assert from "node:assert/strict";
import { JsonRpcProvider } from "ethers";

const [httpUrl] = process.argv.slice(2);
const EMITTER = "0x7dcd17433742f4c0ca53122ab541d0ba67fc27df";
const DELEGATED = "0xeda8645ba6948855e3b3cd596bbb07596d59c603";
const BLOB_TX = "0x6bcea0da8e703d3283c8f1124377a63023290cd188de3274d12441e15dc14794";
const SETCODE_TX = "0x16f6724ad864e7664c367893cae3e176d362bea3a47495cec3b246555a7228da";

const deadline = setTimeout(() => {
  console.error("timed out");
  process.exit(1);
}, 60_000);

const provider = new JsonRpcProvider(httpUrl, undefined, { staticNetwork: true });

const blob = await provider.getTransactionReceipt(BLOB_TX);
assert.equal(blob.blockNumber, 42);
assert.equal(blob.type, 3);
assert.equal(blob.status, 1);
assert.equal(blob.blobGasUsed, 0x20000n);
assert.equal(blob.blobGasPrice, 1n);
assert.equal(blob.logs[0].address.toLowerCase(), EMITTER);
const setCode = await provider.getTransactionReceipt(SETCODE_TX);
assert.equal(setCode.type, 4);
assert.equal(setCode.gasUsed, 0x8fc0n);
assert.equal(await provider.getTransactionReceipt("0x" + "00".repeat(31) + "01"), null);
console.log("receipts ok");

assert.equal(await provider.getBalance(EMITTER), 0x56n);
assert.equal(await provider.getBalance(EMITTER, "0x61857226df2f4c8affcf75e02a6b279e9b35cf6dea8994ab98ffafbcc4d497b3"), 0x3cn);
assert.equal(await provider.getTransactionCount(DELEGATED), 1);
assert.equal(await provider.getCode(DELEGATED), "0xef010058f8fe237b593c19546e1e758a2544561d04bfe0");
assert.equal(BigInt(await provider.getStorage(EMITTER, 0)), 0x2an);
console.log("balance, nonce, code, storage ok");

const history = await provider.send("eth_feeHistory", ["0x1", "0x1b", [95, 99]]);
assert.deepEqual(history.reward, [["0x1", "0x1"]]);
assert.deepEqual(history.baseFeePerGas, ["0x3b9aca00", "0x342dc057"]);
assert.equal(await provider.send("eth_blobBaseFee", []), "0x1");
const fees = await provider.getFeeData();
assert.ok(fees.gasPrice > 0n);
console.log("fee history, blob base fee, fee data ok");

const filterId = await provider.send("eth_newFilter", [{ fromBlock: "0x0", address: EMITTER }]);
assert.deepEqual(await provider.send("eth_getFilterChanges", [filterId]), []);
const all = await provider.send("eth_getFilterLogs", [filterId]);
const logs = await provider.getLogs({ fromBlock: 0, address: EMITTER });
assert.equal(all.length, logs.length);
assert.ok(all.length > 5);
assert.equal(await provider.send("eth_uninstallFilter", [filterId]), true);
console.log("filters ok");

provider.destroy();
clearTimeout(deadline);
console.log("all ethers checks passed");
