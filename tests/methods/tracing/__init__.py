"""What the tracing tests share."""

from ethread.devchain import contracts

# Calls the address in its calldata's first 20 bytes with the rest of the calldata, and stops
# whatever the call did.
FORWARDER = contracts.assemble(
    20, "CALLDATASIZE", "SUB", 20, 0, "CALLDATACOPY",
    0, 0, 20, "CALLDATASIZE", "SUB", 0, 0, 0, "CALLDATALOAD", 96, "SHR", "GAS", "CALL",
    "POP", "STOP")
