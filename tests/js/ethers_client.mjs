// ethers.js v6, a client nobody here wrote, against a live ethread server serving the demo
// chain. tests/test_server_ethers.py starts the server and runs:
//
//   node ethers_client.mjs HTTP_URL WS_URL DEMO_JSON
//
// DEMO_JSON names the demo's contracts: {"reverter": "0x..", "logEmitter": "0x.."}.
// Prints one line per check; exits 0 only when every check passed.

import assert from "node:assert/strict";
import { JsonRpcProvider, WebSocketProvider } from "ethers";

const [httpUrl, wsUrl, demoJson] = process.argv.slice(2);
const demo = JSON.parse(demoJson);
const ERROR_CALL = "0x01"; // the reverter answers Error("user error")

const deadline = setTimeout(() => {
  console.error("timed out");
  process.exit(1);
}, 60_000);

async function readChecks(provider, label) {
  const network = await provider.getNetwork();
  assert.equal(network.chainId, 1337n);

  const head = await provider.getBlockNumber();
  assert.ok(head >= 50, `head ${head}`);

  const block = await provider.getBlock(10, true);
  assert.equal(block.number, 10);
  assert.equal(block.prefetchedTransactions.length, 5);
  const second = block.prefetchedTransactions[1];

  const tx = await provider.getTransaction(second.hash);
  assert.equal(tx.blockNumber, 10);
  assert.equal(tx.index, 1);
  assert.equal(tx.blockHash, block.hash);

  const receipts = await provider.send("eth_getBlockReceipts", ["0xa"]);
  assert.equal(receipts.length, 5);
  assert.deepEqual(receipts.slice(0, 3).map((r) => r.status), ["0x0", "0x0", "0x0"]);

  const logs = await provider.getLogs({ fromBlock: 0, toBlock: 50, address: demo.logEmitter });
  assert.ok(logs.length >= 30, `${logs.length} logs`);
  for (const log of logs) assert.equal(log.address.toLowerCase(), demo.logEmitter.toLowerCase());

  const uncle = await provider.send("eth_getUncleByBlockNumberAndIndex", ["0x5", "0x1"]);
  assert.equal(uncle.number, "0x4");

  await assert.rejects(provider.call({ to: demo.reverter, data: ERROR_CALL }), (error) => {
    assert.equal(error.code, "CALL_EXCEPTION");
    assert.equal(error.reason, "user error");
    return true;
  });
  console.log(`${label}: blocks, transactions, receipts, logs, uncles, revert ok`);
}

async function newBlocks(provider, count) {
  const seen = [];
  await new Promise((resolve, reject) => {
    provider.on("block", (number) => {
      seen.push(number);
      if (seen.length === count) resolve();
    }).catch(reject);
  });
  await provider.removeAllListeners("block");
  // ethers sends eth_unsubscribe without waiting for it; let it finish before destroy().
  await new Promise((resolve) => setTimeout(resolve, 200));
  return seen;
}

const http = new JsonRpcProvider(httpUrl);
await readChecks(http, "JsonRpcProvider");
http.destroy();

const ws = new WebSocketProvider(wsUrl);
await readChecks(ws, "WebSocketProvider");
const heads = await newBlocks(ws, 2);
assert.equal(heads[1], heads[0] + 1);
console.log(`WebSocketProvider: newHeads ${heads.join(", ")} ok`);
await ws.destroy();

clearTimeout(deadline);
console.log("all ethers checks passed");
