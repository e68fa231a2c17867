"""``bench diff`` and ``bench compare`` print record values: a secret a record holds never reaches the terminal."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures" / "records" / "eagle-fast-verify"
SECRET = "hf_PlantedDiffToken0123456789abc"


def test_diff_and_compare_output_hide_a_planted_secret(tmp_path: Path) -> None:
    folder = tmp_path / "records" / "eagle-fast-verify"
    folder.mkdir(parents=True)
    paths = []
    for src in sorted(FIXTURES.glob("*.json")):
        data = json.loads(src.read_text(encoding="utf-8"))
        if "eagle3" in src.name:
            data["environment"]["env_vars"]["NCCL_PLUGIN_TOKEN_FILE"] = f"/run/{SECRET}"
            data["server"]["url"] = "http://admin:PlantedDiffPw@127.0.0.1:30000"
        path = folder / src.name
        path.write_text(json.dumps(data), encoding="utf-8")  # written raw: the record holds the secrets
        paths.append(path)
    for fmt in ("text", "json", "md"):
        for command in ("diff", "compare"):
            proc = subprocess.run(
                [sys.executable, "-m", "bench", command, str(paths[0]), str(paths[1]), "--format", fmt,
                 "--records-dir", str(tmp_path / "records")],
                cwd=ROOT, capture_output=True, text=True, timeout=300,
            )  # fmt: skip
            assert proc.returncode == 0, proc.stderr
            out = proc.stdout + proc.stderr
            assert SECRET not in out and "PlantedDiffPw" not in out, (command, fmt)
            assert "hf_Pl" not in out and "PlantedDiff" not in out, (command, fmt)  # not even a cut part of it
            if command == "diff" and fmt != "text":  # (the text table cuts long field names)
                assert "NCCL_PLUGIN_TOKEN_FILE" in out and "<redacted>" in out  # the difference is still listed
