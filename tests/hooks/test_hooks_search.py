"""The search index of the built site: hand-written pages in full, generated pages by title and key fields only."""

from __future__ import annotations

import json
from pathlib import Path

from bench.record.load import load_records


def _index(site: Path) -> list[dict[str, str]]:
    docs: list[dict[str, str]] = json.loads((site / "search" / "search_index.json").read_text())["docs"]
    return docs


def test_search_index_holds_no_record_page_text(built_site: Path, site_records: Path) -> None:
    docs = _index(built_site)
    generated = [d for d in docs if d["location"].startswith(("records/", "history/", "experiments/"))]
    text = json.dumps(generated)
    records = load_records(site_records).records
    assert records
    for loaded in records:
        r = loaded.record
        # no entry points into a record page, and no generated page's table (every one lists record ids) is in the
        # index; hand-written pages (a dead end citing its evidence) may name records
        assert not any(d["location"].startswith(f"records/{r.experiment}/{r.id}") for d in docs)
        assert r.id not in text
    # no generated page was indexed in full (one entry per section): one entry per page, the hook's
    locations = [d["location"] for d in generated]
    assert len(locations) == len(set(locations))
    assert not any("#" in loc for loc in locations)


def test_experiments_and_configurations_are_found_by_key_fields(built_site: Path, site_records: Path) -> None:
    docs = _index(built_site)
    by_location = {d["location"]: d for d in docs}
    records = [lr.record for lr in load_records(site_records).records]
    for exp in {r.experiment for r in records}:
        entry = by_location[f"experiments/{exp}.html"]
        assert entry["title"] == f"Experiment {exp}"
        for r in records:
            if r.experiment == exp:
                assert r.variant in entry["text"]
                if r.model.name:
                    assert r.model.name in entry["text"]
    histories = [d for d in docs if d["location"].startswith("history/") and d["location"] != "history/index.html"]
    assert histories and all(d["title"].startswith("History of ") for d in histories)
    # every history entry's page exists
    for d in histories:
        assert (built_site / d["location"]).is_file()


def test_hand_written_pages_are_indexed_in_full(built_site: Path) -> None:
    docs = _index(built_site)
    method = [d for d in docs if d["location"].startswith("methodology.html")]
    assert len(method) > 3  # one entry per section
    assert any("bootstrap" in d["text"].lower() for d in method)
