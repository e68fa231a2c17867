"""The site benchmark's synthetic records are records as benchbook writes them today: valid, and holding nothing
its one serialiser (``dump_record``, which redacts) would not write, so that a build spends on them what it spends
on the records a nightly campaign adds, not what it spends on the few shipped records measured before records were
redacted as they were written."""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))

from synthetic_records import TEMPLATES, _template_texts, plan, synthetic_record  # noqa: E402

from bench.record.load import load_record, parse_record  # noqa: E402
from bench.redact import REDACTED, redact_tree  # noqa: E402


def test_synthetic_records_hold_nothing_the_serialiser_hides() -> None:
    templates = _template_texts()
    n = 200
    engines = set()
    for i in range(0, n, 3):
        data = synthetic_record(i, n, templates)
        engines.add(plan(i, n).engine)
        assert redact_tree(data) == data, i
        parse_record(data, f"synthetic #{i}")
    assert engines == set(TEMPLATES)


def test_the_templates_are_the_shipped_records_but_their_random_marker() -> None:
    """A template changes only what the serialiser hides: llama.cpp's per-process media marker in the two llama.cpp
    records measured before redaction on write."""
    hidden = 0
    for (engine, role), text in _template_texts().items():
        shipped = load_record(ROOT / "records" / TEMPLATES[engine][role]).record.model_dump(
            mode="json", exclude_none=True
        )
        template = json.loads(text)
        marker = shipped.get("server", {}).get("server_info", {}).get("props", {}).get("media_marker")
        if marker is not None and marker != f"<{REDACTED}>":
            hidden += 1
            assert template["server"]["server_info"]["props"]["media_marker"] == f"<{REDACTED}>"
            template["server"]["server_info"]["props"]["media_marker"] = marker
        assert template == shipped, (engine, role)
    assert hidden == 2
