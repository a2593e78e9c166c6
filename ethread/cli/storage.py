"""The storage subcommands: ``import``, ``copy``, ``export``, ``verify``, ``upgrade`` and ``index``.
Each draws a progress bar on stderr and turns an ethread error into a message and exit status 1."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..backends.open import ENGINES
from ..errors import EthreadError
from ..progress import ProgressBar


def _guarded(run: Callable[[argparse.Namespace], int]) -> Callable[[argparse.Namespace], int]:
    def wrapper(args: argparse.Namespace) -> int:
        command = f"ethread {getattr(args, 'command', None) or run.__name__.removeprefix('run_')}"
        try:
            return run(args)
        except EthreadError as exc:
            print(f"\n{command}: error: {exc.message}", file=sys.stderr)
            return 1
        except ImportError as exc:  # an optional extra that is not installed
            print(f"\n{command}: error: {exc}", file=sys.stderr)
            return 2
        except KeyboardInterrupt:
            print("\ninterrupted", file=sys.stderr)
            return 130
    return wrapper


def run_import(args: argparse.Namespace) -> int:
    """``ethread import``: execute a genesis and RLP blocks into a store."""
    from ..backends.open import open_store
    from ..chain.importer import import_chain

    if args.blocks and not args.no_verify_seals:
        _announce_seal_checks(args.blocks)
    bar = ProgressBar("importing")
    with open_store(args.db, engine=args.engine, create=True) as backend:
        count = import_chain(backend, args.genesis, args.blocks,
                             verify_seals=not args.no_verify_seals, progress=bar)
        elapsed = bar.finish() if args.blocks else 0.0
        head = backend.pointer("latest")
    rate = count / elapsed if elapsed else 0.0
    print(f"imported {count} blocks in {elapsed:.1f}s ({rate:,.1f} blocks/s); head is block {head}")
    return 0


SEAL_CACHE_SECONDS = 40
"""About how long py-evm's ethash takes to build an epoch's cache before its first seal check."""


def _announce_seal_checks(blocks_path: str) -> None:
    """Before checking seals: fail at once when the first block has none (rather than build
    ethash's cache to refuse it), else say on stderr that the first check waits for the cache."""
    first = _first_header(blocks_path)
    if first is None or first.difficulty == 0:  # nothing to read, or no proof of work
        return
    if first.nonce == bytes(8) and first.mix_hash == bytes(32):
        raise EthreadError(f"block {first.number} carries no proof-of-work seal (its nonce and "
                           "mix hash are zero, as a dev chain's or a test fixture's blocks): "
                           "import it with --no-verify-seals")
    print(f"checking proof-of-work seals: ethash builds the cache of block {first.number}'s "
          f"epoch first (about {SEAL_CACHE_SECONDS} s, again at each new epoch); a chain "
          "without real seals imports with --no-verify-seals", file=sys.stderr, flush=True)


def _first_header(blocks_path: str) -> Any:
    """The header of the first block of a concatenated-RLP file (None if there is none)."""
    import rlp

    from ..rlpcodec.headers import header_from_fields

    try:
        with open(blocks_path, "rb") as file:
            head = file.read(9)
            if len(head) < 2 or head[0] < 0xF8:
                return None
            size_bytes = head[0] - 0xF7
            length = 1 + size_bytes + int.from_bytes(head[1:1 + size_bytes], "big")
            raw = head + file.read(length - len(head))
        return header_from_fields(rlp.decode(raw)[0])
    except (OSError, rlp.DecodingError, ValueError, IndexError, TypeError):
        return None


def run_copy(args: argparse.Namespace) -> int:
    """``ethread copy``: copy a store record by record into another (LevelDB to LMDB or back)."""
    from ..backends.keyvalue import copy_records
    from ..backends.open import open_store

    with open_store(args.db) as source, \
            open_store(args.to, engine=args.engine, create=True) as target:
        count = copy_records(source, target)
        head = target.pointer("latest")
    print(f"copied {count} records to {args.to} ({args.engine}); head is block {head}")
    return 0


def _export_source(args: argparse.Namespace) -> Any:
    from ..backends.open import open_backend

    if not (args.genesis or args.blocks or args.db or args.from_era):
        raise EthreadError("name the chain to export: --db DIR (a LevelDB store), --from-era DIR "
                           "(Era1 files), or --genesis G with --blocks B")
    if args.db and args.from_era:
        raise EthreadError("name one chain to export: --db or --from-era, not both")
    if args.genesis or args.blocks:
        if not (args.genesis and args.blocks) or args.db or args.from_era:
            raise EthreadError("give --genesis with --blocks, or --db, or --from-era")
        from ..backends.memory import MemoryBackend
        from ..chain.importer import import_chain

        backend = MemoryBackend()
        if not args.no_verify_seals:
            _announce_seal_checks(args.blocks)
        bar = ProgressBar("importing")
        import_chain(backend, args.genesis, args.blocks, verify_seals=not args.no_verify_seals,
                     progress=bar)
        bar.finish()
        return backend
    return open_backend(db=args.db, era=args.from_era)


def _export_target(args: argparse.Namespace) -> str:
    if args.era and args.out and args.era != args.out:
        raise EthreadError("give the output folder once: --era (Era1) or --out")
    target: str | None = args.out or args.era
    if target is None:
        flag = "--era OUT (or --out OUT)" if args.format != "parquet" else "--out OUT"
        raise EthreadError(f"name the output folder: {flag}")
    if args.format == "parquet" and args.era:
        raise EthreadError("--era names an Era1 output folder; with --format parquet use --out")
    return target


def run_export(args: argparse.Namespace) -> int:
    """``ethread export``: write a chain's blocks as Era1 (or ere) files or Parquet tables."""
    target = _export_target(args)
    if args.format == "parquet":
        from ..frames.extra import parquet

        parquet()  # the frames extra, checked before any chain is opened
    from ..backend import Closeable

    backend = _export_source(args)
    bar = ProgressBar("exporting")
    try:
        if args.format == "parquet":
            written = _export_parquet(backend, target, args, bar)
        elif args.format == "ere":
            from ..era1.ere_export import export_ere

            written = export_ere(backend, target, network=args.network, first=args.first,
                                 last=args.last, progress=bar)
        else:
            from ..era1.export import export_era1

            written = export_era1(backend, target, network=args.network, first=args.first,
                                  last=args.last, progress=bar)
    finally:
        if isinstance(backend, Closeable):
            backend.close()
    bar.finish()
    for path in written:
        print(path)
    return 0


def _export_parquet(backend: Any, target: str, args: argparse.Namespace,
                    bar: ProgressBar) -> list[Path]:
    from ..frames.parquet import export_parquet, held_spans
    from ..frames.tables import TABLES

    names = [t.strip() for t in args.tables.split(",") if t.strip()] if args.tables else TABLES
    unknown = [t for t in names if t not in TABLES]
    if unknown:
        raise EthreadError(f"no table {', '.join(unknown)}; the tables are {', '.join(TABLES)}")
    earliest, head = backend.pointer("earliest"), backend.pointer("latest")
    if head is None:
        raise EthreadError("the chain holds no blocks")
    first = args.first if args.first_given else earliest
    last = args.last if args.last is not None else head
    if last < first:
        raise EthreadError(f"--last {last} is before the first block {first}")
    spans = held_spans(backend, first, last + 1)
    if spans != [(first, last + 1)]:
        if not spans:
            raise EthreadError(f"the chain holds none of blocks {first}..{last} "
                               f"({_spans_text(held_spans(backend, earliest or 0, head + 1))} "
                               "are held)")
        held = _spans_text(spans)
        if args.first_given or args.last is not None:  # a range asked for: say what to ask
            asks = " or ".join(f"--first {lo} --last {hi - 1}" for lo, hi in spans[:3])
            raise EthreadError(f"blocks {first}..{last} have gaps: the chain holds {held} of "
                               f"them; export {asks}, or leave --first and --last out to "
                               "export every block held")
        print(f"ethread export: the chain has gaps; exporting the blocks it holds: {held}",
              file=sys.stderr)
    return export_parquet(backend, target, first, last + 1, tables=names, progress=bar, spans=spans)


def _spans_text(spans: list[tuple[int, int]]) -> str:
    return ", ".join(f"{lo}..{hi - 1}" for lo, hi in spans)


def run_verify(args: argparse.Namespace) -> int:
    """``ethread verify``: check Era1 files, or read back every record of a store."""
    if (args.era is None) == (args.db is None):
        raise EthreadError("give one of --era (Era1 files) or --db (a store)")
    if args.db is not None:
        return _verify_db(Path(args.db))
    from ..era1.archive import archive_paths, open_archive
    from ..era1.ere_verify import ere_summary, verify_ere
    from ..era1.file import Era1File
    from ..era1.verify import verify_file

    target = Path(args.era)
    paths = archive_paths(target) if target.is_dir() else [target]
    if not paths:
        raise EthreadError(f"no Era1 files (nor ere files) in {target}")
    failed = 0
    for path in paths:
        try:
            era = open_archive(path)
            bar = ProgressBar(path.name)
            try:
                if isinstance(era, Era1File):
                    verify_file(era, bar)
                    summary = (f"blocks {era.start}..{era.end - 1}, "
                               f"accumulator 0x{era.accumulator().hex()}")
                else:
                    verify_ere(era, bar)
                    summary = ere_summary(era)
            finally:
                bar.finish()
                era.close()
        except EthreadError as exc:
            failed += 1
            print(f"{path.name}: FAILED: {exc.message}")
            continue
        print(f"{path.name}: ok ({summary})")
    print(f"{len(paths) - failed} of {len(paths)} files verified")
    return 1 if failed else 0


def _verify_db(path: Path) -> int:
    from ..backends.open import open_store
    from ..backends.verify import verify_store
    from ..codec.stored_answers import DERIVED

    bar = ProgressBar("verifying")
    try:
        with open_store(path) as backend:
            try:
                report = verify_store(backend, bar, DERIVED)
            finally:
                bar.finish()
    except EthreadError as exc:
        print(f"{path}: FAILED: {exc.message}")
        return 1
    print(f"{path}: ok ({report.records} records; blocks 0..{report.head}, "
          f"{report.transactions} transactions, {report.logs} logs)"
          if report.head is not None else f"{path}: ok (an empty store)")
    if report.without_answers:
        print(f"{path}: {report.without_answers} blocks lack the answers this ethread keeps "
              f"beside each block (an older ethread wrote them): they are answered from their "
              f"records, more slowly; `ethread upgrade --db {path}` adds them")
    return 0


def run_upgrade(args: argparse.Namespace) -> int:
    """``ethread upgrade``: add what this ethread keeps beside each block to an older store."""
    from ..backends.open import open_store
    from ..codec.stored_answers import add_answers, drop_old_answers

    bar = ProgressBar("upgrading")
    with open_store(args.db) as backend:
        try:
            added = add_answers(backend, bar)
        finally:
            bar.finish()
        dropped = drop_old_answers(backend)
    print(f"{args.db}: answers kept beside {added} more blocks" if added
          else f"{args.db}: already up to date")
    if dropped:
        print(f"{args.db}: {dropped} answers of an older format (no longer read) removed")
    return 0


def run_index(args: argparse.Namespace) -> int:
    """``ethread index``: build an Era folder's sidecar index, or bring it up to date."""
    from ..backends.era import EraBackend

    if args.workers is not None and args.workers < 1:
        raise EthreadError(f"--workers must be at least 1, not {args.workers}")
    bar = ProgressBar("indexing")
    try:
        with EraBackend(args.era, index_path=args.index, progress=bar,
                        index_workers=args.workers) as backend:
            report = backend.index_report
            path = backend.index_path
    finally:
        bar.finish()
    size = sum(p.stat().st_size for p in (path, Path(f"{path}-wal")) if p.exists())
    for name, why in report.changed:
        print(f"{name}: indexed again: {why}")
    if report.indexed:
        seconds = max(report.seconds, 1e-9)
        print(f"indexed {len(report.indexed)} files ({report.blocks:,} blocks, "
              f"{report.transactions:,} transactions) in {report.seconds:.1f}s with "
              f"{report.workers} worker{'s' if report.workers > 1 else ''}: "
              f"{len(report.indexed) / seconds:,.1f} files/s, "
              f"{report.transactions / seconds:,.0f} transactions/s; "
              f"{report.unchanged} files were already indexed")
    else:
        print(f"the index is up to date ({report.unchanged} files)")
    print(f"index {path}: {size:,} bytes")
    return 0


def _with_first(run: Callable[[argparse.Namespace], int]) -> Callable[[argparse.Namespace], int]:
    """Record whether --first was given (its default depends on the format)."""
    def wrapper(args: argparse.Namespace) -> int:
        args.first_given = args.first is not None
        if args.first is None:
            args.first = 0
        return run(args)
    wrapper.__name__ = run.__name__
    return wrapper


def register(subparsers: Any) -> None:
    """Add the storage subcommands to the ``ethread`` command."""
    p = subparsers.add_parser("import", help="execute a chain and store it (LevelDB or LMDB)",
                              description="Execute and validate a chain (genesis.json and "
                              "concatenated block RLP) into a LevelDB or LMDB store; an "
                              "interrupted import resumes where it stopped.")
    p.add_argument("--db", required=True, help="store directory (created if missing)")
    p.add_argument("--engine", choices=ENGINES, default=None,
                   help="storage engine of a new store (default leveldb; an existing store "
                   "keeps its own): lmdb lets several processes serve it while one imports")
    p.add_argument("--genesis", required=True, help="geth-style genesis.json")
    p.add_argument("--blocks", help="blocks as concatenated RLP (geth export)")
    p.add_argument("--no-verify-seals", action="store_true",
                   help="skip proof-of-work seal checks (chains with zero seals)")
    p.set_defaults(run=_guarded(run_import))

    p = subparsers.add_parser("copy", help="copy a store into a new one (another engine)",
                              description="Copy every record of a store into a new store, "
                              "e.g. a LevelDB store into LMDB so that several worker "
                              "processes can serve it; an interrupted copy is completed by "
                              "running it again.")
    p.add_argument("--db", required=True, help="source store directory")
    p.add_argument("--to", required=True, help="new store directory")
    p.add_argument("--engine", choices=ENGINES, default="lmdb",
                   help="engine of the new store (default lmdb)")
    p.set_defaults(run=_guarded(run_copy))

    p = subparsers.add_parser("export", help="write Era1 files or Parquet tables from a backend",
                              description="Write the proof-of-work blocks of a chain as Era1 "
                              "files (8,192 blocks each) readable by other clients, or "
                              "(--format parquet) its blocks, transactions, receipts, logs, "
                              "withdrawals and uncles as Parquet tables.")
    p.add_argument("--format", choices=("era1", "ere", "parquet"), default="era1",
                   help="era1 (default; proof-of-work blocks), ere (pre- and post-merge) or "
                   "parquet (needs the frames extra)")
    p.add_argument("--era", help="output folder for the .era1 files")
    p.add_argument("--out", help="output folder (either format)")
    p.add_argument("--tables", help="parquet: comma-separated tables (default: all of "
                   "blocks,transactions,receipts,logs,withdrawals,uncles)")
    p.add_argument("--db", help="source: a LevelDB or LMDB store")
    p.add_argument("--from-era", help="source: a folder of Era1 files")
    p.add_argument("--genesis", help="source: genesis.json (with --blocks), imported in memory")
    p.add_argument("--blocks", help="source: blocks as concatenated RLP (with --genesis)")
    p.add_argument("--no-verify-seals", action="store_true",
                   help="with --genesis/--blocks: skip proof-of-work seal checks")
    p.add_argument("--network", help="network name in the file names (default: mainnet or "
                   "sepolia by chain id)")
    p.add_argument("--first", type=int, default=None,
                   help="first block (era1: a multiple of 8192, default 0; parquet: default "
                   "the earliest block held)")
    p.add_argument("--last", type=int, default=None, help="last block (default: era1 the last "
                   "proof-of-work block, parquet the head)")
    p.set_defaults(run=_guarded(_with_first(run_export)))

    p = subparsers.add_parser("verify", help="verify Era1 files or a store end to end",
                              description="Check every block of Era1 files against its header "
                              "(hash chain, transactions and receipts roots, total difficulty) "
                              "and the accumulator against the stored root and the file name; "
                              "or every record of a store (against LevelDB's checksums) and "
                              "every block against its header, its receipts and the indexes.")
    p.add_argument("--era", help="an Era1 or ere file, or a folder of them")
    p.add_argument("--db", help="a store directory (LevelDB or LMDB)")
    p.set_defaults(run=_guarded(run_verify))

    p = subparsers.add_parser("upgrade", help="add what this ethread keeps beside each block "
                              "to an older store",
                              description="Keep beside each block of a store that an older "
                              "ethread wrote the answers this one derives when it imports a "
                              "block (eth_getBlockReceipts' answer), so that a block no "
                              "process has read is answered with one lookup; blocks that "
                              "have them are skipped, so an interrupted upgrade resumes, and "
                              "answers of an older format, which nothing reads, are removed. "
                              "Another process may serve the store (LMDB) meanwhile.")
    p.add_argument("--db", required=True, help="a store directory (LevelDB or LMDB)")
    p.set_defaults(run=_guarded(run_upgrade))

    p = subparsers.add_parser("index", help="build an Era folder's sidecar index",
                              description="Build the sidecar index of a folder of Era1 and ere "
                              "files (block and transaction hashes, senders, logs), or bring "
                              "it up to date: files already indexed and unchanged are "
                              "skipped, so an interrupted build resumes at the first file "
                              "not complete and new files are indexed alone; a file that "
                              "changed since it was indexed is indexed again, and named.")
    p.add_argument("--era", required=True, metavar="DIR", help="the folder of archive files")
    p.add_argument("--workers", type=int, default=None, metavar="N",
                   help="processes that decode blocks and recover senders (default: every "
                   "CPU, or 1 for less than 32 MiB of files to index)")
    p.add_argument("--index", metavar="PATH", default=None,
                   help="where the index lives (default: under era-index/ in ethread's data "
                   "folder, $ETHREAD_HOME or ~/.local/share/ethread; an ethread-index.sqlite "
                   "already in the archive folder is used)")
    p.set_defaults(run=_guarded(run_index))
