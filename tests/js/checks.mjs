// What the client scripts share: the ERC-20 of tests/contracts/Token.sol as solc-js compiled
// it, and their checks (each failure named on `report`, counted for the exit code).
import { readFileSync } from 'node:fs';

export const TOKEN = JSON.parse(readFileSync(new URL('../contracts/Token.json', import.meta.url))).contracts.Token;

export const same = (a, b) => a.toLowerCase() === b.toLowerCase();

export function checks(report) {
  const state = { failures: 0 };
  state.check = (ok, what) => {
    if (!ok) {
      state.failures += 1;
      report(`FAILED: ${what}`);
    }
  };
  return state;
}
