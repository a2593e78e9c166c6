"""What the ledger and metrics tests share: one key, the price of the call they count, and
a scrape read back as numbers."""

from __future__ import annotations

from ethread.server.metrics import Metrics

KEY_ID = "k" * 64
BLOCK_COST = 80  # eth_getBlockByNumber


def scraped(metrics: Metrics) -> dict[str, float]:
    """Every sample a scrape of ``metrics`` reads now (not flushed first), by its line's name
    and labels."""
    values = {}
    for line in metrics.scrape(lambda: iter(())).decode().splitlines():
        if line and not line.startswith("#"):
            name, value = line.rsplit(" ", 1)
            values[name] = float(value)
    return values
