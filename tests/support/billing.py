"""What the ledger tests charge: one key, and the price of the call they count."""

KEY_ID = "k" * 64
BLOCK_COST = 80  # eth_getBlockByNumber
