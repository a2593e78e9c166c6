"""Models to JSON values, derived from the field declarations in :mod:`ethread.models`.

Each class gets a writer built once per answer style (:mod:`ethread.codec.answers`). History
is immutable under its hash, so its JSON can be encoded once and kept as an
``orjson.Fragment`` in a :class:`FragmentCache` (one per dispatcher and backend).
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Callable, Hashable, Sequence
from typing import Any, Protocol

import orjson

from ..models import Block, Header, IncludedTransaction, Kind, Log, Receipt
from ..results import Availability, Capabilities, ChainForks, FeeHistory, ForkConfig
from ..rlpcodec.blocks import BlockOutline, outline_of_block
from .answers import DEFAULT_ANSWERS, AnswerStyle

JSON = Any
Encoded = bytes
"""JSON text as bytes (a name the cache's ``bytes`` property does not hide)."""
Writer = Callable[[Any], JSON]


def _hex_int(value: int) -> str:
    return hex(value)


def _hex_bytes(value: bytes) -> str:
    return "0x" + value.hex()


def _slot(value: bytes) -> str:
    return _hex_bytes(value) if len(value) == 32 else _hex_int(int.from_bytes(value, "big"))


def _scalar_writer(kind: Kind, style: AnswerStyle) -> Writer:
    if kind is Kind.QUANTITY:
        return _hex_int
    if kind is Kind.DATA:
        return _hex_bytes
    if kind is Kind.BOOL:
        return bool
    if kind is Kind.SLOT:
        return _slot
    if kind is Kind.TEXT:
        return str
    if style is DEFAULT_ANSWERS:
        return to_json
    return lambda value: to_json(value, None, style)


def _writer(kind: Kind, style: AnswerStyle) -> Writer:
    scalar = _scalar_writer(kind, style)

    def write(value: Any) -> JSON:
        if value is None:
            return None
        if isinstance(value, tuple | list):
            return [scalar(item) for item in value]
        return scalar(value)

    return write


Plan = tuple[tuple[str, str, Writer, bool], ...]


_PLANS: dict[tuple[type, str], Plan] = {}


def _plan(cls: type, style: AnswerStyle) -> Plan:
    plan = _PLANS.get((cls, style.name))
    if plan is None:
        plan = _PLANS[cls, style.name] = _build_plan(cls, style)
    return plan


def _build_plan(cls: type, style: AnswerStyle) -> Plan:
    """The plan of ``cls`` without the keys ``style`` withholds."""
    withheld = style.withheld_keys(cls)
    steps: list[tuple[str, str, Writer, bool]] = []
    for f in dataclasses.fields(cls):
        if "json" not in f.metadata or f.metadata["json"] in withheld:
            continue
        steps.append((f.name, f.metadata["json"], _writer(f.metadata["kind"], style),
                      f.metadata["omit_none"]))
    for key, attribute, kind in getattr(cls, "computed", ()):
        if key not in withheld:
            steps.append((attribute, key, _writer(kind, style), True))
    return tuple(steps)


_COMPILED: dict[tuple[type, str], Callable[[Any], dict[str, JSON]]] = {}
_DIRECT = {(Kind.QUANTITY, int): "hex({})", (Kind.DATA, bytes): "'0x' + {}.hex()",
           (Kind.BOOL, bool): "bool({})", (Kind.TEXT, str): "{}"}
"""Expressions writing a value of a declared type straight away (no checks at run time)."""


def _compiled(cls: type, style: AnswerStyle) -> Callable[[Any], dict[str, JSON]]:
    """The writer of ``cls`` as a JSON object in ``style``, built once."""
    write = _COMPILED.get((cls, style.name))
    if write is None:
        write = _COMPILED[cls, style.name] = _compile(cls, style)
        if style is DEFAULT_ANSWERS:
            _DEFAULT_WRITERS[cls] = write
    return write


_DEFAULT_WRITERS: dict[type, Callable[[Any], dict[str, JSON]]] = {}
"""The default style's writers by class alone: the one lookup most writes make."""


def _direct(kind: Kind, hint: Any, value: str) -> str | None:
    """An expression writing ``value`` of type ``hint`` (None: the generic writer must)."""
    if typing.get_origin(hint) is tuple:
        args = typing.get_args(hint)
        if len(args) == 2 and args[1] is Ellipsis and (kind, args[0]) in _DIRECT:
            return f"[{_DIRECT[kind, args[0]].format('i')} for i in {value}]"
        return None
    template = _DIRECT.get((kind, hint))
    return template.format(value) if template is not None else None


def _compile(cls: type, style: AnswerStyle) -> Callable[[Any], dict[str, JSON]]:
    """Python source for one model class, from its plan: each field's expression chosen by its
    declared type, so a write does no type tests (nested models go through the generic
    writer). The object is one dict display in declaration order, ``omit_none`` keys deleted
    afterwards; a nested model under the key "" is spread into the object, built key by key."""
    hints = typing.get_type_hints(cls)
    kinds = {f.name: f.metadata["kind"] for f in dataclasses.fields(cls) if "json" in f.metadata}
    def spread_fields(model: Any) -> dict[str, JSON]:
        return _fields(model, style)

    namespace: dict[str, Any] = {"_fields": spread_fields}
    plan = _plan(cls, style)
    spread = any(key == "" for _, key, _, _ in plan)
    lines = ["def write(m):", "    out = {}"]
    entries: list[str] = []
    omitted: list[str] = []
    for number, (attribute, key, generic, omit_none) in enumerate(plan):
        hint = hints.get(attribute) if attribute in kinds else None
        optional = False
        if typing.get_origin(hint) in (types.UnionType, typing.Union):
            args = [a for a in typing.get_args(hint) if a is not type(None)]
            optional = len(args) < len(typing.get_args(hint))
            hint = args[0] if len(args) == 1 else None
        value = "v" if spread else f"m.{attribute}"
        expression = _direct(kinds[attribute], hint, value) if hint is not None else None
        generic_writer = expression is None
        if expression is None:
            namespace[f"w{number}"] = generic
            expression = f"w{number}({value})"
            optional = False  # the generic writer answers None for None
        if not spread:
            if optional or (omit_none and not generic_writer):
                expression = f"None if {value} is None else {expression}"
            entries.append(f"{key!r}: {expression}")
            if omit_none:
                omitted.append(key)
            continue
        lines.append(f"    v = m.{attribute}")
        if key == "":
            lines.append("    out.update(_fields(v))")
        elif omit_none:
            lines.append(f"    if v is not None: out[{key!r}] = {expression}")
        elif optional:
            lines.append(f"    out[{key!r}] = None if v is None else {expression}")
        else:
            lines.append(f"    out[{key!r}] = {expression}")
    if not spread:
        lines = ["def write(m):", f"    out = {{{', '.join(entries)}}}"]
        lines.extend(f"    if out[{key!r}] is None: del out[{key!r}]" for key in omitted)
    lines.append("    return out")
    exec("\n".join(lines), namespace)  # the source is built above from the declarations
    write: Callable[[Any], dict[str, JSON]] = namespace["write"]
    return write


class SharedFragments(Protocol):
    """Encoded JSON by name, shared by the workers of one server: a second level under
    :class:`FragmentCache`. Names say what they hold by hash. Neither call raises."""

    def get(self, name: bytes) -> bytes | None:
        """The bytes kept under ``name``, or None."""
        ...

    def put(self, name: bytes, encoded: bytes) -> None:
        """Keep ``encoded`` under ``name`` for every process (or drop it, when it cannot)."""
        ...


class FragmentCache:
    """Encoded JSON of immutable objects, keyed by what names them. Bounded in entries and
    bytes: when full it starts over (not an LRU on purpose: a hit is one dict lookup). With
    :attr:`shared` set, whole answers that cost a decode (a block's receipts) are also shared
    with the other processes."""

    def __init__(self, max_entries: int = 500_000, max_bytes: int = 256 << 20) -> None:
        self.max_entries = max_entries
        self.max_bytes = max_bytes
        self._entries: dict[Hashable, orjson.Fragment] = {}
        self._bytes = 0
        self.shared: SharedFragments | None = None

    def __len__(self) -> int:
        return len(self._entries)

    @property
    def bytes(self) -> int:
        """Bytes of encoded JSON held."""
        return self._bytes

    def get(self, key: Hashable, build: Callable[[], JSON]) -> orjson.Fragment:
        """The encoded fragment under ``key``, built with ``build`` and kept if not yet cached."""
        fragment = self._entries.get(key)
        if fragment is None:
            fragment = self.put(key, orjson.dumps(build()))
        return fragment

    def cached(self, key: Hashable) -> orjson.Fragment | None:
        """The fragment under ``key``, or None."""
        return self._entries.get(key)

    def put(self, key: Hashable, encoded: Encoded, shared_name: Encoded | None = None
            ) -> orjson.Fragment:
        """Keep ``encoded`` under ``key`` (and ``shared_name`` in :attr:`shared`); its fragment."""
        if len(self._entries) >= self.max_entries or self._bytes + len(encoded) > self.max_bytes:
            self._entries.clear()
            self._bytes = 0
        fragment = self._entries[key] = orjson.Fragment(encoded)
        self._bytes += len(encoded)
        if shared_name is not None and self.shared is not None:
            self.shared.put(shared_name, encoded)
        return fragment

    def shared_or_encoded(self, key: Hashable, shared_name: Encoded,
                          encode: Callable[[], Encoded | None]) -> orjson.Fragment | None:
        """The fragment under ``key``: held, else shared (``shared_name``), else ``encode()``d and kept."""
        fragment = self._entries.get(key)
        if fragment is not None:
            return fragment
        shared = self.shared
        if shared is not None:
            encoded = shared.get(shared_name)
            if encoded is not None:
                return self.put(key, encoded)
        encoded = encode()
        return None if encoded is None else self.put(key, encoded, shared_name)


def to_json(model: Any, fragments: FragmentCache | None = None,
            style: AnswerStyle = DEFAULT_ANSWERS) -> JSON:
    """A model (or a tuple of them) as JSON values in ``style``, as cached fragments with ``fragments``."""
    if isinstance(model, tuple | list):
        if fragments is None:
            return [to_json(item, None, style) for item in model]
        return [_fragment(item, fragments, style) for item in model]
    if fragments is None:
        return _fields(model, style)
    return _fragment(model, fragments, style)


def _fragment(model: Any, fragments: FragmentCache, style: AnswerStyle) -> JSON:
    """A log, receipt or transaction as its cached fragment (anything else as JSON values)."""
    kind = type(model)
    if kind is Log:
        key: Hashable = (b"log", model.block_hash, model.log_index, style.tag)
    elif kind is Receipt:
        key = (b"receipt", model.block_hash, model.transaction_index, style.tag)
    elif kind is IncludedTransaction:
        key = (b"tx", model.hash, model.block_hash, style.tag)
    else:
        return (to_json(model, fragments, style) if isinstance(model, tuple | list)
                else _fields(model, style))
    fragment = fragments.cached(key)
    if fragment is None:
        fragment = fragments.put(key, orjson.dumps(_fields(model, style)))
    return fragment


def block_receipts_json(block_hash: bytes, load: Callable[[], Sequence[Receipt] | None],
                        fragments: FragmentCache | None = None,
                        style: AnswerStyle = DEFAULT_ANSWERS) -> JSON:
    """eth_getBlockReceipts' answer for the block, read with ``load`` (None: not held) only if not cached."""
    if fragments is None:
        receipts = load()
        return None if receipts is None else [_fields(r, style) for r in receipts]

    def encode() -> Encoded | None:
        receipts = load()
        return None if receipts is None else receipts_answer(receipts, style)

    return fragments.shared_or_encoded((b"receipts", block_hash, style.tag),
                                       b"receipts" + style.tag + b":" + block_hash, encode)


def receipts_answer(receipts: Sequence[Receipt], style: AnswerStyle = DEFAULT_ANSWERS
                    ) -> Encoded:
    """A block's receipts encoded as eth_getBlockReceipts answers them (and the store keeps them)."""
    return orjson.dumps([_fields(r, style) for r in receipts])


def _fields(model: Any, style: AnswerStyle = DEFAULT_ANSWERS) -> dict[str, JSON]:
    write = _DEFAULT_WRITERS.get(type(model)) if style is DEFAULT_ANSWERS else None
    if write is None:
        write = _compiled(type(model), style)
    return write(model)


def header_json(header: Header, size: int, style: AnswerStyle = DEFAULT_ANSWERS
                ) -> dict[str, JSON]:
    """A header as the block object without a body (newHeads), with the block's ``size``."""
    out: dict[str, JSON] = to_json(header, None, style)
    out["size"] = _hex_int(size)
    return out


def block_json(block: Block, full_transactions: bool,
               fragments: FragmentCache | None = None,
               style: AnswerStyle = DEFAULT_ANSWERS) -> JSON:
    """A block as eth_getBlockByHash answers it; cached in ``fragments`` when given."""
    if fragments is None:
        return _block_fields(block, full_transactions, None, style)
    return fragments.get((b"block", block.hash, full_transactions, style.tag),
                         lambda: _block_fields(block, full_transactions, fragments, style))


def block_json_by_hash(block_hash: bytes, full_transactions: bool,
                       load: Callable[[], Block | BlockOutline | None],
                       fragments: FragmentCache | None = None,
                       style: AnswerStyle = DEFAULT_ANSWERS) -> JSON:
    """:func:`block_json` of the block with hash ``block_hash``, read with ``load`` only if not cached."""
    if fragments is None:
        block = load()
        return None if block is None else _block_fields(block, full_transactions, None, style)

    def encode() -> Encoded | None:
        block = load()
        return (None if block is None
                else orjson.dumps(_block_fields(block, full_transactions, fragments, style)))

    return fragments.shared_or_encoded(
        (b"block", block_hash, full_transactions, style.tag),
        (b"block+txs" if full_transactions else b"block") + style.tag + b":" + block_hash,
        encode)


def _block_fields(block: Block | BlockOutline, full_transactions: bool,
                  fragments: FragmentCache | None, style: AnswerStyle) -> dict[str, JSON]:
    """The block object; with transaction hashes only, ``block`` may be its outline."""
    if isinstance(block, BlockOutline):
        if full_transactions:
            raise TypeError("whole transactions are answered from a block, not its outline")
        outline = block
    elif not full_transactions:
        outline = outline_of_block(block)
    else:
        out = header_json(block.header, block.size, style)
        out["transactions"] = [to_json(t, fragments, style) for t in block.transactions]
        out["uncles"] = [_hex_bytes(u.hash) for u in block.uncles]
        if block.withdrawals is not None:
            out["withdrawals"] = to_json(block.withdrawals, None, style)
        return out
    out = header_json(outline.header, outline.size, style)
    out["transactions"] = [_hex_bytes(h) for h in outline.transaction_hashes]
    out["uncles"] = [_hex_bytes(h) for h in outline.uncle_hashes]
    if outline.withdrawals is not None:
        out["withdrawals"] = to_json(outline.withdrawals, None, style)
    return out


def go_float(value: float) -> float | int:
    """A float as Go's JSON encoder writes it: a whole number without a fraction."""
    return int(value) if value.is_integer() else value


def fee_history_json(history: FeeHistory) -> dict[str, JSON]:
    """eth_feeHistory's object. As geth writes it, empty lists (and a missing reward) leave
    their key out, except ``gasUsedRatio``; ``oldestBlock`` is always there."""
    out: dict[str, JSON] = {"oldestBlock": _hex_int(history.oldest_block)}
    if history.reward:
        out["reward"] = [[_hex_int(v) for v in row] for row in history.reward]
    if history.base_fee_per_gas:
        out["baseFeePerGas"] = [_hex_int(v) for v in history.base_fee_per_gas]
    out["gasUsedRatio"] = [go_float(r) for r in history.gas_used_ratio] if history.gas_used_ratio else None
    if history.base_fee_per_blob_gas:
        out["baseFeePerBlobGas"] = [_hex_int(v) for v in history.base_fee_per_blob_gas]
    if history.blob_gas_used_ratio:
        out["blobGasUsedRatio"] = [go_float(r) for r in history.blob_gas_used_ratio]
    return out


def _named_addresses(entries: Sequence[tuple[str, bytes]]) -> dict[str, str]:
    return {name: _hex_bytes(address) for name, address in entries}


def _fork_config_json(fork: ForkConfig | None) -> JSON:
    if fork is None:
        return None
    blob = fork.blob_schedule
    return {
        "activationTime": fork.activation_time,
        "blobSchedule": None if blob is None else {
            "target": blob.target, "max": blob.max, "baseFeeUpdateFraction": blob.update_fraction},
        "chainId": _hex_int(fork.chain_id),
        "forkId": _hex_bytes(fork.fork_id),
        "precompiles": _named_addresses(fork.precompiles),
        "systemContracts": _named_addresses(fork.system_contracts),
    }


def chain_forks_json(forks: ChainForks) -> dict[str, JSON]:
    """eth_config's object (EIP-7910) as geth writes it."""
    return {"current": _fork_config_json(forks.current), "next": _fork_config_json(forks.next),
            "last": _fork_config_json(forks.last)}


def _availability_json(availability: Availability) -> dict[str, JSON]:
    out: dict[str, JSON] = {"disabled": availability.disabled}
    if availability.oldest_block is not None:
        out["oldestBlock"] = _hex_int(availability.oldest_block)
    if availability.retention_blocks is not None:
        out["deleteStrategy"] = {"type": "window",
                                 "retentionBlocks": _hex_int(availability.retention_blocks)}
    return out


def capabilities_json(capabilities: Capabilities) -> dict[str, JSON]:
    """eth_capabilities' object as geth writes it: a kind of data that is disabled has no
    ``oldestBlock``, one that deletes nothing has no ``deleteStrategy``."""
    return {
        "head": {"number": _hex_int(capabilities.head_number),
                 "hash": _hex_bytes(capabilities.head_hash)},
        "state": _availability_json(capabilities.state),
        "tx": _availability_json(capabilities.tx),
        "logs": _availability_json(capabilities.logs),
        "receipts": _availability_json(capabilities.receipts),
        "blocks": _availability_json(capabilities.blocks),
        "stateproofs": _availability_json(capabilities.state_proofs),
    }
