// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

// The part of hardhat's console.sol the test needs, in the same shape: an ABI-encoded
// log(...) call to the console address, answered by nothing on a chain and shown by the tools.
library console {
    address constant CONSOLE_ADDRESS = 0x000000000000000000636F6e736F6c652e6c6f67;

    function _send(bytes memory payload) private view {
        address target = CONSOLE_ADDRESS;
        assembly ("memory-safe") {
            pop(staticcall(gas(), target, add(payload, 32), mload(payload), 0, 0))
        }
    }

    function log(string memory p0) internal view {
        _send(abi.encodeWithSignature("log(string)", p0));
    }

    function log(string memory p0, uint256 p1) internal view {
        _send(abi.encodeWithSignature("log(string,uint256)", p0, p1));
    }

    function log(string memory p0, address p1) internal view {
        _send(abi.encodeWithSignature("log(string,address)", p0, p1));
    }
}

// A vault that keeps deposits and a bank that moves them: a withdrawal past the balance
// reverts in the vault with a custom error, which the bank's call lets through.
contract Vault {
    mapping(address => uint256) public balances;
    error Insufficient(address account, uint256 wanted, uint256 held);

    function deposit(address account) external payable {
        balances[account] += msg.value;
        console.log("deposit for", account);
    }

    function take(address account, uint256 amount) external {
        uint256 held = balances[account];
        console.log("take, held:", held);
        if (amount > held) revert Insufficient(account, amount, held);
        balances[account] = held - amount;
    }
}

contract Bank {
    Vault public immutable vault;

    constructor(Vault v) {
        vault = v;
    }

    function withdraw(uint256 amount) external {
        console.log("withdraw", amount);
        vault.take(msg.sender, amount);
    }

    function checked(uint256 amount) external pure returns (uint256) {
        require(amount < 100, "amount too large");
        return amount;
    }
}
