"""The Era folder's sidecar index: a build by several processes writes what one process does,
row for row; a build stopped at any point (an exception, SIGKILL) resumes and ends the same;
a new file is indexed alone; a changed file is indexed again, a damaged one refused; and a
resumed index serves."""

from __future__ import annotations

import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest
from benchlib.index_progress import complete_files
from benchlib.synthetic_history import era1_epochs

import ethread
from ethread.backends.era import EraBackend, default_index_path
from ethread.backends.era_index import HistoryIndex
from ethread.cli import main
from ethread.era1 import Era1File, FormatError
from ethread.era1.archive import archive_paths, open_archive
from ethread.home import data_dir
from tests.support.paths import conformance_dir
from tests.support.server_harness import ServeProcess, call, post

TABLES = ("blocks", "txs", "log_address", "log_topic", "log_blocks")


def rows(index: Path) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of the index, table by table, sorted (files without their times)."""
    db = sqlite3.connect(index)
    try:
        found = {table: sorted(db.execute(f"SELECT * FROM {table}")) for table in TABLES}
        found["files"] = sorted(db.execute("SELECT name, start, count, size, tail FROM files"))
    finally:
        db.close()
    return found


def build(folder: Path, index: Path, **options: Any) -> Any:
    """Build ``index`` for the Era1 files of ``folder`` (the Sepolia folder's ``ere`` sample,
    which the backend sets aside, left out)."""
    files = [open_archive(p) for p in archive_paths(folder) if p.suffix == ".era1"]
    built = HistoryIndex(index)
    try:
        return built.build(files, **options)
    finally:
        built.close()
        for era in files:
            era.close()


def copy_folder(source: Path, target: Path) -> Path:
    target.mkdir(parents=True)
    for path in archive_paths(source):
        shutil.copy2(path, target / path.name)
    return target


@pytest.fixture(scope="module")
def sepolia_dir() -> Path:
    return conformance_dir() / "era1"


@pytest.fixture(scope="module")
def synthetic(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Six small Era1 files of dense blocks (every transaction type, logs), epochs 1 to 6."""
    folder = tmp_path_factory.mktemp("synthetic") / "era1"
    era1_epochs(folder, 6, 3, 8)
    return folder


@pytest.fixture(scope="module")
def synthetic_serial(synthetic: Path, tmp_path_factory: pytest.TempPathFactory
                     ) -> dict[str, list[tuple[Any, ...]]]:
    index = tmp_path_factory.mktemp("serial") / "index.sqlite"
    report = build(synthetic, index, workers=1)
    assert report.workers == 1 and len(report.indexed) == 6 and report.transactions == 6 * 3 * 8
    return rows(index)


def _ask(backend: object, method: str, *params: object) -> Any:
    request = {"jsonrpc": "2.0", "id": 1, "method": method, "params": list(params)}
    return json.loads(ethread.handle(backend, json.dumps(request).encode()))  # type: ignore[arg-type]


def _answers(backend: EraBackend) -> list[Any]:
    """Answers that read every table of the index: blocks by hash, transactions by hash (with
    their senders), logs by address and topic."""
    answers = []
    for era in backend.files():
        for number in (era.start, era.end - 1):
            block = _ask(backend, "eth_getBlockByNumber", hex(number), True)["result"]
            answers.append(_ask(backend, "eth_getBlockByHash", block["hash"], True))
            for tx in block["transactions"][:3]:
                answers.append(_ask(backend, "eth_getTransactionByHash", tx["hash"]))
                answers.append(_ask(backend, "eth_getTransactionReceipt", tx["hash"]))
    for era in backend.files():  # one file's range at a time: the synthetic folder has gaps
        span = {"fromBlock": hex(era.start), "toBlock": hex(min(era.end - 1, era.start + 999))}
        logs = _ask(backend, "eth_getLogs", span)
        answers.append(logs)
        for log in logs["result"][:3]:
            answers.append(_ask(backend, "eth_getLogs", {**span, "address": log["address"],
                                                         "topics": log["topics"][:1]}))
    return answers


# --------------------------------------------------------------------------------------------
# Several processes write what one does


def test_parallel_build_is_the_serial_build_on_sepolia(sepolia_dir: Path, tmp_path: Path) -> None:
    serial, parallel = tmp_path / "serial.sqlite", tmp_path / "parallel.sqlite"
    one = build(sepolia_dir, serial, workers=1)
    # Units of 512 KiB: each file cut into several block ranges that two workers share.
    two = build(sepolia_dir, parallel, workers=2, unit_bytes=512 * 1024)
    assert (one.workers, two.workers) == (1, 2)
    assert one.indexed == two.indexed == ("sepolia-00000-643a00f7.era1",
                                          "sepolia-00021-b8814b14.era1")
    assert one.blocks == two.blocks == 16_384 and one.transactions == two.transactions == 93
    assert rows(serial) == rows(parallel)
    with EraBackend(sepolia_dir, index_path=serial) as a, \
            EraBackend(sepolia_dir, index_path=parallel) as b:
        assert a.index_report.indexed == b.index_report.indexed == ()
        assert _answers(a) == _answers(b)


def test_parallel_build_is_the_serial_build_on_many_files(
        synthetic: Path, synthetic_serial: dict[str, Any], tmp_path: Path) -> None:
    index = tmp_path / "parallel.sqlite"
    report = build(synthetic, index, workers=2, unit_bytes=4096)  # about one block a unit
    assert report.workers == 2 and len(report.indexed) == 6
    assert rows(index) == synthetic_serial
    assert synthetic_serial["log_blocks"]  # the log tables are exercised
    with EraBackend(synthetic, index_path=index) as backend:
        serial_index = tmp_path / "serial.sqlite"
        build(synthetic, serial_index, workers=1)
        with EraBackend(synthetic, index_path=serial_index) as serial:
            assert _answers(backend) == _answers(serial)


# --------------------------------------------------------------------------------------------
# Stopped and resumed


class Stop(Exception):
    pass


@pytest.mark.parametrize("workers", [1, 2])
def test_a_build_stopped_midway_resumes_and_ends_identical(
        synthetic: Path, synthetic_serial: dict[str, Any], tmp_path: Path, workers: int) -> None:
    index = tmp_path / "index.sqlite"
    calls = []

    def stop_after_three_files(done: int, total: int) -> None:
        calls.append(done)
        if len(calls) == 3:
            raise Stop

    with pytest.raises(Stop):
        build(synthetic, index, workers=workers, progress=stop_after_three_files)
    kept = rows(index)
    assert [name for name, *_ in kept["files"]] == \
        [p.name for p in archive_paths(synthetic)][:3]
    last_kept = max(start + count for _, start, count, *_ in kept["files"])
    assert all(number < last_kept for number, *_ in kept["blocks"])  # nothing of the 4th file
    resumed = build(synthetic, index, workers=workers)
    assert resumed.indexed == tuple(p.name for p in archive_paths(synthetic))[3:]
    assert resumed.unchanged == 3
    assert rows(index) == synthetic_serial


_KILLED_BUILD = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from ethread.backends.era_index import HistoryIndex
    from ethread.era1.archive import archive_paths, open_archive

    if __name__ == "__main__":
        files = [open_archive(p) for p in archive_paths(Path(sys.argv[1]))]
        # Slow enough to be killed half way: a pause after each file written.
        HistoryIndex(Path(sys.argv[2])).build(files, workers=2,
                                              progress=lambda done, total: time.sleep(0.4))
    """
)


def _group_alive(group: int) -> list[int]:
    """Processes of the process group that are still running (not zombies)."""
    alive = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        state, _ppid, pgrp = stat.rsplit(")", 1)[1].split()[:3]
        if int(pgrp) == group and state != "Z":
            alive.append(int(entry.name))
    return alive


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc")
def test_a_killed_build_resumes_identical_and_serves(
        synthetic: Path, synthetic_serial: dict[str, Any], tmp_path: Path) -> None:
    folder = copy_folder(synthetic, tmp_path / "era1")
    index = default_index_path(folder)  # where ethread serve --era looks
    child = subprocess.Popen([sys.executable, "-c", _KILLED_BUILD, str(folder), str(index)],
                             start_new_session=True, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and child.poll() is None:
            if complete_files(index) >= 2:
                break
            time.sleep(0.05)
        assert child.poll() is None, child.stderr.read() if child.stderr else ""
        os.kill(child.pid, signal.SIGKILL)  # the builder alone: its workers must notice
        child.wait()
        deadline = time.monotonic() + 15
        while _group_alive(child.pid) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not _group_alive(child.pid), "worker processes outlived the killed builder"
    finally:
        if _group_alive(child.pid):
            os.killpg(child.pid, signal.SIGKILL)
    done = [name for name, *_ in rows(index)["files"]]
    assert 2 <= len(done) < 6
    resumed = build(folder, index, workers=2)
    assert resumed.unchanged == len(done) and len(resumed.indexed) == 6 - len(done)
    assert rows(index) == synthetic_serial

    with EraBackend(synthetic, index_path=tmp_path / "serial.sqlite", index_workers=1) as serial:
        span = {"fromBlock": hex(serial.files()[-1].start), "toBlock": "latest"}
        block = _ask(serial, "eth_getBlockByNumber", hex(serial.pointer("latest") or 0), True)
        tx_hash = block["result"]["transactions"][-1]["hash"]
        expected = [_ask(serial, "eth_getTransactionByHash", tx_hash),
                    _ask(serial, "eth_getLogs", span)]
    assert expected[0]["result"]["hash"] == tx_hash and expected[1]["result"]
    with ServeProcess(["--era", str(folder), "--no-access-log"], cwd=tmp_path) as server:
        url = f"http://{server.host}:{server.port}/v3/ethread-demo-key"
        answers = [post(url, call("eth_getTransactionByHash", [tx_hash]))[2],
                   post(url, call("eth_getLogs", [span]))[2]]
    assert answers == expected


# --------------------------------------------------------------------------------------------
# A folder that changes


def test_a_new_file_is_indexed_alone(synthetic: Path, synthetic_serial: dict[str, Any],
                                     tmp_path: Path) -> None:
    folder = copy_folder(synthetic, tmp_path / "era1")
    newest = archive_paths(folder)[-1]
    aside = newest.rename(tmp_path / newest.name)
    index = tmp_path / "index.sqlite"
    assert len(build(folder, index, workers=2).indexed) == 5
    aside.rename(newest)
    report = build(folder, index, workers=2)
    assert report.indexed == (newest.name,) and report.unchanged == 5 and report.changed == ()
    assert report.workers == 1  # one unit of work: nothing to share
    assert rows(index) == synthetic_serial


def test_a_touched_file_keeps_its_entries(synthetic: Path, tmp_path: Path,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    folder = copy_folder(synthetic, tmp_path / "era1")
    index = tmp_path / "index.sqlite"
    build(folder, index, workers=1)
    first = archive_paths(folder)[0]
    os.utime(first, ns=(1, 1))  # copied or touched: new time, same bytes

    def rebuild(*args: object) -> None:
        raise AssertionError("a touched file was indexed again")

    monkeypatch.setattr(HistoryIndex, "_index_file", rebuild)
    report = build(folder, index, workers=1)
    assert report.indexed == () and report.unchanged == 6
    db = sqlite3.connect(index)
    assert db.execute("SELECT mtime_ns FROM files WHERE name = ?", (first.name,)).fetchone() == (1,)
    db.close()


def test_a_replaced_file_is_indexed_again_and_its_old_entries_go(
        synthetic: Path, synthetic_serial: dict[str, Any], tmp_path: Path) -> None:
    folder = copy_folder(synthetic, tmp_path / "era1")
    index = tmp_path / "index.sqlite"
    build(folder, index, workers=1)
    old = archive_paths(folder)[2]
    old_era = Era1File(old)
    start = old_era.start
    old_era.close()
    old_txs = [row for row in synthetic_serial["txs"] if start <= row[1] < start + 3]
    # The epoch's file made again from other blocks (another seed): another name, same blocks.
    other = tmp_path / "other"
    era1_epochs(other, 1, 3, 5, first_epoch=start // 8192)
    old.unlink()
    replacement = next(other.iterdir())
    shutil.copy2(replacement, folder / replacement.name)
    report = build(folder, index, workers=1)
    assert report.indexed == (replacement.name,)
    assert report.changed == ((replacement.name, f"replaces {old.name}"),)
    now = rows(index)
    assert not set(old_txs) & set(now["txs"])  # no transaction of the old file is found
    assert len([r for r in now["txs"] if start <= r[1] < start + 3]) == 3 * 5
    assert old.name not in [name for name, *_ in now["files"]]


def test_a_damaged_file_is_refused_not_served(synthetic: Path, tmp_path: Path) -> None:
    folder = copy_folder(synthetic, tmp_path / "era1")
    index = tmp_path / "index.sqlite"
    build(folder, index, workers=1)
    target = archive_paths(folder)[-1]
    era = Era1File(target)
    offset = era.offset(era.end - 1)  # the last block: inside the fingerprinted tail
    era.close()
    data = bytearray(target.read_bytes())
    data[offset + 8 + 20] ^= 0xFF  # its compressed header: the CRC no longer matches
    target.write_bytes(bytes(data))
    with pytest.raises(FormatError, match=f"{target.name}: at byte {offset}"):
        EraBackend(folder, index_path=index, index_workers=1)
    with pytest.raises(FormatError, match=f"{target.name}: at byte {offset}"):
        build(folder, index, workers=2)  # again, from the workers: never served as indexed
    truncated = archive_paths(folder)[0]
    truncated.write_bytes(truncated.read_bytes()[:-1])  # refused on open, before the index
    with pytest.raises(FormatError, match=truncated.name):
        EraBackend(folder, index_path=index)


def test_an_index_without_fingerprints_adopts_its_files(synthetic: Path, tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    folder = copy_folder(synthetic, tmp_path / "era1")
    index = tmp_path / "index.sqlite"
    build(folder, index, workers=1)
    db = sqlite3.connect(index)
    for column in ("size", "mtime_ns", "tail"):  # as an index written before them
        db.execute(f"ALTER TABLE files DROP COLUMN {column}")
    db.commit()
    db.close()

    def rebuild(*args: object) -> None:
        raise AssertionError("an indexed file was indexed again")

    monkeypatch.setattr(HistoryIndex, "_index_file", rebuild)
    assert build(folder, index, workers=1).unchanged == 6
    assert all(size is not None and tail for _, _, _, size, tail in rows(index)["files"])


def test_bad_build_arguments(synthetic: Path, tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="workers must be at least 1"):
        build(synthetic, tmp_path / "index.sqlite", workers=0)


# --------------------------------------------------------------------------------------------
# ethread index


def test_the_index_command(synthetic: Path, synthetic_serial: dict[str, Any], tmp_path: Path,
                           capsys: pytest.CaptureFixture[str]) -> None:
    folder = copy_folder(synthetic, tmp_path / "era1")
    assert main(["index", "--era", str(folder), "--workers", "2"]) == 0
    out = capsys.readouterr().out
    assert "indexed 6 files (18 blocks, 144 transactions)" in out and "2 workers" in out
    index = default_index_path(folder)
    assert index.parent.parent == data_dir() and f"index {index}: " in out
    assert not list(folder.glob("*.sqlite*"))  # nothing written into the archive folder
    assert rows(index) == synthetic_serial
    assert main(["index", "--era", str(folder)]) == 0
    assert "the index is up to date (6 files)" in capsys.readouterr().out
    elsewhere = tmp_path / "elsewhere.sqlite"
    assert main(["index", "--era", str(folder), "--index", str(elsewhere), "--workers", "1"]) == 0
    assert rows(elsewhere) == synthetic_serial
    assert main(["index", "--era", str(folder), "--workers", "0"]) == 1
    assert "--workers must be at least 1" in capsys.readouterr().err
    assert main(["index", "--era", str(tmp_path / "absent")]) == 1
    assert "no Era1 folder" in capsys.readouterr().err
