// viem's test client in anvil mode, with its public and wallet clients, against `ethread node`
// (run by tests/clients/test_node_viem.py), used as a test suite uses it against anvil: no key,
// anvil's accounts, its anvil_*/evm_* controls. Prints one JSON line of what it saw, for the
// Python side to check against the chain; exits 1 naming each check that failed.
// Usage: node node_test_client.mjs <http url>
import {
  createPublicClient, createTestClient, createWalletClient, http, parseEther, webSocket,
} from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { foundry } from 'viem/chains';
import { TOKEN as token, checks, same } from './checks.mjs';

const [url] = process.argv.slice(2);
const chain = { ...foundry, rpcUrls: { default: { http: [url] } } };
const transport = http(url);
const test = createTestClient({ chain, mode: 'anvil', transport });
// (cacheTime 0: the block number is read afresh after each control, not from viem's cache)
const client = createPublicClient({ chain, transport, cacheTime: 0 });
const first = privateKeyToAccount('0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80');
const wallet = createWalletClient({ account: first, chain, transport });
const run = checks(console.error); // (stdout carries the JSON line)
const { check } = run;
const seen = {};

check(await client.getChainId() === 31337, 'chain id 31337');
const addresses = await wallet.requestAddresses();
check(addresses.length === 10 && same(addresses[0], first.address), "anvil's ten accounts");
seen.accounts = addresses;

// a transfer with a locally signed transaction: mined at once (automine)
const second = addresses[1];
const before = await client.getBalance({ address: second });
const transfer = await wallet.sendTransaction({ to: second, value: parseEther('2') });
const receipt = await client.waitForTransactionReceipt({ hash: transfer, timeout: 10_000 });
check(receipt.status === 'success', 'the transfer succeeds');
check(await client.getBalance({ address: second }) === before + parseEther('2'), 'the transfer arrives');
seen.transfer = transfer;

// a deploy and a call through the wallet client
const deploy = await wallet.deployContract({
  abi: token.abi, bytecode: token.bytecode, args: ['Node Token', 'NOD', 1000n],
});
const deployed = await client.waitForTransactionReceipt({ hash: deploy, timeout: 10_000 });
check(deployed.status === 'success' && deployed.contractAddress, 'the deploy succeeds');
const address = deployed.contractAddress;
const { request } = await client.simulateContract({
  account: first, address, abi: token.abi, functionName: 'transfer', args: [second, 250n],
});
await client.waitForTransactionReceipt({ hash: await wallet.writeContract(request), timeout: 10_000 });
check(await client.readContract({ address, abi: token.abi, functionName: 'balanceOf', args: [second] }) === 250n,
      'the token transfer is read back');
seen.token = address;

// the test client's controls
const start = await client.getBlockNumber();
await test.mine({ blocks: 3 });
check(await client.getBlockNumber() === start + 3n, 'mine 3 blocks');

const rich = '0x000000000000000000000000000000000000bEEF';
await test.setBalance({ address: rich, value: parseEther('123') });
check(await client.getBalance({ address: rich }) === parseEther('123'), 'setBalance');

const snapshot = await test.snapshot();
await test.setBalance({ address: rich, value: 1n });
check(await client.getBalance({ address: rich }) === 1n, 'setBalance after the snapshot');
await test.revert({ id: snapshot });
check(await client.getBalance({ address: rich }) === parseEther('123'), 'revert to the snapshot');

await test.impersonateAccount({ address: rich });
const impersonated = await test.sendUnsignedTransaction({ from: rich, to: second, value: parseEther('1') });
const sentAs = await client.waitForTransactionReceipt({ hash: impersonated, timeout: 10_000 });
check(sentAs.status === 'success' && same(sentAs.from, rich), 'a transaction sent as an impersonated account');
await test.stopImpersonatingAccount({ address: rich });
seen.impersonated = impersonated;

const head = await client.getBlock();
const when = head.timestamp + 1000n;
await test.setNextBlockTimestamp({ timestamp: when });
await test.mine({ blocks: 1 });
check((await client.getBlock()).timestamp === when, 'setNextBlockTimestamp');
await test.increaseTime({ seconds: 3600 });
await test.mine({ blocks: 1 });
check((await client.getBlock()).timestamp >= when + 3600n, 'increaseTime');

await test.setCode({ address: rich, bytecode: '0x602a60005260206000f3' });
check(await client.getCode({ address: rich }) === '0x602a60005260206000f3', 'setCode');
await test.setStorageAt({ address: rich, index: 2, value: `0x${'00'.repeat(31)}07` });
check(await client.getStorageAt({ address: rich, slot: '0x2' }) === `0x${'00'.repeat(31)}07`, 'setStorageAt');
await test.setNonce({ address: rich, nonce: 9 });
check(await client.getTransactionCount({ address: rich }) === 9, 'setNonce');

check(await test.getAutomine() === true, 'automine is on');
await test.setAutomine(false);
const waiting = await wallet.sendTransaction({ to: second, value: 1n });
check(await client.getTransactionReceipt({ hash: waiting }).then(() => false, () => true),
      'no receipt while automine is off');
await test.mine({ blocks: 1 });
check((await client.getTransactionReceipt({ hash: waiting })).status === 'success', 'mined by mine');
await test.setAutomine(true);

const dropped = await (async () => {
  await test.setAutomine(false);
  const hash = await wallet.sendTransaction({ to: second, value: 1n });
  await test.dropTransaction({ hash });
  await test.mine({ blocks: 1 });
  await test.setAutomine(true);
  return client.getTransactionReceipt({ hash }).then(() => false, () => true);
})();
check(dropped, 'dropTransaction');

const state = await test.dumpState();
check(state.startsWith('0x') && state.length > 100, 'dumpState');

// the same node over WebSocket at /, as anvil answers it
const ws = createPublicClient({ chain, transport: webSocket(url.replace('http', 'ws')), cacheTime: 0 });
check(await ws.getBlockNumber() === await client.getBlockNumber(), 'WebSocket at / reads the head');
const heads = [];
const unwatch = ws.watchBlockNumber({ onBlockNumber: (n) => heads.push(n), emitOnBegin: false });
await new Promise((r) => setTimeout(r, 500));
await test.mine({ blocks: 1 });
const deadline = Date.now() + 10_000;
while (!heads.length && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
unwatch();
check(heads.length > 0, 'a new head over the WebSocket subscription');
await ws.transport.getRpcClient().then((c) => c.close());

seen.head = Number(await client.getBlockNumber());
console.log(JSON.stringify(seen));
if (run.failures) process.exit(1);
