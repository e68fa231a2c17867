"""``benchbook.yaml`` through its one reader, ``bench.settings``: defaults, the repository's file, bad files."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.settings import DEFAULT_SETTINGS_FILE, DEFAULT_TREATMENT, Settings, SettingsError, load_settings

ROOT = Path(__file__).resolve().parents[1]


def test_repo_settings_load_and_declare_the_lab_experiment() -> None:
    s = load_settings(ROOT / "benchbook.yaml")
    exp = s.experiments["eagle-fast-verify"]
    assert exp.baseline == "baseline"
    assert "speculative.*" in exp.treatment
    assert s.regression.window >= 1 and 0 < s.regression.ratio_threshold < 1
    assert s.treatment_for("eagle-fast-verify") == tuple(exp.treatment)
    assert s.treatment_for("unknown") == tuple(s.default_treatment)
    assert load_settings(root=ROOT) == s  # the repository's file, found by its name


def test_defaults_without_a_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    s = Settings()
    assert s.treatment_for(None) == DEFAULT_TREATMENT
    assert s.regression.min_history >= 1
    assert load_settings(root=tmp_path) == s  # no benchbook.yaml there: the defaults
    monkeypatch.chdir(tmp_path)
    assert load_settings() == s  # the current folder by default
    (tmp_path / DEFAULT_SETTINGS_FILE).write_text("regression:\n  window: 9\n", encoding="utf-8")
    assert load_settings().regression.window == 9


def test_repository_url_without_its_trailing_slash(tmp_path: Path) -> None:
    assert load_settings(root=tmp_path).commit_url_base is None
    (tmp_path / DEFAULT_SETTINGS_FILE).write_text("repository_url: https://github.com/o/benchbook/\n", encoding="utf-8")
    assert load_settings(root=tmp_path).commit_url_base == "https://github.com/o/benchbook"


@pytest.mark.parametrize(
    ("text", "field", "expected"),
    [
        ("regression:\n  window: 0\n", "regression.window", "greater than or equal to 1"),
        ("regression:\n  ratio_threshold: 2\n", "regression.ratio_threshold", "less than 1"),
        ("experiments:\n  x:\n    baseline: b\n", "experiments.x.title", "required"),
        ("regresion: {}\n", "regresion", "Extra inputs"),
        ("- a\n- b\n", "(whole file)", "a mapping at the top level"),
        ("regression: [\n", "line", "valid YAML"),
        ("regression:\n  window: 3\n  window: 4\n", "line 3 column 3", 'the key "window" appears twice'),
        ("repository_url: 3\n", "repository_url", "valid string"),
    ],
)
def test_bad_settings_name_file_and_field(tmp_path: Path, text: str, field: str, expected: str) -> None:
    path = tmp_path / DEFAULT_SETTINGS_FILE
    path.write_text(text)
    for load in (lambda: load_settings(path), lambda: load_settings(root=tmp_path)):
        with pytest.raises(SettingsError) as info:
            load()
        assert info.value.path == str(path)
        assert info.value.field.startswith(field)
        assert expected in info.value.expected


def test_a_named_file_must_exist(tmp_path: Path) -> None:
    with pytest.raises(SettingsError, match="readable"):
        load_settings(tmp_path / "nope.yaml")
