"""What a backend shows in the REPL and in notebooks: the blocks it holds (and any gaps), its
head, its network and where its files live (for Era1, the sidecar index too)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..display import html_table, utc
from ..forks import network_name


def backend_facts(backend: Any, kind: str, location: Mapping[str, str]) -> list[tuple[str, str]]:
    """What a backend shows: its blocks, head, network and where its files live."""
    earliest, latest = backend.pointer("earliest"), backend.pointer("latest")
    config = backend.chain_config()
    rows = [("backend", kind)]
    if latest is None:
        rows.append(("blocks", "none (empty)"))
    else:
        rows.append(("blocks", f"{earliest:,}..{latest:,} ({latest - earliest + 1:,} blocks)"))
        gaps = getattr(backend, "missing_ranges", None)
        missing = gaps(earliest, latest + 1) if gaps is not None else []
        if missing:
            rows.append(("missing", ", ".join(f"{a:,}..{b:,}" for a, b in missing)))
        head_hash = backend.canonical_hash(latest)
        header = backend.header_by_hash(head_hash) if head_hash is not None else None
        head = f"{latest:,}"
        if header is not None:
            head += f" 0x{header.hash.hex()} at {utc(header.timestamp)}"
        rows.append(("head", head))
    if config is None:
        rows.append(("network", "unknown (no chain config)"))
    else:
        name = network_name(config)
        rows.append(("network", f"{name} (chain id {config.chain_id})" if name
                     else f"chain id {config.chain_id}"))
    rows.extend(location.items())
    return rows


def backend_repr(backend: Any, kind: str, location: Mapping[str, str]) -> str:
    """``Kind(blocks=..., head=..., network=..., ...)`` on one line."""
    facts = backend_facts(backend, kind, location)[1:]
    return f"{kind}(" + ", ".join(f"{k}={v}" for k, v in facts) + ")"


def backend_html(backend: Any, kind: str, location: Mapping[str, str]) -> str:
    """An HTML table of :func:`backend_facts`."""
    facts = backend_facts(backend, kind, location)
    return html_table(kind, facts[1:])
