"""Importing a chain: reading a genesis file and executing blocks from RLP into a writable backend."""
