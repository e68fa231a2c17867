"""The generated Reliability page: built from the test suite's own case lists (the hostile corpus, the planted
secrets, bad input, faults during a run), grouped, each case with its outcome; the build tries the record files
and the secrets again and says when one does not hold."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from bench.errors import load_yaml
from bench.site._reliability import DIFFERS, HELD, load_reliability, reliability_markdown

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "tests" / "runner"))
from bad_input_cases import BAD_INPUT_CASES  # noqa: E402
from secret_cases import SECRET_CASES  # noqa: E402

HOSTILE = load_yaml((ROOT / "tests" / "record" / "hostile" / "cases.yaml").read_text(encoding="utf-8"))["cases"]

# A stand-in for tests/runner/fault_cases.py (written by the runner's fault tests), in its shape:
# (group/name, what happens, expected outcome). Used only here, to build a repository copy that has one.
PLACEHOLDER_FAULTS = [
    ("launch/exits-at-start", "the server exits before it is ready", "exit 1; record failed"),
    ("launch/never-ready", "the server never answers its readiness probe", "exit 1; record failed"),
    ("signals/sigint", "the harness gets SIGINT mid-level", "exit 130; record partial"),
]


def _repo_copy(tmp_path: Path, *, faults: bool) -> Path:
    repo = tmp_path / "repo"
    for rel in ("tests/record/hostile", "tests/runner/secret_cases.py", "tests/bad_input_cases.py"):
        src, dst = ROOT / rel, repo / rel
        dst.parent.mkdir(parents=True, exist_ok=True)
        (shutil.copytree if src.is_dir() else shutil.copy)(src, dst)
    if faults:
        (repo / "tests" / "runner" / "fault_cases.py").write_text(
            f"FAULT_CASES = {PLACEHOLDER_FAULTS!r}\n", encoding="utf-8"
        )
    return repo


def test_sections_come_from_the_case_lists_and_every_tried_case_holds() -> None:
    sections = {s.key: s for s in load_reliability(ROOT)}
    assert len(sections["hostile"].cases) == len(HOSTILE) >= 30
    assert len(sections["secrets"].cases) == len(SECRET_CASES)
    assert [c.name for c in sections["bad-input"].cases] == [n.split("/", 1)[1] for n, _, _ in BAD_INPUT_CASES]
    tried = [c for s in sections.values() for c in s.cases if c.checked is not None]
    assert len(tried) == len(HOSTILE) + len(SECRET_CASES)
    assert {c.checked for c in tried} == {HELD}
    faults = ROOT / "tests" / "runner" / "fault_cases.py"
    assert sections["faults"].missing is not faults.is_file()


def test_the_page_groups_cases_with_their_outcomes(tmp_path: Path) -> None:
    page = reliability_markdown(load_reliability(_repo_copy(tmp_path, faults=True)))
    total = len(HOSTILE) + len(SECRET_CASES) + len(BAD_INPUT_CASES) + len(PLACEHOLDER_FAULTS)
    assert f"{total} case(s) in all:" in page
    tried = len(HOSTILE) + len(SECRET_CASES)
    assert f"This build tried {tried} of them again (the record files and the planted secrets): {tried} held." in page
    # the faults, grouped by the part of their name before '/', each with its outcome
    faults = page.split("## Faults during a run", 1)[1]
    assert faults.index("### launch") < faults.index("`exits-at-start`") < faults.index("### signals")
    assert "| `sigint` | the harness gets SIGINT mid-level | exit 130; record partial |" in faults
    # a hostile file with its exact error, verbatim
    case = HOSTILE[0]
    assert f"`field '{case['field']}': {case['expected']}`" in page
    for group in {c["group"] for c in HOSTILE}:
        assert f"### {group}" in page
    # the secrets by kind: never the planted values
    for name, _, _, value, _ in SECRET_CASES:
        assert f"`{name}`" in page and value not in page


def test_a_case_that_no_longer_holds_is_shown_as_such(tmp_path: Path) -> None:
    repo = _repo_copy(tmp_path, faults=False)
    manifest = repo / "tests" / "record" / "hostile" / "cases.yaml"
    text = manifest.read_text(encoding="utf-8")
    assert "expected: a JSON object, got list" in text
    manifest.write_text(text.replace("expected: a JSON object, got list", "expected: something else"), encoding="utf-8")
    sections = load_reliability(repo)
    (differs,) = [c for s in sections for c in s.cases if c.checked != HELD and c.checked is not None]
    assert differs.checked == f"{DIFFERS}: field '(whole file)': a JSON object, got list"
    page = reliability_markdown(sections)
    assert f"{DIFFERS}: field" in page and "**1 did not**" in page
    assert "*The case list `tests/runner/fault_cases.py` is not in this checkout.*" in page


def test_without_the_repository_the_page_says_so() -> None:
    assert "not given the repository" in reliability_markdown(())


@pytest.mark.parametrize("page", ["reliability.md"])
def test_render_writes_the_page_linked_from_home(tmp_path: Path, page: str) -> None:
    import subprocess

    proc = subprocess.run(
        [sys.executable, "-m", "bench", "render", str(tmp_path / "out"), "--docs", "docs"],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    text = (tmp_path / "out" / page).read_text(encoding="utf-8")
    assert text.startswith("# Reliability") and "## Malformed and hostile record files" in text
    assert "(reliability.md)" in (tmp_path / "out" / "index.md").read_text(encoding="utf-8")
    assert "Reliability: reliability.md" in (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    assert not (ROOT / "docs" / page).exists()  # generated, never written into docs/
