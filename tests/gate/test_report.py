"""The PR report: the decision first (validity, verdicts against the baseline and the previous comparable record,
regressions), the rest folded; rows that say nothing left out; every record string inert on GitHub."""

from __future__ import annotations

import html
import json
import re
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import cmarkgfm
import pytest
from cmarkgfm.cmark import Options
from gate_helpers import BASELINE, EAGLE, PROJECT, GitRepo, new_record

from bench.gate import build_report, escape_gfm, run_check
from bench.gate import render_report_json as render_json
from bench.gate import render_report_markdown as render_markdown
from bench.redact import redact_value

EXP = "records/eagle-fast-verify"
NGRAM = "20261130T235226Z-ngram-a9c46ef"


@pytest.fixture
def with_settings(repo: GitRepo) -> GitRepo:
    shutil.copy(PROJECT / "benchbook.yaml", repo.root / "benchbook.yaml")
    repo.commit_all("settings")
    return repo


def lead_of(md: str) -> str:
    """The part of the report above the first fold: what a reviewer reads without clicking."""
    return md.split("<details>", 1)[0]


def test_report_leads_with_the_decision(with_settings: GitRepo, add_record: Callable[..., str]) -> None:
    rel = add_record()
    report = build_report(run_check(with_settings.root, "main"))
    md, data = render_markdown(report), render_json(report)
    lead = lead_of(md)
    order = [
        "**Valid:** yes",
        "**Against the baseline** (",
        "**Against the previous comparable record** (",
        "**Regressions:**",
    ]
    positions = [lead.index(x) for x in order]
    assert positions == sorted(positions), lead
    assert escape_gfm(rel) in lead
    (rec,) = data["records"]
    by_kind = {c["kind"]: c for c in rec["comparisons"]}
    assert by_kind["baseline"]["against"] == f"{EXP}/{BASELINE}.json"
    assert by_kind["previous"]["against"] == f"{EXP}/{EAGLE}.json"
    for kind, against in (("baseline", BASELINE), ("previous", EAGLE)):
        # the lead carries bench.compare's own verdict for that pairing, and names the record it was made against
        verdict = by_kind[kind]["verdict"]
        assert verdict and escape_gfm(verdict) in lead
        assert f"({escape_gfm(against)}): {escape_gfm(verdict)}" in lead
    # the record states 2 figures; one earlier record of its configuration, 3 needed: one sentence, no rows
    assert rec["regression_check"]["insufficient_data"] == 2
    assert rec["regression_check"]["earlier_records"] == 1
    assert "not checked yet: this configuration has 1 earlier record(s) on the base branch, the check needs 3" in lead
    assert "insufficient" not in md.lower()
    assert md.count("<details>") == md.count("</details>") == 3  # the record, and its two comparisons


def test_failed_record_leads_with_its_problems(repo: GitRepo) -> None:
    repo.git("rm", "-q", f"{EXP}/{BASELINE}.json")
    repo.commit_all("delete")
    md = render_markdown(build_report(run_check(repo.root, "main")))
    assert ":x: **The gate fails: 1 problem(s).**" in md
    assert f"- {escape_gfm(f'{EXP}/{BASELINE}.json')}: deleted" in md


# ---------------------------------------------------------------- one added llama.cpp record: the measured case


@pytest.fixture
def ngram_repo(tmp_path: Path) -> tuple[GitRepo, str]:
    """main holds the shipped h200-ngram records but one; the change adds that one (its llama.cpp media marker
    redacted, as the harness's bench.redact writes it)."""
    root = tmp_path / "repo"
    shutil.copytree(PROJECT / "records" / "h200-ngram", root / "records" / "h200-ngram")
    shutil.copy(PROJECT / "benchbook.yaml", root / "benchbook.yaml")
    held = root / "records" / "h200-ngram" / f"{NGRAM}.json"
    data: dict[str, Any] = json.loads(held.read_text(encoding="utf-8"))
    held.unlink()
    repo = GitRepo(root)
    repo.git("init", "-q", "-b", "main")
    repo.commit_all("base")
    repo.git("checkout", "-q", "-b", "pr")
    props = data["server"]["server_info"]["props"]
    data["server"]["server_info"]["props"] = redact_value("props", props)
    rel = f"records/h200-ngram/{NGRAM}.json"
    repo.write_json(rel, data)
    repo.commit_all("add one ngram record")
    return repo, rel


def test_one_added_record_reads_short(ngram_repo: tuple[GitRepo, str]) -> None:
    repo, _rel = ngram_repo
    result = run_check(repo.root, "main")
    assert result.ok, result.failures
    report = build_report(result)
    md = render_markdown(report)
    lines = md.splitlines()
    # was 206, 40 of them "insufficient data" rows; the comparison folds now also give both values per figure
    assert len(lines) <= 95, len(lines)
    lead = lead_of(md)
    assert "48 figure(s) unchecked" in lead  # 8 levels x (5 speed and latency figures + acceptance rate)
    assert "insufficient" not in md.lower()
    # no launch command, no per-run marker, no port among the info differences
    for noise in ("server\\.command", "media\\_marker", "\\-\\-port", "127\\.0\\.0\\.1", "created"):
        assert noise not in md, noise
    assert "5 info difference(s) that change on every run" in md
    assert "server\\.args\\.spec\\-type: — → ngram\\-simple" in md  # a difference that says something stays
    # each comparison fold has one row per shared level (8), the record's fold one per level (8)
    folds = md.split("<details>")[1:]
    assert len(folds) == 3
    for fold in folds:
        rows = [x for x in fold.splitlines() if x.startswith("| C\\=")]  # level rows, not header or separator
        assert len(rows) == 8, fold
    data = render_json(report)
    for comp in data["records"][0]["comparisons"]:
        fields = [d["field"] for d in comp["comparison"]["info_differences"]]
        assert "server.command" not in fields and not any(f.endswith("media_marker") for f in fields)


# ---------------------------------------------------------------- hostile record strings

HOSTILE_TITLE = "![](https://tracker.example/p.png) <img src=x onerror=alert(1)> @org/team #123 </details> `x` a|b"


def _rendered(md: str) -> str:
    return str(cmarkgfm.github_flavored_markdown_to_html(md, options=Options.CMARK_OPT_UNSAFE))


def test_hostile_record_strings_are_inert(with_settings: GitRepo, add_record: Callable[..., str]) -> None:
    data = new_record()
    data["title"] = HOSTILE_TITLE
    data["description"] = "</details><details open><summary>owned</summary>"
    data["provenance"]["source"] = "see @octocat and ![](https://tracker.example/q.png) | col"
    data["provenance"]["tool"] = "<script>alert(1)</script>"
    data["status"]["message"] = "done | </details> :white_check_mark: passes @org/team"
    data["server"]["version"] = "1.0 | `x` <b>bold</b>"
    data["levels"][1]["label"] = "sat|ura</details>tion @x #9"
    add_record(data)
    md = render_markdown(build_report(run_check(with_settings.root, "main")))
    out = _rendered(md)
    for tag in ("<img", "<script", "<a ", "<b>", "<code", "<summary>owned"):
        assert tag not in out, tag
    # the version is part of the fingerprint: no previous comparable record, so two folds (record, baseline)
    assert "**Against the previous comparable record:** no earlier record" in md
    assert out.count("<details>") == out.count("</details>") == 2
    text = html.unescape(re.sub(r"<[^>]+>", " ", out))
    assert not re.search(r"@[A-Za-z0-9]", text)
    assert not re.search(r"#[0-9]", text)
    assert text.count(":white_check_mark:") == 1  # the gate's own, not the status message's
    # every table keeps its shape: each row has as many cells as its header
    for table in re.findall(r"<table>.*?</table>", out, flags=re.S):
        width = len(re.findall(r"<th[ >]", table))
        for row in re.findall(r"<tr>(.*?)</tr>", table, flags=re.S)[1:]:
            assert len(re.findall(r"<td[ >]", row)) == width, row
    # the title reads as itself
    assert html.unescape(re.sub(r"<[^>]+>", "", out)).replace("\u200b", "").count(HOSTILE_TITLE) == 1


def test_report_fits_a_comment_limit(with_settings: GitRepo, add_record: Callable[..., str]) -> None:
    add_record()
    report = build_report(run_check(with_settings.root, "main"))
    full = render_markdown(report)
    cut = render_markdown(report, max_chars=len(full) - 1)
    assert len(cut) < len(full) and "<details>" not in cut
    assert lead_of(full).rstrip() in cut  # the decision stays
    assert "Details of 1 record(s) left out to fit a PR comment" in cut
    tiny = render_markdown(report, max_chars=200)
    assert "1 record(s) and the details of all left out" in tiny and "**Valid:**" not in tiny


def test_the_baseline_pairing_prefers_a_comparable_record(ngram_repo: tuple[GitRepo, str]) -> None:
    """records/h200-ngram holds baselines of two contexts: 20261130T2344…-7f0c1c8 (prompts repeated as written,
    like the added NGRAM record) and the newer 20261201T153220Z-baseline-af22612 (unique prefixes). The report
    compares with the newest comparable one, not the newest one."""
    repo, _rel = ngram_repo
    report = build_report(run_check(repo.root, "main"))
    rec = next(r for r in report.records if r.record.id == NGRAM)
    (base,) = [e for e in rec.comparisons if e.pairing.kind == "baseline"]
    assert base.pairing.against is not None
    assert base.pairing.against.id == "20261130T234426Z-baseline-7f0c1c8"
    assert base.comparison is not None and base.comparison.comparable
