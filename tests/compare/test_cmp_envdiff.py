from __future__ import annotations

from cmp_fixtures import lab_records, level, record

from bench.compare import environment_diff, flatten_record, render_diff_markdown


def test_lab_pair_diff_rows() -> None:
    base, eagle = lab_records()
    rows = {(d.field, d.role): (d.a, d.b) for d in environment_diff(base, eagle)}
    assert rows[("speculative.algorithm", "context")] == (None, "EAGLE3")
    assert rows[("speculative.num_draft_tokens", "context")] == (None, 16)
    assert rows[("variant", "info")] == ("baseline", "eagle3")
    assert {f for f, _ in rows} == {
        "speculative.algorithm",
        "speculative.num_draft_tokens",
        "speculative.notes",
        "title",
        "variant",
    }


def test_ids_timestamps_and_levels_are_ignored_and_context_comes_first() -> None:
    a = record("baseline", [level(1, 100.0)])
    b = record(
        "baseline",
        [level(1, 50.0), level(2, 40.0)],
        suffix="1234567",
        overrides={
            "environment.info": {"hostname": "node-b"},
            "server.args.tp": 4,
            "created_at": "2027-02-01T00:00:00Z",
            "id": "20270201T000000Z-baseline-1234567",
        },
    )
    rows = environment_diff(a, b)
    assert [(d.field, d.role, d.a, d.b) for d in rows] == [
        ("server.args.tp", "context", 8, 4),
        ("environment.info.hostname", "info", "node-a", "node-b"),
    ]
    assert environment_diff(a, a) == []
    assert not any(k.startswith(("levels", "id", "created_at")) for k in flatten_record(a))


def test_diff_markdown_escapes_and_says_not_stated() -> None:
    a = record("baseline", [level(1, 1.0)], overrides={"description": "a | b"})
    b = record("baseline", [level(1, 1.0)])
    md = render_diff_markdown(environment_diff(a, b), "A", "B")
    assert md.splitlines()[0].startswith("1 field(s) differ, 0 of them context")
    assert md.splitlines()[2] == "| Field | Role | A | B |"
    assert "| `description` | info | a \\| b | *not stated* |" in md
    assert "do not differ" in render_diff_markdown([])
