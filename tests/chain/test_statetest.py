"""The state test runner (``ethread.chain.statetest``, ``ethread statetest``): every vector of
the execution-spec-tests Osaka fixtures (Osaka and Prague) gives the fixture's post-state
root and logs, and the command prints geth's ``evm statetest`` JSON."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ethread.chain.statetest import FixtureError, StateTestResult, read_fixture, run_test, vm_for_fork
from ethread.cli import main
from ethread.evm import BlobParams, OsakaVM
from tests.support.paths import conformance_dir

EEST_VECTORS = 1230
"""Vectors in the 35 files of shared/conformance/eest-osaka (fusaka-devnet-5 fixtures)."""


def eest_files() -> list[Path]:
    root = conformance_dir() / "eest-osaka"
    files = sorted(root.rglob("*.json"))
    if not files:
        pytest.fail(f"no state fixtures under {root}")
    return files


def run_file(path: Path) -> list[StateTestResult]:
    """Every vector of a fixture file, in its order."""
    return [result for name, test in read_fixture(path).items() for result in run_test(name, test)]


def expected_vectors(path: Path) -> list[tuple[str, str, dict[str, Any]]]:
    """(name, fork, post entry) of every vector of a fixture file, in its order."""
    return [(name, fork, entry) for name, test in json.loads(path.read_text()).items()
            for fork, entries in test["post"].items() for entry in entries]


def test_every_eest_osaka_vector_gives_the_fixture_post_state() -> None:
    files = eest_files()
    assert len(files) == 35
    results, failures = 0, []
    for path in files:
        for result, (name, fork, entry) in zip(run_file(path), expected_vectors(path), strict=True):
            results += 1
            assert (result.name, result.fork) == (name, fork)
            if not result.passed or "0x" + result.state_root.hex() != entry["hash"]:
                failures.append(f"{path.name}: {name} [{fork}]: {result.error}")
    assert failures == []
    assert results == EEST_VECTORS


def small_files() -> list[Path]:
    by_name = {path.name: path for path in eest_files()}
    return [by_name["invalid_max_blobs_per_tx.json"], by_name["modexp_upper_bounds.json"]]


def test_the_command_prints_one_result_per_vector_in_order(
        capsys: pytest.CaptureFixture[str]) -> None:
    files = small_files()
    assert main(["statetest", *map(str, files)]) == 0
    printed = json.loads(capsys.readouterr().out)
    expected = [vector for path in files for vector in expected_vectors(path)]
    assert len(printed) == len(expected) > 20
    for result, (name, fork, entry) in zip(printed, expected, strict=True):
        assert list(result) == ["name", "pass", "stateRoot", "fork", "error"]
        assert result == {"name": name, "pass": True, "stateRoot": entry["hash"], "fork": fork,
                          "error": ""}
    # a refused transaction passes when the fixture expects the refusal, with the pre-state
    assert any("expectException" in entry for _, _, entry in expected)


def test_a_failing_vector_fails_the_command(tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    tests = read_fixture(small_files()[1])
    name = next(iter(tests))
    entry = next(iter(tests[name]["post"].values()))[0]
    wanted = entry["hash"]
    entry["hash"] = "0x" + "00" * 32
    broken = tmp_path / "broken.json"
    broken.write_text(json.dumps({name: tests[name]}))
    assert main(["statetest", str(broken)]) == 1
    result = json.loads(capsys.readouterr().out)[0]
    assert result["pass"] is False
    assert result["stateRoot"] == wanted
    assert result["error"] == f"post state root mismatch: got {wanted}, want 0x{'00' * 32}"


@pytest.mark.parametrize(("content", "words"), [
    (None, "No such file or directory"),
    ("{", "not JSON"),
    ("[1, 2]", "not a state test fixture"),
    ('{"t": {"env": {}, "pre": {}, "transaction": {}, "post": {"Osaka": [{}]}}}',
     "not a state test fixture"),
])
def test_bad_input_is_one_line_and_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                          content: str | None, words: str) -> None:
    path = tmp_path / "fixture.json"
    if content is not None:
        path.write_text(content)
    assert main(["statetest", str(path)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("ethread statetest: error: ")
    assert words in lines[0] and "Traceback" not in captured.err


def test_an_unknown_fork_fails_its_vectors_only() -> None:
    tests = read_fixture(small_files()[0])
    name, test = next(iter(tests.items()))
    test["post"]["Nonsense"] = test["post"]["Osaka"]
    results = list(run_test(name, test))
    assert [r.passed for r in results if r.fork == "Osaka"] == [True]
    assert [(r.passed, r.error) for r in results if r.fork == "Nonsense"] == [
        (False, "unknown fork 'Nonsense'")]


def test_fork_names_pick_their_vm() -> None:
    assert vm_for_fork("EIP158").fork == "spurious-dragon"
    assert vm_for_fork("Cancun").fork == "cancun"
    assert issubclass(vm_for_fork("Osaka"), OsakaVM)
    schedule = {"BPO1": {"target": "0x0a", "max": "0x0f", "baseFeeUpdateFraction": "0x7f5a51"}}
    assert vm_for_fork("BPO1", schedule).blob_params == BlobParams(10, 15, 8346193)  # type: ignore[attr-defined]
    with pytest.raises(FixtureError, match="unknown fork"):
        vm_for_fork("Nonsense")
