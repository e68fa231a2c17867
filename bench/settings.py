"""``benchbook.yaml``, the repository's settings: per-experiment baseline and treatment, the evidence a verdict
needs, the regression thresholds and the repository's web address.

The one reader of the file: ``bench compare``, ``bench render``, the MkDocs hooks and the PR gate all call
:func:`load_settings`. The file is optional; without it the defaults below apply (``Settings()``). A bad file
(unreadable, bad YAML, a key given twice, an unknown key or a bad value) raises :class:`SettingsError` naming the
file, the field and what was expected.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from bench.errors import FieldError, parse_mapping, read_yaml_file

__all__ = [
    "DEFAULT_SETTINGS_FILE",
    "DEFAULT_TREATMENT",
    "ComparisonSettings",
    "ExperimentSettings",
    "RegressionThresholds",
    "Settings",
    "SettingsError",
    "load_settings",
    "parse_settings",
]

DEFAULT_SETTINGS_FILE = "benchbook.yaml"
DEFAULT_TREATMENT: tuple[str, ...] = ("speculative.*", "draft_model.*", "server.args.speculative-*")


class SettingsError(FieldError):
    """A bad ``benchbook.yaml``: names the file, the field and what was expected."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class RegressionThresholds(_Strict):
    ratio_threshold: float = Field(default=0.05, gt=0, lt=1, description="relative change that counts, 0.05 = 5%")
    window: int = Field(default=5, ge=1, description="previous comparable records whose median is the baseline")
    min_history: int = Field(default=3, ge=1, description="fewer previous records: 'insufficient data'")


class ComparisonSettings(_Strict):
    """How much evidence a verdict needs (the methodology page explains each default)."""

    min_requests: int = Field(
        default=10,
        ge=1,
        description="a level where a side has fewer completed requests (pooled over its repeated runs) gets no verdict",
    )
    confidence: float = Field(default=0.95, gt=0, lt=1, description="width of the bootstrap confidence intervals")
    noise_floor: float = Field(
        default=0.05,
        ge=0,
        lt=1,
        description="relative difference that repeated runs of one configuration show anyway: a ratio interval "
        "inside 1 ± noise_floor is 'no difference shown'; a side is faster only beyond it",
    )


class ExperimentSettings(_Strict):
    title: str
    baseline: str = Field(description="the variant the others are compared with")
    treatment: list[str] = Field(
        default_factory=lambda: list(DEFAULT_TREATMENT),
        description="context fields (dotted names or globs) the variants are meant to differ in",
    )
    cross_context: bool = Field(
        default=False,
        description="compare variants that differ in context beyond the treatment anyway (labelled cross-context)",
    )


class Settings(_Strict):
    version: int = Field(default=1, ge=1, le=1)
    default_treatment: list[str] = Field(default_factory=lambda: list(DEFAULT_TREATMENT))
    comparison: ComparisonSettings = Field(default_factory=ComparisonSettings)
    experiments: dict[str, ExperimentSettings] = Field(default_factory=dict)
    regression: RegressionThresholds = Field(default_factory=RegressionThresholds)
    repository_url: str | None = Field(
        default=None, description="web address of the repository; the site links commits as <url>/commit/<sha>"
    )

    @property
    def commit_url_base(self) -> str | None:
        """``repository_url`` without a trailing slash; None when unset or blank."""
        url = (self.repository_url or "").strip().rstrip("/")
        return url or None

    def cross_context_for(self, experiment: str | None) -> bool:
        """Whether the experiment's settings force cross-context comparisons (``bench compare --cross-context``)."""
        return experiment is not None and experiment in self.experiments and self.experiments[experiment].cross_context

    def treatment_for(self, experiment: str | None) -> tuple[str, ...]:
        if experiment is not None and experiment in self.experiments:
            return tuple(self.experiments[experiment].treatment)
        return tuple(self.default_treatment)


def parse_settings(data: Any, path: Path | str) -> Settings:
    return parse_mapping(Settings, data, path, SettingsError, what="a mapping at the top level")


def load_settings(path: Path | str | None = None, *, root: Path | None = None) -> Settings:
    """The settings in effect. With ``path``, that file (it must exist); else ``<root>/benchbook.yaml`` (``root``
    defaults to the current folder) when there is one; else the defaults. ``SettingsError`` on any problem."""
    if path is None:
        found = (root if root is not None else Path()) / DEFAULT_SETTINGS_FILE
        if not found.is_file():
            return Settings()
        path = found
    return parse_settings(read_yaml_file(Path(path), SettingsError), path)
