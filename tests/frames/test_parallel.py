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
    mapped = parallel.read_part(open_backend, lo, hi, NAMES, str(tmp_path))
    assert all(isinstance(value, parallel._Mapped) for value in mapped.values())
    assert len(list(tmp_path.iterdir())) == len(NAMES)
    for name in NAMES:
        assert parallel._received(mapped[name]).equals(expected[name]), name
    assert list(tmp_path.iterdir()) == []
    monkeypatch.setattr(parallel, "SHARED_RESERVE", 2**62)
    sent = parallel.read_part(open_backend, lo, hi, NAMES, str(tmp_path))
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


def test_a_range_too_small_to_gain_is_read_in_this_process(
        sepolia: EraBackend, monkeypatch: pytest.MonkeyPatch) -> None:
    """workers=2 over less than PARALLEL_FROM_BYTES of archive starts no worker; a big enough
    range does."""
    calls: list[tuple[int, int]] = []

    def recorded(backend: object, start: int, stop: int, *args: object) -> object:
        calls.append((start, stop))
        raise AssertionError("workers started")

    monkeypatch.setattr(parallel, "collect_parallel", recorded)
    assert not parallel.worth_workers(sepolia, 0, 180_224)  # two files of about 3 MB
    one = collect(sepolia, 172_032, 180_224, NAMES, progress=False)
    two = collect(sepolia, 172_032, 180_224, NAMES, progress=False, workers=2)
    assert calls == [] and all(two[n].equals(one[n]) for n in NAMES)
    monkeypatch.setattr(parallel, "PARALLEL_FROM_BYTES", 1_000_000)
    assert parallel.worth_workers(sepolia, 172_032, 180_224)
    assert not parallel.worth_workers(sepolia, 172_032, 172_100)  # its share of one file
    with pytest.raises(AssertionError, match="workers started"):
        collect(sepolia, 172_032, 180_224, NAMES, progress=False, workers=2)
    assert calls == [(172_032, 180_224)]


UNGUARDED = """
from ethread import frames
from ethread.backends.era import EraBackend
from ethread.frames import parallel

parallel.PARALLEL_FROM_BYTES = 0  # workers even for this small range
backend = EraBackend({folder!r}, index_path={index!r})
frames.blocks(backend, 172_032, 172_100, progress=False, workers=2)
print("done")
"""


def test_workers_from_a_script_without_the_main_guard_say_what_to_do(
        sepolia: EraBackend, tmp_path: Path) -> None:
    import subprocess
    import sys

    script = tmp_path / "unguarded.py"
    script.write_text(UNGUARDED.format(folder=str(sepolia.folder), index=str(sepolia.index_path)))
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          timeout=300, cwd=tmp_path)
    assert done.returncode == 1 and "done" not in done.stdout
    raised = [line for line in done.stderr.splitlines()
              if line.startswith("ethread.frames.parallel.WorkersFailed: ")]
    assert raised, done.stderr[-3000:]  # (multiprocessing may warn after it, at exit)
    assert raised[-1].startswith("ethread.frames.parallel.WorkersFailed: a worker process ended")
    assert f"({script})" in raised[-1] and 'if __name__ == "__main__":' in raised[-1]
    assert "or pass workers=1" in raised[-1]
    assert "BrokenProcessPool" not in done.stderr.split("WorkersFailed: a worker process")[-1]
