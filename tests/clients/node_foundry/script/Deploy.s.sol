// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {Counter} from "../src/Counter.sol";

/// The cheatcodes this script uses, declared here (forge-std is not installed offline).
interface Vm {
    function envUint(string calldata name) external view returns (uint256);
    function startBroadcast(uint256 privateKey) external;
    function stopBroadcast() external;
}

/// Deploys a Counter starting at 40 and adds 2 to it, broadcasting both transactions.
contract Deploy {
    Vm internal constant vm = Vm(address(uint160(uint256(keccak256("hevm cheat code")))));

    function run() external returns (Counter counter) {
        vm.startBroadcast(vm.envUint("DEPLOYER_KEY"));
        counter = new Counter(40);
        counter.add(2);
        vm.stopBroadcast();
    }
}
