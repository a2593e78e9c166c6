"""Workers: how a range is cut into parts, and how a part's tables come back to the parent
(mapped from shared memory, or pickled where there is none or it is full), each way giving the
tables one process builds."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from ethread.backends.era import EraBackend
from ethread.frames import parallel
from ethread.frames.tables import collect
from tests.support.paths import conformance_dir

pa = pytest.importorskip("pyarrow")

NAMES = ["blocks", "transactions", "receipts", "logs"]


@pytest.fixture(scope="module")
def sepolia(tmp_path_factory: pytest.TempPathFactory) -> EraBackend:
    index = tmp_path_factory.mktemp("sepolia-index") / "index.sqlite"
    return EraBackend(conformance_dir() / "era1", index_path=index)


def test_parts_cut_a_single_file_for_every_worker(sepolia: EraBackend) -> None:
    assert sepolia.file_ranges(0, 8192) == [(0, 8192)]
    assert parallel.parts(sepolia, 0, 8192, 1) == [(0, 8192)]
    cut = parallel.parts(sepolia, 5, 8192, 2)
    assert len(cut) == 2 * parallel.PARTS_PER_WORKER
    assert cut[0][0] == 5 and cut[-1][1] == 8192
    assert all(a[1] == b[0] for a, b in itertools.pairwise(cut))
    assert max(hi - lo for lo, hi in cut) - min(hi - lo for lo, hi in cut) <= 1


def test_parts_never_cross_a_file(sepolia: EraBackend) -> None:
    cut = parallel.parts(sepolia, 8000, 172_100, 2)
    assert cut[0][0] == 8000 and cut[-1][1] == 172_100
    assert all(hi <= 8192 or lo >= 172_032 for lo, hi in cut)
    assert all(a[1] == b[0] for a, b in itertools.pairwise(cut) if a[1] != 8192)
    assert [lo for lo, _ in cut].count(172_032) == 1


def test_a_cut_file_reads_as_one_process_reads_it(sepolia: EraBackend, tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    shared = tmp_path / "shm"
    shared.mkdir()
    monkeypatch.setattr(parallel, "SHARED_MEMORY", shared)
    monkeypatch.setattr(parallel, "SHARED_RESERVE", 0)
    one = collect(sepolia, 172_032, 180_224, NAMES, progress=False)
    two = parallel.collect_parallel(sepolia, 172_032, 180_224, NAMES, workers=2)
    for name in NAMES:
        assert two[name].equals(one[name]), name
    assert one["transactions"].num_rows == 93  # the Sepolia files hold no logs
    assert two["blocks"].column(0).num_chunks == 2 * parallel.PARTS_PER_WORKER
    assert list(shared.iterdir()) == []  # every file unlinked, the scratch folder removed


def test_tables_come_back_pickled_without_shared_memory(sepolia: EraBackend, tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(parallel, "SHARED_MEMORY", tmp_path / "absent")
    one = collect(sepolia, 173_500, 176_500, NAMES, progress=False)
    two = parallel.collect_parallel(sepolia, 173_500, 176_500, NAMES, workers=2)
    for name in NAMES:
        assert two[name].equals(one[name]), name


def test_a_part_is_mapped_when_there_is_room_and_sent_when_not(
        sepolia: EraBackend, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    open_backend = parallel.opener(sepolia)
    lo, hi = 174_000, 176_000
    expected = collect(sepolia, lo, hi, NAMES, progress=False)
    assert expected["transactions"].num_rows > 0
    monkeypatch.setattr(parallel, "SHARED_RESERVE", 0)
    mapped = parallel._part(open_backend, lo, hi, NAMES, str(tmp_path))
    assert all(isinstance(value, parallel._Mapped) for value in mapped.values())
    assert len(list(tmp_path.iterdir())) == len(NAMES)
    for name in NAMES:
        assert parallel._received(mapped[name]).equals(expected[name]), name
    assert list(tmp_path.iterdir()) == []
    monkeypatch.setattr(parallel, "SHARED_RESERVE", 2**62)
    sent = parallel._part(open_backend, lo, hi, NAMES, str(tmp_path))
    for name in NAMES:
        assert sent[name].equals(expected[name]), name
    assert list(tmp_path.iterdir()) == []


def test_a_damaged_archive_fails_in_a_worker_as_in_one_process(tmp_path: Path) -> None:
    """A record damaged after the folder was indexed fails the worker that reads it, and the
    caller gets that error, the same type and words as one process gives, not a broken
    process pool (ethread's errors cross between processes whole)."""
    from ethread import frames
    from ethread.errors import StoreError

    folder = tmp_path / "era1"
    folder.mkdir()
    original = conformance_dir() / "era1" / "sepolia-00000-643a00f7.era1"
    copy = folder / original.name
    copy.write_bytes(original.read_bytes())
    index = tmp_path / "index.sqlite"
    EraBackend(folder, index_path=index).close()  # indexed while whole
    damaged = bytearray(copy.read_bytes())
    middle = len(damaged) // 2
    damaged[middle:middle + 64] = bytes(b ^ 0xFF for b in damaged[middle:middle + 64])
    copy.write_bytes(bytes(damaged))
    errors = []
    for workers in (1, 2):
        with EraBackend(folder, index_path=index) as era, pytest.raises(StoreError) as raised:
            frames.blocks(era, 0, 8192, progress=False, workers=workers)
        errors.append(raised.value)
    assert type(errors[0]) is type(errors[1])
    assert str(errors[0]) == str(errors[1])
    assert original.name in str(errors[1])
