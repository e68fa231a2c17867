#!/usr/bin/env bash
# Runs ON the device machine, in the copied working tree. State outside the tree lives in /tmp/bb and
# survives only while the machine stays warm between calls.
#
#   scripts/h200/remote.sh setup            # .h200/s1 carried: install wheels, keep model part 1, build CUDA llama-server
#   scripts/h200/remote.sh run CONFIG...    # .h200/s2 carried (first run): join the model; then one `bench run` per config
#                                           # (BENCH_ARGS="--repeat 2" adds flags to each `bench run`)
# Records are written to $OUT/records/<experiment>/ so the device tool brings them back.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT"
BB=/tmp/bb
mkdir -p "$BB"
export PYTHONPATH="$BB/site:$ROOT" PYTHONUNBUFFERED=1
export BENCHBOOK_CACHE="$BB/cache" LLAMA_CUDA=1 CUDA_ARCH=90
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
cmd="${1:?usage: remote.sh setup|run CONFIG...}"; shift
case "$cmd" in
  setup)
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target "$BB/site" .h200/s1/wheels/*.whl
    cp .h200/s1/model.part1 .h200/s1/model.sha256 .h200/s1/commit .h200/s1/dirty "$BB/"
    rm -rf "$BB/src"; mkdir -p "$BB/src"; tar -xzf .h200/s1/llama-src.tar.gz -C "$BB/src"
    start=$(date +%s)
    BIN="$(bash scripts/build_llama_server.sh --src "$BB/src")"
    echo "built $BIN in $(( $(date +%s) - start )) s"
    "$BIN" --version 2>&1 | tail -3
    nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
    ;;
  run)
    if [ ! -f "$BB/model.gguf" ]; then
      cat "$BB/model.part1" .h200/s2/model.part2 > "$BB/model.gguf.tmp"
      [ "$(sha256sum "$BB/model.gguf.tmp" | cut -d' ' -f1)" = "$(cat "$BB/model.sha256")" ] \
        || { echo "model sha256 mismatch" >&2; exit 1; }
      mv "$BB/model.gguf.tmp" "$BB/model.gguf"
    fi
    BENCHBOOK_LLAMA_SERVER="$(bash scripts/build_llama_server.sh)"
    export BENCHBOOK_LLAMA_SERVER BENCHBOOK_COMMIT="$(cat "$BB/commit")" BENCHBOOK_DIRTY="$(cat "$BB/dirty")"
    mkdir -p "$OUT/records"
    status=0
    for cfg in "$@"; do
      echo "== bench run $cfg"
      # shellcheck disable=SC2086  # BENCH_ARGS: extra `bench run` flags, e.g. "--repeat 2"
      python3 -m bench run "$cfg" --records-dir "$OUT/records" --set "model.path=$BB/model.gguf" ${BENCH_ARGS:-} \
        || { rc=$?; echo "bench run $cfg exited $rc"; status=$rc; }
    done
    ls -R "$OUT/records"
    exit "$status"
    ;;
  *) echo "unknown command: $cmd" >&2; exit 2 ;;
esac
