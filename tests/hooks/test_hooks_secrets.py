"""The built site never shows a secret, whatever a record holds; pages stay small whatever a record's text; the
non-strict build's error box names files relative to the repository."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from hooks_helpers import FIXTURE_RECORDS, ROOT, run_build

FX_BASELINE = "20261201T090000Z-baseline-a1b2c3d"
PLANTED_ID = "20261203T090000Z-baseline-5ec4e75"

# fake values, each planted in a field some page, chart, download or search index shows
PLANTED: dict[str, str] = {
    "title key": "sk-PlantedTitleKey0123456789",
    "description PEM": "MIIEvQIBADANBgkqhkiG9w0BPlantedPemBody0123",
    "provenance note": "hf_PlantedProvenanceNote0123456789",
    "url password": "PlantedUrlPw77",
    "command api key": "PlainApiKeyWords",
    "args api key": "PlainArgsKeyWords",
    "extra admin token": "PlainAdminWords",
    "server_info token": "ghp_PlantedServerInfoToken0123456789",
    "model revision": "ya29.PlantedModelRevision0123",
    "env sig": "PlantedNcclSig0123",
    "env password": "PlantedEnvPassword",
    "status message": "sk_live_PlantedStatusMessage0123",
    "log excerpt": "AKIAPLANTEDLOGEXCERPT",
    "error example": "PlantedRedisPw42",
    "tag": "glpat-PlantedTag0123456789",
}


def planted_record() -> dict[str, Any]:
    rec: dict[str, Any] = json.loads((FIXTURE_RECORDS / "eagle-fast-verify" / f"{FX_BASELINE}.json").read_text())
    p = PLANTED
    rec["id"], rec["experiment"] = PLANTED_ID, "planted-site"
    rec["title"] = f"run with key {p['title key']}"
    rec["description"] = f"-----BEGIN PRIVATE KEY-----\n{p['description PEM']}\n-----END PRIVATE KEY-----"
    rec["provenance"]["notes"] = f"measured with {p['provenance note']}"
    rec["server"]["url"] = f"http://admin:{p['url password']}@127.0.0.1:30000"
    rec["server"]["command"] += ["--api-key", p["command api key"]]
    rec["server"]["args"]["api-key"] = p["args api key"]
    rec["server"]["args"]["extra_args"] = ["--admin-token", p["extra admin token"]]
    rec["server"]["server_info"]["auth"] = {"note": f"token {p['server_info token']}"}
    rec["model"]["revision"] = p["model revision"]
    rec["environment"]["env_vars"]["NCCL_NET_PLUGIN"] = f"/opt/net.so?sig={p['env sig']}"
    rec["environment"]["env_vars"]["MY_PASSWORD"] = p["env password"]
    rec["status"] = {
        "state": "partial",
        "message": f"stopped: HTTP 401 for {p['status message']}",
        "log_excerpt": f"boot\naws key {p['log excerpt']}\nready",
    }
    rec["levels"][0]["requests_failed"] = 1
    rec["levels"][0]["errors"] = {
        "by_kind": {"http_5xx": 1},
        "examples": [f"http_5xx: HTTP 500: cannot reach redis://:{p['error example']}@cache:6379"],
        "error_rate": 0.25,
        "flagged": True,
    }
    rec["tags"] = ["planted", p["tag"]]
    return rec


@pytest.fixture(scope="module")
def planted_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    records = tmp_path_factory.mktemp("records")
    shutil.copytree(FIXTURE_RECORDS, records, dirs_exist_ok=True)
    (records / "planted-site").mkdir()
    (records / "planted-site" / f"{PLANTED_ID}.json").write_text(json.dumps(planted_record()), encoding="utf-8")
    site = tmp_path_factory.mktemp("site")
    result = run_build(site, records)
    assert result.returncode == 0, result.stdout + result.stderr
    return site


def test_no_planted_secret_in_any_built_file(planted_site: Path) -> None:
    page = planted_site / "records" / "planted-site" / f"{PLANTED_ID}.html"
    assert page.is_file()  # the record is shown, redacted, not left out
    html = page.read_text(encoding="utf-8")
    assert "&lt;redacted&gt;" in html and "run with key" in html
    files = [f for f in planted_site.rglob("*") if f.is_file()]
    assert any(f.suffix == ".json" and PLANTED_ID in f.name for f in files)  # the downloadable record
    leaks = {
        (what, str(f.relative_to(planted_site)))
        for f in files
        for what, value in PLANTED.items()
        if value.encode() in f.read_bytes()
    }
    assert not leaks, sorted(leaks)


def test_a_200000_character_field_keeps_every_page_small(tmp_path: Path) -> None:
    records = tmp_path / "records"
    shutil.copytree(FIXTURE_RECORDS, records)
    path = records / "eagle-fast-verify" / f"{FX_BASELINE}.json"
    base = tmp_path / "site-base"
    assert run_build(base, records).returncode == 0
    rec = json.loads(path.read_text(encoding="utf-8"))
    huge = "lorem ipsum " * 16_667  # 200,004 characters of ordinary words
    rec["model"]["name"] = huge
    rec["server"]["args"]["note"] = huge
    rec["environment"]["info"]["hostname"] = huge
    path.write_text(json.dumps(rec), encoding="utf-8")
    site = tmp_path / "site"
    result = run_build(site, records)
    assert result.returncode == 0, result.stdout + result.stderr
    for rel in (
        "index.html",
        "records/index.html",
        "experiments/eagle-fast-verify.html",
        f"records/eagle-fast-verify/{FX_BASELINE}.html",
    ):
        grown = (site / rel).stat().st_size - (base / rel).stat().st_size
        assert grown < 40_000, (rel, grown)  # at most a few cut copies of 4,000 characters, not 200,000
    page = (site / "records" / "eagle-fast-verify" / f"{FX_BASELINE}.html").read_text(encoding="utf-8")
    assert "more characters not shown]" in page


def test_a_200000_character_title_is_refused_naming_file_and_cap(tmp_path: Path) -> None:
    records = tmp_path / "records"
    shutil.copytree(FIXTURE_RECORDS, records)
    path = records / "eagle-fast-verify" / f"{FX_BASELINE}.json"
    rec = json.loads(path.read_text(encoding="utf-8"))
    rec["title"] = "t" * 200_000
    path.write_text(json.dumps(rec), encoding="utf-8")
    result = run_build(tmp_path / "site", records, strict=False)
    assert result.returncode == 0, result.stderr
    index = (tmp_path / "site" / "records" / "index.html").read_text(encoding="utf-8")
    assert "field &#39;title&#39;: String should have at most 200 characters" in index.replace("'", "&#39;")
    assert "t" * 300 not in index


def test_non_strict_error_box_names_files_relative_to_the_repository(tmp_path: Path) -> None:
    records = tmp_path / "records"
    shutil.copytree(FIXTURE_RECORDS, records)
    (records / "eagle-fast-verify" / f"{FX_BASELINE}.json").write_text("{ not json", encoding="utf-8")
    result = run_build(tmp_path / "site", records, strict=False)
    assert result.returncode == 0, result.stderr
    for page in ("index.html", "records/index.html"):
        html = (tmp_path / "site" / page).read_text(encoding="utf-8")
        assert f"records/eagle-fast-verify/{FX_BASELINE}.json: field" in html, page
        assert str(tmp_path) not in html and str(ROOT) not in html, page


def test_the_reliability_page_is_built_and_linked(built_site: Path) -> None:
    page = (built_site / "reliability.html").read_text(encoding="utf-8")
    for heading in ("Secrets are never recorded, printed or shown", "Malformed and hostile record files"):
        assert heading in page
    assert "held in this build" in page and "DIFFERS" not in page
    home = (built_site / "index.html").read_text(encoding="utf-8")
    assert 'href="reliability.html"' in home  # from the home page's text and the navigation
    assert not (ROOT / "docs" / "reliability.md").exists()
