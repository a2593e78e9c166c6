// ethers.js v6, a client nobody here wrote, against a live ethread server serving the demo
// chain. tests/clients/test_ethers.py starts the server and runs:
//
//   node ethers_client.mjs HTTP_URL WS_URL DEMO_JSON
//
// DEMO_JSON names the demo's contracts: {"reverter": "0x..", "logEmitter": "0x.."}.
// Prints one line per check; exits 0 only when every check passed.

import assert from "node:assert/strict";
import { JsonRpcProvider, WebSocketProvider, id } from "ethers";

const [httpUrl, wsUrl, demoJson] = process.argv.slice(2);
const demo = JSON.parse(demoJson);
const ERROR_CALL = "0x01"; // the reverter answers Error("user error")
const TICK_TOPIC = id("Tick(uint256,address)"); // each block the demo mines while served emits one

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

  const receipt = await provider.getTransactionReceipt(second.hash);
  assert.equal(receipt.blockNumber, 10);
  assert.equal(receipt.index, 1);
  assert.equal(receipt.hash, second.hash);
  assert.equal(receipt.from.toLowerCase(), second.from.toLowerCase());
  const balance = await provider.getBalance(second.from, 10);
  assert.equal(typeof balance, "bigint");
  assert.ok((await provider.getBalance(second.from)) > 0n);
  assert.ok((await provider.getTransactionCount(second.from, 10)) >= second.nonce + 1);
  const code = await provider.getCode(demo.logEmitter);
  assert.ok(code.length > 2, "the log emitter has code");
  assert.equal(await provider.getCode("0x" + "c1".repeat(20)), "0x");
  assert.equal((await provider.getStorage(demo.logEmitter, 0)).length, 66);
  const fees = await provider.getFeeData();
  assert.ok(fees.gasPrice > 0n && fees.maxPriorityFeePerGas > 0n && fees.maxFeePerGas > 0n);
  const history = await provider.send("eth_feeHistory", ["0x4", "latest", [25, 75]]);
  assert.equal(history.reward.length, 4);
  assert.equal(history.baseFeePerGas.length, 5);
  console.log(`${label}: receipt, balance, nonce, code, storage, fee data, fee history ok`);
}

async function newTicks(provider, count) {
  // On a JsonRpcProvider ethers follows an event with eth_newFilter and eth_getFilterChanges.
  const seen = [];
  await new Promise((resolve, reject) => {
    provider.on({ address: demo.logEmitter, topics: [TICK_TOPIC] }, (log) => {
      seen.push(log);
      if (seen.length === count) resolve();
    }).catch(reject);
  });
  await provider.removeAllListeners();
  // ethers sends eth_uninstallFilter without waiting for it; let it finish before destroy().
  await new Promise((resolve) => setTimeout(resolve, 300));
  return seen;
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

const http = new JsonRpcProvider(httpUrl, undefined, { pollingInterval: 200 });
await readChecks(http, "JsonRpcProvider");
const ticks = await newTicks(http, 2);
assert.equal(ticks[1].blockNumber, ticks[0].blockNumber + 1);
for (const log of ticks) assert.equal(BigInt(log.topics[1]), BigInt(log.blockNumber));
console.log(`JsonRpcProvider: filter logs of blocks ${ticks.map((l) => l.blockNumber).join(", ")} ok`);
http.destroy();

const ws = new WebSocketProvider(wsUrl);
await readChecks(ws, "WebSocketProvider");
const heads = await newBlocks(ws, 2);
assert.equal(heads[1], heads[0] + 1);
console.log(`WebSocketProvider: newHeads ${heads.join(", ")} ok`);
await ws.destroy();

clearTimeout(deadline);
console.log("all ethers checks passed");
