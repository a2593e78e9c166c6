// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

interface IToken {
    function transfer(address to, uint256 amount) external returns (bool);
    function transferFrom(address from, address to, uint256 amount) external returns (bool);
}

/// Holds a token for its depositors until a time: calls the token (a call tree two deep) and
/// reads block.timestamp (time travel).
contract TimeLock {
    struct Lock {
        uint256 amount;
        uint256 unlockAt;
    }

    IToken public immutable token;
    mapping(address => Lock) public locks;

    event Locked(address indexed holder, uint256 amount, uint256 unlockAt);
    event Released(address indexed holder, uint256 amount);

    error StillLocked(uint256 unlockAt, uint256 time);

    constructor(IToken token_) {
        token = token_;
    }

    function lock(uint256 amount, uint256 duration) external {
        require(amount > 0, "nothing to lock");
        require(token.transferFrom(msg.sender, address(this), amount), "transfer failed");
        Lock storage held = locks[msg.sender];
        held.amount += amount;
        held.unlockAt = block.timestamp + duration;
        emit Locked(msg.sender, held.amount, held.unlockAt);
    }

    function release() external returns (uint256 amount) {
        Lock storage held = locks[msg.sender];
        amount = held.amount;
        require(amount > 0, "nothing locked");
        if (block.timestamp < held.unlockAt) revert StillLocked(held.unlockAt, block.timestamp);
        held.amount = 0;
        require(token.transfer(msg.sender, amount), "transfer failed");
        emit Released(msg.sender, amount);
    }
}
