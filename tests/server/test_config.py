"""server/config.py: the service's configuration from flags or a TOML file, both derived from
one declaration per setting (same names, same checks); relative paths relative to the file;
the cross-entry rules (ports and hosts, keys, networks, what several workers cannot share);
and the demo key when none is configured."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import pytest

from ethread.cli import build_parser
from ethread.cli.serve import build_config
from ethread.server.config import (
    DEFAULT_LEDGER,
    DEMO_KEY,
    SECTIONS,
    UNLIMITED_CREDITS,
    ConfigError,
    KeyConfig,
    NetworkConfig,
    ServerConfig,
    config_from_document,
    declared_settings,
    load_config,
    validate,
)
from tests.support.paths import EXAMPLES


def test_example_config_file_loads() -> None:

    config = load_config(EXAMPLES /
                         "serve_config.toml")
    assert [n.name for n in config.networks] == ["compat", "demo"]
    assert config.networks[0].genesis is not None and config.networks[0].genesis.is_file()
    assert config.networks[1].port == 8546 and config.networks[1].block_time == 2.0
    assert config.keys[1].credits_per_second == 500
    assert config.limits.max_batch_calls == 1000 and config.limits.logs.timeout == 10
    assert config.ledger == DEFAULT_LEDGER  # not a file beside the example


@pytest.mark.parametrize(("text", "message"), [
    ('[server]\nport = "x"', "port"),
    ('[[networks]]\nname = "a"\nbackend = "import"', "genesis"),
    ('[[networks]]\nname = "a"\n[[networks]]\nname = "b"', "both serve port"),
    ('[limits]\nmax_batch_calls = 0', "max_batch_calls"),
    ('[[keys]]\nkey = "a/b"', "API key"),
    ('[nonsense]\n', "unknown setting"),
])
def test_bad_config_files_name_the_problem(tmp_path: Path, text: str, message: str) -> None:

    path = tmp_path / "c.toml"
    path.write_text(text)
    with pytest.raises(ConfigError, match=message):
        load_config(path)


def test_flags_and_file_mean_the_same(tmp_path: Path) -> None:

    path = tmp_path / "c.toml"
    path.write_text('[server]\nport = 9000\n[[networks]]\nname = "main"\nbackend = "import"\n'
                    'genesis = "g.json"\nblocks = "b.rlp"\nverify_seals = false\n'
                    '[[keys]]\nkey = "k1"\ndaily_credits = 50\n'
                    '[limits]\nmax_batch_calls = 7\n')
    from_file = load_config(path)
    args = build_parser().parse_args([
        "serve", "--genesis", str(tmp_path / "g.json"), "--blocks", str(tmp_path / "b.rlp"),
        "--no-verify-seals", "--port", "9000", "--api-key", "k1", "--daily-credits", "50",
        "--max-batch-calls", "7"])
    assert build_config(args) == from_file  # (one default ledger, in ethread's data folder)


def _other_value(declared: Any, tmp_path: Path) -> Any:
    """A valid value of a setting that is not its default."""
    if declared.kind is bool:
        return not declared.default
    if declared.kind is str:
        if declared.setting.choices:
            return next(c for c in declared.setting.choices if c != declared.default)
        return str(tmp_path / "other.sqlite3") if declared.setting.relative_path else "127.0.0.2"
    return declared.default + (1 if declared.kind is int else 0.5)


def test_every_setting_has_a_flag_meaning_what_the_file_says(tmp_path: Path) -> None:


    settings = declared_settings()
    names = {d.name for d in settings}
    assert {"logs_max_parameters", "max_ws_subscriptions", "threads", "access_log"} <= names
    lines: list[str] = []
    flags: list[str] = []
    for section in SECTIONS:
        lines.append(f"[{section}]")
        for declared in (d for d in settings if d.section == section):
            assert declared.setting.help, f"{declared.name} has no help text"
            value = _other_value(declared, tmp_path)
            lines.append(f"{declared.name} = {value!r}" if not isinstance(value, bool)
                         else f"{declared.name} = {str(value).lower()}")
            flags += [declared.flag] if isinstance(value, bool) else [declared.flag, str(value)]
    path = tmp_path / "c.toml"
    path.write_text("\n".join(lines).replace("'", '"') + "\n")
    assert {k for table in tomllib.loads(path.read_text()).values() for k in table} == names
    from_file = load_config(path)
    from_flags = build_config(build_parser().parse_args(["serve", *flags]))
    assert from_flags == from_file
    default = ServerConfig()
    for declared in settings:  # every setting moved away from its default, in both
        where = from_file.limits if declared.section == "limits" else from_file
        was = default.limits if declared.section == "limits" else default
        assert getattr(where, declared.name) != getattr(was, declared.name), declared.name
    assert from_file.limits.logs.max_parameters == default.limits.logs_max_parameters + 1


@pytest.mark.parametrize(("flags", "message"), [
    (["--threads", "0"], "threads must be at least 1"),
    (["--port", "70000"], "port must be between 0 and 65535"),
    (["--logs-timeout", "-1"], "logs_timeout_seconds must be at least 0"),
    (["--max-ws-subscriptions", "0"], "max_ws_subscriptions must be at least 1"),
    (["--answers", "geth-1.15"], r"answers must be one of geth-1\.17, geth-1\.16"),
])
def test_flags_are_checked_like_file_entries(flags: list[str], message: str) -> None:

    with pytest.raises(ConfigError, match=message):
        build_config(build_parser().parse_args(["serve", *flags]))



def _declared(name: str) -> Any:
    return next(d for d in declared_settings() if d.name == name)


def test_a_settings_flag_and_its_checks() -> None:
    assert _declared("access_log").flag == "--no-access-log"  # on by default
    assert _declared("metrics").flag == "--metrics"
    assert _declared("max_batch_calls").section == "limits"
    port = _declared("port")
    assert port.check(0, "server.port") == 0
    with pytest.raises(ConfigError, match=r"server\.port must be an integer, got True"):
        port.check(True, "server.port")
    with pytest.raises(ConfigError, match="must be between 0 and 65535, got 65536"):
        port.check(65536, "server.port")
    assert _declared("logs_timeout_seconds").check(3, "t") == 3.0
    with pytest.raises(ConfigError, match="must be true or false"):
        _declared("metrics").check("yes", "server.metrics")
    with pytest.raises(ConfigError, match="must be a string"):
        _declared("host").check(1, "server.host")


def test_relative_paths_are_the_files_and_urls_stay_as_they_are(tmp_path: Path) -> None:
    config = config_from_document({
        "server": {"ledger": "credits.sqlite3"},
        "networks": [{"name": "main", "backend": "import", "genesis": "g.json",
                      "hosts": "Main.Example"},
                     {"name": "era", "backend": "era", "path": "/abs/era", "hosts": ["a", "B"]}],
    }, tmp_path)
    assert config.ledger == str(tmp_path / "credits.sqlite3")
    assert config.networks[0].genesis == tmp_path / "g.json"
    assert config.networks[0].hosts == ("main.example",) and config.networks[1].hosts == ("a", "b")
    assert config.networks[1].path == Path("/abs/era")
    for kept in (":memory:", "redis://127.0.0.1:6379/0"):
        assert config_from_document({"server": {"ledger": kept}}, tmp_path).ledger == kept
    assert config_from_document({}, tmp_path).networks == (NetworkConfig(name="demo"),)


@pytest.mark.parametrize(("document", "message"), [
    ({"server": 3}, r"\[server\] must be a table"),
    ({"networks": {"name": "a"}}, r"\[\[networks\]\] must be an array of tables"),
    ({"networks": [{"backend": "demo"}]}, "'name' is required"),
    ({"networks": [{"name": "a", "hosts": [1]}]}, "'hosts' must be a list of host names"),
    ({"networks": [{"name": "a", "colour": "red"}]}, r"unknown setting\(s\) colour"),
    ({"keys": [{"daily_credits": 5}]}, "'key' is required"),
    ({"keys": [{"key": "k1", "daily_credits": -1}]}, "daily_credits"),
    ({"networks": [{"name": "a", "genesis": 5, "backend": "import"}]}, "must be a path string"),
])
def test_bad_documents_name_the_entry(tmp_path: Path, document: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        config_from_document(document, tmp_path)


def test_a_file_that_cannot_be_read_or_parsed_is_named(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"cannot read .*missing\.toml"):
        load_config(tmp_path / "missing.toml")
    broken = tmp_path / "broken.toml"
    broken.write_text("[server\n")
    with pytest.raises(ConfigError, match=r"broken\.toml: "):
        load_config(broken)


def _network(**values: Any) -> NetworkConfig:
    return NetworkConfig(**{"name": "n", **values})


@pytest.mark.parametrize(("config", "message"), [
    (ServerConfig(networks=()), "at least one network"),
    (ServerConfig(networks=(_network(), _network(port=9000))), "network names must be unique"),
    (ServerConfig(networks=(_network(hosts=("a",)), _network(name="m", hosts=("a",)))),
     "host 'a' on port 8545 is claimed by networks 'n' and 'm'"),
    (ServerConfig(keys=(KeyConfig("k1"), KeyConfig("k1"))), "listed twice"),
    (ServerConfig(keys=(KeyConfig("k 1"),)), "without '/' or spaces"),
    (ServerConfig(keys=(KeyConfig("k1", credits_per_second=0),)), "must be positive"),
    (ServerConfig(networks=(_network(backend="db"),)), "backend 'db' needs 'path'"),
    (ServerConfig(networks=(_network(backend="era", path=Path("e"), block_time=1),)),
     "only a dev chain"),
    (ServerConfig(networks=(_network(backend="fork"),)), "needs 'fork_url'"),
    (ServerConfig(networks=(_network(fork_block=3),)), "are a forked chain's"),
    (ServerConfig(networks=(_network(backend="fork", fork_url="http://x", fork_block=-1),)),
     "must not be negative"),
    (ServerConfig(networks=(_network(txpool=True),)), "needs a chain with state"),
    (ServerConfig(networks=(_network(backend="era", path=Path("e"), state=Path("s")),)),
     "keeps a state file"),
    (ServerConfig(workers=2, ledger=":memory:"), "lives in one process"),
    (ServerConfig(workers=2, ledger="l.sqlite3", networks=(_network(block_time=1),)),
     "a mining demo chain"),
    (ServerConfig(workers=2, ledger="l.sqlite3", networks=(
        _network(backend="import", genesis=Path("g"), txpool=True),)), "a transaction pool"),
    (ServerConfig(workers=2, ledger="l.sqlite3", networks=(
        _network(backend="fork", fork_url="http://x"),)), "a dev chain"),
    (ServerConfig(ledger=""), "ledger must be"),
])
def test_rules_across_entries(config: ServerConfig, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        validate(config)


def test_networks_on_one_port_need_hosts_or_ports_of_their_own() -> None:
    apart = ServerConfig(networks=(_network(), _network(name="m", port=9000),
                                   _network(name="h", hosts=("h.example",))))
    assert validate(apart) is apart


def test_the_demo_key_when_none_is_configured() -> None:
    (demo,) = ServerConfig().with_default_key().keys
    assert demo.key == DEMO_KEY and demo.daily_credits == UNLIMITED_CREDITS
    own = ServerConfig(keys=(KeyConfig("k1"),))
    assert own.with_default_key() is own
