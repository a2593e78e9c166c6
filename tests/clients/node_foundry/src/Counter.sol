// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

/// A counter with an owner and an event: the contract the script deploys and then calls.
contract Counter {
    address public owner;
    uint256 public count;

    event Counted(address indexed by, uint256 count);

    constructor(uint256 start) {
        owner = msg.sender;
        count = start;
    }

    function add(uint256 amount) external returns (uint256) {
        count += amount;
        emit Counted(msg.sender, count);
        return count;
    }
}
