// viem's simulateBlocks and simulateCalls against a live ethread server (run by
// tests/clients/test_viem.py): a dev chain holding the ERC-20 of tests/contracts/Token.sol.
// Usage: node viem_simulate.mjs <http url> <json: {token, holder, recipient}>
import { createPublicClient, decodeEventLog, http, parseEther } from 'viem';
import { TOKEN, checks, same } from './checks.mjs';

const [url, infoText] = process.argv.slice(2);
const { token, holder, recipient } = JSON.parse(infoText);
const { abi } = TOKEN;
const client = createPublicClient({ transport: http(url) });
const ETH = '0xeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee';

const run = checks(console.log);
const { check } = run;

// One block, three calls: a transfer, a read that sees it, a transfer the sender cannot pay.
const [block] = await client.simulateBlocks({
  blocks: [{
    calls: [
      { from: holder, to: token, abi, functionName: 'transfer', args: [recipient, 100n] },
      { from: holder, to: token, abi, functionName: 'balanceOf', args: [recipient] },
      { from: recipient, to: token, abi, functionName: 'transfer', args: [holder, 1000n] },
    ],
  }],
});
const head = await client.getBlockNumber();
check(block.number === head + 1n, `the simulated block follows the head (${block.number} after ${head})`);
check(block.transactions.length === 3, 'the block lists the three calls');
const [sent, read, refused] = block.calls;
check(sent.status === 'success' && sent.result === true, 'transfer succeeds');
check(sent.logs.length === 1, 'transfer logs one event');
const event = decodeEventLog({ abi, data: sent.logs[0].data, topics: sent.logs[0].topics });
check(event.eventName === 'Transfer' && same(event.args.from, holder) && same(event.args.to, recipient)
      && event.args.value === 100n, 'the Transfer event decodes');
check(sent.logs[0].blockHash === block.hash, 'the log carries the simulated block hash');
check(read.status === 'success' && read.result === 100n, `balanceOf sees the transfer (${read.result})`);
check(refused.status === 'failure', 'a transfer beyond the balance fails');
check(refused.error?.cause?.data?.errorName === 'InsufficientBalance' || /InsufficientBalance/.test(String(refused.error)),
      `the custom error decodes (${refused.error?.shortMessage})`);

// Two blocks: ether moves and is traced as an ERC-7528 transfer, the next block sees it.
const funded = [{ address: recipient, balance: parseEther('2') }];
const blocks = await client.simulateBlocks({
  traceTransfers: true,
  blocks: [
    { stateOverrides: funded, calls: [{ from: recipient, to: holder, value: parseEther('1') }] },
    { blockOverrides: { time: block.timestamp + 100n }, calls: [{ from: recipient, to: holder, value: parseEther('1') }] },
  ],
});
check(blocks.length === 2 && blocks[1].timestamp === block.timestamp + 100n, 'block overrides apply');
const traced = blocks[0].calls[0].logs;
check(traced.length === 1 && same(traced[0].address, ETH), 'an ether transfer is traced from 0xeeee...eeee');
check(blocks[1].calls[0].status === 'success', 'the second block spends what is left');

// simulateCalls with asset changes: the holder's token balance drops by what it sends.
const { results, assetChanges } = await client.simulateCalls({
  account: holder,
  calls: [{ to: token, abi, functionName: 'transfer', args: [recipient, 250n] }],
  traceAssetChanges: true,
});
check(results[0].status === 'success', 'simulateCalls runs the transfer');
const change = assetChanges.find((c) => same(c.token.address, token));
check(change !== undefined && change.value.diff === -250n, `asset change of the token (${change?.value?.diff})`);

if (run.failures) {
  console.log(`${run.failures} viem checks failed`);
  process.exit(1);
}
console.log('all viem checks passed');
