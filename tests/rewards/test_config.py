"""rewards/config.py: defaults, YAML loading, CLI overrides and the errors they give."""

from __future__ import annotations

import argparse

import pytest

from coderl.rewards.config import (
    DEFAULT_CONFIG_PATH,
    CoderlConfig,
    ConfigError,
    add_cli_flags,
    apply_cli_overrides,
    load_config,
)


def _parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_cli_flags(parser)
    return parser.parse_args(argv)


def test_shipped_config_file_validates_and_matches_defaults_shape():
    assert DEFAULT_CONFIG_PATH.is_file(), "configs/reward.yaml is part of the user-facing config"
    cfg = load_config(DEFAULT_CONFIG_PATH)
    assert isinstance(cfg, CoderlConfig)
    # Correctness must dominate the reward whatever the file says.
    r = cfg.reward
    assert r.correctness_weight > r.format_weight + r.syntax_weight + r.length_weight


def test_every_field_is_documented():
    for section in (CoderlConfig.model_fields["sandbox"].annotation,
                    CoderlConfig.model_fields["reward"].annotation,
                    CoderlConfig.model_fields["server"].annotation):
        for name, info in section.model_fields.items():
            assert info.description, f"{section.__name__}.{name} has no description"


def test_cli_flags_override_file_values(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text("sandbox:\n  workers: 3\nreward:\n  format_weight: 0.2\n")
    cfg = load_config(path)
    assert cfg.sandbox.workers == 3 and cfg.reward.format_weight == 0.2
    out = apply_cli_overrides(cfg, _parse(["--workers", "5", "--port", "6001", "--no-dedup"]))
    assert out.sandbox.workers == 5
    assert out.server.port == 6001
    assert out.sandbox.dedup is False
    assert out.reward.format_weight == 0.2  # untouched flags keep the file's value


def test_boolean_flags_take_the_snake_case_no_spelling_too():
    cfg = CoderlConfig()
    assert cfg.server.result_cache is True
    for flag in ("--no_result_cache", "--no-result_cache"):
        assert apply_cli_overrides(cfg, _parse([flag])).server.result_cache is False, flag
    off = cfg.model_copy(update={"reward": cfg.reward.model_copy(update={"normalize": False})})
    # A field whose own name starts with "no" is switched on by its positive flag.
    assert apply_cli_overrides(off, _parse(["--normalize"])).reward.normalize is True
    assert apply_cli_overrides(cfg, _parse(["--no_normalize"])).reward.normalize is False
    assert apply_cli_overrides(cfg, _parse([])).server.result_cache is True  # no flag: the file's value


def test_bad_values_name_the_field(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text("sandbox:\n  workers: 0\n")
    with pytest.raises(ConfigError, match=r"c.yaml: sandbox.workers"):
        load_config(path)
    path.write_text("sandbox:\n  wrokers: 2\n")
    with pytest.raises(ConfigError, match="wrokers"):
        load_config(path)
    with pytest.raises(ConfigError, match=r"command-line flag: sandbox.workers"):
        apply_cli_overrides(CoderlConfig(), _parse(["--workers", "0"]))


def test_choice_fields_are_argparse_choices(capsys):
    with pytest.raises(SystemExit):
        _parse(["--isolation", "docker"])
    assert "invalid choice: 'docker'" in capsys.readouterr().err


def test_missing_and_malformed_files(tmp_path):
    with pytest.raises(ConfigError, match="not found"):
        load_config(tmp_path / "nope.yaml")
    bad = tmp_path / "bad.yaml"
    bad.write_text("sandbox: [unclosed\n")
    with pytest.raises(ConfigError, match="not valid YAML"):
        load_config(bad)
